"""The stdio transport: the real server as a child process, newline-delimited JSON-RPC both ways.

The client talks to this process's stdin/stdout as it would to the server; the server's stderr is
inherited (clients show it as the server's log). Two blocking readers, one per direction, hand
each line to the gate (:mod:`.gate`) and write what it returns: a thread per direction keeps the
added latency to a line's parse and decision, with no event loop to schedule. A line longer than
``max_message_bytes`` is discarded unread (the request it answers, when its id can be seen, fails
with an error). When the server's output ends, every waiting and every later request fails.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO

import structlog
from dsh_policy.policy.mcp import jsonrpc
from dsh_policy.policy.mcp.gate import McpGate, Route

_log = structlog.get_logger("dsh_policy.mcp")

DEFAULT_MAX_MESSAGE_BYTES = 64 << 20
#: Buffer of each pipe the proxy reads: a pipe holds 64 KiB, so a large message arrives in reads
#: of that size rather than of the 4 KiB a pipe's ``st_blksize`` gives ``sys.stdin.buffer``.
PIPE_BUFFER_BYTES = 64 << 10
_EXIT_WAIT_SECONDS = 5.0


class _Sink:
    """One output stream, written whole lines at a time from either reader."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.broken = False

    def write(self, lines: Sequence[bytes]) -> bool:
        if not lines:
            return not self.broken
        with self.lock:
            if self.broken:
                return False
            try:
                for line in lines:
                    self.stream.write(line if line.endswith(b"\n") else line + b"\n")
                self.stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.broken = True
        return not self.broken


def read_messages(
    stream: IO[bytes], limit: int
) -> Callable[[], tuple[bytes, jsonrpc.Message | jsonrpc.FramingError] | None]:
    """A reader of one message per call (None at the end of the stream)."""

    def next_message() -> tuple[bytes, jsonrpc.Message | jsonrpc.FramingError] | None:
        while True:
            line = stream.readline(limit + 1)
            if not line:
                return None
            if len(line) > limit and not line.endswith(b"\n"):
                prefix = line[:4096]
                while line and not line.endswith(b"\n"):
                    line = stream.readline(1 << 20)
                return prefix, jsonrpc.FramingError(
                    f"message larger than {limit:,} bytes",
                    id=jsonrpc.id_near_start(prefix),
                    code=jsonrpc.MESSAGE_TOO_LARGE,
                )
            if not line.isspace():  # (a blank line between messages is skipped, uncopied)
                return line, jsonrpc.parse(line)

    return next_message


class StdioProxy:
    """One client on this process's stdio, one server as a child."""

    def __init__(
        self,
        gate: McpGate,
        command: Sequence[str],
        *,
        client_in: IO[bytes] | None = None,
        client_out: IO[bytes] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.gate = gate
        self.command = list(command)
        self.client_in = client_in or open(  # noqa: SIM115 (this process's stdin, left open)
            sys.stdin.fileno(), "rb", buffering=PIPE_BUFFER_BYTES, closefd=False
        )
        self.client = _Sink(client_out or sys.stdout.buffer)
        self.limit = max_message_bytes
        self.process: subprocess.Popen[bytes] | None = None
        self.server: _Sink | None = None

    def _send(self, route: Route) -> None:
        # A server whose input is closed is gone: the requests just routed to it fail with it.
        if route.to_server and (self.server is None or not self.server.write(route.to_server)):
            self._send(self.gate.server_gone("its input is closed"))
        self.client.write(route.to_client)

    def _guarded(
        self,
        route: Callable[[jsonrpc.Message, bytes], Route],
        message: jsonrpc.Message,
        raw: bytes,
        *,
        from_client: bool,
    ) -> Route:
        try:
            return route(message, raw)
        except Exception as error:  # a bug must refuse, not kill the relay
            return self.gate.failed(message, from_client, error)

    def _relay(self, stream: IO[bytes], *, from_client: bool) -> None:
        """Route every message of one side until its stream ends: a line that is not a message
        to that side's garbage handling, a message through the gate (a bug in it refuses)."""
        gate = self.gate
        garbage = gate.client_garbage if from_client else gate.server_garbage
        route = gate.from_client if from_client else gate.from_server
        next_message = read_messages(stream, self.limit)
        while (item := next_message()) is not None:
            raw, message = item
            if isinstance(message, jsonrpc.FramingError):
                self._send(garbage(message))
            else:
                self._send(self._guarded(route, message, raw, from_client=from_client))

    def _pump_server(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        self._relay(self.process.stdout, from_client=False)
        try:
            status = self.process.wait(timeout=_EXIT_WAIT_SECONDS)
            reason = f"it exited with status {status}"
        except subprocess.TimeoutExpired:
            reason = "it closed its output"
        self._send(self.gate.server_gone(reason))

    def run(self) -> int:
        """Relay until the client closes its input; 0, or 1 when the server could not start."""
        started = self._start()
        pump = None
        if started:
            pump = threading.Thread(target=self._pump_server, name="mcp-server-reader", daemon=True)
            pump.start()
        previous = signal.signal(signal.SIGTERM, self._on_sigterm) if _main_thread() else None
        try:
            self._relay(self.client_in, from_client=True)
        finally:
            self._stop()
            if pump is not None:
                pump.join(timeout=_EXIT_WAIT_SECONDS)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        return 0 if started else 1

    def _start(self) -> bool:
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=PIPE_BUFFER_BYTES
            )
        except OSError as error:
            _log.error("cannot start the MCP server", command=self.command, error=str(error))
            self.gate.server_gone(f"it could not be started: {error}")
            return False
        assert self.process.stdin is not None
        self.server = _Sink(self.process.stdin)
        return True

    def _stop(self) -> None:
        """Close the server's input (its signal to leave), then make sure it has left."""
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            lock = self.server.lock if self.server is not None else threading.Lock()
            with contextlib.suppress(OSError, ValueError), lock:
                process.stdin.close()
        try:
            process.wait(timeout=_EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=_EXIT_WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _on_sigterm(self, number: int, _frame: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
        raise SystemExit(128 + number)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
