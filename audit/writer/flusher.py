"""The flusher thread: group-commit fsyncs off the append path, and the deadlines nobody else keeps.

Group commit needs a deadline even when appends stop (``batch_ms``), and checkpoints need one in
time (``checkpoint_seconds``). Owned by the writer and joined by its ``close``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from .chain import ChainState
from .errors import AuditError
from .group_commit import STOP, WAKE, GroupCommit, Signal
from .locking import WriterLock
from .settings import WriterSettings


class Flusher:
    """Runs queued group commits and, when a deadline passes with nobody appending, starts the
    overdue group commit or writes the checkpoint that is due by time."""

    __slots__ = ("_chain", "_checkpoint", "_commits", "_lock", "_locked", "_settings", "_thread")

    def __init__(
        self,
        settings: WriterSettings,
        commits: GroupCommit,
        chain: ChainState,
        lock: WriterLock,
        locked: Callable[[], AbstractContextManager[None]],
        checkpoint: Callable[[str], object],
    ) -> None:
        self._settings = settings
        self._commits = commits
        self._chain = chain
        self._lock = lock
        self._locked = locked  # the writer's thread lock + OS lock + catch-up
        self._checkpoint = checkpoint  # writes a checkpoint with the locks held
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread when some deadline can need it (``batch``, or timed checkpoints)."""
        if self._settings.fsync != "batch" and self._settings.checkpoint_seconds is None:
            return
        self._thread = threading.Thread(target=self._run, name="audit-flush", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Let the thread finish the group commits queued so far, then join it."""
        if self._thread is not None:
            self._commits.jobs.put(STOP)  # after every queued group commit
            self._thread.join()

    def _run(self) -> None:
        """Group commits arrive from the appender and are fsynced outside every lock, so appends
        continue while the disk works. The flusher takes the appender's lock only when a deadline
        passes with nobody appending: to start a group commit of the last lines, or to write a
        checkpoint by time.
        """
        commits = self._commits
        jobs = commits.jobs
        try:
            while True:
                wait = self._wait()
                try:
                    message = jobs.get() if wait is None else jobs.get(timeout=max(wait, 0.0))
                except queue.Empty:
                    message = WAKE
                if isinstance(message, Signal):
                    if message is STOP or not self._on_deadline():
                        return
                    continue
                if not commits.run_commit(*message):
                    return
        finally:
            # Nobody would end an idle lease after us: end it now (an append takes the lock anew).
            with self._lock.mutex:
                if self._lock.leased:
                    self._lock.release()

    def _wait(self) -> float | None:
        """Seconds until the next deadline (``None``: none). Reads without locks: a stale value
        only moves a deadline, and every change that adds one also queues a wake-up."""
        settings, commits, chain = self._settings, self._commits, self._chain
        deadlines = []
        if settings.fsync == "batch" and commits.written > commits.synced and not commits.sync_requested:
            deadlines.append(commits.unsynced_since + settings.batch_ms / 1000)
        if settings.checkpoint_seconds is not None and chain.since_checkpoint:
            deadlines.append(chain.last_checkpoint_at + settings.checkpoint_seconds)
        if self._lock.leased:
            deadlines.append(self._lock.lease_until)
        return min(deadlines) - time.monotonic() if deadlines else None

    def _on_deadline(self) -> bool:
        """End an idle lease, start an overdue group commit or write a timed checkpoint; ``False``
        ends the flusher."""
        settings, commits, chain, lock = self._settings, self._commits, self._chain, self._lock
        now = time.monotonic()
        with lock.mutex:
            if lock.leased and (lock.lease_over(now) or lock.closed or lock.failure is not None):
                lock.release()  # appends went quiet: other processes may append again
            if lock.closed or lock.failure is not None:
                return False
            if (
                settings.fsync == "batch"
                and not commits.sync_requested
                and commits.written > commits.synced
                and now - commits.unsynced_since >= settings.batch_ms / 1000
            ):
                try:
                    commits.request_sync()
                except OSError as error:
                    lock.fail_quietly(f"{lock.path}: cannot duplicate for fsync: {error}")
                    return False
        checkpoint_seconds = settings.checkpoint_seconds
        if (
            checkpoint_seconds is not None
            and chain.since_checkpoint
            and now >= chain.last_checkpoint_at + checkpoint_seconds
        ):
            try:
                with self._locked():
                    if chain.since_checkpoint:
                        self._checkpoint("interval")
            except AuditError:
                return False  # the failure is recorded; the next append reports it
        return True
