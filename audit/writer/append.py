"""Building records and writing them: the append path every record takes.

A record is the caller's fields plus the fields the writer owns (format version, log id, seq,
timestamp, kind, the previous record's hash), sealed with its hash (:func:`~..record.seal_line`)
and written as one line with one ``write``, with the OS lock held and the chain state current.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

from ..record import OutsideDomainError, seal_line, seal_line_v2
from ..record_hash import genesis_prev
from .chain import ChainState
from .errors import AuditRecordError
from .files import ActiveFile
from .group_commit import GroupCommit
from .locking import WriterLock
from .settings import WriterSettings

#: Fields the writer owns; a caller's fields may not use these names.
WRITER_FIELDS: Final = frozenset({"v", "log_id", "seq", "ts", "kind", "prev", "hash"})
#: Kinds only the writer emits; the verifier gives them meaning, so callers may not forge them.
WRITER_KINDS: Final = frozenset({"segment_start", "checkpoint", "recovery", "key_handover", "records_lost"})


class AppendReceipt(NamedTuple):
    """What was written: ``durable`` is true once the line is known to be fsynced.

    (A named tuple: built on every append, where a frozen dataclass cost a microsecond.)"""

    seq: int
    hash: str
    ts: str
    segment: Path
    durable: bool


#: A sealed record: (line with its newline, hex hash, raw digest, seq, ts).
Sealed = tuple[bytes, str, bytes, int, str]


def check_caller_record(kind: Any, fields: Any) -> None:
    """Refuse what a caller may not append: an empty or writer-only kind, fields that are not a
    mapping or that use the writer's own names. Raises :class:`AuditRecordError`."""
    if not isinstance(kind, str) or not kind:
        raise AuditRecordError(f"kind must be a non-empty string, not {kind!r}")
    if kind in WRITER_KINDS:
        raise AuditRecordError(f"kind {kind!r} is reserved for the writer")
    if type(fields) is not dict and not isinstance(fields, Mapping):
        raise AuditRecordError(f"fields must be a mapping, not {type(fields).__name__}")
    if not WRITER_FIELDS.isdisjoint(fields):
        collisions = sorted(WRITER_FIELDS.intersection(fields))
        raise AuditRecordError(f"fields {collisions} are owned by the writer")


class UtcClock:
    """RFC 3339 UTC timestamps with microseconds; formats the date part once per second."""

    __slots__ = ("_prefix", "_second")

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def now(self) -> str:
        second, nanos = divmod(time.time_ns(), 1_000_000_000)
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._prefix}.{nanos // 1000:06d}Z"


class Appender:
    """Seals records onto the chain and writes them to the active segment.

    ``rotate`` is wired by the writer (rotation needs this appender too): a caller's record that
    would overfill the segment first closes it and starts the next one.
    """

    __slots__ = ("_chain", "_clock", "_commits", "_file", "_lock", "_path", "_rotates", "_settings", "rotate")

    def __init__(
        self,
        path: Path,
        settings: WriterSettings,
        chain: ChainState,
        file: ActiveFile,
        commits: GroupCommit,
        lock: WriterLock,
    ) -> None:
        self._path = path
        self._settings = settings
        self._chain = chain
        self._file = file
        self._commits = commits
        self._lock = lock
        self._clock = UtcClock()
        self._rotates = settings.rotate_bytes is not None or settings.rotate_seconds is not None
        self.rotate: Callable[[], None] = _not_wired

    def seal(self, kind: str, fields: dict[str, Any]) -> Sealed:
        """Add the writer's fields and seal: (line with newline, hex hash, raw digest, seq, ts)."""
        chain = self._chain
        seq = chain.next_seq
        ts = self._clock.now()
        prev = chain.head or genesis_prev(chain.log_id)
        fields["ts"] = ts
        try:
            if chain.version != 1:
                line, hex_digest, digest = seal_line_v2(fields, chain.log_id, seq, prev, kind, chain.version)
            else:
                fields["v"] = chain.version
                fields["log_id"] = chain.log_id
                fields["seq"] = seq
                fields["kind"] = kind
                fields["prev"] = prev
                line, hex_digest, digest = seal_line(fields)
        except OutsideDomainError as error:
            hint = " (audit.fit_to_domain() rewrites floats and huge integers in tool arguments as strings)"
            raise AuditRecordError(
                f"record field {error.violation}{hint if 'float' in str(error) else ''}"
            ) from None
        return line, hex_digest, digest, seq, ts

    def append_locked(self, kind: str, fields: dict[str, Any]) -> AppendReceipt:
        """Chain, seal and write one record; the OS lock is held and state is current."""
        line, hex_digest, digest, seq, ts = self.seal(kind, fields)
        chain = self._chain
        if (
            self._rotates
            and kind not in WRITER_KINDS
            and chain.segment_has_records
            and self._settings.segment_is_full(self._file.offset, chain.segment_started, len(line))
        ):
            self.rotate()
            return self.append_locked(kind, fields)
        self._write_line(line)
        chain.commit(kind, line, hex_digest, digest, seq)
        return AppendReceipt(seq, hex_digest, ts, self._path, False)

    def _write_line(self, data: bytes) -> None:
        """Append one newline-terminated line with one ``write``."""
        file = self._file
        try:
            written = os.write(file.fd, data)
        except OSError as error:
            raise self._lock.fail(f"{self._path}: write failed: {error}") from None
        if written != len(data):
            raise self._lock.fail(f"{self._path}: short write ({written} of {len(data)} bytes)")
        file.offset += written
        self._commits.note_written()


def _not_wired() -> None:
    raise AssertionError("Appender.rotate was not wired")
