"""The hardened mode's end-to-end proof, with a real unprivileged user (opt-in: ``DSH_TEST_HARDENED=1``,
as root; docs/testing.md).

As root: create a throwaway service user and a throwaway agent user (home under ``/tmp``), install
the hardened mode under a temporary system root (never the real ``/etc``), and start the gateway
as the service user. Then, as the agent's user, try each class of disarm technique of the
self-protection corpus as the file operation it comes down to (``agent_attempts.py``: system
calls, never a command line), and show that the OS refuses every one, that the gateway still
runs, decides and logs, refuses a stand-in and other users' ``stop``, and that the log verifies
with the public key. Both users and every file are removed at the end, also on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hardened_kit import (
    PROGRAM,
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

pytestmark = [
    pytest.mark.skipif(not os.environ.get("DSH_TEST_HARDENED"), reason="opt-in: DSH_TEST_HARDENED=1 (root)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="creates users: needs root"),
    pytest.mark.skipif(shutil.which("useradd") is None, reason="needs useradd"),
]

ATTEMPTS = Path(__file__).with_name("agent_attempts.py")


@dataclass(frozen=True)
class Machine:
    root: Path
    project: Path
    home: Path
    service: str
    agent: str
    program: str  # the shared installation's dsh-policy
    python: str  # its interpreter, which both users may run


def _userdel(name: str) -> None:
    done = subprocess.run(["userdel", name], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"userdel {name}: {done.stderr}"


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    """Two throwaway users and a system root both may enter; all removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="dsh-hardened-", dir="/tmp"))
    base.chmod(0o755)
    suffix = os.urandom(3).hex()
    service, agent = f"dshsv{suffix}", f"dshag{suffix}"
    made: list[str] = []
    try:
        home = base / "home"
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", service], check=True
        )
        made.append(service)
        subprocess.run(
            ["useradd", "--no-create-home", "--home-dir", str(home), "--shell", "/bin/sh", agent], check=True
        )
        made.append(agent)
        account = pwd.getpwnam(agent)
        home.mkdir(mode=0o700)
        os.chown(home, account.pw_uid, account.pw_gid)
        project = base / "project"
        project.mkdir()
        os.chown(project, account.pw_uid, account.pw_gid)
        monkeypatch.setenv("DSH_POLICY_SYSTEM_ROOT", str(base / "root"))
        program = shared_install(base)
        if program is None:
            pytest.skip("no system Python of this version for the other users to run")
        python = str(program.parent / "python3")
        yield Machine(base / "root", project, home, service, agent, str(program), python)
    finally:
        undo_append_only(base)
        shutil.rmtree(base, ignore_errors=True)
        for name in reversed(made):
            _userdel(name)


def _plan(installed: Installed, machine: Machine, pid: int) -> list[dict[str, Any]]:
    """Each class of the corpus's disarm techniques, as the file operation it comes down to."""
    r, layout = installed.record, installed.layout
    settings, requirements = r.clients["claude-code"], r.clients["codex"]
    pack = os.path.join(layout.packs, "baseline.yaml")
    site = next(Path(r.prefix, "lib").glob("python*/site-packages"))
    key_folder = os.path.dirname(r.key)
    link = str(machine.home / "settings-link.json")
    return [
        # hook settings and deployment, through paths that do not look like theirs
        {"name": "settings: write", "op": "write", "path": settings},
        {"name": "settings: through a link", "op": "symlink-write", "path": settings, "link": link},
        {"name": "settings: replace", "op": "rename", "path": link, "to": settings},
        {"name": "codex requirements: write", "op": "write", "path": requirements},
        {"name": "deployment: write", "op": "write", "path": r.deployment},
        {"name": "deployment: other case", "op": "write", "path": r.deployment.replace("gateway", "GATEWAY")},
        {"name": "pack: append a rule", "op": "append", "path": pack, "text": "rules: []\n"},
        # version control moving files away or back
        {
            "name": "deployment: moved away",
            "op": "rename",
            "path": r.deployment,
            "to": r.deployment + ".orig",
        },
        {"name": "pack: removed", "op": "unlink", "path": pack},
        {"name": "packs: folder moved", "op": "rename", "path": layout.packs, "to": layout.packs + ".old"},
        # stopping, freezing or impersonating the gateway
        {"name": "gateway: SIGTERM", "op": "signal", "pid": pid, "signal": "SIGTERM"},
        {"name": "gateway: SIGSTOP", "op": "signal", "pid": pid, "signal": "SIGSTOP"},
        {"name": "gateway: SIGKILL", "op": "signal", "pid": pid, "signal": "SIGKILL"},
        {"name": "gateway: stop request", "op": "gateway-op", "path": r.socket, "request": "stop"},
        {"name": "gateway: status request", "op": "gateway-op", "path": r.socket, "request": "status"},
        {"name": "socket: removed", "op": "unlink", "path": r.socket},
        {"name": "socket: a stand-in beside it", "op": "bind", "path": r.socket + ".new"},
        {"name": "gateway: its environment", "op": "read", "path": f"/proc/{pid}/environ"},
        {"name": "gateway: its memory", "op": "read", "path": f"/proc/{pid}/mem"},
        # replacing the gateway's venv or package
        {
            "name": "package: a module rewritten",
            "op": "append",
            "path": os.path.join(r.package, "__init__.py"),
        },
        {"name": "venv: sitecustomize", "op": "write", "path": str(site / "sitecustomize.py")},
        {"name": "venv: a .pth file", "op": "write", "path": str(site / "zz-dsh.pth")},
        {"name": "venv: the command", "op": "write", "path": r.program},
        {
            "name": "venv: bin moved",
            "op": "rename",
            "path": os.path.dirname(r.program),
            "to": r.prefix + "/bin.old",
        },
        # blinding the audit log
        {"name": "log: truncated", "op": "truncate", "path": r.log},
        {"name": "log: rewritten", "op": "write", "path": r.log},
        {"name": "log: appended to", "op": "append", "path": r.log},
        {"name": "log: moved", "op": "rename", "path": r.log, "to": r.log + ".1"},
        {"name": "log: removed", "op": "unlink", "path": r.log},
        {"name": "log: mode", "op": "chmod", "path": r.log},
        {"name": "log: tamper state written", "op": "write", "path": r.log + ".tamper"},
        {"name": "log: watch memory written", "op": "write", "path": r.log + ".watch"},
        # the signing key and its folder
        {"name": "key: read", "op": "read", "path": r.key},
        {"name": "key: folder listed", "op": "listdir", "path": key_folder},
        {"name": "key: folder moved", "op": "rename", "path": key_folder, "to": key_folder + ".copy"},
        {"name": "key: through the gateway's root", "op": "read", "path": f"/proc/{pid}/root{r.key}"},
        # the unit, so a restart would run something else
        {"name": "unit: rewritten", "op": "write", "path": r.unit},
        {"name": "record: rewritten", "op": "write", "path": installed.layout.record},
    ]


