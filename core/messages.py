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
