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
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("dsh_policy_deadline", default=None)


class DeadlineExceededError(RuntimeError):
    """The stage's time budget ran out inside a helper."""


@contextmanager
def stage_deadline(seconds: float) -> Iterator[float]:
    """Set the deadline ``seconds`` from now for the code inside (nested stages keep the
    earlier one). Yields the deadline (``time.monotonic()`` seconds)."""
    deadline = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(deadline if outer is None else min(outer, deadline))
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise :class:`DeadlineExceededError` when the current stage's deadline has passed."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise DeadlineExceededError("the stage's evaluation time budget ran out")


def remaining() -> float | None:
    """Seconds left in the current stage (``None`` outside a stage)."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()
