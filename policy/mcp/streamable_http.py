"""The Streamable HTTP transport: a loopback HTTP endpoint in front of an upstream MCP server's URL.

Each client POST carries one JSON-RPC message. The proxy parses it (a message it cannot read is one
it cannot govern), hands it to the gate (:mod:`.gate`), and either answers it here (a refused call,
a bad message) or POSTs the client's bytes unchanged to the upstream URL and reviews what comes
back: a JSON body, or an SSE stream whose events are parsed one by one (the server's own requests
and notifications relayed, the answer to this request reviewed like any other). GET (the server's
standalone stream) and DELETE (session end) are relayed, GET's events through the gate too.

What is relayed raw and what is parsed follows the spec and the SDK (``mcp`` 2.x): the body is
always parsed; headers are relayed from an allow-list only (``Accept``, ``Content-Type``,
``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Last-Event-ID``, and the 2026-07-28 routing
headers ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), so the client's credentials
(``Authorization``, cookies) never reach the upstream server (the spec forbids token passthrough).
Since the gate decides on the body, a routing header that disagrees with the body is refused here
(``HEADER_MISMATCH``), before a server or a load balancer could route on the header instead.

Local-server rules of the spec: the listener binds loopback addresses only; an ``Origin`` header,
when present, must be a loopback origin or one given with ``--allow-origin`` (DNS rebinding), and
``Host`` must name a loopback host. Both refusals are HTTP 403.

Request ids are the client's, and two clients may use the same one: the gate tracks each exchange
under its own key. A blocking thread per exchange (stdlib ``ThreadingHTTPServer`` and
``http.client``) keeps the added latency to a parse and a decision, like the stdio transport.
"""

from __future__ import annotations

import http.client
import itertools
import select
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog
from dsh_policy.policy.loopback import is_loopback_ip
from dsh_policy.policy.mcp import jsonrpc
from dsh_policy.policy.mcp.gate import McpGate, Route
from dsh_policy.policy.mcp.stdio import DEFAULT_MAX_MESSAGE_BYTES

_log = structlog.get_logger("dsh_policy.mcp")

#: JSON-RPC code of the 2026-07-28 revision for a routing header that disagrees with the body.
HEADER_MISMATCH = -32020
#: Body field a 2026-07-28 client mirrors in ``Mcp-Name``, per method.
NAME_BEARING_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: Request headers relayed upstream (lower case); everything else, credentials first, stays here.
_RELAYED_REQUEST_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "mcp-method",
        "mcp-name",
    }
)
_PARAM_HEADER_PREFIX = "mcp-param-"
#: Response headers relayed to the client (no cookies: the upstream's session state stays upstream).
_RELAYED_RESPONSE_HEADERS = ("content-type", "mcp-session-id", "mcp-protocol-version")
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
DEFAULT_UPSTREAM_TIMEOUT = 300.0
#: A kept-alive upstream connection idle longer than this is not reused: servers close idle ones
#: (uvicorn and Node after 5 s, gunicorn after 2 s), and a POST sent as the server closes would
#: fail with no way to tell whether the server ran it (so it is never retried).
UPSTREAM_IDLE_SECONDS = 1.0


def listen_address(text: str) -> tuple[str, int] | str:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as an address, or why it cannot be listened on:
    only loopback addresses, since a local proxy reachable from the network would let anyone on it
    use the upstream server under this machine's policy."""
    host, _, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        return f"--listen {text!r}: give HOST:PORT, e.g. 127.0.0.1:8765"
    if host == "localhost":
        host = "127.0.0.1"
    loopback = is_loopback_ip(host)
    if loopback is None:
        return f"--listen {text!r}: the host must be a loopback IP address (127.0.0.1 or ::1)"
    if not loopback:
        return f"--listen {text!r}: the proxy listens on loopback addresses only (127.0.0.1 or ::1)"
    return host, int(port_text)


