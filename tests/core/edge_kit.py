"""Hostile objects and loop invariants shared by the edge tests (issue 17).

``assert_well_formed`` is the contract every edge test ends with: whatever a plugin did, every
turn that started ended with ``turn/end``, every ``tool/call`` got exactly one ``tool/result``
(in call order, before the step closed), the history never holds an assistant tool call without
its result, and every record is plain JSON.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_policy.core import Agent, AssistantMessage, ToolResultMessage


class Unprintable(Exception):
    """An exception whose ``__str__`` and ``__repr__`` both raise."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ is hostile")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ is hostile")


class NonStringStr(Exception):
    """An exception whose ``__str__`` returns something that is not a string."""

    def __str__(self) -> Any:
        return 42


class Fatal(BaseException):
    """A BaseException subclass (not cancellation) that also refuses to print."""

    def __str__(self) -> str:
        raise RuntimeError("__str__ is hostile")


class Impostor:
    """An object whose ``__class__`` claims it is a str, and which cannot be printed."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str

    def __str__(self) -> str:
        raise RuntimeError("not a str")

    def __repr__(self) -> str:
        raise RuntimeError("not a str")


def hostile_exceptions() -> list[BaseException]:
    return [Unprintable(), NonStringStr(), Fatal(), SystemExit(3), KeyboardInterrupt()]


def raising(exc: BaseException) -> Any:
    def listener(*args: Any) -> Any:
        raise exc

    return listener


def facts_of(agent: Agent, kind: str) -> list[dict[str, Any]]:
    return [dict(fact.data) for fact in agent.session.facts if fact.type == kind]


def results(agent: Agent) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(fact.to_json()))["data"] for fact in agent.session.facts
            if fact.type == "tool/result"]


def assert_well_formed(agent: Agent) -> None:
    facts = agent.session.facts
    json.dumps([record.to_json() for record in agent.session.records])  # all plain JSON

    starts = [f.turn for f in facts if f.type == "turn/start"]
    ends = [f.turn for f in facts if f.type == "turn/end"]
    assert starts == ends, f"turns {starts} ended {ends}"

    open_calls: list[str] = []
    for fact in facts:
        if fact.type == "tool/call":
            open_calls.append(fact.data["call_id"])
        elif fact.type == "tool/result":
            assert open_calls and open_calls[0] == fact.data["call_id"], "result out of order"
            open_calls.pop(0)
        elif fact.type in ("step/end", "turn/end", "assistant/message"):
            assert not open_calls, f"{fact.type} while calls {open_calls} are unanswered"
    assert not open_calls

    pending: list[str] = []
    for entry in agent.history:
        if isinstance(entry, ToolResultMessage):
            assert pending and pending[0] == entry.call_id, "history result out of order"
            pending.pop(0)
            continue
        assert not pending, f"history continues while calls {pending} are unanswered"
        if isinstance(entry, AssistantMessage):
            pending = [call.id for call in entry.tool_calls]
    assert not pending, f"history ends with dangling calls {pending}"
