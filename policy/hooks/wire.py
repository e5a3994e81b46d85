"""The framing between hook clients and the resident gateway on its Unix socket.

A request is one header line and a body: ``DSHP1 {"op": ..., "body": N, ...}\\n`` followed by
exactly ``N`` bytes (the raw hook event, or output to redact). A reply is one JSON object on one
line. One request per connection: a connection that breaks mid-way is a failure, never a retry
with half a request, and the client spells that failure as the event's safe answer.

Both ends check who is on the other side (``SO_PEERCRED`` where the platform has it): the gateway
answers only its own user, and a client talks only to a gateway of its own user.

Standard library only (the fast hook client imports this on every event).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import time

MAGIC = b"DSHP1 "
MAX_HEADER_BYTES = 64 * 1024
# A hook payload is at most 32 MiB (protocol.MAX_INPUT_BYTES); output chunks are far smaller.
MAX_BODY_BYTES = 33 * 1024 * 1024
MAX_REPLY_BYTES = 96 * 1024 * 1024
_CHUNK = 256 * 1024


class WireError(Exception):
    """The other side broke the protocol, went away mid-message, or is not who it should be."""


class GatewayClosedError(WireError):
    """The gateway closed the connection (or reset it) without answering."""


def encode_request(op: str, fields: dict[str, object], body: bytes = b"") -> bytes:
    """One request frame."""
    header = dict(fields)
    header["op"] = op
    header["body"] = len(body)
    line = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return MAGIC + line + b"\n" + body


def encode_reply(document: dict[str, object]) -> bytes:
    """One reply line (ASCII: payload text may hold lone surrogates, which UTF-8 cannot carry)."""
    return json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process on the other end of a Unix socket, or None where unknowable."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    size = struct.calcsize("3i")
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, size))
    return int(uid)


def check_peer(sock: socket.socket) -> None:
    """Raise :class:`WireError` unless the peer runs as this user (where the OS says so)."""
    uid = peer_uid(sock)
    if uid is not None and uid != os.geteuid():
        raise WireError(f"peer runs as uid {uid}, not {os.geteuid()}")


def read_request(stream: object) -> tuple[dict[str, object], bytes]:
    """Read one request from a buffered binary stream (``readline``/``read``); raises WireError."""
    line = stream.readline(MAX_HEADER_BYTES + 1)  # type: ignore[attr-defined]
    if not line.endswith(b"\n"):
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
    body = stream.read(size) if size else b""  # type: ignore[attr-defined]
    if len(body) != size:
        raise WireError(f"request body cut short ({len(body)} of {size} bytes)")
    return header, body


def exchange(sock: socket.socket, frame: bytes, deadline: float) -> dict[str, object]:
    """Send one request and read its one-line reply before ``deadline`` (``time.monotonic``).

    Raises :class:`WireError` for a peer that goes away, answers garbage or runs out of time."""
    closed = "the gateway closed the connection before answering"
    try:
        sock.settimeout(_remaining(deadline))
        # MSG_NOSIGNAL: a peer that went away is an error value here, not a SIGPIPE.
        sock.sendall(frame, getattr(socket, "MSG_NOSIGNAL", 0))
        chunks: list[bytes] = []
        size = 0
        while True:
            sock.settimeout(_remaining(deadline))
            chunk = sock.recv(_CHUNK)
            if not chunk:
                raise GatewayClosedError(closed)
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n"):
                break
            if size > MAX_REPLY_BYTES:
                raise WireError("the gateway's answer is too large")
    except TimeoutError:
        raise WireError("the gateway did not answer in time") from None
    except (ConnectionResetError, BrokenPipeError):
        raise GatewayClosedError(closed) from None
    except OSError as error:
        raise WireError(f"the connection to the gateway broke: {error}") from None
    try:
        document = json.loads(b"".join(chunks))
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
