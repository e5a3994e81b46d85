"""The plugin runtime: scoped contexts, fibers and services (HARNESS.md section 1).

A plugin is a module or object with ``name`` and ``apply(ctx, config=None)``; it may list services
it cannot work without in ``inject``. ``apply`` gets a context bound to a new :class:`Fiber`; every
listener, tool, guard, service and nested plugin registered through that context is recorded on
the fiber, so disposing the fiber removes all of it and reloading is dispose + apply.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import structlog

from .events import EventBus, Listener
from .execution import ToolResult
from .failures import describe, is_cancellation, log_failure
from .model import ToolSpec
from .scopes import ScopeLayer
from .tool_definitions import Guard, ToolDefinition
from .tools import ToolRegistry

Disposer = Callable[[], None]

#: Names a plugin cannot provide: they are attributes of every context.
RESERVED_SERVICES = frozenset({"tools", "logger"})


class PluginError(RuntimeError):
    """A plugin could not be applied (missing service, bad shape, apply failed)."""


class Runtime:
    """What every context of one harness shares: the bus, the registry and the services."""

    __slots__ = ("bus", "logger", "service_handles", "services", "tools")

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger if logger is not None else structlog.get_logger("dsh_policy.core")
        self.bus = EventBus(self.logger)
        self.services: dict[str, Any] = {}
        self.service_handles: dict[str, object] = {}
        self.tools = ToolRegistry(self.bus, self.services.get, self.logger)


class Fiber:
    """The lifetime of one applied plugin (or agent): disposers plus child fibers."""

    __slots__ = ("_children", "_disposers", "config", "disposed", "name", "parent", "plugin")

    def __init__(self, name: str, parent: Fiber | None = None, plugin: Any = None, config: Any = None):
        self.name = name
        self.parent = parent
        self.plugin = plugin
        self.config = config
        self.disposed = False
        self._disposers: list[Disposer] = []
        self._children: list[Fiber] = []
        if parent is not None:
            parent._children.append(self)

    @property
    def children(self) -> tuple[Fiber, ...]:
        """Fibers of plugins applied inside this one."""
        return tuple(self._children)

    def add(self, disposer: Disposer) -> Disposer:
        """Record a disposer to run when this fiber is disposed; returns it unchanged."""
        if self.disposed:
            disposer()
            raise PluginError(f'plugin "{self.name}" is disposed; it cannot register anything')
        self._disposers.append(disposer)
        return disposer

    def dispose(self, logger: Any = None) -> None:
        """Dispose nested fibers, then undo registrations in reverse order. Idempotent."""
        if self.disposed:
            return
        self.disposed = True
        for child in reversed(self._children):
            child.dispose(logger)
        self._children.clear()
        disposers, self._disposers = self._disposers, []
        for disposer in reversed(disposers):
            try:
                disposer()
            except BaseException as exc:  # one broken cleanup must not keep the rest registered
                if is_cancellation(exc):
                    raise
                if logger is not None:
                    log_failure(logger, "dispose failed", plugin=self.name, error=describe(exc))
        if self.parent is not None and self in self.parent._children:
            self.parent._children.remove(self)


class ScopedTools:
    """``ctx.tools``: the shared registry, with registrations recorded on the caller's fiber."""

    __slots__ = ("_fiber", "_registry", "scope")

    def __init__(self, registry: ToolRegistry, fiber: Fiber, scope: ScopeLayer) -> None:
        self._registry = registry
        self._fiber = fiber
        self.scope = scope

    def register(self, definition: ToolDefinition) -> Disposer:
        """Make a tool visible in this context's scope (global, or an agent's, where it shadows a
        global one of the same name) until the fiber is disposed; returns a disposer."""
        return self._fiber.add(self._registry.register(definition, self.scope))

    def guard(self, guard: Guard) -> Disposer:
        """Install a sync guard in this context's scope (global, or an agent's); returns a disposer."""
        return self._fiber.add(self._registry.guard(guard, self.scope))

    @property
    def registry(self) -> ToolRegistry:
        """The unscoped registry (to execute calls or list tools)."""
        return self._registry

    def get(self, name: str) -> ToolDefinition | None:
        """The definition called ``name`` as this context's scope sees it."""
        return self._registry.get(name, self.scope)

    def names(self) -> tuple[str, ...]:
        """Names of the tools this context's scope sees."""
        return self._registry.names(self.scope)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The model-facing view of every tool this context's scope sees."""
        return self._registry.specs(self.scope)

    async def execute(self, name: str, arguments: Any, **identity: Any) -> ToolResult:
        """Run one call through the whole pipeline (see :meth:`ToolRegistry.execute`)."""
        return await self._registry.execute(name, arguments, **identity)


