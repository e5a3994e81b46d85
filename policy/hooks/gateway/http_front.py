"""The resident gateway on loopback HTTP, for Claude Code's ``http`` hook type.

``POST /hook/claude-code`` (or ``/hook/codex``) with the event JSON as the body and
``Authorization: Bearer <token>``; the answer is always ``200`` with one JSON object, read by
Claude Code like a command hook's stdout. HTTP has no exit code, so a refusal is spelled in JSON
for the event that fired (:func:`http_body`): ``permissionDecision: "deny"`` for PreToolUse,
``decision: "block"`` for PostToolUse and UserPromptSubmit, ``continue: false`` for the rest and
for input too broken to name its event. ``GET /status`` answers the health document.

Only loopback addresses are accepted. The token lives in a 0600 file in the runtime folder (made
on first start, 256 bits from ``secrets``); a token file another user owns, or one others can
read, is refused. A port another user already listens on is refused with that user's uid
(Linux), since hooks pointed at it would hand that user every event and let it answer "allow".

Claude Code counts a non-2xx answer, a refused connection and a timeout as a non-blocking error;
set ``onFailure: "block"`` on http hooks so those block the call instead.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import socket
import stat
from collections.abc import Callable
from typing import Any, Final

import anyio
import structlog
from anyio.abc import SocketAttribute, SocketListener, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from dsh_policy.policy.hooks.gateway.connections import ConnectionTable
from dsh_policy.policy.hooks.gateway.front_limits import FrontLimits
from dsh_policy.policy.hooks.gateway.safe_answers import FAIL_CLOSED_PREFIX
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.hooks.gateway.workers import Workers
from dsh_policy.policy.hooks.protocol.messages import EXIT_BLOCK, MAX_INPUT_BYTES, EventName, HookReply
from dsh_policy.policy.loopback import is_loopback_ip

_log = structlog.get_logger("dsh_policy.gateway.http")

HOOK_PREFIX: Final[str] = "/hook/"
MAX_HEAD_BYTES: Final[int] = 64 * 1024  # request line and header fields
MAX_HEADERS: Final[int] = 100


def http_body(reply: HookReply, event: EventName | None) -> dict[str, Any]:
    """A command-hook reply as the JSON body of an http hook's answer."""
    if reply.exit_code != EXIT_BLOCK:
        text = reply.stdout.strip()
        return json.loads(text) if text else {}
    reason = reply.stderr.strip() or FAIL_CLOSED_PREFIX
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    if event in ("PostToolUse", "UserPromptSubmit"):
        return {"decision": "block", "reason": reason}
    return {"continue": False, "stopReason": reason}


class HttpBinding:
    """A bound, listening loopback socket for the HTTP front, and its token."""

    def __init__(self, sock: socket.socket, token: bytes) -> None:
        self.sock = sock
        self.token = token
        self.server_port: int = sock.getsockname()[1]


def start_http(
    service: GatewayService | None, host: str, port: int, token_file: str, backlog: int = 4096
) -> HttpBinding | str:
    """A bound, listening (not yet serving) HTTP socket, or an error message."""
    loopback = is_loopback_ip(host)
    if loopback is None:
        return f"{host!r} is not an IP address (use 127.0.0.1 or ::1)"
    if not loopback:
        return f"{host} is not a loopback address; the gateway listens on loopback only"
    token = load_or_make_token(token_file)
    if isinstance(token, str):
        return token
    owner = port_owner(port) if port else None
    if owner is not None and owner != os.geteuid():
        return f"port {port} on {host} is held by uid {owner}; refusing to share it"
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as error:
        sock.close()
        return f"cannot listen on {host}:{port}: {error.strerror}"
    return HttpBinding(sock, token)


class _Request:
    __slots__ = ("headers", "method", "target", "version")

    def __init__(self, method: str, target: str, version: str, headers: dict[str, str]) -> None:
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers

    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


class _BadRequest(Exception):
    """The request head cannot be read as HTTP/1.1."""


def _parse_head(head: bytes) -> _Request:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # latin-1 decodes every byte; kept for clarity
        raise _BadRequest("undecodable head") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest("malformed request line")
    headers: dict[str, str] = {}
    if len(lines) - 1 > MAX_HEADERS:
        raise _BadRequest("too many header fields")
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise _BadRequest("malformed header field")
        key = name.lower()
        if key in headers and key in ("content-length", "authorization", "transfer-encoding"):
            raise _BadRequest(f"repeated {name}")
        headers[key] = value.strip()
    return _Request(parts[0], parts[1], parts[2], headers)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
}


def _response(status: int, document: dict[str, Any], *, close: bool) -> bytes:
    data = json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
    )
    return head.encode("ascii") + data


