"""The decision workers: the CPU-bound part of a request (decide, record) runs here, on a pool of
threads sized to the cores, never on the event loop that accepts and reads connections.

The pool is bounded, so a burst of requests queues (cheaply, as waiting coroutines) instead of
starting a thread each: each decision starts its own evaluation clock only once a worker runs it
(``Policy``'s per-stage budget), so time spent queued never counts against the evaluation budget,
and few threads compete for the interpreter lock while one evaluates. How long requests queue is
reported to the :class:`~.connections.LoadMonitor`.

A decision that has started is never abandoned: cancelling the request (a stop, a client that
left) waits for it, so every decision taken is also recorded before the gateway leaves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from dsh_policy.policy.hooks.gateway.connections import LoadMonitor

T = TypeVar("T")


class Workers:
    """Run blocking decision work on the bounded pool, measuring the wait for a worker."""

    def __init__(self, monitor: LoadMonitor) -> None:
        self.monitor = monitor
        self.limiter = anyio.CapacityLimiter(monitor.limits.workers)

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on a worker thread; its result."""
        queued_at = time.monotonic()
        started: list[float] = []

        def timed() -> T:
            started.append(time.monotonic())
            return work()

        monitor = self.monitor
        monitor.queued += 1
        try:
            result = await anyio.to_thread.run_sync(timed, limiter=self.limiter)
        finally:
            monitor.queued -= 1
        monitor.decided += 1
        monitor.waited(started[0] - queued_at)
        return result
