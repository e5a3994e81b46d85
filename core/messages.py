"""Messages that enter a step: what the user, a plugin, the model or a tool said.

A message is frozen so that a listener cannot mutate what another listener (or the session log)
holds; rewriting means returning a new message in an ``Enter`` decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

SourceKind: TypeAlias = Literal["user", "plugin", "model", "tool"]


@dataclass(frozen=True, slots=True)
class MessageSource:
    """Who put a message into the conversation (``plugin`` names the plugin when kind is plugin)."""

    kind: SourceKind = "user"
    plugin: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message; ``text`` is its whole text content."""

    role: Literal["user", "assistant", "system", "tool"]
    text: str
    source: MessageSource = MessageSource()

    @classmethod
    def user(cls, text: str) -> Message:
        """A message typed by the user."""
        return cls("user", text, MessageSource("user"))

    @classmethod
    def from_plugin(cls, text: str, plugin: str | None = None) -> Message:
        """A context message a plugin adds (shown to the model as user-role input)."""
        return cls("user", text, MessageSource("plugin", plugin))

    @classmethod
    def from_tool(cls, text: str) -> Message:
        """A context message a tool deferred with ``run.defer_context``."""
        return cls("user", text, MessageSource("tool"))


_ROLES = frozenset({"user", "assistant", "system", "tool"})
_SOURCE_KINDS = frozenset({"user", "plugin", "model", "tool"})


def checked_message(item: object, what: str = "message") -> Message:
    """``item`` as a well-formed :class:`Message` with exact ``str`` fields, or ``TypeError``.

    Messages come back from listeners (``enter``, ``additional_contexts``) and go into the session
    log and the model request; a malformed one must fail where it was handed over, as that
    listener's error, not later inside a log append.
    """
    if not issubclass(type(item), Message):
        raise TypeError(f"{what} must be a Message, not {type(item).__name__}")
    message: Message = item  # type: ignore[assignment]
    role = _exact(message.role)
    text = _exact(message.text)
    source = message.source
    if role not in _ROLES:
        raise TypeError(f"{what} has an invalid role")
    if text is None:
        raise TypeError(f"{what} text must be a str, not {type(message.text).__name__}")
    if not issubclass(type(source), MessageSource):
        raise TypeError(f"{what} source must be a MessageSource")
    kind = _exact(source.kind)
    plugin = None if source.plugin is None else _exact(source.plugin)
    if kind not in _SOURCE_KINDS or (source.plugin is not None and plugin is None):
        raise TypeError(f"{what} has an invalid source")
    if type(message) is Message and role is message.role and text is message.text and (
        type(source) is MessageSource and kind is source.kind and plugin is source.plugin
    ):
        return message
    return Message(role, text, MessageSource(kind, plugin))  # type: ignore[arg-type]


def _exact(value: object) -> str | None:
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]
    if issubclass(kind, str):
        return str.__str__(value)
    return None
