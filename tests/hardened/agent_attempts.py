"""Run as the agent's unprivileged user by ``test_unprivileged_user.py``: try each disarm technique
of the self-protection corpus as the *file operation* it comes down to, and say what the OS did.

Input: a JSON file, a list of ``{"name", "op", ...}``. Output (stdout): one JSON object, each
name mapped to ``"denied: <errno name>"``, ``"refused: <the gateway's answer>"`` or ``"DONE"``
(the operation went through: the hardened mode failed). Nothing here runs a command line: every
attempt is a system call made by this process.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import sys
from typing import Any


def attempt(step: dict[str, Any]) -> str:
    op, path = step["op"], step.get("path", "")
    if op == "write":
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(step.get("text", "{}\n"))
    elif op == "append":
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(step.get("text", "{}\n"))
    elif op == "truncate":
        os.truncate(path, 0)
    elif op == "read":
        with open(path, "rb") as handle:
            handle.read(1)
    elif op == "listdir":
        os.listdir(path)
    elif op == "unlink":
        os.unlink(path)
    elif op == "rename":
        os.rename(path, step["to"])
    elif op == "chmod":
        os.chmod(path, step.get("mode", 0o666))
    elif op == "symlink-write":  # a link of the agent's own, written through
        if os.path.lexists(step["link"]):
            os.unlink(step["link"])
        os.symlink(path, step["link"])
        with open(step["link"], "w", encoding="utf-8") as handle:
            handle.write("{}\n")
    elif op == "signal":
        os.kill(int(step["pid"]), getattr(signal, step["signal"]))
    elif op == "bind":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.bind(path)
    elif op == "gateway-op":  # ask the gateway for something beside a decision
        return _gateway_op(path, step["request"])
    else:
        raise ValueError(f"unknown op {op!r}")
    return "DONE"


def _gateway_op(path: str, request: str) -> str:
    header = json.dumps({"op": request, "body": 0}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(path)
        sock.sendall(b"DSHP1 " + header + b"\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    text = answer.decode("utf-8", "replace").strip()
    if '"error"' in text and "own user" in text:
        return f"refused: {text[:200]}"
    return f"DONE: {text[:200]}"


def main(plan_path: str) -> int:
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    results = {}
    for step in plan:
        try:
            results[step["name"]] = attempt(step)
        except PermissionError as error:
            results[step["name"]] = f"denied: {errno.errorcode.get(error.errno or 0, error.errno)}"
        except OSError as error:
            results[step["name"]] = f"other: {errno.errorcode.get(error.errno or 0, error.errno)} {error}"
    print(json.dumps(results, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
