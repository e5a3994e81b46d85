"""The decision path's deadline, visible to the helpers a rule calls.

Each stage of each event gets a time budget (``Policy.load(..., event_seconds=2.0)``). Checking it
between expressions is not enough: one call of a helper on attacker-sized input (``shell.commands``
on a 256 KiB line of 100,000 pipes) can take longer than the whole budget. The decider sets the
stage's deadline here while the stage runs; helpers that loop over their input call
:func:`check_deadline` now and then, which raises :class:`DeadlineExceededError` once it has passed.
Both CEL engines turn a helper's exception into an evaluation error, so the rule fails closed
(``on_error: deny``; guards always) - the same outcome whichever engine runs the expression.

It lives with the readers, not the policy, because the readers are what must honour it and they
import nothing of the policy; the decider (``policy.decide``) sets it with :func:`stage_deadline`.

The budget bounds work an input can cause. Work a process does once, whatever the input (a
pattern or an expression compiled on first use, a reader imported on its first call), runs inside
:func:`one_time_setup` and is not counted: on a loaded machine it could otherwise take a benign
first call past the budget and fail it closed. The set of such work is fixed by the packs and the
code, so an input cannot buy itself more time with it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("dsh_policy_deadline", default=None)
# Seconds of one-time set-up done so far in this process (see the module docstring); a deadline
# is checked against the clock minus what was added here since the deadline was set.
_SETUP_SECONDS = [0.0]
_SETUP_AT_START: ContextVar[float] = ContextVar("dsh_policy_setup_at_start", default=0.0)


class DeadlineExceededError(RuntimeError):
    """The stage's time budget ran out inside a helper."""


@contextmanager
def stage_deadline(seconds: float) -> Iterator[float]:
    """Set the deadline ``seconds`` from now for the code inside (nested stages keep the
    earlier one). Yields the deadline (``time.monotonic()`` seconds)."""
    deadline = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(deadline if outer is None else min(outer, deadline))
    setup_token = _SETUP_AT_START.set(_SETUP_SECONDS[0]) if outer is None else None
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)
        if setup_token is not None:
            _SETUP_AT_START.reset(setup_token)


def check_deadline() -> None:
    """Raise :class:`DeadlineExceededError` when the current stage's deadline has passed (one-time
    set-up done meanwhile not counted)."""
    deadline = _DEADLINE.get()
    if (
        deadline is not None
        and time.monotonic() > deadline
        and time.monotonic() > deadline + setup_since(_SETUP_AT_START.get())
    ):
        raise DeadlineExceededError("the stage's evaluation time budget ran out")


def remaining() -> float | None:
    """Seconds left in the current stage (``None`` outside a stage)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return None
    return deadline + setup_since(_SETUP_AT_START.get()) - time.monotonic()


def setup_seconds() -> float:
    """Seconds of one-time set-up this process has done (a stage notes it when its clock starts)."""
    return _SETUP_SECONDS[0]


def setup_since(noted: float) -> float:
    """Seconds of one-time set-up done since :func:`setup_seconds` returned ``noted``."""
    return _SETUP_SECONDS[0] - noted


@contextmanager
def one_time_setup() -> Iterator[None]:
    """Run work the process does once whatever the input (see the module docstring) without
    counting it against any stage's budget."""
    started = time.monotonic()
    try:
        yield
    finally:
        _SETUP_SECONDS[0] += time.monotonic() - started
