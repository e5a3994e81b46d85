"""How a decision reached the agent, attached to the records appended while deciding it.

A hook client sends each event with a request id; when it cannot pass its gateway's answer on
and decides in process instead, it says why. Records appended inside :func:`recording_delivery`
carry that as ``delivery`` (``DecisionAuditor`` adds it), so the log joins a decision record, the
request it answered and, through ``hook_told`` records, what the agent was actually told.

Its own tiny module: the in-process hook sets it before deciding and must not pay for importing
the audit machinery unless it records.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_DELIVERY: ContextVar[Mapping[str, Any] | None] = ContextVar("dsh_policy_delivery", default=None)


@contextmanager
def recording_delivery(delivery: Mapping[str, Any] | None) -> Iterator[None]:
    """Records appended inside carry ``delivery`` (None: nothing to add)."""
    token = _DELIVERY.set(delivery)
    try:
        yield
    finally:
        _DELIVERY.reset(token)


def current_delivery() -> Mapping[str, Any] | None:
    """The delivery the records appended now carry."""
    return _DELIVERY.get()
