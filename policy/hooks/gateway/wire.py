"""The framing between hook clients and the resident gateway on its Unix socket.

A request is one header line and a body: ``DSHP1 {"op": ..., "body": N, ...}\\n`` followed by
exactly ``N`` bytes (the raw hook event, or output to redact). The answer to a hook event is
``DSHR1 <exit code> <stdout bytes> <stderr bytes>\\n`` followed by the two streams, so the client
prints it without parsing JSON; every other answer is one JSON object on one line. One request
per connection: a connection that breaks mid-way is a failure, never a retry with half a
request, and the client spells that failure as the event's safe answer.

Both ends check who is on the other side (``SO_PEERCRED`` where the platform has it): the gateway
answers only its own user, and a client talks only to a gateway of its own user.

The client's path through this module imports nothing beyond ``_socket``, ``os``, ``sys`` and
``time`` (``json`` only for answers that are not hook answers): it runs on every event.
"""

from __future__ import annotations

import _socket
import os
import sys
import time

MAGIC = b"DSHP1 "
HOOK_REPLY = b"DSHR1 "
# Sent by the gateway, before its answer, while a request waits for a worker or its decision:
# "alive, still working". A client tells a busy gateway (heartbeats) from a frozen one (silence).
HEARTBEAT = b"DSHW1\n"
MAX_HEADER_BYTES = 64 * 1024
# A hook payload is at most 32 MiB (protocol.MAX_INPUT_BYTES); output chunks are far smaller.
MAX_BODY_BYTES = 33 * 1024 * 1024
MAX_REPLY_BYTES = 96 * 1024 * 1024
_CHUNK = 256 * 1024
_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+= ")

Socket = _socket.socket


class WireError(Exception):
    """The other side broke the protocol, went away mid-message, or is not who it should be."""


class GatewayClosedError(WireError):
    """The gateway closed the connection (or reset it) without answering."""


class GatewaySilentError(WireError):
    """The gateway went silent (no answer, no heartbeat) or ran past the answer deadline: it may
    be frozen or overloaded; the request may or may not have been decided."""


def _json_value(value: object) -> bytes:
    """JSON for the flat header values clients send (plain strings need no escaping)."""
    if value is True:
        return b"true"
    if value is False:
        return b"false"
    if type(value) is int:
        return str(value).encode("ascii")
    if isinstance(value, str) and value.isascii() and _PLAIN.issuperset(value.encode("ascii")):
        return b'"' + value.encode("ascii") + b'"'
    import json

    return json.dumps(value, ensure_ascii=True).encode("ascii")


def encode_request(op: str, fields: dict[str, object], body: bytes = b"") -> bytes:
    """One request frame."""
    header = {**fields, "op": op, "body": len(body)}
    items = b",".join(_json_value(key) + b":" + _json_value(value) for key, value in header.items())
    return MAGIC + b"{" + items + b"}\n" + body


def encode_reply(document: dict[str, object]) -> bytes:
    """One JSON reply line (ASCII: text may hold lone surrogates, which UTF-8 cannot carry)."""
    import json

    return json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def encode_hook_reply(exit_code: int, stdout: str, stderr: str) -> bytes:
    """The answer to a hook event: exit code and the two streams, length-prefixed."""
    out = stdout.encode("utf-8", "backslashreplace")
    err = stderr.encode("utf-8", "backslashreplace")
    return HOOK_REPLY + f"{exit_code} {len(out)} {len(err)}\n".encode("ascii") + out + err


