"""The sealed identity of one tool call and the result it ends with (HARNESS.md section 3).

``ToolExecution`` is minted once per call (step 1 of the pipeline) and every later stage, log line
and listener sees the same object. Only ``signal`` may change, and only inside ``tools/execute``.
``ToolResult`` is the normalized, JSON-safe outcome; listeners receive it frozen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .frozen import freeze_json
from .messages import Message

if TYPE_CHECKING:
    from .signals import AbortSignal


@dataclass(frozen=True, slots=True)
class TextContent:
    """One text part of a tool result's content (what the model sees)."""

    text: str
    type: str = "text"


@dataclass(frozen=True, slots=True)
class ToolError:
    """Why a result is an error. ``info`` carries a machine-readable ``code`` when there is one
    (``UNKNOWN_TOOL``, ``INVALID_ARGS``, ``INVALID_TOOL_OUTPUT``, ``ABORTED``,
    ``ABORTED_BEFORE_DISPATCH``, ...)."""

    message: str
    info: Mapping[str, Any] | None = None

    @property
    def code(self) -> str | None:
        """The error code from ``info``, if any."""
        return None if self.info is None else self.info.get("code")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A normalized tool result. ``value`` is the frozen JSON value (None for errors)."""

    is_error: bool
    content: tuple[TextContent, ...]
    value: Any = None
    error: ToolError | None = None
    additional_contexts: tuple[Message, ...] = field(default=())
    meta: Mapping[str, Any] | None = None

    @property
    def text(self) -> str:
        """All text parts of the content joined by newlines."""
        return "\n".join(part.text for part in self.content)

    @property
    def concludes_turn(self) -> bool:
        """Whether the tool asked the loop to stop after this step (``run.conclude_turn()``).

        Only a success concludes: a result that became an error on the way (a post-execute block,
        a failing ``finalize_content``) does not stop the turn, whatever its meta still says.
        """
        return not self.is_error and self.meta is not None and self.meta.get("concludes_turn") is True

    def with_content(self, content: tuple[TextContent, ...]) -> ToolResult:
        """A copy with other content and everything else unchanged."""
        return replace(self, content=content)

    @classmethod
    def failure(
        cls,
        message: str,
        *,
        code: str | None = None,
        info: Mapping[str, Any] | None = None,
        additional_contexts: tuple[Message, ...] = (),
    ) -> ToolResult:
        """The error result every deny and failure becomes: content ``Error: <message>``."""
        merged: dict[str, Any] = dict(info or {})
        if code is not None:
            merged["code"] = code
        return cls(
            is_error=True,
            content=(TextContent(f"Error: {message}"),),
            error=ToolError(message, freeze_json(merged) if merged else None),
            additional_contexts=additional_contexts,
        )


@dataclass(frozen=True, slots=True, eq=False)
class ToolExecution:
    """The sealed identity of one call. ``arguments`` are deep-frozen JSON; ``token`` is opaque and
    unique per call; ``parent`` is the token of the enclosing call for nested calls; ``agent`` is
    the agent the call runs for (None for calls made outside an agent)."""

    call_id: str
    root_call_id: str
    name: str
    arguments: Any
    agent: Any
    parent: object | None
    token: object
    signal: AbortSignal

    @property
    def nested(self) -> bool:
        """Whether this call was made from inside another call."""
        return self.parent is not None
