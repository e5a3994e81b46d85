"""The decision workers: the CPU-bound part of a request (decide, record) runs here, on a pool of
threads sized to the cores, never on the event loop that accepts and reads connections.

The pool is bounded, so a burst of requests queues (cheaply, as waiting coroutines and one queue
entry each) instead of starting a thread each: each decision starts its own evaluation clock only
once a worker runs it (``Policy``'s per-stage budget), so time spent queued never counts against
the evaluation budget, and few threads compete for the interpreter lock while one evaluates. How
long requests queue is reported to the :class:`~.connections.LoadMonitor`.

Why not ``anyio.to_thread``: per request it takes a capacity-limiter token, hands the job over
through a ``queue.Queue`` (a condition variable) and wakes the loop through its self-pipe; under
load those hops cost as much interpreter time as the decision. Here jobs go through a
``SimpleQueue`` (C, no condition), and finished jobs are handed back in batches: a worker wakes
the loop only when no wake-up is already pending, and the loop settles every job finished since.
The front ends run on anyio's asyncio backend, whose futures this uses directly.

A decision that has started is never abandoned: cancelling the request (a stop, a client that
left) waits for it, so every decision taken is also recorded before the gateway leaves. A request
cancelled while still queued is dropped without deciding.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any, Generic, TypeVar

import anyio
from dsh_policy.policy.hooks.gateway.connections import LoadMonitor

T = TypeVar("T")


class _Job(Generic[T]):
    __slots__ = ("cancelled", "error", "future", "queued_at", "result", "started", "started_at", "work")

    def __init__(self, work: Callable[[], T], future: asyncio.Future[T]) -> None:
        self.work = work
        self.future = future
        self.queued_at = time.monotonic()
        self.started_at = 0.0
        self.started = False
        self.cancelled = False
        self.result: T | None = None
        self.error: BaseException | None = None


class Workers:
    """Run blocking decision work on the bounded pool, measuring the wait for a worker."""

    def __init__(self, monitor: LoadMonitor) -> None:
        self.monitor = monitor
        self._jobs: SimpleQueue[_Job[Any] | None] = SimpleQueue()
        self._lock = threading.Lock()  # job start/cancel, the finished list and the wake-up flag
        self._finished: list[_Job[Any]] = []
        self._wake_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._threads: list[threading.Thread] = []

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        for number in range(self.monitor.limits.workers):
            thread = threading.Thread(target=self._serve, name=f"gateway-decision-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Let every worker finish its job and leave (called once the loop has stopped)."""
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on a worker thread; its result (or its exception)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._start(loop)
        job: _Job[T] = _Job(work, loop.create_future())
        monitor = self.monitor
        monitor.queued += 1
        try:
            self._jobs.put(job)
            try:
                # Shielded: cancelling this task must not cancel the job's future (a started
                # decision still finishes and is waited for below).
                await asyncio.shield(job.future)
            except BaseException:
                with self._lock:
                    if not job.started:  # still queued: the worker skips it
                        job.cancelled = True
                if job.cancelled:
                    raise
                with anyio.CancelScope(shield=True):  # started: never abandoned
                    await asyncio.shield(job.future)
                raise
        finally:
            monitor.queued -= 1
        monitor.decided += 1
        monitor.waited(job.started_at - job.queued_at)
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def _serve(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            job = jobs.get()
            if job is None:
                return
            with lock:
                if job.cancelled:
                    continue
                job.started = True
            job.started_at = time.monotonic()
            try:
                job.result = job.work()
            except BaseException as error:  # handed to the awaiting coroutine
                job.error = error
            with lock:
                self._finished.append(job)
                wake = not self._wake_pending
                self._wake_pending = True
            if wake:
                loop = self._loop
                if loop is not None:
                    try:
                        loop.call_soon_threadsafe(self._settle)
                    except RuntimeError:  # the loop is closed: nobody waits any more
                        return

    def _settle(self) -> None:
        """On the loop: complete every job finished since the last wake-up."""
        with self._lock:
            finished, self._finished = self._finished, []
            self._wake_pending = False
        for job in finished:
            if not job.future.done():
                job.future.set_result(None)
