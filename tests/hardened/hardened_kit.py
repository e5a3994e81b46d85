"""Helpers for the hardened-mode tests: install it under a temporary system root, start its gateway
as a given user, send hook events as a given user, and undo what only root can (a uniquely named
module, like hook_testkit)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.hooks.install.hardened import Layout, Record, read_record

PYTHON = sys.executable
PROGRAM = str(Path(PYTHON).parent / "dsh-policy")
START_SECONDS = 60.0  # generous: the machine is shared; never a timed assertion


@dataclass(frozen=True)
class Installed:
    """A hardened install under ``layout.root``, and its record."""

    layout: Layout
    record: Record
    output: str


def run_cli(argv: Sequence[str]) -> tuple[int, str]:
    """``dsh-policy ARGV`` in this process (as root): the exit code and what it printed."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(list(argv))
    return code, out.getvalue()


def install(
    root: Path,
    project: Path,
    service_user: str,
    clients: Sequence[str] = ("claude-code",),
    program: str | None = None,
) -> Installed:
    """``init <client> --system`` for each client, under ``root`` (``$DSH_POLICY_SYSTEM_ROOT``
    must already name it): in this process, or by ``program`` (another installation's command)."""
    assert os.environ.get("DSH_POLICY_SYSTEM_ROOT") == str(root)
    said = []
    for client in clients:
        argv = ["init", client, "--system", "--service-user", service_user, "--project", str(project)]
        if program is None:
            code, out = run_cli(argv)
        else:
            done = subprocess.run([program, *argv], capture_output=True, text=True, timeout=120, check=False)
            code, out = done.returncode, done.stdout + done.stderr
        said.append(out)
        assert code == 0, out
    layout = Layout(str(root))
    record = read_record(layout.record)
    assert isinstance(record, Record), record
    return Installed(layout, record, "".join(said))


def as_user(user: str | None, argv: list[str]) -> list[str]:
    """``argv`` run as ``user`` (``runuser``, ``setpriv`` or ``su``, whichever exists), or as is."""
    if user is None:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", user, "--", *argv]
    if shutil.which("setpriv"):
        import pwd

        account = pwd.getpwnam(user)
        return ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", *argv]
    import shlex

    return ["su", "-s", "/bin/sh", user, "-c", shlex.join(argv)]


def start_gateway(record: Record, user: str | None) -> subprocess.Popen[bytes]:
    """The gateway as ``user`` (None: this process's user), serving once its socket is there."""
    argv = [record.program, "serve", "--config", record.deployment, "--socket", record.socket]
    process = subprocess.Popen(
        as_user(user, argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd="/",
    )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and process.poll() is None and not os.path.exists(record.socket):
        time.sleep(0.05)
    if not os.path.exists(record.socket):
        process.kill()
        output = process.communicate()[0].decode(errors="replace")
        raise AssertionError(f"the gateway did not start: {output}")
    return process


def gateway_pid(record: Record) -> int:
    """The serving gateway's pid, from its lock file beside the socket."""
    return int(Path(record.socket[: -len(".sock")] + ".lock").read_text().strip())


def stop_gateway(record: Record, process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM the gateway by its own pid (``runuser`` passes the signal on), and wait."""
    if process is None:
        return
    with contextlib.suppress(OSError, ValueError):
        os.kill(gateway_pid(record), signal.SIGTERM)
    with contextlib.suppress(OSError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def hook(
    record: Record, payload: dict[str, Any], user: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """The hardened hook command of the managed settings, as ``user``: exit code and stderr."""
    argv = [
        record.program,
        "hook",
        "claude-code",
        "--config",
        record.deployment,
        "--gateway-socket",
        record.socket,
        "--gateway-user",
        record.service_user,
    ]
    environment = {**os.environ, **(env or {})}
    done = subprocess.run(
        as_user(user, argv),
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=environment,
        timeout=90,
    )
    return done.returncode, done.stderr.decode(errors="replace")


def pre_tool_use(project: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": "hardened",
        "hook_event_name": "PreToolUse",
        "cwd": str(project),
        "tool_name": tool,
        "tool_input": tool_input,
    }


def records(record: Record) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(record.log).read_text().splitlines() if line.strip()]


def shared_install(base: Path) -> Path | None:
    """An installation other users can run, at ``base/venv``: this checkout's package and
    dependencies on a system interpreter of the same version (this one may live in a home folder
    no other user can enter, as pyenv's does). Its ``dsh-policy``, or None without such a Python."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    interpreter = next(
        (
            path
            for path in (f"/usr/bin/{version}", f"/usr/local/bin/{version}")
            if os.path.exists(path) and not os.path.realpath(path).startswith(("/root/", "/home/"))
        ),
        None,
    )
    if interpreter is None:
        return None
    venv = base / "venv"
    subprocess.run([interpreter, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    ours = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
    site = next(Path(venv, "lib").glob("python3*/site-packages"))
    # addsitedir also reads that folder's .pth files: the editable install's finder among them.
    (site / "dsh-policy-checkout.pth").write_text(f"import site; site.addsitedir({str(ours)!r})\n")
    program = venv / "bin" / "dsh-policy"
    script = Path(PROGRAM).read_text().split("\n", 1)[1]
    program.write_text(f"#!{venv / 'bin' / 'python3'}\n{script}")
    program.chmod(0o755)
    return program


def undo_append_only(root: Path) -> None:
    """``chattr -a`` on every file under ``root`` that has it, so the folder can be removed."""
    chattr = shutil.which("chattr")
    if chattr is None:
        return
    for path in root.rglob("*.jsonl"):
        subprocess.run([chattr, "-a", str(path)], capture_output=True, check=False)
