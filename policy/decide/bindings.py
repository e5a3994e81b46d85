"""Each CEL name a rule may read, as a function of the event it decides.

The tables are static: nothing is built per event until a rule reads the name (the scope calls a
builder on first use). One table per kind of event: a tool call, a tool result (which also reads
its call's names) and an agent step. The names and their types are the stage table's
(:mod:`~dsh_policy.policy.stages`); these are their values.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from dsh_policy.policy.events import StepEvent, ToolCallEvent, ToolResultEvent


def _now(event_now: datetime.datetime | None) -> datetime.datetime:
    return event_now if event_now is not None else datetime.datetime.now(datetime.UTC)


def top_level(value: Any) -> Any:
    """A JSON value for an activation: a frozen object as a plain dict at the top level (a C-level
    copy), nested frozen values as they are. Every engine reads any ``Mapping`` and tuple and
    none mutates a value, so a deep copy per event (``thaw``) would buy nothing."""
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return dict(value.items())
    return value


def _tool_values(event: ToolCallEvent) -> dict[str, Any]:
    return {
        "name": event.tool,
        "call_id": event.call_id,
        "root_call_id": event.root_call_id or event.call_id,
        "nested": event.nested,
        "original_name": event.original_name or event.tool,
    }


#: The names of a tool call event.
CALL_BUILDERS: Mapping[str, Callable[[ToolCallEvent], Any]] = MappingProxyType({
    "session": lambda event: {"id": event.session_id},
    "agent": lambda event: {"id": event.agent_id or ""},
    "now": lambda event: _now(event.now),
    "turn": lambda event: event.turn,
    "step": lambda event: event.step,
    "tool": _tool_values,
    "args": lambda event: top_level(event.args),
})  # fmt: skip


def _of_call(build: Callable[[ToolCallEvent], Any]) -> Callable[[ToolResultEvent], Any]:
    return lambda event: build(event.call)


def _result_values(event: ToolResultEvent) -> dict[str, Any]:
    return {
        "is_error": event.is_error,
        "text": event.text,
        "value": top_level(event.value),
        "error": {"message": event.error_message or "", "code": event.error_code or ""},
    }


#: The names of a tool result event: its call's, and ``result``.
RESULT_BUILDERS: Mapping[str, Callable[[ToolResultEvent], Any]] = MappingProxyType({
    **{name: _of_call(build) for name, build in CALL_BUILDERS.items()},
    "result": _result_values,
})  # fmt: skip


def _messages(event: StepEvent) -> list[dict[str, Any]]:
    return [
        {
            "role": message.role,
            "text": message.text,
            "source": {"kind": message.source_kind, "plugin": message.source_plugin or ""},
        }
        for message in event.messages
    ]


#: The names of an agent step event.
STEP_BUILDERS: Mapping[str, Callable[[StepEvent], Any]] = MappingProxyType({
    "session": lambda event: {"id": event.session_id},
    "agent": lambda event: {"id": event.agent_id or ""},
    "now": lambda event: _now(event.now),
    "turn": lambda event: event.turn,
    "step": lambda event: event.step,
    "messages": _messages,
    "prompt": lambda event: "\n".join(m.text for m in event.messages if m.source_kind == "user"),
})  # fmt: skip
