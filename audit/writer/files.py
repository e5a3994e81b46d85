"""The active segment's descriptor, and the few file-system steps the writer needs to be crash-safe."""

from __future__ import annotations

import errno
import os
from contextlib import suppress
from pathlib import Path


class ActiveFile:
    """The open active segment: its descriptor, which file it is, and how much of it we have read.

    ``generation`` is bumped whenever ``fd`` is replaced, before any line counted as written goes
    to the new file: the flusher extends a group commit to every line written before its fsync
    only while the commit's descriptor is still the file those lines went to.
    """

    __slots__ = ("fd", "generation", "inode", "offset")

    def __init__(self) -> None:
        self.fd = -1
        self.generation = 0
        self.inode = -1
        self.offset = 0

    def attach(self, fd: int, *, offset: int) -> None:
        """Make ``fd`` the active segment, closing the one it replaces."""
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = fd
        self.generation += 1
        self.inode = os.fstat(fd).st_ino
        self.offset = offset

    def close(self) -> None:
        """Close the descriptor (the file stays)."""
        os.close(self.fd)
        self.fd = -1


def fsync_directory(directory: Path) -> None:
    """Make a directory entry change (a new name, a rename) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def stat_or_none(path: Path) -> os.stat_result | None:
    """``os.stat`` of ``path``, ``None`` when it does not exist."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def write_new_file(path: Path, data: bytes, *, sync: bool) -> None:
    """Create ``path`` (never replacing a file) holding ``data``; on any failure remove it again,
    so a failed recovery leaves no empty side file behind."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, f"short write to {path}")
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with suppress(OSError):
            path.unlink()
        raise
