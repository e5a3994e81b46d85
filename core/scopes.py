"""Scope layers: which tools and guards a call sees (HARNESS.md section 3).

A tool is registered in a *scope layer*: the registry's root layer holds global tools and guards,
an agent's layer is a child of its parent agent's layer (or of the root). A call sees the tools of
its agent's chain, the nearest layer's definition shadowing a farther one of the same name, and
runs the guards of the whole chain, farthest layer first. Each registration is removed by its own
disposer, never by what it registered, so the same definition or guard shared by two plugins (or
by a plugin applied both at the root and in an agent's scope) is two independent registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .tool_definitions import Guard, ToolDefinition, ToolDefinitionError

# --- scopes ---------------------------------------------------------------------------------------


class ScopeLayer:
    """One layer of tools and guards. The root layer is global; an agent's layer is a child of its
    parent agent's layer, so lookups go nearest layer first and guards farthest ancestor first."""

    __slots__ = ("_chain", "_guard_handles", "_tool_handles", "_versions", "_visible", "guards", "parent",
                 "tools")

    def __init__(self, parent: ScopeLayer | None = None) -> None:
        self.parent = parent
        self.guards: list[Guard] = []
        self.tools: dict[str, ToolDefinition] = {}
        self._guard_handles: list[object] = []
        self._tool_handles: dict[str, object] = {}
        # A layer's ancestry never changes, so its chain is computed once; the tool view is
        # cached against a counter the whole tree shares and every tool (un)registration bumps.
        self._chain: tuple[ScopeLayer, ...] = (*parent._chain, self) if parent is not None else (self,)
        self._versions: list[int] = parent._versions if parent is not None else [0]
        self._visible: tuple[int, Mapping[str, ToolDefinition]] | None = None

    def add(self, guard: Guard) -> Callable[[], None]:
        """Register a guard in this layer; returns a disposer that removes this registration only."""
        if not callable(guard):
            raise TypeError("guard must be callable")
        handle = object()
        # Replaced, not mutated: a running guard pass keeps the list it started with.
        self.guards = [*self.guards, guard]
        self._guard_handles = [*self._guard_handles, handle]

        def dispose() -> None:
            handles = self._guard_handles
            for index, item in enumerate(handles):
                if item is handle:
                    self.guards = [*self.guards[:index], *self.guards[index + 1 :]]
                    self._guard_handles = [*handles[:index], *handles[index + 1 :]]
                    return

        return dispose

    def register(self, definition: ToolDefinition) -> Callable[[], None]:
        """Make a tool visible in this layer; a second one of the same name in it is an error."""
        name = definition.name
        if name in self.tools:
            raise ToolDefinitionError(f'tool "{name}" is already registered')
        handle = object()
        self.tools = {**self.tools, name: definition}
        self._tool_handles = {**self._tool_handles, name: handle}
        self._versions[0] += 1

        def dispose() -> None:
            if self._tool_handles.get(name) is handle:
                self.tools = {key: value for key, value in self.tools.items() if key != name}
                self._tool_handles = {k: v for k, v in self._tool_handles.items() if k != name}
                self._versions[0] += 1

        return dispose

    def chain(self) -> tuple[ScopeLayer, ...]:
        """This layer and its ancestors, farthest ancestor first."""
        return self._chain

    def lookup(self, name: str) -> ToolDefinition | None:
        """The definition called ``name`` this layer sees (nearest layer first)."""
        scope: ScopeLayer | None = self
        while scope is not None:
            definition = scope.tools.get(name)
            if definition is not None:
                return definition
            scope = scope.parent
        return None

    def visible(self) -> Mapping[str, ToolDefinition]:
        """Every tool this layer sees, in registration order, farthest layer first (read-only)."""
        version = self._versions[0]
        cached = self._visible
        if cached is not None and cached[0] == version:
            return cached[1]
        out: dict[str, ToolDefinition] = {}
        for layer in self._chain:
            out.update(layer.tools)
        self._visible = (version, out)
        return out


def scope_of(agent: Any) -> ScopeLayer | None:
    """The scope layer of a call's agent (anything with a ``guard_scope`` layer), or None."""
    if agent is None:
        return None
    try:
        scope = agent.guard_scope
    except Exception:
        return None
    return scope if isinstance(scope, ScopeLayer) else None