def _as_agent(machine: Machine, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        as_user(machine.agent, argv), capture_output=True, text=True, timeout=120, check=False
    )


def test_the_agent_s_user_cannot_disarm_a_hardened_gateway(machine: Machine) -> None:
    installed = install(
        machine.root, machine.project, machine.service, ("claude-code", "codex"), program=machine.program
    )
    record = installed.record
    process = start_gateway(record, machine.service)
    try:
        code, out = run_cli(["doctor", "--hardened", "--agent-user", machine.agent])
        assert code == 0, out
        pid = gateway_pid(record)
        plan = machine.home / "plan.json"
        plan.write_text(json.dumps(_plan(installed, machine, pid)))
        os.chmod(plan, 0o644)
        done = _as_agent(machine, [machine.python, str(ATTEMPTS), str(plan)])
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)
        went_through = {
            name: what for name, what in results.items() if not what.startswith(("denied", "refused"))
        }
        assert went_through == {}, went_through
        # The gateway is the same process, still serving, and still the service user's.
        assert gateway_pid(record) == pid and process.poll() is None
        before = len(records(record))
        payload = pre_tool_use(machine.project, "Bash", {"command": "ls"})
        assert hook(record, payload, machine.agent)[0] == 0
        write = pre_tool_use(machine.project, "Write", {"file_path": record.deployment, "content": "{}"})
        code, err = hook(record, write, machine.agent)
        assert code == 2, err
        # Pointing the hook at another runtime folder, or turning the gateway off, changes nothing.
        elsewhere = {"DSH_POLICY_RUNTIME_DIR": str(machine.home), "DSH_POLICY_GATEWAY": "off"}
        assert hook(record, payload, machine.agent, elsewhere)[0] == 0
        decided = records(record)[before:]
        assert len(decided) >= 3 and all(
            (r.get("delivery") or {}).get("path") != "in-process" for r in decided
        )
        # A stand-in the agent runs answers nothing: the hook refuses it.
        _stand_in_refused(machine, record.service_user)
    finally:
        stop_gateway(record, process)
    verified = subprocess.run(
        [PROGRAM, "verify", "--key", record.public_key, record.log],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _stand_in_refused(machine: Machine, service_user: str) -> None:
    """The agent's own socket, named as the gateway's: the hook gives the safe answer."""
    fake = machine.home / "gateway.sock"
    listener = _as_agent_background(machine, fake)
    try:
        payload = pre_tool_use(machine.project, "Bash", {"command": "ls"})
        argv = [
            machine.program,
            "hook",
            "claude-code",
            "--gateway-socket",
            str(fake),
            "--gateway-user",
            service_user,
        ]
        done = subprocess.run(
            as_user(machine.agent, argv),
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and "not to the gateway's user" in done.stderr, done.stderr
    finally:
        assert listener.stdin is not None
        listener.stdin.close()  # it leaves on end of input (runuser would not pass a SIGKILL on)
        listener.wait(timeout=60)


def _as_agent_background(machine: Machine, path: Path) -> subprocess.Popen[str]:
    """A process of the agent's user listening on ``path`` (a stand-in that would answer allow)."""
    code = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX);s.bind(sys.argv[1]);s.listen(8)\n"
        "print('up',flush=True)\n"
        "sys.stdin.read()\n"
    )
    script = machine.home / "stand_in.py"
    script.write_text(code)
    os.chmod(script, 0o644)
    listener = subprocess.Popen(
        as_user(machine.agent, [machine.python, str(script), str(path)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert listener.stdout is not None and listener.stdout.readline().strip() == "up"
    with contextlib.suppress(OSError):
        os.chmod(path, 0o777)
    return listener