def peer_credentials(sock: Socket) -> tuple[int, int] | None:
    """``(pid, uid)`` of the process on the other end of a Unix socket, or None where unknowable."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(_socket.SOL_SOCKET, option, 12)  # struct ucred {pid_t; uid_t; gid_t}
    return int.from_bytes(raw[0:4], sys.byteorder), int.from_bytes(raw[4:8], sys.byteorder)


def peer_uid(sock: Socket) -> int | None:
    """The uid of the process on the other end of a Unix socket, or None where unknowable."""
    credentials = peer_credentials(sock)
    return None if credentials is None else credentials[1]


def check_peer(sock: Socket) -> None:
    """Raise :class:`WireError` unless the peer runs as this user (where the OS says so)."""
    uid = peer_uid(sock)
    if uid is not None and uid != os.geteuid():
        raise WireError(f"peer runs as uid {uid}, not {os.geteuid()}")


def unix_socket() -> Socket:
    """A new Unix stream socket (without importing ``socket.py``)."""
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


def parse_header(line: bytes) -> tuple[dict[str, object], int]:
    """A request header line (with its newline) and the body size it announces; raises WireError."""
    import json

    if not line.endswith(b"\n") or len(line) > MAX_HEADER_BYTES + 1:
        raise WireError("request header missing or too long")
    if not line.startswith(MAGIC):
        raise WireError("not a dsh-policy gateway request")
    try:
        header = json.loads(line[len(MAGIC) :])
    except ValueError as error:
        raise WireError(f"request header is not JSON: {error}") from None
    if not isinstance(header, dict) or not isinstance(header.get("op"), str):
        raise WireError("request header has no op")
    size = header.get("body")
    if type(size) is not int or not 0 <= size <= MAX_BODY_BYTES:
        raise WireError("request body size missing or too large")
    return header, size


def read_request(stream: object) -> tuple[dict[str, object], bytes]:
    """Read one request from a buffered binary stream (``readline``/``read``); raises WireError."""
    line = stream.readline(MAX_HEADER_BYTES + 1)  # type: ignore[attr-defined]
    header, size = parse_header(line)
    body = stream.read(size) if size else b""  # type: ignore[attr-defined]
    if len(body) != size:
        raise WireError(f"request body cut short ({len(body)} of {size} bytes)")
    return header, body


def exchange(sock: Socket, frame: bytes, deadline: float, silence: float | None = None) -> dict[str, object]:
    """Send one request and read its answer before ``deadline`` (``time.monotonic``). A hook
    answer comes back as ``{"exit_code", "stdout", "stderr"}``. With ``silence``, a gateway that
    sends nothing (no answer, no :data:`HEARTBEAT`) for that many seconds has gone silent.

    Raises :class:`GatewaySilentError` when the answer does not come in time,
    :class:`GatewayClosedError` when the gateway hangs up unanswered, and :class:`WireError` for a
    peer that answers garbage."""
    closed = "the gateway closed the connection before answering"
    heard = time.monotonic()
    try:
        sock.settimeout(_remaining(deadline))
        # MSG_NOSIGNAL: a peer that went away is an error value here, not a SIGPIPE.
        sock.sendall(frame, getattr(_socket, "MSG_NOSIGNAL", 0))
        heard = time.monotonic()
        data = b""
        while True:
            until = deadline if silence is None else min(deadline, heard + silence)
            sock.settimeout(_remaining(until))
            chunk = sock.recv(_CHUNK)
            if not chunk:
                raise GatewayClosedError(closed)
            heard = time.monotonic()
            data += chunk
            while data.startswith(HEARTBEAT):
                data = data[len(HEARTBEAT) :]
            if not data or HEARTBEAT.startswith(data):
                continue
            done = _complete(data)
            if done is not None:
                return done
            if len(data) > MAX_REPLY_BYTES:
                raise WireError("the gateway's answer is too large")
    except TimeoutError:
        if silence is not None and time.monotonic() < deadline:
            raise GatewaySilentError(f"the gateway sent nothing for {silence:g} s") from None
        raise GatewaySilentError("the gateway did not answer in time") from None
    except (ConnectionResetError, BrokenPipeError):
        raise GatewayClosedError(closed) from None
    except OSError as error:
        raise WireError(f"the connection to the gateway broke: {error}") from None


def _complete(data: bytes) -> dict[str, object] | None:
    """The answer in ``data`` once it is whole, else None; raises WireError for garbage."""
    if data.startswith(HOOK_REPLY):
        line_end = data.find(b"\n")
        if line_end < 0:
            if len(data) > 64:
                raise WireError("the gateway's answer has no header")
            return None
        try:
            code, out_size, err_size = (int(word) for word in data[len(HOOK_REPLY) : line_end].split(b" "))
        except ValueError:
            raise WireError("the gateway's answer has a malformed header") from None
        end = line_end + 1 + out_size + err_size
        if len(data) < end:
            return None
        if len(data) > end:
            raise WireError("the gateway's answer is longer than it says")
        body = data[line_end + 1 :]
        return {
            "exit_code": code,
            "stdout": body[:out_size].decode("utf-8", "replace"),
            "stderr": body[out_size:].decode("utf-8", "replace"),
        }
    if not data.endswith(b"\n"):
        return None
    import json

    try:
        document = json.loads(data)
    except ValueError as error:
        raise WireError(f"the gateway's answer is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise WireError("the gateway's answer is not a JSON object")
    return document


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left
