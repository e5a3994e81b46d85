"""A :class:`~.model.Model` for any OpenAI-compatible ``/chat/completions`` endpoint.

The request body is built from the history with :func:`.model.to_chat_messages` and
:func:`.model.to_chat_tools`; the response is outside input, so it is validated (pydantic) before
it becomes a :class:`~.model.ModelReply`. The HTTP call goes through a ``transport`` callable so
tests and other clients can replace it; the default uses ``urllib`` in a worker thread with a
timeout, abandoned (not awaited) when the turn's signal fires.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError

from .model import ModelReply, ModelRequest, ModelToolCall, to_chat_messages, to_chat_tools
from .signals import AbortedError, cancel_on_abort

Transport = Callable[[str, bytes, Mapping[str, str]], Awaitable[bytes]]


class ModelProtocolError(RuntimeError):
    """The endpoint answered with something that is not a chat completion."""


class _Function(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    arguments: str = ""


class _ToolCall(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    type: Literal["function"] = "function"
    function: _Function


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _Message
    finish_reason: str | None = None


class _Completion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    choices: list[_Choice]


_STOP_REASONS = {"length": "max_tokens", "tool_calls": "tool_calls", "function_call": "tool_calls"}


def chat_request_body(request: ModelRequest, model: str, **options: Any) -> dict[str, Any]:
    """The JSON body for one request (``options`` such as ``temperature`` are passed through)."""
    body: dict[str, Any] = {"model": model, "messages": to_chat_messages(request.messages), **options}
    if request.tools:
        body["tools"] = to_chat_tools(request.tools)
    return body


def parse_chat_completion(payload: Any) -> ModelReply:
    """Turn a chat-completion response (parsed JSON) into a reply; raise ModelProtocolError."""
    try:
        completion = _Completion.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ModelProtocolError(f"not a chat completion: {first['msg']} at {where}") from exc
    if not completion.choices:
        raise ModelProtocolError("chat completion has no choices")
    choice = completion.choices[0]
    calls = tuple(
        ModelToolCall(call.id, call.function.name, call.function.arguments)
        for call in choice.message.tool_calls or ()
    )
    stop = _STOP_REASONS.get(choice.finish_reason or "", "stop")
    if calls and stop == "stop":
        stop = "tool_calls"
    return ModelReply(text=choice.message.content or "", tool_calls=calls, stop_reason=stop)


class ChatCompletionsModel:
    """Answers requests by POSTing them to ``{base_url}/chat/completions``."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        transport: Transport | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout = timeout
        self.options = dict(options or {})
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._transport = transport or self._urllib_transport

    async def complete(self, request: ModelRequest) -> ModelReply:
        """POST the request and parse the answer; cancelled when ``request.signal`` fires."""
        body = json.dumps(chat_request_body(request, self.model, **self.options)).encode("utf-8")
        raw = b""
        with cancel_on_abort(request.signal):
            raw = await self._transport(self.url, body, self._headers)
        if request.signal.aborted:
            raise AbortedError(request.signal.reason)
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            raise ModelProtocolError(f"{self.url}: response is not JSON") from exc
        return parse_chat_completion(payload)

    async def _urllib_transport(self, url: str, body: bytes, headers: Mapping[str, str]) -> bytes:
        def post() -> bytes:
            http_request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
            try:
                with urllib.request.urlopen(http_request, timeout=self.timeout) as response:
                    return bytes(response.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:500].decode("utf-8", "replace")
                raise ModelProtocolError(f"{url}: HTTP {exc.code}: {detail}") from exc

        # The worker thread ends by itself at the latest after ``timeout``.
        return await anyio.to_thread.run_sync(post, abandon_on_cancel=True)
