"""``init --system`` then ``doctor --hardened``: clean on a fresh install with its gateway serving,
and each property taken away in turn is named (root only: it hands files to their owners).

The service user here is root itself (the mode allows it), so the default suite needs no
``useradd``; the end-to-end test with a real unprivileged user is ``test_unprivileged_user.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dsh_policy.policy.hooks.install.hardened import Layout, Record, read_record
from hardened_kit import (
    Installed,
    as_user,
    gateway_pid,
    hook,
    install,
    pre_tool_use,
    records,
    run_cli,
    shared_install,
    start_gateway,
    stop_gateway,
    undo_append_only,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the hardened mode is installed by root")


AGENT = "nobody"  # doctor judges what this user may do; it never runs anything as it


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Installed]:
    """A hardened install under a folder of /tmp that other users may enter (so that the agent's
    user can run the installation: this interpreter may live in a home folder it cannot enter)."""
    base = Path(tempfile.mkdtemp(prefix="dsh-hardened-", dir="/tmp"))
    base.chmod(0o755)
    root = base / "root"
    project = base / "project"
    project.mkdir()
    monkeypatch.setenv("DSH_POLICY_SYSTEM_ROOT", str(root))
    try:
        program = shared_install(base)
        yield install(
            root, project, "root", ("claude-code", "codex"), None if program is None else str(program)
        )
    finally:
        undo_append_only(root)
        shutil.rmtree(base, ignore_errors=True)


def _doctor() -> tuple[int, list[str]]:
    agent = ["--agent-user", AGENT] if _user_exists(AGENT) and _runs_for_others() else []
    code, out = run_cli(["doctor", "--hardened", *agent])
    return code, [line for line in out.splitlines() if line.startswith("FAIL")]


def _runs_for_others() -> bool:
    record = read_record(Layout(os.environ["DSH_POLICY_SYSTEM_ROOT"]).record)
    return isinstance(record, Record) and not record.python.startswith(("/root/", "/home/"))


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def test_a_fresh_install_is_clean_and_each_missing_property_is_named(installed: Installed) -> None:
    record, layout = installed.record, installed.layout
    process = start_gateway(record, None)
    try:
        code, failed = _doctor()
        assert (code, failed) == (0, [])
        # The hook of the managed settings reaches this gateway, which decides and logs.
        before = len(records(record))
        answer = hook(record, pre_tool_use(Path(layout.root), "Bash", {"command": "ls"}))
        assert answer[0] == 0, answer
        assert len(records(record)) > before
        if _user_exists(AGENT) and _runs_for_others():
            _another_user_may_only_ask_for_decisions(installed)
        key_folder = os.path.dirname(record.key)
        settings = record.clients["claude-code"]
        removals: list[tuple[str, Callable[[], None], Callable[[], None]]] = [
            (
                "deployment",
                lambda: os.chmod(record.deployment, 0o666),
                lambda: os.chmod(record.deployment, 0o644),
            ),
            ("packs", lambda: os.chmod(layout.packs, 0o777), lambda: os.chmod(layout.packs, 0o755)),
            ("signing key", lambda: os.chmod(record.key, 0o644), lambda: os.chmod(record.key, 0o600)),
            ("signing key", lambda: os.chmod(key_folder, 0o755), lambda: os.chmod(key_folder, 0o700)),
            ("audit log", lambda: _chattr("-a", record.log), lambda: _chattr("+a", record.log)),
            ("audit log", lambda: _log_mode(record.log, 0o666), lambda: _log_mode(record.log, 0o644)),
            ("claude-code settings", lambda: os.chmod(settings, 0o646), lambda: os.chmod(settings, 0o644)),
            (
                "claude-code settings",
                lambda: _managed_only(settings, False),
                lambda: _managed_only(settings, True),
            ),
            (
                "codex settings",
                lambda: os.chown(record.clients["codex"], 65534, 0),
                lambda: os.chown(record.clients["codex"], 0, 0),
            ),
            (
                "unit",
                lambda: os.rename(record.unit, record.unit + ".off"),
                lambda: os.rename(record.unit + ".off", record.unit),
            ),
            ("install", lambda: os.chmod(record.package, 0o777), lambda: os.chmod(record.package, 0o755)),
            (
                "socket folder",
                lambda: os.chmod(os.path.dirname(record.socket), 0o777),
                lambda: os.chmod(os.path.dirname(record.socket), 0o755),
            ),
            ("socket", lambda: os.chmod(record.socket, 0o600), lambda: os.chmod(record.socket, 0o666)),
        ]
        for subject, remove, restore in removals:
            if subject == "audit log" and shutil.which("chattr") is None:
                continue
            remove()
            try:
                code, failed = _doctor()
                if subject == "socket" and not failed:
                    continue  # no agent user to judge the socket's mode for
                assert code == 1 and failed, subject
                assert all(line.split(":", 1)[0].split(None, 1)[1] == subject for line in failed), (
                    subject,
                    failed,
                )
            finally:
                restore()
        assert _doctor() == (0, [])
    finally:
        stop_gateway(record, process)
    code, failed = _doctor()
    assert code == 1 and [line.split(":")[0] for line in failed] == ["FAIL  gateway"]


def _another_user_may_only_ask_for_decisions(installed: Installed) -> None:
    """As the agent's user: ``stop``, ``status`` and a signal to the gateway are all refused."""
    record = installed.record
    plan = Path(installed.layout.root).parent / "plan.json"
    pid = gateway_pid(record)
    plan.write_text(
        json.dumps(
            [
                {"name": "stop", "op": "gateway-op", "path": record.socket, "request": "stop"},
                {"name": "status", "op": "gateway-op", "path": record.socket, "request": "status"},
                {"name": "signal", "op": "signal", "pid": pid, "signal": "SIGTERM"},
            ]
        )
    )
    plan.chmod(0o644)
    attempts = Path(__file__).with_name("agent_attempts.py")
    done = subprocess.run(
        as_user(AGENT, [record.python, str(attempts), str(plan)]), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert results["stop"].startswith("refused") and results["status"].startswith("refused"), results
    assert results["signal"] == "denied: EPERM" and gateway_pid(record) == pid


def _chattr(flag: str, path: str) -> None:
    subprocess.run(["chattr", flag, path], check=True, capture_output=True)


def _log_mode(path: str, mode: int) -> None:
    """An append-only file's mode cannot change, not even by root: lift the attribute around it."""
    _chattr("-a", path)
    os.chmod(path, mode)
    if mode == 0o644:
        _chattr("+a", path)


def _managed_only(path: str, value: bool) -> None:
    document = json.loads(Path(path).read_text())
    document["allowManagedHooksOnly"] = value
    Path(path).write_text(json.dumps(document, indent=2) + "\n")


def test_init_again_keeps_the_key_and_deployment_and_a_missing_user_is_named(installed: Installed) -> None:
    record = installed.record
    key = Path(record.key).read_bytes()
    deployment = Path(record.deployment).read_text()
    project = str(Path(installed.layout.root).parent / "project")
    again = subprocess.run(
        [record.program, "init", "claude-code", "--system", "--service-user", "root", "--project", project],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "kept" in again.stdout and "never replaced" in again.stdout
    assert Path(record.key).read_bytes() == key and Path(record.deployment).read_text() == deployment
    code, out = run_cli(
        ["init", "codex", "--system", "--service-user", "no-such-user-dsh", "--project", project]
    )
    assert code == 1 and "useradd --system" in out
