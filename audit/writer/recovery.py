"""Opening an existing log and keeping up with it: chain state read back, torn tails repaired.

Opening a log recovers a torn tail by moving it to a side file and recording a ``recovery``
record; nothing is ever truncated silently, and a complete line that hashes right is never taken
for a torn tail. Before every append the writer catches up with what other processes appended (so
the chain never forks) and follows their rotations.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time
import uuid
from pathlib import Path
from typing import Any, Final

import orjson

from ..record_hash import line_hashes_right
from ..segments import rotated_segments, torn_path
from .append import Appender
from .chain import ChainState, parse_own_line, refuse_unknown_format
from .errors import AuditWriteError
from .files import ActiveFile, fsync_directory, stat_or_none, write_new_file
from .group_commit import GroupCommit
from .rotation import Rotation
from .settings import WriterSettings

_READ_CHUNK: Final = 8 << 20


class Recovery:
    """Takes the chain state from the files, repairing what a crash left, so that the log is as a
    verifier expects it (every repair recorded, no rotation half done)."""

    __slots__ = ("_appender", "_chain", "_commits", "_file", "_path", "_rotation", "_settings")

    def __init__(
        self,
        path: Path,
        settings: WriterSettings,
        chain: ChainState,
        file: ActiveFile,
        appender: Appender,
        rotation: Rotation,
        commits: GroupCommit,
    ) -> None:
        self._path = path
        self._settings = settings
        self._chain = chain
        self._file = file
        self._appender = appender
        self._rotation = rotation
        self._commits = commits

    def catch_up(self) -> None:
        """Fold in what other processes appended since we last held the lock; follow rotation.

        Runs under the lock before every append, so the head a record chains to is always the
        head on disk. Every change to the active file grows it (records, or the rotation
        checkpoint that precedes replacing it): an unchanged size proves nothing changed. The
        size comes from lseek, not fstat: one syscall either way, but fstat's Python result object
        alone costs about a microsecond. (Seeking an O_APPEND descriptor moves nothing that
        matters: writes go to the end and reads use pread.)
        """
        file, chain = self._file, self._chain
        if os.lseek(file.fd, 0, os.SEEK_END) == file.offset and not chain.pending_rotation:
            return
        self._read_new_records(allow_start=False)
        current = stat_or_none(self._path)
        if current is not None and current.st_ino == file.inode:
            if chain.pending_rotation:
                self._rotation.finish()  # its writer died after the rotation checkpoint
            return
        # Another process rotated, perhaps several times since we last looked. The new active
        # segment's segment_start carries the whole chain state, so we restart from it rather
        # than from our (stale) head.
        self._commits.sync_if_due(force=True)  # our lines in the old segment must not lose durability
        file.close()
        self.open_active()

    def open_active(self) -> None:
        """Open ``PATH`` and take the chain state from it (creating or continuing the log if it is
        missing or empty); then record orphaned side files and finish an interrupted rotation."""
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            self._create_missing_active()
            return
        self._file.attach(fd, offset=0)
        self._read_new_records(allow_start=True)
        if self._file.offset == 0:
            self._start_in_empty_active()
        self._record_orphaned_side_files()
        if self._chain.pending_rotation:
            self._rotation.finish()

    def _read_new_records(self, *, allow_start: bool) -> None:
        """Absorb complete lines from the file's offset to EOF; move a torn tail aside.

        Torn means: bytes after the last newline, or a last line that is not a whole record
        hashing to its own ``hash``. A complete line that verifies is never torn, whatever it
        links to (a segment holding only its ``segment_start`` is a valid segment). Reads in
        bounded chunks, so opening a large segment costs time, not memory.
        """
        file, chain, path = self._file, self._chain, self._path
        size = os.fstat(file.fd).st_size
        while size - file.offset > _READ_CHUNK:
            chunk = os.pread(file.fd, _READ_CHUNK, file.offset)
            end = chunk.rfind(b"\n") + 1
            if end == 0:
                break  # one line longer than a chunk: the whole-remainder read below handles it
            for line in chunk[:end].split(b"\n")[:-1]:
                record = parse_own_line(line)
                if record is not None:
                    chain.absorb(record, line, allow_start=allow_start, path=path)
            file.offset += end
        data = os.pread(file.fd, size - file.offset, file.offset) if size > file.offset else b""
        if not data:
            return
        end = data.rfind(b"\n") + 1
        lines = data[:end].split(b"\n")[:-1] if end else []
        torn_from = file.offset + end if end < len(data) else None
        if lines:
            refuse_unknown_format(parse_own_line(lines[-1]), path)
        if torn_from is None and lines and not _verifies(lines[-1]):
            torn_from = file.offset + end - len(lines[-1]) - 1
            lines.pop()
        for line in lines:
            record = parse_own_line(line)
            if record is not None:
                chain.absorb(record, line, allow_start=allow_start, path=path)
        file.offset = torn_from if torn_from is not None else file.offset + end
        if torn_from is not None:
            self._move_torn_tail_aside(torn_from, size)

    def _move_torn_tail_aside(self, offset: int, size: int) -> None:
        """Copy bytes ``offset..size`` to a side file, cut them off, and say so in the log."""
        fd, chain = self._file.fd, self._chain
        torn = os.pread(fd, size - offset, offset)
        base = torn_path(self._path, chain.segment_index, offset)
        side, suffix = base, 0
        while side.exists():
            suffix += 1
            side = side.with_name(f"{base.name}.{suffix}")
        write_new_file(side, torn, sync=True)
        os.ftruncate(fd, offset)
        os.fsync(fd)
        if offset == 0:
            return  # an empty segment gets its start record first, then the side file's record
        details = {"reason": "torn_tail", "segment_index": chain.segment_index}
        details.update(_side_fields(side, offset, torn))
        if chain.pending_rotation:
            # The tail followed a rotation checkpoint: the closed segment takes no more records,
            # so the recovery record opens its successor.
            self._rotation.finish()
        self._write_recovery(details)

    def _record_orphaned_side_files(self) -> None:
        """Record side files of this segment that no ``recovery`` record mentions yet: a crash
        between cutting a torn tail and logging it, or a tail moved aside at offset 0."""
        prefix = f"{self._path.name}.torn-{self._chain.segment_index:06d}-"
        for side in sorted(self._path.parent.glob(glob.escape(prefix) + "*")):
            offset_text = side.name[len(prefix) :].split(".")[0]
            if not offset_text.isdigit():
                continue
            offset = int(offset_text)
            if offset not in (0, self._file.offset) or self._mentions_side_file(side.name):
                continue
            torn = side.read_bytes()
            self._write_recovery({"reason": "torn_tail", **_side_fields(side, offset, torn)})

    def _mentions_side_file(self, name: str) -> bool:
        needle = orjson.dumps(name)
        data = os.pread(self._file.fd, self._file.offset, 0)
        return needle in data

    def _write_recovery(self, details: dict[str, Any]) -> None:
        fields = {"recovery": {"segment_index": self._chain.segment_index, **details}}
        self._appender.append_locked("recovery", fields)
        if self._settings.durable:
            self._commits.sync_if_due(force=True)

    def _create_missing_active(self) -> None:
        """``PATH`` does not exist: start a new log, or continue after the last rotated segment
        (the active one was deleted, or a rotation on a file system without hard links was cut
        short) with a ``recovery`` record saying so."""
        chain = self._chain
        rotated = rotated_segments(self._path)
        if not rotated:
            chain.start_new_log(chain.requested_log_id or uuid.uuid4().hex)
            self._rotation.create_segment(0, None, replacing=None)
            return
        index, last = rotated[-1]
        self._restore_from_rotated(last)
        previous = chain.link_to_previous(last.name)
        self._rotation.create_segment(index + 1, previous, replacing=None)
        self._write_recovery({"reason": "active_missing", "continues_after": last.name})

    def _start_in_empty_active(self) -> None:
        """``PATH`` exists but holds no record (created by hand, by an older writer killed before
        its first line, or every byte was torn): write its ``segment_start`` into it."""
        chain = self._chain
        rotated = rotated_segments(self._path)
        previous: dict[str, Any] | None = None
        if rotated:
            index, last = rotated[-1]
            self._restore_from_rotated(last)
            previous = chain.link_to_previous(last.name)
            chain.segment_index = index + 1
        else:
            chain.start_new_log(chain.requested_log_id or chain.log_id or uuid.uuid4().hex)
            chain.segment_index = 0
        chain.segment_started = time.time()
        self._appender.append_locked(
            "segment_start", chain.segment_start_fields(chain.segment_index, previous)
        )
        if self._settings.durable:
            os.fsync(self._file.fd)
            fsync_directory(self._path.parent)

    def _restore_from_rotated(self, segment: Path) -> None:
        chain = self._chain
        data = segment.read_bytes()
        chain.head = ""
        for line in data.split(b"\n"):
            record = parse_own_line(line)
            if record is not None:
                chain.absorb(record, line, allow_start=True, path=self._path)
        chain.pending_rotation = False  # the rotation this segment promised is what we finish now
        if not chain.head:
            raise AuditWriteError(f"{segment}: last rotated segment holds no readable record")


def _verifies(line: bytes) -> bool:
    """Whether ``line`` is a whole record whose ``hash`` is the hash of the rest of it."""
    record = parse_own_line(line)
    return record is not None and line_hashes_right(line, record)


def _side_fields(side: Path, offset: int, torn: bytes) -> dict[str, Any]:
    return {
        "offset": offset,
        "length": len(torn),
        "sha256": hashlib.sha256(torn).hexdigest(),
        "side_file": side.name,
    }
