"""The fast hook client on its own: cheap to start, and never failing open, whatever the gateway,
the socket or the harness does (fake gateways misbehave on purpose here)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dsh_policy.policy.gateway_folders import RUNTIME_DIR_VARIABLE, runtime_dir_candidates
from dsh_policy.policy.hooks.claude_code.dialect import ClaudeCodeDialect
from dsh_policy.policy.hooks.codex.dialect import CodexDialect
from dsh_policy.policy.hooks.gateway import client, safe_answers
from dsh_policy.policy.hooks.gateway.runtime_paths import (
    DeploymentSpec,
    RuntimeDirError,
    check_private_dir,
    runtime_dir,
)
from dsh_policy.policy.hooks.protocol.messages import SUPPORTED_EVENTS, failure_verdict
from hook_testkit import PACK, payload
from resident_kit import FakeGateway, Ran, files_for, hook_argv, read_one_request, run_client, spec_for

HARNESSES = ("claude-code", "codex")
# Loaded by the client only on the slow path (or never): a hook must not pay for them per event.
HEAVY = ("pydantic", "structlog", "yaml", "celpy", "jsonschema", "cryptography", "orjson", "anyio", "re2")


# --- the answers it gives without a gateway ------------------------------------------------------


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("event", [None, *SUPPORTED_EVENTS])
def test_safe_answers_are_spelled_as_the_dialects_spell_a_failure(harness: str, event: str | None) -> None:
    dialect = ClaudeCodeDialect() if harness == "claude-code" else CodexDialect()
    expected = dialect.render(failure_verdict(event, "boom"))  # type: ignore[arg-type]
    answer = safe_answers.safe_answer(event, "boom", harness)
    assert (answer.exit_code, answer.stdout, answer.stderr) == (
        expected.exit_code,
        expected.stdout,
        expected.stderr,
    )


@pytest.mark.parametrize(
    ("raw", "event"),
    [
        (b'{"hook_event_name": "PostToolUse"}', "PostToolUse"),
        (b'{"hook_event_name": "PostToolUse", "hook_event_name": "PreToolUse"}', None),
        (b'{"hook_event_name": "Notification"}', None),
        (b"\xff{}", None),
        (b"", None),
        (b"[" * 10_000, None),
    ],
)
def test_the_event_of_a_payload_is_read_as_strictly_as_the_adapter_reads_it(
    raw: bytes, event: str | None
) -> None:
    assert safe_answers.event_of(raw) == event


def test_the_client_names_every_event_the_adapter_supports() -> None:
    """``safe_answers.EVENTS`` is a hand-written copy: an event missing from it would get the
    PreToolUse refusal (exit 2) instead of its own safe answer."""
    assert set(safe_answers.EVENTS) == set(SUPPORTED_EVENTS)
    for event in SUPPORTED_EVENTS:
        assert safe_answers.event_of(json.dumps({"hook_event_name": event}).encode()) == event


def test_options_it_does_not_know_go_to_the_in_process_parser() -> None:
    assert client.parse_options(["claude-code", "--pack", "p.yaml", "--param=a=1", "--shadow"]) is not None
    for argv in (
        ["--help"],
        ["claude-code", "--pakc", "p"],
        ["codex", "--engine", "fast"],
        ["codex", "--pack"],
    ):
        assert client.parse_options(argv) is None


def test_a_usage_error_is_still_a_refusal() -> None:
    ran = run_client(
        hook_argv("claude-code", "--no-such-option"), payload("claude-code", "pre_tool_use_bash_ls")
    )
    assert ran.code == 2
    assert "unrecognized arguments" in ran.stderr


# --- start-up cost --------------------------------------------------------------------------------

_PROBE = """
import json, os, sys
from dsh_policy.policy import cli
sys.argv = ["dsh-policy", *sys.argv[1:]]
code = cli.main()  # as the console script calls it
with open(os.environ["MODULES_OUT"], "w") as out:
    json.dump(sorted(sys.modules), out)
