"""The tool registry: visible tools, guards and the pipeline entry points (HARNESS.md section 3).

:meth:`ToolRegistry.prepare`, :meth:`PendingCall.dispatch` and :meth:`PendingCall.settle` are the
three phases of one call (see :mod:`.pipeline`); :meth:`ToolRegistry.execute` runs all three. The
registry sits on top of the tool modules: :mod:`.tool_definitions` (what a tool is), :mod:`.scopes`
(what a call sees) and :mod:`.pipeline` (how a call runs) never import it.

The names those modules define were importable from here before they moved, and still are (kept
for one release; import them from their modules or from :mod:`dsh_policy.core`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from . import pipeline as _pipeline
from .events import EventBus
from .execution import ToolResult
from .model import ToolSpec
from .pipeline import CallToken, PendingCall
from .scopes import ScopeLayer, scope_of
from .signals import AbortSignal
from .tool_definitions import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    ARGUMENTS_NOT_JSON,
    BLOCKED,
    FINALIZE_FAILED,
    GUARD_FAILED,
    INVALID_ARGS,
    INVALID_TOOL_OUTPUT,
    LISTENER_FAILED,
    RENDER_FAILED,
    TOOL_FAILED,
    UNKNOWN_TOOL,
    ApprovalOutcome,
    ContractError,
    FinalizeContent,
    Guard,
    ToolBody,
    ToolDefinition,
    ToolDefinitionError,
    ToolFailure,
    ToolOutput,
    coerce_content,
    coerce_messages,
    define_tool,
    render_value,
)
from .tool_run import ToolRun

__all__ = [
    "ABORTED",
    "ABORTED_BEFORE_DISPATCH",
    "ARGUMENTS_NOT_JSON",
    "BLOCKED",
    "FINALIZE_FAILED",
    "GUARD_FAILED",
    "INVALID_ARGS",
    "INVALID_TOOL_OUTPUT",
    "LISTENER_FAILED",
    "RENDER_FAILED",
    "TOOL_FAILED",
    "UNKNOWN_TOOL",
    "ApprovalOutcome",
    "CallToken",
    "ContractError",
    "FinalizeContent",
    "Guard",
    "PendingCall",
    "ScopeLayer",
    "ToolBody",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolOutput",
    "ToolRegistry",
    "ToolRun",
    "coerce_content",
    "coerce_messages",
    "define_tool",
    "render_value",
    "scope_of",
]


class ToolRegistry:
    """Visible tools, global guards and the pipeline entry points."""

    def __init__(self, bus: EventBus, service: Callable[[str], Any], logger: Any = None) -> None:
        self._bus = bus
        self._service = service
        self.root_scope = ScopeLayer()
        self.logger = logger if logger is not None else structlog.get_logger("dsh_policy.core.tools")

    @property
    def bus(self) -> EventBus:
        """The event bus the pipeline dispatches on."""
        return self._bus

    def service(self, name: str) -> Any:
        """An optional service (``approval``), or None."""
        return self._service(name)

    # registration

    def register(self, definition: ToolDefinition, scope: ScopeLayer | None = None) -> Callable[[], None]:
        """Make a tool visible (globally by default); returns a disposer for this registration."""
        if not isinstance(definition, ToolDefinition):
            raise TypeError("register() takes a ToolDefinition (see define_tool)")
        return (scope or self.root_scope).register(definition)

    def guard(self, guard: Guard, scope: ScopeLayer | None = None) -> Callable[[], None]:
        """Install a sync guard ``guard(execution) -> deny reason | None`` (global by default)."""
        return (scope or self.root_scope).add(guard)

    def get(self, name: str, scope: ScopeLayer | None = None) -> ToolDefinition | None:
        """The definition called ``name`` as ``scope`` (default: the root) sees it."""
        return (scope or self.root_scope).lookup(name)

    def names(self, scope: ScopeLayer | None = None) -> tuple[str, ...]:
        """Names of the tools ``scope`` (default: the root) sees."""
        return tuple((scope or self.root_scope).visible())

    def specs(self, scope: ScopeLayer | None = None) -> tuple[ToolSpec, ...]:
        """The model-facing view of every tool ``scope`` (default: the root) sees."""
        return tuple(d.spec for d in (scope or self.root_scope).visible().values())

    # the pipeline

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
    ) -> ToolResult:
        """Run one call through the whole pipeline; never raises for tool or listener failures."""
        call = await self.prepare(
            name, arguments, call_id=call_id, root_call_id=root_call_id, agent=agent, parent=parent,
            signal=signal,
        )
        await call.dispatch()
        return await call.settle()

    async def prepare(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str,
        root_call_id: str | None = None,
        agent: Any = None,
        parent: object | None = None,
        signal: AbortSignal | None = None,
    ) -> PendingCall:
        """Steps 1-5: seal the identity, run ``tools/pre-execute``, approval and guards."""
        return await _pipeline.prepare(
            self, name, arguments, call_id=call_id, root_call_id=root_call_id, agent=agent,
            parent=parent, signal=signal,
        )
