"""The gateway's Unix-socket front end (the hook client's path), on the event loop.

One request per connection (:mod:`.wire`): the header within ``header_seconds`` of the accept,
the body within ``body_seconds`` after it, then the decision on a worker (:mod:`.workers`) while
the loop sends a :data:`~.wire.HEARTBEAT` every ``heartbeat_seconds`` (so the client can tell a
busy gateway from a frozen one), then the answer within ``write_seconds``. One ticker sends the
heartbeats of every waiting request (a non-blocking write each; a request younger than a period
gets none), rather than a task per request: under a burst, per-request tasks and timers cost the
loop more than the heartbeats themselves. A connection that
breaks the framing, is too slow, or comes from another user is closed unanswered (which every
client spells as a refusal). A gateway that serves other users (``serve --socket``, the hardened
mode) accepts their connections but answers them decisions only (:data:`CLIENT_OPS`): no
``status``, no ``stop``. ``status`` is answered on the loop itself: the health check still
answers when every worker is busy.

The socket is bound under a temporary name, made 0600 and renamed into place, so a client only
ever sees a socket with its final permissions; its listen backlog is sized for bursts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable
from typing import Any

import anyio
import structlog
from anyio.abc import SocketAttribute, SocketListener, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from dsh_policy.policy.hooks.gateway import wire
from dsh_policy.policy.hooks.gateway.connections import ConnectionTable
from dsh_policy.policy.hooks.gateway.front_limits import FrontLimits
from dsh_policy.policy.hooks.gateway.workers import Workers

_log = structlog.get_logger("dsh_policy.gateway")

Dispatch = Callable[[dict[str, Any], bytes], bytes]


class _Waiting:
    """A request waiting for its decision: its socket, since when, and the tail of a heartbeat
    the kernel took only part of (sent before the answer, so the framing stays whole)."""

    __slots__ = ("broken", "pending", "raw", "since")

    def __init__(self, raw: socket.socket) -> None:
        self.raw = raw
        self.since = time.monotonic()
        self.pending = b""
        self.broken = False


#: What a peer of another user may ask a gateway that serves other users (``serve --socket``):
#: decisions only; never ``status``, ``stop`` or anything added later.
CLIENT_OPS = frozenset({"hook", "redact"})


def bind_unix(path: str, backlog: int, mode: int = 0o600) -> tuple[socket.socket, int]:
    """A listening socket at ``path`` (``mode``, moved into place atomically) and its inode."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        sock.bind(temporary)
        os.chmod(temporary, mode)
        sock.listen(backlog)
        os.replace(temporary, path)
        return sock, os.lstat(path).st_ino
    except BaseException:
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class UnixFront:
    """Serves one bound Unix socket until stopped."""

    def __init__(
        self,
        sock: socket.socket,
        dispatch: Dispatch,
        status: Callable[[], dict[str, Any]],
        table: ConnectionTable,
        workers: Workers,
        *,
        open_to_others: bool = False,
    ) -> None:
        self.sock = sock
        self.open_to_others = open_to_others
        self.dispatch = dispatch
        self.status = status
        self.table = table
        self.workers = workers
        self.limits: FrontLimits = table.limits
        self._waiting: set[_Waiting] = set()

    async def serve(self, stopping: anyio.Event) -> None:
        """Accept until ``stopping``; then answer whatever was already queued, and every
        connection already accepted, before returning."""
        async with anyio.create_task_group() as beating:
            beating.start_soon(self._heartbeats, name="unix heartbeats")
            await self._serve(stopping)
            beating.cancel_scope.cancel()

    async def _heartbeats(self) -> None:
        """Every ``heartbeat_seconds``: a heartbeat to each request waiting at least that long."""
        period, monitor = self.limits.heartbeat_seconds, self.workers.monitor
        while True:
            await anyio.sleep(period)
            due = time.monotonic() - period
            for waiting in list(self._waiting):
                if waiting.since > due or waiting.broken:
                    continue
                data = waiting.pending or wire.HEARTBEAT
                try:
                    sent = waiting.raw.send(data)
                except BlockingIOError:
                    continue  # the client reads nothing: it will call us silent, rightly
                except OSError:
                    waiting.broken = True
                    continue
                waiting.pending = data[sent:]
                monitor.heartbeats += 1

    async def _serve(self, stopping: anyio.Event) -> None:
        listener = await SocketListener.from_socket(self.sock)
        async with anyio.create_task_group() as connections:
            async with anyio.create_task_group() as accepting:

                async def accept_forever() -> None:
                    while True:
                        await self.table.wait_for_room()
                        stream = await listener.accept()
                        connections.start_soon(self._connection, stream, name="unix connection")

                accepting.start_soon(accept_forever, name="unix accept")
                await stopping.wait()
                accepting.cancel_scope.cancel()
            while True:  # the backlog: connections made before the socket was unlinked
                stream = None
                with anyio.move_on_after(0.05):
                    stream = await listener.accept()
                if stream is None:
                    break
                connections.start_soon(self._connection, stream, name="unix connection")
            await listener.aclose()

    async def _connection(self, stream: SocketStream) -> None:
        raw = stream.extra(SocketAttribute.raw_socket)
        try:
            credentials = wire.peer_credentials(raw)
        except OSError:
            credentials = None
        own = credentials is not None and credentials[1] in (os.geteuid(), 0)
        if credentials is not None and not own and not self.open_to_others:
            _log.warning("dropped a request", error=f"peer runs as uid {credentials[1]}, not {os.geteuid()}")
            await stream.aclose()
            return
        if credentials is None and self.open_to_others:
            _log.warning("dropped a request", error="the OS does not say which user the peer runs as")
            await stream.aclose()
            return
        connection = self.table.admit(credentials[0] if credentials is not None else "unknown")
        if connection is None:
            await stream.aclose()
            return
        try:
            async with stream:
                request = None
                with connection.scope:
                    request = await self._read(BufferedByteReceiveStream(stream))
                if request is None:
                    return
                connection.waiting = False
                header, body = request
                reply: bytes | None
                if not own and header.get("op") not in CLIENT_OPS:
                    uid = credentials[1] if credentials is not None else None
                    _log.warning("refused a request", op=header.get("op"), uid=uid)
                    reply = wire.encode_reply(
                        {"error": f"op {header.get('op')!r} is for the gateway's own user"}
                    )
                elif header.get("op") == "status":
                    reply = wire.encode_reply(self.status())
                else:
                    reply = await self._decide(raw, header, body)
                if reply is not None:
                    with anyio.move_on_after(self.limits.write_seconds):
                        await stream.send(reply)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the client left; its decision (if any) is recorded
        finally:
            self.table.release(connection)

    async def _read(self, buffered: BufferedByteReceiveStream) -> tuple[dict[str, Any], bytes] | None:
        """The request, or None after logging why there is none (too slow, broken framing)."""
        phase = "header"
        try:
            with anyio.fail_after(self.limits.header_seconds):
                line = await buffered.receive_until(b"\n", wire.MAX_HEADER_BYTES)
            header, size = wire.parse_header(line + b"\n")
            phase = "body"
            with anyio.fail_after(self.limits.body_seconds):
                body = await buffered.receive_exactly(size) if size else b""
            return header, body
        except TimeoutError:
            self.table.counts["timed_out"] += 1
            _log.debug("closed a connection past its deadline", phase=phase)
        except anyio.DelimiterNotFound:
            self.table.counts["framing_errors"] += 1
            _log.warning("dropped a request", error="request header missing or too long")
        except anyio.IncompleteRead:
            self.table.counts["framing_errors"] += 1
            _log.warning("dropped a request", error=f"request {phase} cut short")
        except wire.WireError as error:
            self.table.counts["framing_errors"] += 1
            _log.warning("dropped a request", error=str(error))
        except (anyio.BrokenResourceError, anyio.EndOfStream, OSError) as error:
            _log.debug("a client left before its request was whole", error=str(error))
        return None

    async def _decide(self, raw: socket.socket, header: dict[str, Any], body: bytes) -> bytes | None:
        """The reply, decided on a worker; the heartbeat ticker keeps the client informed."""

        def work() -> bytes | None:
            try:
                return self.dispatch(header, body)
            except Exception as exc:  # a bug: no answer at all, which every client spells as a refusal
                _log.error("request failed", op=header.get("op"), error=f"{type(exc).__name__}: {exc}")
                return None

        waiting = _Waiting(raw)
        self._waiting.add(waiting)
        try:
            reply = await self.workers.run(work)
        finally:
            self._waiting.discard(waiting)
        if reply is not None and waiting.pending:
            reply = waiting.pending + reply
        return reply
