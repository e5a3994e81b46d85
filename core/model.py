"""What the loop asks a model and what it gets back (HARNESS.md section 4).

The shapes follow OpenAI-compatible chat completions, so a provider is a thin adapter:
:func:`to_chat_messages` and :func:`to_chat_tools` build the request body, and a provider turns the
response's ``message.content`` / ``message.tool_calls`` into a :class:`ModelReply`. Tool call
arguments stay the raw JSON string the model emitted; the loop parses them.
:class:`ScriptedModel` replays a fixed list of replies, one per step, for tests and demos.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from .frozen import thaw
from .messages import Message
from .signals import AbortSignal


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description and JSON-Schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelToolCall:
    """One tool call in a reply; ``arguments`` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """The model's reply as it is kept in the conversation history."""

    text: str
    tool_calls: tuple[ModelToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """A tool result as it is kept in the conversation history (what the model reads)."""

    call_id: str
    name: str
    text: str
    is_error: bool


HistoryEntry: TypeAlias = Message | AssistantMessage | ToolResultMessage


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one step sends: the whole history so far and the visible tools."""

    messages: tuple[HistoryEntry, ...]
    tools: tuple[ToolSpec, ...]
    signal: AbortSignal


@dataclass(frozen=True, slots=True)
class ModelReply:
    """Assistant text and/or tool calls; ``stop_reason`` is ``stop``, ``tool_calls`` or ``max_tokens``."""

    text: str = ""
    tool_calls: tuple[ModelToolCall, ...] = ()
    stop_reason: str = "stop"


class Model(Protocol):
    """Anything that answers a request; it should stop early when ``request.signal`` fires."""

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Produce the next assistant reply."""
        ...


class ScriptExhaustedError(RuntimeError):
    """The scripted model was asked for more steps than its script has."""


@dataclass(slots=True)
class ScriptedModel:
    """Replays ``replies`` one per request and records every request it receives."""

    replies: list[ModelReply]
    requests: list[ModelRequest] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Return the next scripted reply, or raise :class:`ScriptExhaustedError`."""
        self.requests.append(request)
        index = len(self.requests) - 1
        if index >= len(self.replies):
            raise ScriptExhaustedError(
                f"scripted model has {len(self.replies)} replies but got request {index + 1}"
            )
        return self.replies[index]


def reply(text: str = "", tool_calls: Iterable[ModelToolCall | tuple[str, str]] = ()) -> ModelReply:
    """Build a scripted reply; tool calls may be ``(name, json_arguments)`` pairs (ids are minted)."""
    calls: list[ModelToolCall] = []
    for item in tool_calls:
        if isinstance(item, ModelToolCall):
            calls.append(item)
        else:
            name, arguments = item
            calls.append(ModelToolCall(id=f"call_{_next_id()}", name=name, arguments=arguments))
    return ModelReply(text=text, tool_calls=tuple(calls), stop_reason="tool_calls" if calls else "stop")


def to_chat_messages(entries: Sequence[HistoryEntry]) -> list[dict[str, Any]]:
    """The history in chat-completions form (``role``/``content``/``tool_calls``/``tool_call_id``)."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        if isinstance(entry, Message):
            out.append({"role": entry.role, "content": entry.text})
        elif isinstance(entry, AssistantMessage):
            item: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
            if entry.tool_calls:
                item["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in entry.tool_calls
                ]
            out.append(item)
        else:
            out.append({"role": "tool", "tool_call_id": entry.call_id, "content": entry.text})
    return out


def to_chat_tools(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The visible tools in chat-completions ``tools`` form."""
    return [
        {
            "type": "function",
            "function": {"name": s.name, "description": s.description, "parameters": thaw(s.parameters)},
        }
        for s in specs
    ]


_counter = 0


def _next_id() -> int:
    global _counter
    _counter += 1
    return _counter
