"""The console-script hook, as the shipped example settings run it, fails closed on every exit
path: a signal to its whole process group mid-decision, a child over its memory limit, a child
over its deadline. Real processes (the path the harnesses take), so few of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "self_protection"))
from fresh_project import EXAMPLES, Case, corpus, make_project  # noqa: E402

BIN = Path(sys.executable).parent


def _command(event: str) -> str:
    settings = json.loads((EXAMPLES / "claude-code-settings.json").read_text())
    hooks = settings["hooks"][event][0]["hooks"][0]
    assert hooks["onFailure"] == "block"
    return str(hooks["command"])


def _payload(project: Path, event: str) -> bytes:
    document = {
        "session_id": "s",
        "hook_event_name": event,
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    if event == "PostToolUse":
        document["tool_response"] = {"stdout": "a.txt"}
    return json.dumps(document).encode()


def _start(project: Path, event: str, **env: str) -> subprocess.Popen[bytes]:
    environment = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "CLAUDE_PROJECT_DIR": str(project),
        **env,
    }
    process = subprocess.Popen(
        ["/bin/sh", "-c", _command(event)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
        env=environment,
        start_new_session=True,
    )
    assert process.stdin is not None
    process.stdin.write(_payload(project, event))
    process.stdin.close()
    return process


def _finish(process: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read().decode(), process.stderr.read().decode()
    return process.wait(timeout=60), out, err


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _wait_for_deciding_child(shell: int, deadline: float = 60.0) -> None:
    """Until the watcher (the shell's child) has forked the deciding child."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        for watcher in _children(shell):
            if _children(watcher):
                return
        time.sleep(0.01)
    pytest.fail("the hook never forked its deciding child")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("process"), signing_key=False).root


@pytest.mark.skipif(not Path("/proc").exists(), reason="needs /proc to find the deciding child")
@pytest.mark.parametrize(
    ("event", "number"), [("PreToolUse", signal.SIGTERM), ("PostToolUse", signal.SIGHUP)]
)
def test_a_signal_to_the_process_group_mid_decision_gives_the_safe_answer(
    project: Path, event: str, number: signal.Signals
) -> None:
    # No resident gateway: with one running (the module's other case may have started it) the hook
    # is answered over the socket and never forks the deciding child this test signals.
    process = _start(project, event, DSH_POLICY_GATEWAY="off")
    _wait_for_deciding_child(process.pid)
    os.killpg(process.pid, number)
    code, out, err = _finish(process)
    if event == "PreToolUse":  # an `ls` the policy would allow is refused: the decision never ended
        assert (code, out) == (2, "")
        assert f"interrupted by {number.name}" in err
    else:
        assert code == 0
        assert json.loads(out)["decision"] == "block"
        assert f"interrupted by {number.name}" in json.loads(out)["reason"]


# The memory limit and the deadline bound the child a hook decides in (``DSH_POLICY_GATEWAY=off``,
# or no resident gateway within reach); a resident gateway answers within DSH_POLICY_HOOK_TIMEOUT.


def test_a_child_over_its_memory_limit_gives_the_safe_answer(project: Path) -> None:
    code, out, err = _finish(
        _start(project, "PreToolUse", DSH_POLICY_HOOK_MEMORY_MB="40", DSH_POLICY_GATEWAY="off")
    )
    assert (code, out) == (2, "")
    assert "failed closed" in err and ("memory" in err.lower() or "MemoryError" in err)


def test_a_child_over_its_deadline_gives_the_safe_answer(project: Path) -> None:
    started = time.monotonic()
    code, out, err = _finish(
        _start(project, "PreToolUse", DSH_POLICY_HOOK_DEADLINE="0.05", DSH_POLICY_GATEWAY="off")
    )
    assert (code, out) == (2, "")
    assert "did not finish within its 0.05 s budget" in err
    assert time.monotonic() - started < 30


def _run_case(project: Path, home: Path, harness_payload: dict[str, object]) -> tuple[int, str, str]:
    environment = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "CLAUDE_PROJECT_DIR": str(project),
        "HOME": str(home),
    }
    done = subprocess.run(
        ["/bin/sh", "-c", _command("PreToolUse")],
        input=json.dumps(harness_payload).encode(),
        capture_output=True,
        cwd=project,
        env=environment,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _corpus_cases(section: str, tmp_path: Path, names: set[str] | None) -> tuple[Path, Path, list[Case]]:
    fresh = make_project(tmp_path)
    cases = [case for case in corpus(section, fresh) if case.harness == "claude-code"]
    chosen = [case for case in cases if names is None or case.name in names]
    # A renamed or removed sample entry must fail here, not leave the caller's loop empty.
    assert chosen, f"no claude-code {section} cases"
    assert names is None or {case.name for case in chosen} == names, names
    return fresh.root, fresh.home, chosen


_FULL = os.environ.get("DSH_E2E_CORPUS") == "1"
_SAMPLE = {"append shadow true to the deployment file"}


def test_tamper_attempts_through_the_shipped_command_line_are_refused(tmp_path: Path) -> None:
    """Real hook processes, as the harness runs them. A sample in CI; the whole corpus with
    ``DSH_E2E_CORPUS=1`` (about 2 s per attempt)."""
    root, home, cases = _corpus_cases("tamper", tmp_path, None if _FULL else _SAMPLE)
    for case in cases:
        code, _out, err = _run_case(root, home, case.payload)
        assert code == 2 and "self-protection" in err, (case, err)


def test_ordinary_work_through_the_shipped_command_line_is_allowed(tmp_path: Path) -> None:
    root, home, cases = _corpus_cases("benign", tmp_path, None if _FULL else {"ls the .dsh folder"})
    for case in cases:
        code, _out, err = _run_case(root, home, case.payload)
        assert code == 0 and "self-protection" not in err, (case, err)