class Context:
    """``ctx``: what a plugin registers through; everything is undone when its fiber is disposed."""

    __slots__ = ("_logger", "fiber", "runtime", "scope")

    def __init__(self, runtime: Runtime, fiber: Fiber, scope: ScopeLayer) -> None:
        self.runtime = runtime
        self.fiber = fiber
        self.scope = scope
        self._logger: Any = None

    @property
    def name(self) -> str:
        """The name of the plugin (or agent) this context belongs to."""
        return self.fiber.name

    def on(self, event: str, listener: Listener, prepend: bool = False) -> Disposer:
        """Listen to ``event`` (see :mod:`.events` for dispatch modes); returns a disposer."""
        return self.fiber.add(self.runtime.bus.on(event, listener, prepend))

    @property
    def tools(self) -> ScopedTools:
        """The tool registry, scoped to this fiber."""
        return ScopedTools(self.runtime.tools, self.fiber, self.scope)

    @property
    def approval(self) -> Any:
        """The approval service, or None when nobody provides one."""
        return self.runtime.services.get("approval")

    @property
    def logger(self) -> Any:
        """A structlog logger bound to this plugin's name."""
        if self._logger is None:
            self._logger = self.runtime.logger.bind(plugin=self.name)
        return self._logger

    def get(self, name: str) -> Any:
        """An optional service, or None."""
        if name == "tools":
            return self.tools
        if name == "logger":
            return self.logger
        return self.runtime.services.get(name)

    def provide(self, name: str, service: Any) -> Disposer:
        """Offer a service under ``name`` until this fiber is disposed; returns a disposer."""
        runtime = self.runtime
        services = runtime.services
        if name in RESERVED_SERVICES:
            raise PluginError(f'plugin "{self.name}": service name "{name}" is reserved')
        if name in services:
            raise PluginError(f'plugin "{self.name}": service "{name}" is already provided')
        handle = object()
        services[name] = service
        runtime.service_handles[name] = handle

        def dispose() -> None:  # removes this provision only, however often it is called
            if runtime.service_handles.get(name) is handle:
                del runtime.service_handles[name]
                services.pop(name, None)

        return self.fiber.add(dispose)

    def on_dispose(self, cleanup: Disposer) -> Disposer:
        """Run ``cleanup`` when this fiber is disposed (for resources a plugin opened)."""
        return self.fiber.add(cleanup)

    def plugin(self, plugin: Any, config: Any = None) -> Fiber:
        """Apply a nested plugin in a child fiber; it is disposed with this one."""
        return apply_plugin(self, plugin, config)

    def child(self, name: str, scope: ScopeLayer | None = None) -> Context:
        """A context with its own fiber under this one (an agent's context, for instance)."""
        return Context(self.runtime, Fiber(name, self.fiber), scope or self.scope)


def plugin_name(plugin: Any) -> str:
    """A plugin's ``name``, or its module/class name."""
    name = getattr(plugin, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(plugin, "__name__", None) or type(plugin).__name__


def apply_plugin(parent: Context, plugin: Any, config: Any = None) -> Fiber:
    """Apply ``plugin`` under ``parent``; on any failure nothing it registered stays behind."""
    name = plugin_name(plugin)
    apply = getattr(plugin, "apply", None)
    if not callable(apply):
        raise PluginError(f'plugin "{name}" has no apply(ctx, config=None)')
    missing = [s for s in getattr(plugin, "inject", ()) or () if parent.get(s) is None]
    if missing:
        raise PluginError(f'plugin "{name}" requires service(s) not provided: {", ".join(missing)}')
    takes_config = _accepts_config(apply)
    if config is not None and not takes_config:
        raise PluginError(f'plugin "{name}" takes no config, but one was given')
    fiber = Fiber(name, parent.fiber, plugin, config)
    ctx = Context(parent.runtime, fiber, parent.scope)
    try:
        outcome = apply(ctx, config) if takes_config else apply(ctx)
        if inspect.isawaitable(outcome):
            if inspect.iscoroutine(outcome):
                outcome.close()
            raise PluginError(f'plugin "{name}": apply must be synchronous')
    except PluginError:
        fiber.dispose(parent.runtime.logger)
        raise
    except BaseException as exc:  # nothing a failed apply registered may stay behind
        fiber.dispose(parent.runtime.logger)
        if is_cancellation(exc) or not isinstance(exc, Exception):
            raise
        raise PluginError(f'plugin "{name}" failed to apply: {describe(exc)}') from exc
    return fiber


def _accepts_config(apply: Callable[..., Any]) -> bool:
    try:
        parameters = list(inspect.signature(apply).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [
        p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in positional)