def upstream_problem(url: str) -> str | None:
    """Why ``url`` cannot be the upstream server's endpoint, or None."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return f"--upstream {url!r}: give the server's http:// or https:// URL"
    if parsed.username or parsed.password:
        return "--upstream: credentials in the URL would be sent to the server; leave them out"
    return None


def loopback_host(value: str) -> bool:
    """Whether a ``Host`` header (``name[:port]``, ``[v6][:port]``) names this machine's loopback."""
    try:
        host = urllib.parse.urlsplit("//" + value).hostname
    except ValueError:
        return False
    return host is not None and host.lower() in _LOOPBACK_NAMES


def origin_allowed(origin: str | None, allowed: Sequence[str]) -> bool:
    """An absent Origin is a non-browser client; a present one must be loopback or listed."""
    if origin is None:
        return True
    if origin in allowed:
        return True
    parsed = urllib.parse.urlsplit(origin)
    return parsed.scheme in ("http", "https") and loopback_host(parsed.netloc)


def upstream_headers(headers: Any) -> dict[str, str]:
    """The client's headers that the upstream server may see: the allow-list, nothing else."""
    relayed: dict[str, str] = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in _RELAYED_REQUEST_HEADERS or lower.startswith(_PARAM_HEADER_PREFIX):
            relayed[name] = value
    return relayed


def header_mismatch(message: jsonrpc.Message, headers: Any) -> str | None:
    """Why a request's 2026-07-28 routing headers disagree with its body, or None."""
    method_header = headers.get("Mcp-Method")
    if method_header is not None and method_header != message.method:
        return "Mcp-Method header does not match the body's method"
    field = NAME_BEARING_METHODS.get(message.method or "")
    name_header = headers.get("Mcp-Name")
    if field is not None and name_header is not None and name_header != message.params.get(field):
        return f"Mcp-Name header does not match the body's params.{field}"
    return None


@dataclass(slots=True)
class SseEvent:
    """One server-sent event: its fields as sent, ``data`` joined by newlines."""

    data: str
    event: str | None = None
    id: str | None = None
    retry: str | None = None

    def encode(self, data: str | None = None) -> bytes:
        lines = []
        if self.id is not None:
            lines.append(f"id: {self.id}")
        if self.event is not None:
            lines.append(f"event: {self.event}")
        if self.retry is not None:
            lines.append(f"retry: {self.retry}")
        body = self.data if data is None else data
        lines.extend(f"data: {line}" for line in body.split("\n"))
        return ("\n".join(lines) + "\n\n").encode()


def read_events(response: http.client.HTTPResponse, limit: int) -> Iterator[SseEvent | str]:
    """The events of an SSE body, or a problem string (an event over ``limit`` bytes) and stop."""
    data: list[str] = []
    fields: dict[str, str] = {}
    size = 0
    while True:
        line = response.readline(limit + 1)
        if not line:
            return
        if len(line) > limit:
            yield f"an event larger than {limit:,} bytes"
            return
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if not text:
            if data or fields:
                yield SseEvent("\n".join(data), fields.get("event"), fields.get("id"), fields.get("retry"))
            data, fields, size = [], {}, 0
            continue
        if text.startswith(":"):
            continue  # a comment (keep-alive)
        name, _, value = text.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            size += len(value)
            if size > limit:
                yield f"an event larger than {limit:,} bytes"
                return
            data.append(value)
        elif name in ("event", "id", "retry"):
            fields[name] = value


