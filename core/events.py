"""The event bus and its dispatch modes (HARNESS.md section 1).

Listeners may be sync or async; whatever a listener returns is awaited if it is awaitable, so a sync
waterfall listener may simply ``return next()``. Every dispatch works on a snapshot of the listener
list, so a listener disposing itself (or a plugin reloading) mid-dispatch changes only later
dispatches.

- ``emit``: every listener, results ignored, exceptions propagate.
- ``emit_contained``: every listener; one listener's failure (any exception but cancellation) is
  logged and the others still run.
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

from .failures import describe, exact_str, is_cancellation, log_failure, safe_text, type_name

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
    """Listeners per event name, in dispatch order.

    Every registration gets its own handle, and its disposer removes exactly that registration:
    the same function registered twice (two plugins sharing a module-level listener, or one plugin
    applied at the root and in an agent's scope) is two registrations, and disposing one leaves
    the other in place. Disposers are idempotent.
    """

    __slots__ = ("_handles", "_listeners", "logger")

    def __init__(self, logger: Any = None) -> None:
        self._listeners: dict[str, list[Listener]] = {}
        self._handles: dict[str, list[object]] = {}
        self.logger = logger if logger is not None else structlog.get_logger("dsh_policy.core.events")

    def on(self, event: str, listener: Listener, prepend: bool = False) -> Callable[[], None]:
        """Register ``listener``; ``prepend`` makes it the first (outermost) one. Returns a disposer."""
        if not callable(listener):
            raise TypeError(f"a listener of {event!r} must be callable")
        handle = object()
        # Replace the lists instead of mutating them so snapshots held by running dispatches stay
        # valid; the handles list runs parallel to the listeners list.
        listeners = self._listeners.get(event, [])
        handles = self._handles.get(event, [])
        if prepend:
            self._listeners[event] = [listener, *listeners]
            self._handles[event] = [handle, *handles]
        else:
            self._listeners[event] = [*listeners, listener]
            self._handles[event] = [*handles, handle]

        def dispose() -> None:
            current = self._handles.get(event, ())
            index = next((i for i, item in enumerate(current) if item is handle), None)
            if index is None:
                return  # already disposed
            remaining = [*current[:index], *current[index + 1 :]]
            if remaining:
                kept = self._listeners[event]
                self._listeners[event] = [*kept[:index], *kept[index + 1 :]]
                self._handles[event] = remaining
            else:
                self._listeners.pop(event, None)
                self._handles.pop(event, None)

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
        """Call every listener; log each failure and go on. Returns how many listeners failed.

        Contained means any failure, hostile exception objects and ``BaseException`` subclasses
        included; only cancellation propagates (see :mod:`.failures`).
        """
        failures = 0
        for listener in self.listeners(event):
            try:
                await resolve(listener(*args))
            except BaseException as exc:
                if is_cancellation(exc):
                    raise
                failures += 1
                log_failure(
                    self.logger,
                    "listener failed",
                    hook=event,
                    listener=_describe(listener),
                    error=f"{type_name(exc)}: {describe(exc)}",
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
    try:
        name = getattr(listener, "__qualname__", None)
    except Exception:
        name = None
    return exact_str(name) or safe_text(listener)


_EMPTY: list[Listener] = []
