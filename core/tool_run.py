"""The run context a tool body sees (:class:`ToolRun`): deferred contexts, concluding the turn,
nested calls.

It reaches the registry only through :class:`ToolCaller`, the one method a nested call needs, so
this module sits below the definitions (whose body type names it) and the pipeline that makes it.
"""

from __future__ import annotations

from typing import Any, Protocol

from .execution import ToolExecution, ToolResult
from .failures import exact_str
from .frozen import FrozenDict, _wrap
from .messages import Message, checked_message
from .signals import AbortSignal

_CONCLUDES = _wrap({"concludes_turn": True})


class ToolCaller(Protocol):
    """What a nested call needs of the registry: the whole pipeline for one call."""

    async def execute(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str,
        root_call_id: str | None = None,
        agent: Any = None,
        parent: object | None = None,
        signal: AbortSignal | None = None,
    ) -> ToolResult: ...


class ToolRun:
    """What a tool body may do besides returning: defer contexts, conclude the turn, call tools."""

    __slots__ = ("_concludes", "_deferred", "_nested", "_registry", "execution")

    def __init__(self, registry: ToolCaller, execution: ToolExecution) -> None:
        self._registry = registry
        self.execution = execution
        self._deferred: list[Message] = []
        self._concludes = False
        self._nested = 0

    @property
    def signal(self) -> AbortSignal:
        """The call's current signal (a ``tools/execute`` wrapper may have combined it)."""
        return self.execution.signal

    def defer_context(self, message: Message | str) -> None:
        """Queue a context message that lands after this call's result (also if the body raises).

        A ``str`` becomes a tool-sourced message; anything but a well-formed Message or a str is a
        ``TypeError`` raised here, in the body that made it.
        """
        text = exact_str(message)
        self._deferred.append(Message.from_tool(text) if text is not None else checked_message(message))

    def conclude_turn(self) -> None:
        """Mark a successful result as concluding the turn: the loop stops after this step."""
        self._concludes = True

    async def call(self, name: str, arguments: Any, *, call_id: str | None = None) -> ToolResult:
        """Run a nested call through the whole pipeline; its contexts are deferred into this call."""
        self._nested += 1
        execution = self.execution
        result = await self._registry.execute(
            name,
            arguments,
            call_id=call_id or f"{execution.call_id}.{self._nested}",
            root_call_id=execution.root_call_id,
            agent=execution.agent,
            parent=execution.token,
            signal=execution.signal,
        )
        self._deferred.extend(result.additional_contexts)
        return result

    @property
    def deferred(self) -> tuple[Message, ...]:
        """Contexts deferred so far, in order."""
        return tuple(self._deferred)

    @property
    def meta(self) -> FrozenDict | None:
        """Result metadata the body asked for."""
        return _CONCLUDES if self._concludes else None