raise SystemExit(code)
"""


def test_the_client_imports_no_heavy_module_when_a_gateway_answers(tmp_path: Path) -> None:
    spec = spec_for()
    answered = threading.Event()

    def answer(conn: socket.socket) -> None:
        read_one_request(conn)
        conn.sendall(b'{"exit_code":2,"stdout":"","stderr":"denied by the fake\\n"}\n')
        conn.close()
        answered.set()

    out = tmp_path / "modules.json"
    with FakeGateway(files_for(spec).socket, answer):
        ran = run_client(
            [sys.executable, "-c", _PROBE, "hook", "claude-code", "--pack", str(PACK)],
            payload("claude-code", "pre_tool_use_bash_ls"),
            env={"MODULES_OUT": str(out)},
        )
    assert answered.is_set()
    assert (ran.code, ran.stderr) == (2, "denied by the fake\n")
    modules = json.loads(out.read_text())
    assert [m for m in modules if m.split(".")[0] in HEAVY] == []
    assert [m for m in modules if m.startswith("dsh_policy.") and m.split(".")[1] not in ("policy",)] == []
    ours = {m for m in modules if m.startswith("dsh_policy.policy.")}
    assert ours <= {
        "dsh_policy.policy.cli",
        "dsh_policy.policy.hooks",
        "dsh_policy.policy.hooks.gateway",
        "dsh_policy.policy.hooks.gateway.client",
        "dsh_policy.policy.hooks.gateway.safe_answers",
        "dsh_policy.policy.hooks.gateway.runtime_paths",
        "dsh_policy.policy.hooks.gateway.wire",
        "dsh_policy.policy.gateway_folders",
    }
    # Beyond what the interpreter had loaded at start-up (site, and an editable install's finder):
    baseline = subprocess.run(
        [sys.executable, "-c", "import sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    added = set(modules) - set(json.loads(baseline.stdout))
    assert not added & {
        "dataclasses",
        "pathlib",
        "subprocess",
        "typing",
        "argparse",
        "inspect",
        "logging",
        "json",
        "socket",
        "hashlib",
        "struct",
        "selectors",
        "collections",
    }


def test_importtime_shows_the_same(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import dsh_policy.policy.hooks.gateway.client"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "dsh_policy.policy.hooks.gateway.client" in imported
    assert not {name for name in imported if name.split(".")[0] in HEAVY}


# --- a gateway that misbehaves ---------------------------------------------------------------------


def _hold(requested: threading.Event) -> object:
    def behaviour(conn: socket.socket) -> None:
        read_one_request(conn)
        requested.set()
        threading.Event().wait(120)  # never answers

    return behaviour


@pytest.mark.parametrize(
    ("name", "sig", "code", "check"),
    [
        ("pre_tool_use_bash_ls", signal.SIGTERM, 2, lambda ran: "interrupted by SIGTERM" in ran.stderr),
        ("post_tool_use_bash_clean", signal.SIGHUP, 0, lambda ran: ran.json["decision"] == "block"),
        ("session_start", signal.SIGINT, 0, lambda ran: ran.json["continue"] is False),
        ("user_prompt_submit", signal.SIGPIPE, 0, lambda ran: ran.json["decision"] == "block"),
    ],
)
def test_a_signal_while_waiting_for_the_gateway_gives_the_safe_answer(name, sig, code, check) -> None:
    spec = spec_for()
    requested = threading.Event()
    with FakeGateway(files_for(spec).socket, _hold(requested)):  # type: ignore[arg-type]
        process = subprocess.Popen(
            hook_argv("claude-code"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(payload("claude-code", name)).encode())
        process.stdin.close()
        assert requested.wait(60)
        process.send_signal(sig)
        assert process.stdout is not None and process.stderr is not None
        process.wait(timeout=60)
        out, err = process.stdout.read(), process.stderr.read()
    ran = Ran(process.returncode, out.decode(), err.decode())
    assert ran.code == code, ran
    assert check(ran), ran


def test_a_signal_before_the_event_is_read_refuses() -> None:
    process = subprocess.Popen(
        hook_argv("codex"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    # stdin stays open: the client is still reading the event when the harness gives up on it.
    time.sleep(0.5)
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert b"interrupted by SIGTERM" in err


def _closes_unanswered(conn: socket.socket) -> None:
    read_one_request(conn)
    conn.close()


def _answers(data: bytes) -> object:
    def behaviour(conn: socket.socket) -> None:
        read_one_request(conn)
        conn.sendall(data)
        conn.close()

    return behaviour


@pytest.mark.parametrize(
    ("behaviour", "env", "fragment"),
    [
        (_closes_unanswered, {}, "closed the connection before answering"),
        (_answers(b'{"exit_code": 1, "stdout": "", "stderr": ""}\n'), {}, "malformed answer"),
        (_answers(b"not json\n"), {}, "not JSON"),
        (_answers(b'{"exit_code": 0, "stdout": "", "stderr": ""'), {}, "closed the connection"),
        (_hold(threading.Event()), {"DSH_POLICY_HOOK_TIMEOUT": "0.5"}, "did not answer in time"),
    ],
)
def test_a_lost_answer_is_a_refusal_not_a_pass(behaviour, env, fragment) -> None:
    spec = spec_for()
    with FakeGateway(files_for(spec).socket, behaviour) as fake:  # type: ignore[arg-type]
        ran = run_client(hook_argv("claude-code"), payload("claude-code", "pre_tool_use_bash_ls"), env=env)
        assert fake.connections, "the client did talk to the gateway"
    assert ran.code == 2, ran
    assert fragment in ran.stderr
    assert ran.stderr.startswith(safe_answers.FAIL_CLOSED_PREFIX)


def test_a_lost_answer_to_post_tool_use_withholds_nothing_silently() -> None:
    spec = spec_for()
    with FakeGateway(files_for(spec).socket, _closes_unanswered):
        ran = run_client(hook_argv("codex"), payload("codex", "post_tool_use_bash_aws_key"))
    assert ran.code == 0
    assert ran.json["decision"] == "block"
    assert "AKIA" not in ran.stdout


# --- whom it talks to --------------------------------------------------------------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make files of another user")


@needs_root
def test_a_socket_owned_by_another_user_is_never_used(tmp_path: Path) -> None:
    # A deployment of its own: with the shared pack, a gateway an earlier test left serving it
    # holds the lock, so no gateway of ours could take the path back and the hook would wait out
    # client.START_SECONDS (10 s) before deciding in process: the outcome alike, the time not.
    pack = tmp_path / "pack.yaml"
    shutil.copy(PACK, pack)
    spec = spec_for(pack=pack)
    path = files_for(spec).socket
    with FakeGateway(path, _answers(b'{"exit_code": 0, "stdout": "", "stderr": ""}\n')) as fake:
        os.chown(path, 54321, -1)
        ran = run_client(
            hook_argv("claude-code", pack=pack),
            payload("claude-code", "pre_tool_use_bash_rm_root"),
            env={"DSH_POLICY_GATEWAY_IDLE": "5"},
        )
        assert fake.connections == []
    # decided by policy (in process or by a gateway of our own), never by the stranger's "allow"
    assert ran.code == 2
    assert ran.stderr.strip().endswith("[policy: hook-guard/never-rm-root]")


@needs_root
def test_a_runtime_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 54321, -1)
    with pytest.raises(RuntimeDirError, match="owned by uid 54321"):
        check_private_dir(str(folder))
    ran = run_client(
        hook_argv("claude-code"),
        payload("claude-code", "pre_tool_use_bash_rm_root"),
        env={RUNTIME_DIR_VARIABLE: str(folder)},
    )
    assert ran.code == 2
    assert ran.stderr.strip().endswith("[policy: hook-guard/never-rm-root]")
    assert os.listdir(folder) == []  # nothing was created in it


def test_a_runtime_folder_others_can_enter_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o755)
    monkeypatch.setenv(RUNTIME_DIR_VARIABLE, str(folder))
    with pytest.raises(RuntimeDirError, match="lets other users in"):
        runtime_dir()
    link = tmp_path / "link"
    link.symlink_to(folder)
    monkeypatch.setenv(RUNTIME_DIR_VARIABLE, str(link))
    with pytest.raises(RuntimeDirError, match="not a directory"):
        runtime_dir()


@pytest.mark.parametrize("override", [True, False])
@pytest.mark.parametrize("xdg", ["private", "open", None])
def test_the_runtime_folder_is_always_one_self_protection_guards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, override: bool, xdg: str | None
) -> None:
    # Self-protection guards every candidate (policy/self_protection/locations.py): the folder the
    # gateway really uses must be one of them, whichever way the environment points.
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    if override:
        monkeypatch.setenv(RUNTIME_DIR_VARIABLE, str(tmp_path / "mine"))
    else:
        monkeypatch.delenv(RUNTIME_DIR_VARIABLE, raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    else:
        (tmp_path / "xdg").mkdir(mode=0o700 if xdg == "private" else 0o755)
        (tmp_path / "xdg").chmod(0o700 if xdg == "private" else 0o755)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    assert runtime_dir() in runtime_dir_candidates()


def test_two_deployments_never_share_a_socket(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    specs = [
        spec_for(pack=None, config=first),
        spec_for(pack=None, config=second),
        spec_for(),
        spec_for(audit=first),
    ]
    assert len({files_for(spec).socket for spec in specs}) == len(specs)
    # relative paths are the hook's working directory's: the same file, the same gateway
    relative = DeploymentSpec.from_options(
        config="a.yaml", packs=[], params=[], engine=None, shadow=False, audit=None, cwd=str(tmp_path)
    )
    assert relative == specs[0]


def test_a_pack_that_does_not_load_is_decided_in_process_and_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: b}\nspec: {rules: [{id: 1}]}\n"
    )
    ran = run_client(hook_argv("claude-code", pack=broken), payload("claude-code", "pre_tool_use_bash_ls"))
    # the gateway the hook started could not load it either; the in-process answer names the error
    assert ran.code == 2
    assert ran.stderr.startswith(f"{safe_answers.FAIL_CLOSED_PREFIX}: cannot load policy: {broken}")
    ran = run_client(hook_argv("codex", pack=broken), payload("codex", "post_tool_use_bash_clean"))
    assert ran.code == 0 and ran.json["decision"] == "block"
