"""Abort signals: how cancellation reaches a turn, a model request or a tool body.

A signal is a one-way latch with a reason. Code that waits does so inside :func:`cancel_on_abort`,
a cancel scope the signal cancels, so cancellation travels through anyio scopes rather than through
flags polled in loops. ``AbortSignal.any`` combines signals the way a ``tools/execute`` wrapper
adds a timeout to the caller's signal without removing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

Listener = Callable[[Any], None]


def _noop() -> None:
    return None


class AbortSignal:
    """Aborted at most once; listeners run synchronously, in registration order, on abort."""

    __slots__ = ("_aborted", "_detach", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Listener] | None = []
        self._detach: Callable[[], None] = _noop

    @property
    def aborted(self) -> bool:
        """Whether the signal has fired."""
        return self._aborted

    @property
    def reason(self) -> Any:
        """Why it fired (None while not aborted)."""
        return self._reason

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(reason)`` on abort (at once if already aborted); returns a disposer."""
        if self._aborted or self._listeners is None:
            listener(self._reason)
            return _noop
        self._listeners.append(listener)
        listeners = self._listeners

        def dispose() -> None:
            if listener in listeners:
                listeners.remove(listener)

        return dispose

    def _fire(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners or [], None
        for listener in listeners:
            listener(reason)

    @staticmethod
    def never() -> AbortSignal:
        """The shared signal nobody can abort (for calls made outside any turn)."""
        return NEVER

    @property
    def can_abort(self) -> bool:
        """False only for :func:`AbortSignal.never`, so waits need no cancel scope."""
        return self is not NEVER

    @staticmethod
    def any(*signals: AbortSignal) -> AbortSignal:
        """A signal that fires when the first of ``signals`` fires, with that signal's reason."""
        combined = AbortSignal()
        for signal in signals:
            if signal.aborted:
                combined._fire(signal.reason)
                return combined
        disposers = [signal.add_listener(combined._fire) for signal in signals]

        def detach() -> None:
            for dispose in disposers:
                dispose()

        combined._detach = detach
        combined.add_listener(lambda _reason: detach())
        return combined

    def detach(self) -> None:
        """Stop following the signals this one was combined from (no-op for plain signals)."""
        self._detach()


class _NeverSignal(AbortSignal):
    __slots__ = ()

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        return _noop

    def _fire(self, reason: Any) -> None:
        return None


NEVER: AbortSignal = _NeverSignal()


class AbortController:
    """Owns a signal and is the only thing that may abort it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = "aborted") -> None:
        """Fire the signal (idempotent: the first reason wins)."""
        self.signal._fire(reason)


class AbortedError(Exception):
    """Raised by the loop when a turn's signal fired; carries the abort reason."""

    def __init__(self, reason: Any) -> None:
        super().__init__(reason if type(reason) is str else "aborted")
        self.reason = reason


class cancel_on_abort:
    """A cancel scope that the signal cancels; inspect ``scope.cancelled_caught`` afterwards.

    A class rather than a generator-based context manager: it sits on every tool call's path.
    """

    __slots__ = ("_dispose", "_scope", "_signal")

    def __init__(self, signal: AbortSignal) -> None:
        self._signal = signal
        self._scope = anyio.CancelScope()
        self._dispose: Callable[[], None] = _noop

    def __enter__(self) -> anyio.CancelScope:
        scope = self._scope
        scope.__enter__()
        self._dispose = self._signal.add_listener(lambda _reason: scope.cancel())
        return scope

    def __exit__(self, *exc_info: Any) -> bool:
        self._dispose()
        return bool(self._scope.__exit__(*exc_info))
