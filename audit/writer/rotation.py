"""Segments: closing a full one and installing its successor without ever replacing a file.

Rotation prepares the next segment in ``PATH.next`` and installs it by link-then-rename, so no file
is ever replaced and ``PATH`` always holds a complete segment: a process killed anywhere leaves a
log that verifies, and no record whose ``append`` returned is lost.
"""

from __future__ import annotations

import errno
import os
import time
from contextlib import suppress
from pathlib import Path
from typing import Any, Final

from ..segments import next_segment_path, rotated_path
from .append import Appender
from .chain import ChainState
from .checkpoints import Checkpointer
from .errors import AuditWriteError
from .files import ActiveFile, fsync_directory
from .group_commit import GroupCommit
from .settings import WriterSettings

#: errno values of a file system that has no hard links (rotation then renames, see
#: :meth:`Rotation._link_full_segment`).
_NO_HARD_LINKS: Final = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV})


class Rotation:
    """Closes the active segment with a rotation checkpoint, renames it ``PATH.NNNNNN`` and starts
    the next one linked to it; also creates a log's first segment."""

    __slots__ = ("_appender", "_chain", "_checkpoints", "_commits", "_file", "_path", "_settings")

    def __init__(
        self,
        path: Path,
        settings: WriterSettings,
        chain: ChainState,
        file: ActiveFile,
        appender: Appender,
        checkpoints: Checkpointer,
        commits: GroupCommit,
    ) -> None:
        self._path = path
        self._settings = settings
        self._chain = chain
        self._file = file
        self._appender = appender
        self._checkpoints = checkpoints
        self._commits = commits

    def rotate(self) -> None:
        """Close the full segment with a checkpoint, rename it, and start the next one linked to it."""
        self._checkpoints.write("rotation")
        self._commits.sync_if_due(force=self._settings.durable)
        self.finish()

    def finish(self) -> None:
        """Give the segment that ends in a rotation checkpoint its rotated name and install its
        successor. Also run on open and catch-up: a writer killed after the checkpoint leaves a
        segment that promises a successor, and completing the rotation keeps that promise."""
        chain = self._chain
        chain.pending_rotation = False
        if self._settings.durable:
            self._commits.sync_if_due(force=True)  # the closed segment is durable before it is closed
        rotated = rotated_path(self._path, chain.segment_index)
        previous = chain.link_to_previous(rotated.name)
        self.remove_stale_temporaries()
        self.create_segment(chain.segment_index + 1, previous, replacing=rotated)

    def remove_stale_temporaries(self) -> None:
        """The next-segment file of a writer that died before installing it (only a lock holder
        creates one, and we hold the lock): it holds nothing that was ever acknowledged."""
        with suppress(FileNotFoundError):
            next_segment_path(self._path).unlink()

    def create_segment(self, index: int, previous: dict[str, Any] | None, *, replacing: Path | None) -> None:
        """Install a new active segment holding only its ``segment_start``, never overwriting a file.

        The record is written to a temporary file and made durable first. Then, for a rotation
        (``replacing`` = the full segment's rotated name), the full segment is hard-linked to its
        rotated name (which fails if that name exists) and the new file renamed over ``PATH``;
        otherwise the new file is linked to ``PATH`` (which fails if ``PATH`` exists). At every
        instant ``PATH`` holds a complete segment, so a crash anywhere leaves a log that verifies:
        at worst the full segment has both names, which the verifier and the next writer recognise.
        """
        chain = self._chain
        chain.segment_started = time.time()
        fields = chain.segment_start_fields(index, previous)
        line, hex_digest, digest, seq, _ = self._appender.seal("segment_start", fields)
        temporary = next_segment_path(self._path)
        durable = self._settings.durable
        fd = os.open(temporary, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            if os.write(fd, line) != len(line):
                raise OSError(errno.EIO, f"short write to {temporary}")
            if durable:
                os.fsync(fd)
            if replacing is None:
                os.link(temporary, self._path)
                os.unlink(temporary)
            else:
                self._link_full_segment(replacing)
                os.rename(temporary, self._path)
            if durable:
                fsync_directory(self._path.parent)
        except BaseException:
            os.close(fd)
            with suppress(OSError):
                os.unlink(temporary)
            raise
        self._file.attach(fd, offset=len(line))
        chain.segment_index = index
        self._commits.note_installed(fsynced=durable)
        chain.commit("segment_start", line, hex_digest, digest, seq)

    def _link_full_segment(self, rotated: Path) -> None:
        """Give the active (full) segment its rotated name too, refusing to replace any file."""
        try:
            os.link(self._path, rotated)
        except FileExistsError:
            existing = os.stat(rotated)
            mine = os.fstat(self._file.fd)
            if (existing.st_ino, existing.st_dev) != (mine.st_ino, mine.st_dev):
                raise AuditWriteError(
                    f"{rotated} already exists and is another segment: refusing to overwrite it"
                ) from None
            # The same file: a writer died after linking it; finishing the rotation is renaming.
        except OSError as error:
            if error.errno not in _NO_HARD_LINKS:
                raise
            # A file system without hard links: a plain rename, still never over an existing name
            # (we hold the lock); a crash before the new segment is in place leaves PATH missing,
            # which the next writer repairs with a recovery record.
            if rotated.exists():
                raise AuditWriteError(f"{rotated} already exists: refusing to overwrite it") from None
            os.rename(self._path, rotated)
