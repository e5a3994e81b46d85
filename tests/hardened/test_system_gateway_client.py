"""The hook's side of the hardened mode: with ``--gateway-socket`` it talks to the named user's
gateway or refuses, and never decides in process or starts a gateway of its own; and the socket
folder a system gateway accepts (any user; no root needed)."""

from __future__ import annotations

import json
import os
import pwd
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_policy.policy.hooks.gateway.runtime_paths import RuntimeDirError, system_gateway_files

PROGRAM = str(Path(sys.executable).parent / "dsh-policy")
PAYLOAD = {
    "session_id": "s",
    "hook_event_name": "PreToolUse",
    "cwd": "/",
    "tool_name": "Bash",
    "tool_input": {"command": "ls"},
}


def _hook(socket_path: Path, user: str, runtime: Path) -> subprocess.CompletedProcess[str]:
    argv = [PROGRAM, "hook", "claude-code", "--gateway-socket", str(socket_path), "--gateway-user", user]
    # Neither turning the gateway off nor another runtime folder may send it anywhere else.
    env = {**os.environ, "DSH_POLICY_GATEWAY": "off", "DSH_POLICY_RUNTIME_DIR": str(runtime)}
    return subprocess.run(
        argv, input=json.dumps(PAYLOAD), capture_output=True, text=True, env=env, timeout=60
    )


def _other_user() -> str:
    """A user this process is not (root when we are not, else nobody or the first other one)."""
    if os.geteuid() != 0:
        return "root"
    return next(entry.pw_name for entry in pwd.getpwall() if entry.pw_uid != 0)


def test_no_gateway_is_a_refusal_not_an_in_process_decision(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    done = _hook(tmp_path / "gateway.sock", _other_user(), runtime)
    assert done.returncode == 2 and "system gateway" in done.stderr and "gateway.sock" in done.stderr
    assert list(runtime.iterdir()) == []  # it started no gateway of its own


def test_a_stand_in_socket_of_another_user_is_refused_before_connecting(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    path = tmp_path / "gateway.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stand_in:
        stand_in.bind(str(path))
        stand_in.listen(4)
        stand_in.settimeout(0.01)
        done = _hook(path, _other_user(), runtime)
        with pytest.raises(TimeoutError):
            stand_in.accept()  # the hook never connected: nothing reached the stand-in
    assert done.returncode == 2 and "not to the gateway's user" in done.stderr, done.stderr


def test_a_system_gateway_s_folder_must_be_its_own_and_closed_to_writers(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    files = system_gateway_files(str(folder / "gateway.sock"))
    assert (files.socket, files.lock) == (str(folder / "gateway.sock"), str(folder / "gateway.lock"))
    folder.chmod(0o775)
    with pytest.raises(RuntimeDirError, match="lets other users replace the socket"):
        system_gateway_files(str(folder / "gateway.sock"))
    folder.chmod(0o755)
    with pytest.raises(RuntimeDirError, match=r"must end in \.sock"):
        system_gateway_files(str(folder / "gateway"))
    (tmp_path / "link").symlink_to(folder)
    with pytest.raises(RuntimeDirError, match="not a directory"):
        system_gateway_files(str(tmp_path / "link" / "gateway.sock"))
