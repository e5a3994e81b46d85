"""Tamper evidence: the resident gateway records every change it did not make to what keeps it in
force, fails closed on a weakening one until an operator removes ``LOG.tamper``, and reports a log
that shrinks, is replaced or stops growing while it decides.

The unit tests drive :class:`TamperWatch` over real files; the last test drives a real resident
gateway through the shipped hook command line (started by the hook, stopped by its PID).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from dsh_policy.policy.hooks.gateway import tamper_watch
from dsh_policy.policy.hooks.gateway.tamper_watch import TamperWatch, Watched

HOOKED = (
    '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "dsh-policy hook claude-code"}]}]}}'
)


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tamper_watch, "TICK_SECONDS", 0.0)


def _setup(tmp_path: Path) -> tuple[TamperWatch, Path, Path, Path]:
    settings = tmp_path / "settings.json"
    settings.write_text(HOOKED)
    deployment = tmp_path / "gateway.yaml"
    deployment.write_text("spec: {}\n")
    log = tmp_path / "audit.jsonl"
    log.write_text("{}\n")
    watch = TamperWatch(
        [Watched(str(settings), "harness-settings"), Watched(str(deployment), "deployment")], str(log)
    )
    assert watch.start() == []
    return watch, settings, deployment, log


def test_a_change_is_recorded_and_an_unweakening_one_keeps_deciding(tmp_path: Path) -> None:
    watch, _settings, deployment, _log = _setup(tmp_path)
    deployment.write_text("spec: {params: {a: 1}}\n")
    observed = watch.tick(0)
    expected = {"part": "deployment", "path": str(deployment), "change": "modified", "weakening": None}
    assert observed == [expected]
    assert watch.failing_closed() is None
    assert watch.tick(0) == []  # seen once


def test_hooks_taken_out_of_the_settings_fail_closed_until_acknowledged(tmp_path: Path) -> None:
    watch, settings, _deployment, log = _setup(tmp_path)
    settings.write_text('{"hooks": {}}')
    [observed] = watch.tick(0)
    assert observed["weakening"] and "no longer runs the gateway" in observed["weakening"]
    why = watch.failing_closed()
    assert why is not None and str(log) + ".tamper" in why
    # A new gateway (after a restart) reads the same state, and compares with what was seen.
    again = TamperWatch([Watched(str(settings), "harness-settings")], str(log))
    assert again.start() == [] and again.failing_closed() is not None
    Path(str(log) + ".tamper").unlink()  # the operator acknowledges
    assert watch.failing_closed() is None


def test_a_change_while_no_gateway_ran_is_seen_by_the_next_one(tmp_path: Path) -> None:
    _watch, settings, _deployment, log = _setup(tmp_path)
    settings.write_text('{"disableAllHooks": true, ' + HOOKED[1:])
    later = TamperWatch([Watched(str(settings), "harness-settings")], str(log))
    [observed] = later.start()
    assert observed["weakening"] == "a hook settings file turns hooks off"


def test_a_log_that_shrinks_is_replaced_or_stalls_is_reported(tmp_path: Path) -> None:
    watch, _settings, _deployment, log = _setup(tmp_path)
    with log.open("a") as out:
        out.write("{}\n")
    assert watch.tick(1) == []
    log.write_text("")  # same inode, fewer bytes
    assert [o["change"] for o in watch.tick(1)] == ["shrank"]
    other = tmp_path / "other.jsonl"
    other.write_text("{}\n{}\n")
    os.replace(other, log)  # another file in its place
    assert [o["change"] for o in watch.tick(1)] == ["replaced"]
    assert watch.tick(5) == []  # decisions made since the last tick may not be written yet
    assert [o["change"] for o in watch.tick(5)] == ["stalled"]
    assert watch.tick(6) == []  # reported once


def test_the_writer_s_own_rotation_is_not_tampering(tmp_path: Path) -> None:
    watch, _settings, _deployment, log = _setup(tmp_path)
    os.rename(log, str(log) + ".000001")
    log.write_text("{}\n")
    assert watch.tick(0) == []


def _hook(project: Path, home: Path, runtime: str, command: str) -> tuple[int, str]:
    payload = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "CLAUDE_PROJECT_DIR": str(project),
        "HOME": str(home),
        "DSH_POLICY_RUNTIME_DIR": runtime,
        # The first hook starts the gateway; on a loaded machine waiting for it and then deciding
        # in process can pass the default 20 s budget (the hook then refuses, by design).
        "DSH_POLICY_HOOK_TIMEOUT": "60",
    }
    done = subprocess.run(
        ["dsh-policy", "hook", "claude-code", "--config", str(project / ".dsh" / "gateway.yaml")],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=environment,
        cwd=project,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stderr.decode()


def test_a_resident_gateway_fails_closed_when_its_hooks_are_taken_out(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "self_protection"))
    from fresh_project import make_project

    fresh = make_project(tmp_path)
    # A short runtime folder: under xdist ``tmp_path`` is deep enough that the gateway's socket path
    # would pass the 103 bytes a Unix socket allows, and the hook would decide in process instead.
    runtime = Path(tempfile.mkdtemp(prefix="dsh-rt-"))
    try:
        code, err = _hook(fresh.root, fresh.home, str(runtime), "ls")
        assert code == 0, err
        settings = fresh.root / ".claude" / "settings.json"
        log = fresh.root / ".dsh" / "audit" / "hooks.jsonl"
        deadline = time.monotonic() + 60  # a loaded machine: the gateway may still be starting
        while time.monotonic() < deadline and not Path(str(log) + ".watch").exists():
            time.sleep(0.2)  # the watch has taken its first fingerprints
        whys = [(json.loads(line).get("delivery") or {}).get("why") for line in log.open()]
        assert Path(str(log) + ".watch").exists(), f"no resident gateway watches: {whys}"
        settings.write_text('{"hooks": {}}')  # the operator's own edit, outside the agent's tools
        while time.monotonic() < deadline and not Path(str(log) + ".tamper").exists():
            time.sleep(0.2)
        code, err = _hook(fresh.root, fresh.home, str(runtime), "ls")
        assert code == 2 and "did not make weakened" in err, err
        Path(str(log) + ".tamper").unlink()
        assert _hook(fresh.root, fresh.home, str(runtime), "ls")[0] == 0
        records = [json.loads(line) for line in log.read_text().splitlines()]
        observed = [r for r in records if r["kind"] == "tamper_observed"]
        assert observed and observed[0]["path"] == str(settings) and observed[0]["weakening"]
    finally:
        for lock in runtime.glob("*.lock"):
            pid = int(lock.read_text().strip() or 0)
            if pid > 0 and b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGTERM)
        shutil.rmtree(runtime, ignore_errors=True)
