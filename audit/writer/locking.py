"""The writer's locks and its sticky failure: who may append now, and whether anyone still may.

A thread lock orders this process's appenders; an OS lock on ``PATH.lock`` orders processes. Once
a write or fsync failed we no longer know what reached the disk, so the failure sticks: every later
append is refused, and a failure found in the background is reported at least once.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from ..segments import lock_path
from .errors import AuditWriteError


class WriterLock:
    """The thread lock (``mutex``), the OS lock on the lock file, and the writer's failure state."""

    __slots__ = (
        "closed",
        "failure",
        "failure_reported",
        "fd",
        "lease_left",
        "lease_until",
        "leased",
        "mutex",
        "path",
    )

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mutex = threading.Lock()
        self.failure: str | None = None
        self.failure_reported = False  # a background fsync failure must surface at least once
        self.closed = False
        #: A burst of appends in ``batch`` mode keeps the OS lock between appends (a lease): while
        #: it is held no other process can append, so the chain state needs no catch-up, and the
        #: lock and seek syscalls are paid once per lease. It ends after ``lease_left`` more
        #: appends, at ``lease_until`` (the flusher ends an idle one), or at any ``release``.
        self.leased = False
        self.lease_left = 0
        self.lease_until = 0.0
        self.fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)

    def take(self, *, closing: bool = False) -> None:
        """With ``mutex`` held: refuse if failed or closed, else take the OS lock."""
        if self.failure is not None:
            self.failure_reported = True
            raise AuditWriteError(f"audit writer failed earlier and accepts no records: {self.failure}")
        if self.closed and not closing:
            raise AuditWriteError("audit writer is closed")
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as error:
            raise self.fail(f"cannot lock {lock_path(self.path)}: {error}") from None

    def begin_lease(self, appends: int, until: float) -> None:
        """Keep the OS lock (taken) for ``appends`` more appends or until ``until`` (monotonic)."""
        self.leased, self.lease_left, self.lease_until = True, appends, until

    def lease_over(self, now: float) -> bool:
        """Whether the lease's time is up at ``now`` (monotonic)."""
        return now >= self.lease_until

    def release(self) -> None:
        """Release the OS lock (ending any lease); a failure to do so stops the writer."""
        self.leased = False
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        except OSError as error:
            self.failure = self.failure or f"cannot unlock: {error}"

    def fail(self, reason: str) -> AuditWriteError:
        """Stop the writer for good (the caller raises what this returns)."""
        self.failure = reason
        self.failure_reported = True
        return AuditWriteError(reason)

    def fail_quietly(self, reason: str) -> None:
        """Record a failure found off the append path (the next append or close reports it)."""
        self.failure = self.failure or reason
