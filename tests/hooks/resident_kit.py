"""Helpers for the resident-gateway tests: run the hook client, start and stop gateways, and fake
gateways that misbehave on purpose (a uniquely named module, like hook_testkit)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.hooks.gateway import wire
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec, GatewayFiles, gateway_files
from hook_testkit import PACK

PYTHON = sys.executable
CLI = [PYTHON, "-m", "dsh_policy.policy.cli"]
START_SECONDS = 60.0  # generous: the machine is shared; never a timed assertion


@dataclass(frozen=True)
class Ran:
    """What one process emitted."""

    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def hook_argv(harness: str, *options: str, pack: Path | None = PACK) -> list[str]:
    return [*CLI, "hook", harness, *(["--pack", str(pack)] if pack is not None else []), *options]


def run_client(
    argv: list[str], stdin: bytes | dict[str, Any], env: dict[str, str] | None = None, timeout: float = 90
) -> Ran:
    """The hook command as a harness runs it: a fresh process, the event on stdin."""
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    done = subprocess.run(
        argv, input=data, capture_output=True, timeout=timeout, check=False, env={**os.environ, **(env or {})}
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def spec_for(
    *, pack: Path | None = PACK, config: Path | None = None, audit: Path | None = None
) -> DeploymentSpec:
    """The deployment a hook with these options names (as the client computes it)."""
    return DeploymentSpec.from_options(
        config=str(config) if config else None,
        packs=[str(pack)] if pack else [],
        params=[],
        engine=None,
        shadow=False,
        audit=str(audit) if audit else None,
    )


def files_for(spec: DeploymentSpec) -> GatewayFiles:
    return gateway_files(spec)


def ask(
    spec: DeploymentSpec, op: str, fields: dict[str, Any] | None = None, body: bytes = b""
) -> dict[str, Any]:
    """One request to the running gateway of ``spec``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with sock:
        sock.connect(files_for(spec).socket)
        return wire.exchange(sock, wire.encode_request(op, fields or {}, body), time.monotonic() + 30)


def status(spec: DeploymentSpec) -> dict[str, Any] | None:
    """The gateway's status, or None when none answers."""
    try:
        return ask(spec, "status")
    except (OSError, wire.WireError):
        return None


def wait_for(condition: Callable[[], Any], what: str, seconds: float = START_SECONDS) -> Any:
    """Poll ``condition`` until it is truthy (generous deadline: a hung test, not a slow one)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def start_gateway(spec: DeploymentSpec, *extra: str) -> subprocess.Popen[bytes]:
    """``dsh-policy serve`` for ``spec`` in the background; returns once it answers."""
    process = subprocess.Popen(
        [*CLI, "serve", *spec.policy_argv(), *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: status(spec) or process.poll() is not None, "the gateway to answer")
    except AssertionError:
        process.kill()
        raise
    if process.poll() is not None:
        raise AssertionError(f"gateway exited {process.returncode}: {process.stdout.read().decode()}")  # type: ignore[union-attr]
    return process


def stop_gateway(spec: DeploymentSpec) -> None:
    """Ask the gateway of ``spec`` to leave and wait until its socket is gone."""
    with contextlib.suppress(OSError, wire.WireError):
        ask(spec, "stop")
    wait_for(lambda: not os.path.exists(files_for(spec).socket), "the gateway to leave")


class FakeGateway:
    """A Unix socket at a deployment's socket path that does what a broken gateway does:
    ``behaviour(conn)`` is called with each accepted connection."""

    def __init__(self, path: str, behaviour: Callable[[socket.socket], None]) -> None:
        self.path = path
        self.behaviour = behaviour
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.sock.bind(path)
        os.chmod(path, 0o600)
        self.sock.listen(16)
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self.behaviour, args=(conn,), daemon=True).start()

    def close(self) -> None:
        self.sock.close()
        for conn in self.connections:
            with contextlib.suppress(OSError):
                conn.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def __enter__(self) -> FakeGateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_one_request(conn: socket.socket) -> bytes:
    """Read a request frame from ``conn`` (enough to know the client sent it)."""
    stream = conn.makefile("rb")
    _header, body = wire.read_request(stream)
    return body


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