class HttpFront:
    """Serves the HTTP binding until stopped: keep-alive, every deadline of the limits."""

    def __init__(
        self,
        binding: HttpBinding,
        service: GatewayService,
        status: Callable[[], dict[str, Any]],
        table: ConnectionTable,
        workers: Workers,
    ) -> None:
        self.binding = binding
        self.service = service
        self.status = status
        self.table = table
        self.workers = workers
        self.limits: FrontLimits = table.limits

    async def serve(self, stopping: anyio.Event) -> None:
        """Accept until ``stopping``; then close idle keep-alive connections and finish the rest."""
        listener = await SocketListener.from_socket(self.binding.sock)
        async with anyio.create_task_group() as connections:
            async with anyio.create_task_group() as accepting:

                async def accept_forever() -> None:
                    while True:
                        await self.table.wait_for_room()
                        stream = await listener.accept()
                        connections.start_soon(self._connection, stream, name="http connection")

                accepting.start_soon(accept_forever, name="http accept")
                await stopping.wait()
                accepting.cancel_scope.cancel()
            await listener.aclose()
            self.table.close_idle()

    async def _connection(self, stream: SocketStream) -> None:
        peer = stream.extra(SocketAttribute.remote_address, None)
        host = peer[0] if isinstance(peer, tuple) else str(peer)
        connection = self.table.admit(("http", host))
        if connection is None:
            await stream.aclose()
            return
        buffered = BufferedByteReceiveStream(stream)
        try:
            async with stream:
                first = True
                while True:
                    connection.scope = anyio.CancelScope()
                    connection.waiting, connection.idle = True, not first
                    outcome = None
                    with connection.scope:
                        outcome = await self._read_request(buffered, first)
                    if outcome is None:
                        return
                    connection.waiting = connection.idle = False
                    reply, keep, hook = outcome
                    if hook is not None:
                        answered = await self.workers.run(lambda h=hook: self.service.hook(*h))  # type: ignore[misc]
                        reply = _response(200, http_body(answered.reply, answered.event), close=not keep)
                    with anyio.move_on_after(self.limits.write_seconds) as sending:
                        await stream.send(reply)
                    if sending.cancelled_caught or not keep:
                        return
                    first = False
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError):
            pass
        finally:
            self.table.release(connection)

    async def _read_request(
        self, buffered: BufferedByteReceiveStream, first: bool
    ) -> tuple[bytes, bool, tuple[str, bytes] | None] | None:
        """``(reply, keep_alive, None)`` for a request answered at once, ``(b"", keep_alive,
        (harness, body))`` for a hook event to decide, or None to close without a word."""
        limits = self.limits
        seconds = limits.header_seconds if first else limits.idle_seconds + limits.header_seconds
        try:
            with anyio.fail_after(seconds):
                head = await buffered.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES)
            request = _parse_head(head)
        except TimeoutError:
            self.table.counts["timed_out"] += 1
            return None
        except anyio.DelimiterNotFound:
            self.table.counts["framing_errors"] += 1
            return _response(431, {"error": "request head too large"}, close=True), False, None
        except _BadRequest as error:
            self.table.counts["framing_errors"] += 1
            return _response(400, {"error": str(error)}, close=True), False, None
        except (anyio.IncompleteRead, anyio.EndOfStream):
            return None
        keep = request.keep_alive()
        if not self._authorized(request):
            return _response(401, {"error": "missing or wrong bearer token"}, close=True), False, None
        if request.method == "GET":
            if request.target == "/status":
                return _response(200, self.status(), close=not keep), keep, None
            return _response(404, {"error": "not found"}, close=not keep), keep, None
        if request.method != "POST":
            return _response(405, {"error": "method not allowed"}, close=True), False, None
        if not request.target.startswith(HOOK_PREFIX):
            return _response(404, {"error": "not found"}, close=True), False, None
        try:
            size = int(request.headers.get("content-length", ""))
        except ValueError:
            return _response(411, {"error": "Content-Length required"}, close=True), False, None
        if "transfer-encoding" in request.headers:
            return _response(411, {"error": "Content-Length required"}, close=True), False, None
        if not 0 <= size <= MAX_INPUT_BYTES:
            return _response(413, {"error": "hook input too large"}, close=True), False, None
        try:
            with anyio.fail_after(limits.body_seconds):
                body = await buffered.receive_exactly(size) if size else b""
        except TimeoutError:
            self.table.counts["timed_out"] += 1
            return None
        except (anyio.IncompleteRead, anyio.EndOfStream):
            return None
        return b"", keep, (request.target[len(HOOK_PREFIX) :], body)

    def _authorized(self, request: _Request) -> bool:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.binding.token)


def load_or_make_token(path: str) -> bytes | str:
    """The bearer token in ``path`` (made, 0600, if missing), or an error message."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        return f"cannot read token file {path}: {error.strerror}"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.geteuid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
            return f"refusing token file {path}: it must be a regular file of yours with mode 0600"
        token = handle.read().strip()
    if len(token) < 16:
        return f"token file {path} holds no usable token (at least 16 characters)"
    return token


def port_owner(port: int) -> int | None:
    """The uid of whoever listens on TCP ``port`` (Linux ``/proc/net/tcp*``), or None."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                next(handle, None)
                for line in handle:
                    fields = line.split()
                    if len(fields) > 7 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return int(fields[7])
        except (OSError, ValueError):
            continue
    return None
