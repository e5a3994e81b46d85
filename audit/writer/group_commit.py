"""Group commit: which lines are durable, when to fsync, and the anchor that waits for an fsync.

The appender counts lines written; an fsync covers every line written before it starts. In
``batch`` mode the appender hands the flusher thread (:mod:`.flusher`) a group commit through a
queue (a duplicate descriptor, so a rotation that closes ours does not matter) once per batch, and
fsyncs inline itself only when the flusher falls two batches behind; ``always`` fsyncs before every
append returns. The flusher never takes the appender's lock on this path: the few fields both
threads write are guarded by ``sync_state``, held for a few bytecodes only. (Waking a thread
blocked on the appender's lock on every batch cost more CPU than the fsync itself.)
"""

from __future__ import annotations

import os
import queue
import threading
import time
from contextlib import suppress
from typing import Final

from .anchors import AnchorExporter
from .files import ActiveFile
from .locking import WriterLock
from .settings import WriterSettings


class Signal:
    """A flusher message that is not a group commit."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


WAKE: Final = Signal("wake")  # a deadline may have moved: recompute
STOP: Final = Signal("stop")  # close(): leave after the commits queued before it
#: A group commit is (lines covered, duplicate descriptor, its generation).
FlusherMessage = tuple[int, int, int] | Signal


class GroupCommit:
    """Counts lines written and durable, fsyncs them (inline or via the flusher), releases the anchor."""

    __slots__ = (
        "_anchors",
        "_file",
        "_lock",
        "_settings",
        "jobs",
        "pending_anchor",
        "sync_requested",
        "sync_state",
        "synced",
        "unsynced_since",
        "written",
    )

    def __init__(
        self, settings: WriterSettings, file: ActiveFile, lock: WriterLock, anchors: AnchorExporter
    ) -> None:
        self._settings = settings
        self._file = file
        self._lock = lock
        self._anchors = anchors
        self.sync_state = threading.Lock()
        self.jobs: queue.SimpleQueue[FlusherMessage] = queue.SimpleQueue()
        self.written = 0  # lines this writer wrote
        self.synced = 0  # raised under sync_state, read without it (an int read is atomic)
        self.unsynced_since = 0.0  # when the oldest line no group commit covers was written
        self.sync_requested = False  # a group commit is queued or running in the flusher
        self.pending_anchor: tuple[bytes, int] | None = None  # (checkpoint line, lines), sync_state

    def note_written(self) -> None:
        """One more line reached the active segment (the thread lock held)."""
        if self.written == self.synced:
            self.unsynced_since = time.monotonic()
        self.written += 1

    def note_installed(self, *, fsynced: bool) -> None:
        """One more line, written to a new segment before it was installed (its first): when it was
        fsynced then, it is durable as soon as every line before it is."""
        self.written += 1
        if fsynced:
            with self.sync_state:
                if self.synced == self.written - 1:
                    self.synced = self.written

    def after_append(self) -> bool:
        """Group-commit bookkeeping after a record; ``True`` when the caller must fsync before
        acknowledging it (``always``, or a batch that reached twice its bound)."""
        settings = self._settings
        if settings.fsync == "always":
            return True
        if settings.fsync == "batch":
            pending = self.written - self.synced
            if pending >= 2 * settings.batch_records:
                return True  # the flusher fell behind: hold the bound ourselves
            if not self.sync_requested and (
                pending >= settings.batch_records
                or time.monotonic() - self.unsynced_since >= settings.batch_ms / 1000
            ):
                self.request_sync()  # once per batch; later appends leave the flusher alone
            elif pending == 1:
                self.jobs.put(WAKE)  # start the batch_ms clock in the flusher
        return False

    def all_durable(self) -> bool:
        """Whether every line written is known durable (never in ``off`` mode)."""
        return self.written == self.synced and self._settings.fsync != "off"

    def sync_if_due(self, *, force: bool) -> None:
        """fsync inline (the thread lock held, and the OS lock except after an append) when forced
        or when the batch bound is reached; then export a checkpoint anchor that is now covered."""
        settings = self._settings
        pending = self.written - self.synced
        if settings.fsync == "off":
            self.synced = self.written
        elif pending and (
            force
            or pending >= settings.batch_records
            or time.monotonic() - self.unsynced_since >= settings.batch_ms / 1000
        ):
            covered = self.written
            try:
                os.fsync(self._file.fd)
            except OSError as error:
                raise self._lock.fail(f"{self._lock.path}: fsync failed: {error}") from None
            with self.sync_state:
                self.synced = max(self.synced, covered)
        with self.sync_state:
            anchor = self._take_covered_anchor()
        if anchor is not None:
            self._anchors.export(anchor)

    def request_sync(self) -> None:
        """Hand the flusher a group commit of every line written so far (thread lock held).

        The duplicate descriptor stays valid when a rotation closes ours meanwhile.
        """
        self.sync_requested = True
        self.unsynced_since = time.monotonic()  # the clock of the lines this commit misses
        self.jobs.put((self.written, os.dup(self._file.fd), self._file.generation))

    def hold_anchor(self, line: bytes) -> None:
        """Export checkpoint ``line`` (just written) once an fsync covers it."""
        with self.sync_state:
            self.pending_anchor = (line, self.written)

    def run_commit(self, covered: int, fd: int, generation: int) -> bool:
        """In the flusher, off every lock: fsync one queued group commit and export an anchor it
        covers; ``False`` when that failed (the failure is recorded for the next append).

        An fsync covers every line whose write returned before it starts, not only the lines
        counted when the commit was queued: count those too, so the next commit is a whole batch
        away (read ``written`` first: the appender bumps the generation before it counts a line
        of a new file).
        """
        written = self.written
        if self._file.generation == generation:
            covered = max(covered, written)
        try:
            os.fsync(fd)
        except OSError as error:
            self._lock.fail_quietly(f"{self._lock.path}: fsync failed: {error}")
            return False
        finally:
            os.close(fd)
        with self.sync_state:
            self.synced = max(self.synced, covered)
            self.sync_requested = False
            anchor = self._take_covered_anchor()
        if anchor is not None:
            try:
                self._anchors.export(anchor)
            except OSError as error:
                self._lock.fail_quietly(f"cannot export the anchor: {error}")
                return False
        return True

    def close_queued_descriptors(self) -> None:
        """Close the descriptors of group commits a failed flusher left behind."""
        while True:
            try:
                message = self.jobs.get_nowait()
            except queue.Empty:
                break
            if isinstance(message, tuple):
                with suppress(OSError):
                    os.close(message[1])

    def _take_covered_anchor(self) -> bytes | None:
        """The pending anchor line once an fsync covers it (``sync_state`` held)."""
        pending = self.pending_anchor
        if pending is None or (self._settings.fsync != "off" and self.synced < pending[1]):
            return None
        self.pending_anchor = None
        return pending[0]
