"""Typed decisions of the three authorities (HARNESS.md section 2).

Each seam may only return its own decision type, so a pre-step listener cannot "allow" a tool call
and a post-execute listener cannot "ask". The classes are frozen: a decision, once made, is a fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .failures import exact_str, type_name
from .messages import Message

_UNSET: Any = object()


def _text(decision: object, field_name: str, value: Any, *, optional: bool) -> None:
    """Hold a reason/feedback field to ``str`` (or None): a decision is model-facing text, and a
    non-string here would only fail later, further from the listener that made it."""
    if value is None and optional:
        return
    text = exact_str(value)
    if text is None:
        expected = "a str or None" if optional else "a str"
        kind = type(decision).__name__
        raise TypeError(f"{kind}.{field_name} must be {expected}, not {type_name(value)}")
    if text is not value:
        object.__setattr__(decision, field_name, text)


# --- agent/pre-step -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Enter:
    """Open the step with these messages (possibly rewritten, possibly with plugin extras)."""

    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class Reject:
    """Close the turn as ``blocked``: no step, no user message, no model call."""

    reason: str | None = None

    def __post_init__(self) -> None:
        _text(self, "reason", self.reason, optional=True)


PreStepDecision: TypeAlias = Enter | Reject


def enter(messages: Sequence[Message]) -> Enter:
    """Build an :class:`Enter` decision from any sequence of messages."""
    return Enter(tuple(messages))


def reject(reason: str | None = None) -> Reject:
    """Build a :class:`Reject` decision."""
    return Reject(reason)


# --- tools/pre-execute ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the call proceed to the guards."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call; the model sees ``Error: <reason>``. ``reason`` must be a ``str``."""

    reason: str

    def __post_init__(self) -> None:
        _text(self, "reason", self.reason, optional=False)


@dataclass(frozen=True, slots=True)
class Ask:
    """Route the call through ``ctx.approval``; see HARNESS.md section 3 for every outcome."""

    reason: str | None = None

    def __post_init__(self) -> None:
        _text(self, "reason", self.reason, optional=True)


PreToolDecision: TypeAlias = Allow | Deny | Ask


def allow() -> Allow:
    """Build an :class:`Allow` decision."""
    return Allow()


def deny(reason: str) -> Deny:
    """Build a :class:`Deny` decision."""
    return Deny(reason)


def ask(reason: str | None = None) -> Ask:
    """Build an :class:`Ask` decision."""
    return Ask(reason)


# --- tools/post-execute ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Accept:
    """Keep the result, optionally replacing its presentation or its value, and add contexts.

    ``content`` replaces only what the model sees (the value is kept, so it is NOT a
    confidentiality boundary); ``value`` replaces the value, which is re-validated and re-rendered.
    Giving both is a programming error.
    """

    content: Any = None
    value: Any = _UNSET
    additional_contexts: tuple[Message, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.content is not None and self.value is not _UNSET:
            raise ValueError("accept(): content and value are mutually exclusive")

    @property
    def replaces_value(self) -> bool:
        """Whether this decision carries a replacement value (``None`` is a valid value)."""
        return self.value is not _UNSET


@dataclass(frozen=True, slots=True)
class Block:
    """Turn the result into an error whose content is ``feedback``; only these contexts survive."""

    feedback: str
    additional_contexts: tuple[Message, ...] = field(default=())

    def __post_init__(self) -> None:
        _text(self, "feedback", self.feedback, optional=False)


PostToolDecision: TypeAlias = Accept | Block


def accept(
    content: Any = None, value: Any = _UNSET, additional_contexts: Sequence[Message] = ()
) -> Accept:
    """Build an :class:`Accept` decision (``value`` may be ``None``; omit it to keep the value)."""
    return Accept(content=content, value=value, additional_contexts=tuple(additional_contexts))


def block(feedback: str, additional_contexts: Sequence[Message] = ()) -> Block:
    """Build a :class:`Block` decision."""
    return Block(feedback=feedback, additional_contexts=tuple(additional_contexts))
