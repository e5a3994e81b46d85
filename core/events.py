"""The event bus and its dispatch modes (HARNESS.md section 1).

Listeners may be sync or async; whatever a listener returns is awaited if it is awaitable, so a sync
waterfall listener may simply ``return next()``. Every dispatch works on a snapshot of the listener
list, so a listener disposing itself (or a plugin reloading) mid-dispatch changes only later
dispatches.

- ``emit``: every listener, results ignored, exceptions propagate.
- ``emit_contained``: every listener; one listener's exception is logged and the others still run.
- ``serial``: in order, stopping at the first result that is not None/False.
- ``waterfall``: ``listener(*payload, next)``; first registered is outermost; ``await next()`` runs
  the rest and finally the default; returning without ``next()`` short-circuits; exceptions
  propagate to the caller.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from types import GeneratorType
from typing import Any

import structlog

Listener = Callable[..., Any]
Next = Callable[[], Awaitable[Any]]


async def resolve(value: Any) -> Any:
    """Await ``value`` if it is awaitable (listeners may be sync or async)."""
    # ``__await__`` covers coroutines and futures without inspect's slower ABC check; generator
    # based coroutines (types.coroutine) have no ``__await__`` and take the second test.
    if hasattr(value, "__await__") or (type(value) is GeneratorType and inspect.isawaitable(value)):
        return await value
    return value


class EventBus:
    """Listeners per event name, in dispatch order."""

    __slots__ = ("_listeners", "logger")

    def __init__(self, logger: Any = None) -> None:
        self._listeners: dict[str, list[Listener]] = {}
        self.logger = logger if logger is not None else structlog.get_logger("dsh_policy.core.events")

    def on(self, event: str, listener: Listener, prepend: bool = False) -> Callable[[], None]:
        """Register ``listener``; ``prepend`` makes it the first (outermost) one. Returns a disposer."""
        # Replace the list instead of mutating it so snapshots held by running dispatches stay valid.
        current = self._listeners.get(event, [])
        self._listeners[event] = [listener, *current] if prepend else [*current, listener]

        def dispose() -> None:
            remaining = [item for item in self._listeners.get(event, []) if item is not listener]
            if remaining:
                self._listeners[event] = remaining
            else:
                self._listeners.pop(event, None)

        return dispose

    def listeners(self, event: str) -> list[Listener]:
        """The current listeners of ``event`` (a snapshot; do not mutate)."""
        return self._listeners.get(event, _EMPTY)

    def count(self, event: str | None = None) -> int:
        """How many listeners are registered (for one event, or in total)."""
        if event is not None:
            return len(self._listeners.get(event, _EMPTY))
        return sum(len(items) for items in self._listeners.values())

    async def emit(self, event: str, *args: Any) -> None:
        """Call every listener; results are ignored and the first exception propagates."""
        for listener in self.listeners(event):
            await resolve(listener(*args))

    async def emit_contained(self, event: str, *args: Any) -> int:
        """Call every listener; log each failure and go on. Returns how many listeners failed."""
        failures = 0
        for listener in self.listeners(event):
            try:
                await resolve(listener(*args))
            except Exception as exc:
                failures += 1
                self.logger.error(
                    "listener failed",
                    hook=event,
                    listener=_describe(listener),
                    error=f"{type(exc).__name__}: {exc}",
                    exc_info=exc,
                )
        return failures

    async def serial(self, event: str, *args: Any) -> Any:
        """Await listeners in order; return the first result that is not None/False (else None)."""
        for listener in self.listeners(event):
            result = await resolve(listener(*args))
            if result is not None and result is not False:
                return result
        return None

    async def waterfall(self, event: str, args: tuple[Any, ...], default: Callable[[], Any]) -> Any:
        """Run ``listener(*args, next)`` outermost-first; ``default()`` is the innermost step."""
        listeners = self.listeners(event)
        if not listeners:
            return await resolve(default())
        return await _run_chain(listeners, 0, args, default)


async def _run_chain(
    listeners: list[Listener], index: int, args: tuple[Any, ...], default: Callable[[], Any]
) -> Any:
    if index == len(listeners):
        return await resolve(default())

    async def next_() -> Any:
        return await _run_chain(listeners, index + 1, args, default)

    return await resolve(listeners[index](*args, next_))


def _describe(listener: Listener) -> str:
    return getattr(listener, "__qualname__", None) or repr(listener)


_EMPTY: list[Listener] = []
