"""JSON-RPC 2.0 framing for MCP's stdio transport: one message per line, errors as values.

MCP's stdio transport is newline-delimited JSON-RPC (no embedded newlines, UTF-8). The proxy
parses every line it relays, because a message it cannot read is one it cannot govern: a line
that is not JSON, not an object, or a batch (removed from MCP in 2025-06-18) is a
:class:`FramingError`, never forwarded. Everything else about a message is left as the peer
wrote it: the proxy rewrites only the results it must (``tools/list``, ``tools/call``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import orjson

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INTERNAL_ERROR: Final = -32603
#: Implementation-defined server errors (-32000..-32099): the proxy's own refusals.
SERVER_UNAVAILABLE: Final = -32000
INVALID_RESULT: Final = -32001
MESSAGE_TOO_LARGE: Final = -32002
POLICY_UNAVAILABLE: Final = -32003

RequestId = str | int

#: Where a 2026-07-28+ request names its protocol revision (``params._meta``).
PROTOCOL_VERSION_META: Final = "io.modelcontextprotocol/protocolVersion"

_ID_NEAR_START = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,256}")')


@dataclass(frozen=True, slots=True)
class Message:
    """One parsed JSON-RPC object. ``kind`` is request, notification, response or error."""

    body: dict[str, Any]
    kind: str

    @property
    def id(self) -> RequestId | None:
        value = self.body.get("id")
        return value if isinstance(value, str | int) and not isinstance(value, bool) else None

    @property
    def method(self) -> str | None:
        value = self.body.get("method")
        return value if isinstance(value, str) else None

    @property
    def params(self) -> dict[str, Any]:
        value = self.body.get("params")
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class FramingError:
    """A line that is not one JSON-RPC message; ``id`` when one could still be read from it."""

    reason: str
    id: RequestId | None = None
    code: int = INVALID_REQUEST


def parse(line: bytes) -> Message | FramingError:
    """One line (without or with its newline) as a message, or why it is not one."""
    try:
        body = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        return FramingError(f"not JSON: {error}", code=PARSE_ERROR)
    if isinstance(body, list):
        return FramingError("JSON-RPC batches are not supported by MCP (since 2025-06-18)")
    if not isinstance(body, dict):
        return FramingError("a JSON-RPC message must be an object")
    message_id = body.get("id")
    if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, str | int)):
        return FramingError("a JSON-RPC id must be a string or an integer")
    if body.get("jsonrpc") != "2.0":
        return FramingError('"jsonrpc" must be "2.0"', id=message_id)
    method = body.get("method")
    if method is not None:
        if not isinstance(method, str):
            return FramingError('"method" must be a string', id=message_id)
        params = body.get("params")
        if params is not None and not isinstance(params, dict | list):
            return FramingError('"params" must be an object', id=message_id)
        return Message(body, "notification" if "id" not in body else "request")
    if message_id is None and "id" not in body:
        return FramingError("neither a request, a notification nor a response")
    if "error" in body:
        return Message(body, "error")
    if "result" in body:
        return Message(body, "response")
    return FramingError("a response needs a result or an error", id=message_id)


def id_near_start(prefix: bytes) -> RequestId | None:
    """The ``id`` of a message too large to parse, when its first bytes name one (SDKs write it
    early), so the request it answers can still be failed instead of waiting forever."""
    found = _ID_NEAR_START.search(prefix[:4096])
    if found is None:
        return None
    try:
        value = orjson.loads(found.group(1))
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str | int) else None


def encode(body: dict[str, Any]) -> bytes:
    """One message as a line. orjson never writes a raw newline inside a value."""
    return orjson.dumps(body) + b"\n"


def error(request_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    payload: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        payload["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": payload}


def result(request_id: RequestId, value: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def tool_error(request_id: RequestId, text: str, *, modern: bool = False) -> dict[str, Any]:
    """A ``tools/call`` result the model reads as a failed call (``isError``): how MCP reports a
    refusal the model should see and adapt to, rather than a protocol failure. ``modern``: the
    request came under a 2026-07-28 or later revision, whose results say ``resultType``."""
    value: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if modern:
        value["resultType"] = "complete"
    return result(request_id, value)


def is_modern(message: Message) -> bool:
    """Whether a request was sent under a stateless revision (2026-07-28 and later), which names
    its protocol version in every request's ``_meta`` instead of negotiating it once."""
    meta = message.params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_META in meta