class HttpProxy:
    """A loopback Streamable HTTP endpoint relaying to one upstream server through one gate."""

    def __init__(
        self,
        gate: McpGate,
        upstream: str,
        listen: tuple[str, int],
        *,
        allowed_origins: Sequence[str] = (),
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        upstream_timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
    ) -> None:
        self.gate = gate
        self.upstream = urllib.parse.urlsplit(upstream)
        self.allowed_origins = tuple(allowed_origins)
        self.limit = max_message_bytes
        self.timeout = upstream_timeout
        self._exchanges = itertools.count(1)
        # Decisions are CPU work under one GIL anyway; one at a time keeps the pin book and the
        # pending table simple while upstream I/O of other exchanges goes on.
        self.gate_lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"proxy": self})
        family_server = _V6Server if ":" in listen[0] else ThreadingHTTPServer
        self.server = family_server(listen, handler)
        self.server.daemon_threads = True

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def serve_forever(self) -> None:
        self.server.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def next_exchange(self) -> int:
        return next(self._exchanges)

    def connect(self) -> http.client.HTTPConnection:
        host, port = self.upstream.hostname or "", self.upstream.port
        if self.upstream.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=self.timeout)
        return http.client.HTTPConnection(host, port, timeout=self.timeout)

    def path(self) -> str:
        path = self.upstream.path or "/"
        return f"{path}?{self.upstream.query}" if self.upstream.query else path


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class _UpstreamLink:
    """The upstream connection of one client connection, kept alive between its POSTs (a TCP
    connect and the server's connection set-up per call cost more than the decision). Only an
    answer read to its end, on a connection neither side means to close, is left for the next."""

    __slots__ = ("connection", "idle_since", "proxy")

    def __init__(self, proxy: HttpProxy) -> None:
        self.proxy = proxy
        self.connection: http.client.HTTPConnection | None = None
        self.idle_since = 0.0

    def take(self) -> http.client.HTTPConnection:
        connection, self.connection = self.connection, None
        if connection is not None and (
            time.monotonic() - self.idle_since > UPSTREAM_IDLE_SECONDS or _closed_by_peer(connection)
        ):
            connection.close()
            connection = None
        return connection or self.proxy.connect()

    def give_back(
        self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse | None
    ) -> None:
        if response is None or response.will_close or not response.isclosed() or self.connection is not None:
            connection.close()
            return
        self.connection, self.idle_since = connection, time.monotonic()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _closed_by_peer(connection: http.client.HTTPConnection) -> bool:
    """Whether a kept-alive connection can no longer carry a request: no socket, or one with
    something to read between answers (the server's close, or bytes nobody asked for)."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class _Handler(BaseHTTPRequestHandler):
    proxy: HttpProxy
    protocol_version = "HTTP/1.1"
    server_version = "dsh-policy-mcp"
    # Headers and body leave in one segment (the server flushes after each request; streams flush
    # per event), and no small write waits for the client's delayed ACK (Nagle): 40 ms per answer.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    _link: _UpstreamLink | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass  # (a format per request on the hot path; failures are logged where they are handled)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if self._link is not None:
                self._link.close()

    # --- checks every request passes -----------------------------------------------------------------

    def _refused(self) -> bool:
        host = self.headers.get("Host")
        if host is None or not loopback_host(host):
            self._send_json(403, jsonrpc.error(None, jsonrpc.INVALID_REQUEST, "Host must name the loopback"))
            return True
        if not origin_allowed(self.headers.get("Origin"), self.proxy.allowed_origins):
            _log.warning("MCP HTTP request from a foreign Origin refused", origin=self.headers.get("Origin"))
            self._send_json(403, jsonrpc.error(None, jsonrpc.INVALID_REQUEST, "Origin not allowed"))
            return True
        return False

    # --- responses -----------------------------------------------------------------------------------

    def _send_json(
        self, status: int, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None
    ) -> None:
        payload = body if isinstance(body, bytes) else jsonrpc.encode(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _send_empty(self, status: int, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # --- verbs ---------------------------------------------------------------------------------------

    def do_POST(self) -> None:
        if self._refused():
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._send_json(411, jsonrpc.error(None, jsonrpc.INVALID_REQUEST, "Content-Length required"))
            return
        if int(length) > self.proxy.limit:
            self.close_connection = True
            reason = f"message larger than {self.proxy.limit:,} bytes"
            self._send_json(413, jsonrpc.error(None, jsonrpc.MESSAGE_TOO_LARGE, reason))
            return
        raw = self.rfile.read(int(length))
        parsed = jsonrpc.parse(raw)
        proxy = self.proxy
        if isinstance(parsed, jsonrpc.FramingError):
            with proxy.gate_lock:
                route = proxy.gate.client_garbage(parsed)
            self._send_json(400, route.to_client[0])
            return
        if parsed.kind == "request" and (mismatch := header_mismatch(parsed, self.headers)) is not None:
            self._send_json(400, jsonrpc.error(parsed.id, HEADER_MISMATCH, mismatch))
            return
        key = (proxy.next_exchange(), parsed.id)
        with proxy.gate_lock:
            try:
                route = proxy.gate.from_client(parsed, raw, key=key)
            except Exception as error:  # a bug must refuse, not kill the exchange
                route = proxy.gate.failed(parsed, True, error)
        if not route.to_server:
            if route.to_client:
                self._send_json(200, route.to_client[0])
            else:
                self._send_empty(202)
            return
        self._relay_post(parsed, raw, key)

    def _relay_post(self, message: jsonrpc.Message, raw: bytes, key: tuple[int, Any]) -> None:
        proxy = self.proxy
        if self._link is None:
            self._link = _UpstreamLink(proxy)
        connection = self._link.take()
        response: http.client.HTTPResponse | None = None
        try:
            try:
                connection.request("POST", proxy.path(), body=raw, headers=upstream_headers(self.headers))
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as error:
                self._upstream_failed(message, key, f"it could not be reached: {error}", 502)
                return
            self._relay_answer(message, key, response)
        finally:
            self._link.give_back(connection, response)

    def _upstream_failed(self, message: jsonrpc.Message, key: tuple[int, Any], why: str, status: int) -> None:
        reason = f"the MCP server {self.proxy.gate.server!r} is not available: {why}"
        _log.warning("MCP upstream failed", server=self.proxy.gate.server, reason=why)
        if message.kind != "request" or message.id is None:
            self._send_empty(status)
            return
        with self.proxy.gate_lock:
            route = self.proxy.gate.abandon(key, message.id, reason, jsonrpc.SERVER_UNAVAILABLE)
        body = (
            route.to_client[0]
            if route.to_client
            else jsonrpc.error(message.id, jsonrpc.SERVER_UNAVAILABLE, reason)
        )
        self._send_json(status, body)

    def _response_headers(self, response: http.client.HTTPResponse) -> dict[str, str]:
        return {
            name: value
            for name in _RELAYED_RESPONSE_HEADERS
            if name != "content-type" and (value := response.getheader(name)) is not None
        }

    def _relay_answer(
        self, message: jsonrpc.Message, key: tuple[int, Any], response: http.client.HTTPResponse
    ) -> None:
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        headers = self._response_headers(response)
        if message.kind != "request":  # a notification or an answer to the server: 202 expected
            response.read()
            self._send_empty(response.status, headers)
            return
        if kind == "text/event-stream" and response.status < 300:
            self._relay_stream(response, headers, message, key)
            return
        if kind != "application/json":
            response.read()
            why = f"it answered HTTP {response.status} with {kind or 'no content type'}"
            self._upstream_failed(message, key, why, 502 if response.status < 400 else response.status)
            return
        body = response.read(self.proxy.limit + 1)
        if len(body) > self.proxy.limit:
            self._upstream_failed(message, key, f"its answer is larger than {self.proxy.limit:,} bytes", 502)
            return
        answer = jsonrpc.parse(body)
        if isinstance(answer, jsonrpc.FramingError) or answer.kind not in ("response", "error"):
            why = answer.reason if isinstance(answer, jsonrpc.FramingError) else "it answered with a request"
            self._upstream_failed(message, key, f"unreadable answer: {why}", 502)
            return
        lines = self._from_server(answer, body, key)
        if not lines:
            self._upstream_failed(message, key, "its answer names another request", 502)
            return
        self._send_json(response.status, lines[0], headers)

    def _from_server(self, message: jsonrpc.Message, raw: bytes, key: tuple[int, Any] | None) -> list[bytes]:
        proxy = self.proxy
        answers_this = key is not None and message.kind in ("response", "error") and message.id == key[1]
        with proxy.gate_lock:
            try:
                route: Route = proxy.gate.from_server(message, raw, key=key if answers_this else None)
            except Exception as error:  # a bug must fail the request, never relay it unchecked
                if answers_this and key is not None and message.id is not None:
                    reason = f"dsh-policy failed closed: internal error ({type(error).__name__})"
                    route = proxy.gate.abandon(key, message.id, reason, jsonrpc.INTERNAL_ERROR)
                else:
                    route = proxy.gate.failed(message, False, error)
        return [line.rstrip(b"\n") for line in route.to_client]

    def _relay_stream(
        self,
        response: http.client.HTTPResponse,
        headers: dict[str, str],
        message: jsonrpc.Message | None,
        key: tuple[int, Any] | None,
    ) -> None:
        """Each upstream event through the gate, re-emitted with its id and type; the request's
        answer, when the stream ends without one, fails rather than leaving the client waiting."""
        self.send_response(response.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.flush()  # the client learns the stream is open before its first event
            for event in read_events(response, self.proxy.limit):
                if isinstance(event, str):
                    break
                if not event.data.strip():
                    self._chunk(event.encode())  # a priming or keep-alive event: no message
                    continue
                parsed = jsonrpc.parse(event.data.encode())
                if isinstance(parsed, jsonrpc.FramingError):
                    _log.warning("bad JSON-RPC event from the server", server=self.proxy.gate.server)
                    continue
                lines = self._from_server(parsed, event.data.encode(), key)
                for line in lines:
                    self._chunk(event.encode(line.decode()))
                if not lines and event.id is not None:
                    self._chunk(SseEvent("", id=event.id).encode())  # keep the resumption point
            if message is not None and key is not None and message.id is not None:
                reason = f"the MCP server {self.proxy.gate.server!r} ended its stream without an answer"
                with self.proxy.gate_lock:
                    route = self.proxy.gate.abandon(key, message.id, reason, jsonrpc.SERVER_UNAVAILABLE)
                for line in route.to_client:
                    self._chunk(SseEvent(line.rstrip(b"\n").decode()).encode())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (OSError, http.client.HTTPException) as error:
            _log.info("MCP stream ended", server=self.proxy.gate.server, error=str(error))
            self.close_connection = True
            if message is not None and key is not None and message.id is not None:
                with self.proxy.gate_lock:
                    self.proxy.gate.abandon(
                        key, message.id, f"stream failed: {error}", jsonrpc.SERVER_UNAVAILABLE
                    )

    def do_GET(self) -> None:
        """The server's standalone stream: its requests and notifications, through the gate."""
        if self._refused():
            return
        connection = self.proxy.connect()
        try:
            try:
                connection.request("GET", self.proxy.path(), headers=upstream_headers(self.headers))
                response = connection.getresponse()
            except (OSError, http.client.HTTPException) as error:
                reason = f"the MCP server {self.proxy.gate.server!r} is not available: {error}"
                self._send_json(502, jsonrpc.error(None, jsonrpc.SERVER_UNAVAILABLE, reason))
                return
            kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if kind == "text/event-stream" and response.status < 300:
                self._relay_stream(response, self._response_headers(response), None, None)
            else:
                response.read()
                self._send_empty(response.status, self._response_headers(response))
        finally:
            connection.close()

    def do_DELETE(self) -> None:
        """The client ends its session: relayed, so the server can let it go."""
        if self._refused():
            return
        connection = self.proxy.connect()
        try:
            try:
                connection.request("DELETE", self.proxy.path(), headers=upstream_headers(self.headers))
                response = connection.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                self._send_empty(502)
                return
            self._send_empty(response.status, self._response_headers(response))
        finally:
            connection.close()
