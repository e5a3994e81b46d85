"""Append-only writer of the hash-chained audit log (AUDIT.md "Durability and concurrency").

One :class:`AuditWriter` per process and log. Every append, under an OS lock on ``PATH.lock``:
catch up with records other processes appended (so the chain never forks), rotate if the segment is
full, write one canonical line with one ``write``, maybe checkpoint. An fsync the append must wait
for (``always``, or a batch at twice its bound) follows once the OS lock is released, so other
processes append meanwhile; group commits run in a flusher thread, off every lock. Opening a log
recovers a torn tail by moving it to a side file and recording a ``recovery`` record; nothing is
ever truncated silently, and a complete line that hashes right is never taken for a torn tail.
Rotation prepares the next segment in ``PATH.next`` and installs it by link-then-rename, so no
file is ever replaced and ``PATH`` always holds a complete segment: a process killed anywhere
leaves a log that verifies, and no record whose ``append`` returned is lost. An ``fsync`` or write
error is fatal: the writer refuses every later append, so a caller can fail closed instead of
trusting a log that may have lost records (:mod:`.losses` reopens it for one that fails open).
"""

from __future__ import annotations

import calendar
import errno
import fcntl
import glob
import hashlib
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, NamedTuple

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .checkpoint import CheckpointStatement, HandoverStatement, sign_bytes, sign_statement
from .keys import KeyFileError, key_id, load_private_key, public_key_hex
from .merkle import MerkleFrontier
from .record import (
    FORMAT_VERSION,
    OutsideDomainError,
    genesis_prev,
    record_hash,
    seal_line,
    without_member,
)
from .segments import (
    anchor_path,
    lock_path,
    next_segment_path,
    rotated_path,
    rotated_segments,
    torn_path,
)

FsyncMode = Literal["always", "batch", "off"]

_READ_CHUNK: Final = 8 << 20
_TAIL_PROBE: Final = 1 << 16  # enough of a segment's end to hold its last checkpoint line
#: errno values of a file system that has no hard links (rotation then renames, see _link_full_segment).
_NO_HARD_LINKS: Final = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV})

#: Fields the writer owns; a caller's fields may not use these names.
WRITER_FIELDS: Final = frozenset({"v", "log_id", "seq", "ts", "kind", "prev", "hash"})
#: Kinds only the writer emits; the verifier gives them meaning, so callers may not forge them.
WRITER_KINDS: Final = frozenset({"segment_start", "checkpoint", "recovery", "key_handover", "records_lost"})


class _Signal:
    """A flusher message that is not a group commit."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


_WAKE: Final = _Signal("wake")  # a deadline may have moved: recompute
_STOP: Final = _Signal("stop")  # close(): leave after the commits queued before it
_FlusherMessage = tuple[int, int, int] | _Signal  # (lines covered, descriptor, its generation)


class AuditError(Exception):
    """Base of the audit writer's errors."""


class AuditRecordError(AuditError, ValueError):
    """The caller's record cannot be written as given (a bug in the caller, not an I/O failure)."""


class AuditWriteError(AuditError):
    """The record could not be durably written; the writer is unusable from now on."""


class AppendReceipt(NamedTuple):
    """What was written: ``durable`` is true once the line is known to be fsynced.

    (A named tuple: built on every append, where a frozen dataclass cost a microsecond.)"""

    seq: int
    hash: str
    ts: str
    segment: Path
    durable: bool


@dataclass(frozen=True, slots=True)
class WriterSettings:
    """How a writer trades durability for speed and when it rotates and checkpoints."""

    fsync: FsyncMode = "batch"
    batch_records: int = 256
    batch_ms: float = 5.0
    rotate_bytes: int | None = None
    rotate_seconds: float | None = None
    checkpoint_every: int | None = 1000
    checkpoint_seconds: float | None = 60.0
    export_anchor: bool = True

    def __post_init__(self) -> None:
        if self.fsync not in ("always", "batch", "off"):
            raise ValueError(f"fsync must be always, batch or off, not {self.fsync!r}")
        if self.batch_records < 1 or self.batch_ms < 0:
            raise ValueError("batch_records must be >= 1 and batch_ms >= 0")
        if self.rotate_bytes is not None and self.rotate_bytes < 1024:
            raise ValueError("rotate_bytes must be at least 1024")
        if self.rotate_seconds is not None and self.rotate_seconds <= 0:
            raise ValueError("rotate_seconds must be > 0 (or None)")
        if self.checkpoint_every is not None and self.checkpoint_every < 1:
            raise ValueError("checkpoint_every must be >= 1 (or None)")
        if self.checkpoint_seconds is not None and self.checkpoint_seconds <= 0:
            raise ValueError("checkpoint_seconds must be > 0 (or None)")


class _UtcClock:
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


class AuditWriter:
    """Appends records to one audit log; safe across threads and processes. Use :meth:`open`."""

    def __init__(
        self,
        path: Path,
        settings: WriterSettings,
        signing_key: Ed25519PrivateKey | None,
        requested_log_id: str | None,
        previous_signing_key: Ed25519PrivateKey | None = None,
    ) -> None:
        self._path = path
        self._settings = settings
        self._signing_key = signing_key
        self._previous_signing_key = previous_signing_key
        self._key_id = key_id(signing_key.public_key()) if signing_key is not None else None
        self._clock = _UtcClock()
        self._mutex = threading.Lock()
        # The flusher never takes _mutex on the hot path: the appender hands it group commits
        # through a queue, and the few fields both threads write are guarded by _sync_state, held
        # for a few bytecodes only. (Waking a thread blocked on the appender's lock on every
        # batch cost more CPU than the fsync itself.)
        self._sync_state = threading.Lock()
        self._jobs: queue.SimpleQueue[_FlusherMessage] = queue.SimpleQueue()
        self._failure: str | None = None
        self._failure_reported = False  # a background fsync failure must surface at least once
        self._closed = False
        # Chain state, valid while the OS lock is held and the file has not changed under us.
        self._log_id = requested_log_id or ""
        self._requested_log_id = requested_log_id
        self._next_seq = 0
        self._head = ""
        self._frontier = MerkleFrontier()
        self._segment_index = 0
        self._since_checkpoint = 0
        self._last_checkpoint_at = time.monotonic()
        self._fd = -1
        # Bumped whenever _fd is replaced, before any line counted in _written goes to the new file:
        # the flusher extends a group commit to every line written before its fsync only while the
        # commit's descriptor is still the file those lines went to.
        self._fd_generation = 0
        self._inode = -1
        self._offset = 0
        self._segment_has_records = False
        # Wall-clock start of the active segment (its segment_start record's ts), shared by every
        # process on the log, so time-based rotation happens once whoever appends.
        self._segment_started = time.time()
        self._pending_rotation = False
        self._last_line = b""  # with its newline
        # The key id of the newest checkpoint or hand-over read back (``_key_known`` once one was).
        self._last_key_id: str | None = None
        self._key_known = False
        self._last_checkpoint_line = b""  # the newest checkpoint read back, for the anchor
        # Group commit: lines written and lines known durable, counted by this writer.
        self._written = 0
        self._synced = 0  # raised under _sync_state, read without it (an int read is atomic)
        self._unsynced_since = 0.0  # when the oldest line no group commit covers was written
        self._sync_requested = False  # a group commit is queued or running in the flusher
        self._pending_anchor: tuple[bytes, int] | None = None  # under _sync_state
        self._lock_fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
        self._flusher: threading.Thread | None = None

    # ----------------------------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        log_id: str | None = None,
        fsync: FsyncMode = "batch",
        batch_records: int = 256,
        batch_ms: float = 5.0,
        rotate_bytes: int | None = None,
        rotate_seconds: float | None = None,
        checkpoint_every: int | None = 1000,
        checkpoint_seconds: float | None = 60.0,
        signing_key: str | os.PathLike[str] | Ed25519PrivateKey | None = None,
        previous_signing_key: str | os.PathLike[str] | Ed25519PrivateKey | None = None,
        export_anchor: bool = True,
    ) -> AuditWriter:
        """Open (creating or recovering) the log whose active segment is ``path``.

        ``log_id`` names a new log (default: a random UUID) and must match an existing one.
        ``fsync``: ``always`` syncs before every append returns; ``batch`` syncs once per
        ``batch_records`` records or ``batch_ms`` milliseconds (group commit); ``off`` leaves it to
        the OS. Checkpoints are written every ``checkpoint_every`` records and every
        ``checkpoint_seconds`` (when records are pending), on rotation and on close, signed when
        ``signing_key`` (PEM path or key object, mode 0600) is given. ``rotate_bytes`` starts a new
        segment (``PATH`` again, the full one renamed ``PATH.NNNNNN``) before a record would cross
        it; ``rotate_seconds`` does the same once the active segment is that old (measured from
        its ``segment_start`` record, so every process on the log agrees). ``export_anchor`` keeps
        ``PATH.anchor`` equal to the newest checkpoint once an fsync covers it: copied off the
        host, it lets ``verify`` prove a cut tail. ``previous_signing_key`` is for changing keys:
        when the log's last checkpoint was signed by it, the writer first appends a
        ``key_handover`` signed by both keys, which strict verification follows; a key change
        without it is recorded unsigned and verification with the old key reports it. Raises
        :class:`AuditWriteError` when the log cannot be opened or recovered, ``ValueError`` for bad
        settings.
        """
        settings = WriterSettings(
            fsync=fsync,
            batch_records=batch_records,
            batch_ms=batch_ms,
            rotate_bytes=rotate_bytes,
            rotate_seconds=rotate_seconds,
            checkpoint_every=checkpoint_every,
            checkpoint_seconds=checkpoint_seconds,
            export_anchor=export_anchor,
        )
        try:
            key = load_private_key(signing_key) if signing_key is not None else None
            old = load_private_key(previous_signing_key) if previous_signing_key is not None else None
        except KeyFileError as error:
            raise AuditWriteError(f"cannot load the checkpoint signing key: {error}") from None
        target = Path(path)
        folder = target.parent
        try:
            # A new log's folder is created (as ``mkdir -p``): a deployment file that names
            # ``audit/hooks.jsonl`` works in a fresh project.
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise AuditWriteError(
                f"{folder}: cannot create the audit log's folder: {error.strerror or error}"
            ) from None
        if not folder.is_dir():
            raise AuditWriteError(f"{folder}: the audit log's folder is not a directory")
        try:
            writer = cls(target, settings, key, log_id, old)
        except OSError as error:
            raise AuditWriteError(f"{lock_path(target)}: cannot open lock file: {error}") from None
        try:
            with writer._locked():
                writer._attach()
        except BaseException:
            writer._release_files()
            raise
        writer._start_flusher()
        return writer

    @property
    def log_id(self) -> str:
        """The id every record of this log carries."""
        return self._log_id

    @property
    def failure(self) -> str | None:
        """Why the writer stopped accepting records (a write or fsync error), or ``None``."""
        return self._failure

    @property
    def path(self) -> Path:
        """The active segment's path."""
        return self._path

    # ---------------------------------------------------------------------------------- appending

    def append(self, kind: str, fields: Mapping[str, Any]) -> AppendReceipt:
        """Append one record of ``kind`` with the caller's (already redacted) ``fields``.

        Raises :class:`AuditRecordError` for fields the log cannot hold (a writer-owned name, a
        float, a non-string key, ...) and :class:`AuditWriteError` when the record could not be
        written durably; after the latter the writer refuses all further appends.
        """
        if not isinstance(kind, str) or not kind:
            raise AuditRecordError(f"kind must be a non-empty string, not {kind!r}")
        if kind in WRITER_KINDS:
            raise AuditRecordError(f"kind {kind!r} is reserved for the writer")
        if type(fields) is not dict and not isinstance(fields, Mapping):
            raise AuditRecordError(f"fields must be a mapping, not {type(fields).__name__}")
        if not WRITER_FIELDS.isdisjoint(fields):
            collisions = sorted(WRITER_FIELDS.intersection(fields))
            raise AuditRecordError(f"fields {collisions} are owned by the writer")
        return self._append(kind, dict(fields))

    def report_losses(self, fields: Mapping[str, Any]) -> AppendReceipt:
        """Append a ``records_lost`` record (see :mod:`.losses`): how many records a fail-open
        caller could not write before this one, of which kinds, when, and the last error."""
        return self._append("records_lost", {"lost": dict(fields["lost"])})

    def _append(self, kind: str, record: dict[str, Any]) -> AppendReceipt:
        """Write one record under both locks; an fsync it must wait for runs after the OS lock is
        released, so other processes append while this one waits for the disk.

        (The hot path: the same steps as ``_locked`` without a generator-based context manager.)
        """
        with self._mutex:
            self._acquire()
            try:
                receipt = self._append_locked(kind, record)
                sync_now = self._after_append()
            except OSError as error:
                raise self._fail(f"{self._path}: {error}") from None
            finally:
                self._release()
            if sync_now:
                # Our descriptor still names the file our lines went to, whatever another process
                # renames meanwhile; the thread lock keeps this writer's own state still.
                try:
                    self._sync_if_due(force=True)
                except OSError as error:
                    raise self._fail(f"{self._path}: {error}") from None
            if self._written == self._synced and self._settings.fsync != "off":
                return AppendReceipt(receipt.seq, receipt.hash, receipt.ts, receipt.segment, True)
        return receipt

    def checkpoint(self) -> AppendReceipt | None:
        """Write a checkpoint now (``None`` if every record is already covered by one)."""
        with self._locked():
            receipt = self._checkpoint_locked("manual") if self._since_checkpoint else None
            self._sync_if_due(force=self._settings.fsync != "off")
        return receipt

    def flush(self) -> None:
        """Make every record written so far durable now (no-op in ``off`` mode)."""
        with self._locked():
            self._sync_if_due(force=self._settings.fsync != "off")

    def close(self) -> None:
        """Write a closing checkpoint when records are uncovered, sync, and release the files.

        Raises :class:`AuditWriteError` if a background fsync failed and no append has reported
        it yet: records acknowledged as not yet durable may be lost, and the caller must know.
        """
        with self._mutex:
            if self._closed:
                return
            self._closed = True
        if self._flusher is not None:
            self._jobs.put(_STOP)  # after every queued group commit
            self._flusher.join()
        try:
            if self._failure is None:
                with self._locked(closing=True):
                    if self._since_checkpoint:
                        self._checkpoint_locked("close")
                    self._sync_if_due(force=self._settings.fsync != "off")
        finally:
            self._release_files()
        if self._failure is not None and not self._failure_reported:
            self._failure_reported = True
            raise AuditWriteError(f"audit writer failed in the background: {self._failure}")

    def __enter__(self) -> AuditWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self.close()
        except AuditWriteError:
            if exc is None:
                raise  # otherwise the exception already propagating says more

    # ------------------------------------------------------------------------------ lock & state

    @contextmanager
    def _locked(self, *, closing: bool = False) -> Iterator[None]:
        """Thread lock, then the OS lock, then catch up with the file; fatal errors stick."""
        with self._mutex:
            self._acquire(closing=closing)
            try:
                yield
            except OSError as error:
                raise self._fail(f"{self._path}: {error}") from None
            finally:
                self._release()

    def _acquire(self, *, closing: bool = False) -> None:
        """With the thread lock held: take the OS lock and catch up with other processes."""
        if self._failure is not None:
            self._failure_reported = True
            raise AuditWriteError(f"audit writer failed earlier and accepts no records: {self._failure}")
        if self._closed and not closing:
            raise AuditWriteError("audit writer is closed")
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        except OSError as error:
            raise self._fail(f"cannot lock {lock_path(self._path)}: {error}") from None
        try:
            if self._fd >= 0:
                self._catch_up()
        except OSError as error:
            self._release()
            raise self._fail(f"{self._path}: {error}") from None
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        except OSError as error:
            self._failure = self._failure or f"cannot unlock: {error}"

    def _fail(self, reason: str) -> AuditWriteError:
        # Once a write or fsync failed we no longer know what reached the disk: refuse everything.
        self._failure = reason
        self._failure_reported = True
        return AuditWriteError(reason)

    def _attach(self) -> None:
        """Open the active segment under the lock: recover a torn tail, restore chain state, and
        leave the log as a verifier expects it (every recovery recorded, no rotation half done)."""
        self._remove_stale_temporaries()
        self._open_active()
        self._hand_over_key_if_changed()
        self._last_checkpoint_at = time.monotonic()
        self._sync_if_due(force=self._settings.fsync != "off")
        if self._settings.export_anchor and self._last_checkpoint_line:
            self._refresh_stale_anchor(self._last_checkpoint_line)

    def _catch_up(self) -> None:
        """Fold in what other processes appended since we last held the lock; follow rotation.

        Runs under the lock before every append, so the head a record chains to is always the
        head on disk. Every change to the active file grows it (records, or the rotation
        checkpoint that precedes replacing it): an unchanged size proves nothing changed. The
        size comes from lseek, not fstat: one syscall either way, but fstat's Python result object
        alone costs about a microsecond. (Seeking an O_APPEND descriptor moves nothing that
        matters: writes go to the end and reads use pread.)
        """
        if os.lseek(self._fd, 0, os.SEEK_END) == self._offset and not self._pending_rotation:
            return
        self._read_new_records(allow_start=False)
        current = _stat_or_none(self._path)
        if current is not None and current.st_ino == self._inode:
            if self._pending_rotation:
                self._finish_rotation()  # its writer died after the rotation checkpoint
            return
        # Another process rotated, perhaps several times since we last looked. The new active
        # segment's segment_start carries the whole chain state, so we restart from it rather
        # than from our (stale) head.
        self._sync_if_due(force=True)  # our lines in the old segment must not lose durability
        os.close(self._fd)
        self._fd = -1
        self._open_active()

    def _open_active(self) -> None:
        """Open ``PATH`` and take the chain state from it (creating or continuing the log if it is
        missing or empty); then record orphaned side files and finish an interrupted rotation."""
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            self._create_missing_active()
            return
        self._fd = fd
        self._fd_generation += 1
        self._inode = os.fstat(fd).st_ino
        self._offset = 0
        self._read_new_records(allow_start=True)
        if self._offset == 0:
            self._start_in_empty_active()
        self._record_orphaned_side_files()
        if self._pending_rotation:
            self._finish_rotation()

    def _read_new_records(self, *, allow_start: bool) -> None:
        """Absorb complete lines from ``_offset`` to EOF; move a torn tail aside.

        Torn means: bytes after the last newline, or a last line that is not a whole record
        hashing to its own ``hash``. A complete line that verifies is never torn, whatever it
        links to (a segment holding only its ``segment_start`` is a valid segment). Reads in
        bounded chunks, so opening a large segment costs time, not memory.
        """
        size = os.fstat(self._fd).st_size
        while size - self._offset > _READ_CHUNK:
            chunk = os.pread(self._fd, _READ_CHUNK, self._offset)
            end = chunk.rfind(b"\n") + 1
            if end == 0:
                break  # one line longer than a chunk: the whole-remainder read below handles it
            for line in chunk[:end].split(b"\n")[:-1]:
                record = _parse_own_line(line)
                if record is not None:
                    self._absorb(record, line, allow_start=allow_start)
            self._offset += end
        data = os.pread(self._fd, size - self._offset, self._offset) if size > self._offset else b""
        if not data:
            return
        end = data.rfind(b"\n") + 1
        lines = data[:end].split(b"\n")[:-1] if end else []
        torn_from = self._offset + end if end < len(data) else None
        if torn_from is None and lines and not _verifies(lines[-1]):
            torn_from = self._offset + end - len(lines[-1]) - 1
            lines.pop()
        for line in lines:
            record = _parse_own_line(line)
            if record is not None:
                self._absorb(record, line, allow_start=allow_start)
        self._offset = torn_from if torn_from is not None else self._offset + end
        if torn_from is not None:
            self._move_torn_tail_aside(torn_from, size)

    def _absorb(self, record: dict[str, Any], line: bytes, *, allow_start: bool) -> None:
        """Update chain state from one record read back from the file."""
        kind = record.get("kind")
        self._segment_has_records = kind != "segment_start"
        if kind == "segment_start" and (allow_start or self._head == ""):
            self._segment_started = _epoch_seconds(record.get("ts"), default=self._segment_started)
            segment = record.get("segment") or {}
            self._segment_index = int(segment.get("index", 0))
            tree = record.get("tree") or {}
            self._frontier = MerkleFrontier.restore(
                int(tree.get("size", 0)), [bytes.fromhex(h) for h in tree.get("frontier", [])]
            )
            self._since_checkpoint = 0  # a segment starts after its predecessor's rotation checkpoint
        if not self._log_id or self._head == "":
            existing = str(record.get("log_id", ""))
            if self._requested_log_id and existing != self._requested_log_id:
                raise AuditWriteError(
                    f"{self._path}: log id is {existing!r}, but {self._requested_log_id!r} was requested"
                )
            self._log_id = existing
        self._next_seq = int(record["seq"]) + 1
        self._head = str(record["hash"])
        self._frontier.append(bytes.fromhex(self._head))
        self._since_checkpoint = 0 if kind == "checkpoint" else self._since_checkpoint + 1
        self._pending_rotation = False
        if kind == "checkpoint":
            body = record.get("checkpoint") or {}
            self._pending_rotation = body.get("reason") == "rotation"
            self._last_key_id = body.get("key_id")
            self._last_checkpoint_line = line
            self._key_known = True
        elif kind == "key_handover":
            self._last_key_id = (record.get("handover") or {}).get("to_key_id")
            self._key_known = True

    def _move_torn_tail_aside(self, offset: int, size: int) -> None:
        """Copy bytes ``offset..size`` to a side file, cut them off, and say so in the log."""
        torn = os.pread(self._fd, size - offset, offset)
        base = torn_path(self._path, self._segment_index, offset)
        side, suffix = base, 0
        while side.exists():
            suffix += 1
            side = side.with_name(f"{base.name}.{suffix}")
        _write_new_file(side, torn, sync=True)
        os.ftruncate(self._fd, offset)
        os.fsync(self._fd)
        if offset == 0:
            return  # an empty segment gets its start record first, then the side file's record
        details = {"reason": "torn_tail", "segment_index": self._segment_index}
        details.update(_side_fields(side, offset, torn))
        if self._pending_rotation:
            # The tail followed a rotation checkpoint: the closed segment takes no more records,
            # so the recovery record opens its successor.
            self._finish_rotation()
        self._write_recovery(details)

    def _record_orphaned_side_files(self) -> None:
        """Record side files of this segment that no ``recovery`` record mentions yet: a crash
        between cutting a torn tail and logging it, or a tail moved aside at offset 0."""
        prefix = f"{self._path.name}.torn-{self._segment_index:06d}-"
        for side in sorted(self._path.parent.glob(glob.escape(prefix) + "*")):
            offset_text = side.name[len(prefix) :].split(".")[0]
            if not offset_text.isdigit():
                continue
            offset = int(offset_text)
            if offset not in (0, self._offset) or self._mentions_side_file(side.name):
                continue
            torn = side.read_bytes()
            self._write_recovery({"reason": "torn_tail", **_side_fields(side, offset, torn)})

    def _mentions_side_file(self, name: str) -> bool:
        needle = orjson.dumps(name)
        data = os.pread(self._fd, self._offset, 0)
        return needle in data

    def _write_recovery(self, details: dict[str, Any]) -> None:
        self._append_locked("recovery", {"recovery": {"segment_index": self._segment_index, **details}})
        if self._settings.fsync != "off":
            self._sync_if_due(force=True)

    def _create_missing_active(self) -> None:
        """``PATH`` does not exist: start a new log, or continue after the last rotated segment
        (the active one was deleted, or a rotation on a file system without hard links was cut
        short) with a ``recovery`` record saying so."""
        rotated = rotated_segments(self._path)
        if not rotated:
            self._log_id = self._requested_log_id or uuid.uuid4().hex
            self._next_seq, self._head, self._frontier = 0, "", MerkleFrontier()
            self._create_segment(0, None, replacing=None)
            return
        index, last = rotated[-1]
        self._restore_from_rotated(last)
        previous = {"name": last.name, "last_seq": self._next_seq - 1, "last_hash": self._head}
        self._create_segment(index + 1, previous, replacing=None)
        self._write_recovery({"reason": "active_missing", "continues_after": last.name})

    def _start_in_empty_active(self) -> None:
        """``PATH`` exists but holds no record (created by hand, by an older writer killed before
        its first line, or every byte was torn): write its ``segment_start`` into it."""
        rotated = rotated_segments(self._path)
        previous: dict[str, Any] | None = None
        if rotated:
            index, last = rotated[-1]
            self._restore_from_rotated(last)
            previous = {"name": last.name, "last_seq": self._next_seq - 1, "last_hash": self._head}
            self._segment_index = index + 1
        else:
            self._log_id = self._requested_log_id or self._log_id or uuid.uuid4().hex
            self._next_seq, self._head, self._frontier = 0, "", MerkleFrontier()
            self._segment_index = 0
        self._write_segment_start(previous)
        if self._settings.fsync != "off":
            os.fsync(self._fd)
            _fsync_directory(self._path.parent)

    def _restore_from_rotated(self, segment: Path) -> None:
        data = segment.read_bytes()
        self._head = ""
        for line in data.split(b"\n"):
            record = _parse_own_line(line)
            if record is not None:
                self._absorb(record, line, allow_start=True)
        self._pending_rotation = False  # the rotation this segment promised is what we finish now
        if not self._head:
            raise AuditWriteError(f"{segment}: last rotated segment holds no readable record")

    def _remove_stale_temporaries(self) -> None:
        """The next-segment file of a writer that died before installing it (only a lock holder
        creates one, and we hold the lock): it holds nothing that was ever acknowledged."""
        with suppress(FileNotFoundError):
            next_segment_path(self._path).unlink()

    def _segment_is_full(self, incoming: int) -> bool:
        """Whether the next record belongs in a new segment: by size, or by the segment's age."""
        settings = self._settings
        if settings.rotate_bytes is not None and self._offset + incoming > settings.rotate_bytes:
            return True
        return (
            settings.rotate_seconds is not None
            and time.time() - self._segment_started >= settings.rotate_seconds
        )

    def _write_segment_start(self, previous: dict[str, Any] | None) -> None:
        self._segment_started = time.time()
        self._append_locked("segment_start", self._segment_start_fields(self._segment_index, previous))

    def _segment_start_fields(self, index: int, previous: dict[str, Any] | None) -> dict[str, Any]:
        return {"segment": {"index": index, "previous": previous}, "tree": _tree_fields(self._frontier)}

    # ------------------------------------------------------------------------------ key hand-over

    def _hand_over_key_if_changed(self) -> None:
        """A writer signing with another key than the log's last checkpoint says so in the log:
        a ``key_handover`` signed by both keys when the previous key was given, unsigned (which
        strict verification reports as a key change) when it was not."""
        if self._signing_key is None:
            return
        previous_id = self._last_key_id if self._key_known else self._key_id_before_this_segment()
        if previous_id is None or previous_id == self._key_id:
            return
        old = self._previous_signing_key
        handover: dict[str, Any] = {
            "from_key_id": previous_id,
            "from_public_key": None,
            "to_key_id": self._key_id,
            "to_public_key": public_key_hex(self._signing_key.public_key()),
            "from_signature": None,
            "to_signature": None,
        }
        if old is not None and key_id(old.public_key()) == previous_id:
            handover["from_public_key"] = public_key_hex(old.public_key())
        statement = HandoverStatement(
            log_id=self._log_id,
            seq=self._next_seq,
            prev=self._head,
            from_key_id=previous_id,
            from_public_key=handover["from_public_key"],
            to_key_id=str(self._key_id),
            to_public_key=handover["to_public_key"],
        )
        handover["to_signature"] = sign_bytes(self._signing_key, statement.to_bytes())
        if old is not None and handover["from_public_key"] is not None:
            handover["from_signature"] = sign_bytes(old, statement.to_bytes())
        self._append_locked("key_handover", {"handover": handover})
        self._checkpoint_locked("handover")

    def _key_id_before_this_segment(self) -> str | None:
        """The key id of the last checkpoint before the active segment (its predecessor's
        rotation checkpoint), for a segment that has none of its own yet."""
        if self._segment_index == 0:
            return None
        try:
            handle = open(rotated_path(self._path, self._segment_index - 1), "rb")  # noqa: SIM115
        except FileNotFoundError:
            return None
        with handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_PROBE))
            tail = handle.read()
        for line in reversed(tail.split(b"\n")):
            record = _parse_own_line(line)
            if record is not None and record.get("kind") in ("checkpoint", "key_handover"):
                body = record.get("checkpoint") or {}
                if record.get("kind") == "key_handover":
                    return (record.get("handover") or {}).get("to_key_id")
                return body.get("key_id")
        return None

    # --------------------------------------------------------------------------- writing records

    def _seal(self, kind: str, fields: dict[str, Any]) -> tuple[bytes, str, bytes, int, str]:
        """Add the writer's fields and seal: (line with newline, hex hash, raw digest, seq, ts)."""
        seq = self._next_seq
        ts = self._clock.now()
        fields["v"] = FORMAT_VERSION
        fields["log_id"] = self._log_id
        fields["seq"] = seq
        fields["ts"] = ts
        fields["kind"] = kind
        fields["prev"] = self._head or genesis_prev(self._log_id)
        try:
            line, hex_digest, digest = seal_line(fields)
        except OutsideDomainError as error:
            hint = " (audit.fit_to_domain() rewrites floats and huge integers in tool arguments as strings)"
            raise AuditRecordError(
                f"record field {error.violation}{hint if 'float' in str(error) else ''}"
            ) from None
        return line, hex_digest, digest, seq, ts

    def _commit(self, kind: str, line: bytes, hex_digest: str, digest: bytes, seq: int) -> None:
        """Chain state after ``line`` reached the active segment."""
        self._next_seq = seq + 1
        self._head = hex_digest
        self._frontier.append(digest)
        self._since_checkpoint = 0 if kind == "checkpoint" else self._since_checkpoint + 1
        self._segment_has_records = kind != "segment_start"
        self._pending_rotation = False  # a record after a rotation checkpoint: nothing left to finish
        self._last_line = line

    def _append_locked(self, kind: str, fields: dict[str, Any]) -> AppendReceipt:
        """Chain, seal and write one record; the OS lock is held and state is current."""
        line, hex_digest, digest, seq, ts = self._seal(kind, fields)
        if kind not in WRITER_KINDS and self._segment_has_records and self._segment_is_full(len(line)):
            self._rotate()
            return self._append_locked(kind, fields)
        self._write_line(line)
        self._commit(kind, line, hex_digest, digest, seq)
        return AppendReceipt(seq, hex_digest, ts, self._path, False)

    def _write_line(self, data: bytes) -> None:
        """Append one newline-terminated line with one ``write``."""
        try:
            written = os.write(self._fd, data)
        except OSError as error:
            raise self._fail(f"{self._path}: write failed: {error}") from None
        if written != len(data):
            raise self._fail(f"{self._path}: short write ({written} of {len(data)} bytes)")
        self._offset += written
        if self._written == self._synced:
            self._unsynced_since = time.monotonic()
        self._written += 1

    def _after_append(self) -> bool:
        """Checkpoint and group-commit bookkeeping after a record; ``True`` when the caller must
        fsync before acknowledging it (``always``, or a batch that reached twice its bound)."""
        settings = self._settings
        every = settings.checkpoint_every
        if every is not None and self._since_checkpoint >= every:
            self._checkpoint_locked("interval")
        # Checkpoints by time are the flusher's job: it sleeps until the deadline.
        if self._since_checkpoint == 1 and settings.checkpoint_seconds is not None:
            self._jobs.put(_WAKE)  # start the checkpoint clock in the flusher
        if settings.fsync == "always":
            return True
        if settings.fsync == "batch":
            pending = self._written - self._synced
            if pending >= 2 * settings.batch_records:
                return True  # the flusher fell behind: hold the bound ourselves
            if not self._sync_requested and (
                pending >= settings.batch_records
                or time.monotonic() - self._unsynced_since >= settings.batch_ms / 1000
            ):
                self._request_sync()  # once per batch; later appends leave the flusher alone
            elif pending == 1:
                self._jobs.put(_WAKE)  # start the batch_ms clock in the flusher
        return False

    def _sync_if_due(self, *, force: bool) -> None:
        """fsync inline (the thread lock held, and the OS lock except after an append) when forced
        or when the batch bound is reached; then export a checkpoint anchor that is now covered."""
        settings = self._settings
        pending = self._written - self._synced
        if settings.fsync == "off":
            self._synced = self._written
        elif pending and (
            force
            or pending >= settings.batch_records
            or time.monotonic() - self._unsynced_since >= settings.batch_ms / 1000
        ):
            covered = self._written
            try:
                os.fsync(self._fd)
            except OSError as error:
                raise self._fail(f"{self._path}: fsync failed: {error}") from None
            with self._sync_state:
                self._synced = max(self._synced, covered)
        with self._sync_state:
            anchor = self._take_covered_anchor()
        if anchor is not None:
            self._export_anchor(anchor)

    def _request_sync(self) -> None:
        """Hand the flusher a group commit of every line written so far (thread lock held).

        The duplicate descriptor stays valid when a rotation closes ours meanwhile.
        """
        self._sync_requested = True
        self._unsynced_since = time.monotonic()  # the clock of the lines this commit misses
        self._jobs.put((self._written, os.dup(self._fd), self._fd_generation))

    def _checkpoint_locked(self, reason: str) -> AppendReceipt:
        last_seq = self._next_seq - 1
        statement = CheckpointStatement(
            log_id=self._log_id,
            first_seq=0,
            last_seq=last_seq,
            head=self._head,
            merkle_root=self._frontier.root().hex(),
            key_id=self._key_id,
        )
        signature = sign_statement(self._signing_key, statement) if self._signing_key else None
        body = {
            "checkpoint": {
                "reason": reason,
                "first_seq": 0,
                "last_seq": last_seq,
                "head": self._head,
                "merkle_root": statement.merkle_root,
                "frontier": [root.hex() for root in self._frontier.roots],
                "key_id": self._key_id,
                "signature": signature,
            }
        }
        receipt = self._append_locked("checkpoint", body)
        self._last_checkpoint_at = time.monotonic()
        self._last_checkpoint_line = self._last_line[:-1]
        self._last_key_id, self._key_known = self._key_id, True
        if self._settings.export_anchor:
            # The anchor must never be durable ahead of the checkpoint it copies, or a power cut
            # would make an honest log look truncated: it is exported once an fsync covers the
            # checkpoint (in batch mode by the flusher, off the append path).
            with self._sync_state:
                self._pending_anchor = (self._last_line[:-1], self._written)
            if self._settings.fsync == "batch":
                if not self._sync_requested:
                    self._request_sync()
                # else the running commit may miss the checkpoint: the next one, due within
                # batch_ms, covers it.
            else:
                self._sync_if_due(force=True)
        return receipt

    def _take_covered_anchor(self) -> bytes | None:
        """The pending anchor line once an fsync covers it (``_sync_state`` held)."""
        pending = self._pending_anchor
        if pending is None or (self._settings.fsync != "off" and self._synced < pending[1]):
            return None
        self._pending_anchor = None
        return pending[0]

    def _export_anchor(self, line: bytes, *, monotonic: bool = True) -> None:
        """Atomically replace ``PATH.anchor`` with a checkpoint line, for off-host copies.

        Several processes append to one log, and a flusher exports its checkpoint only once an
        fsync covers it, possibly after another process exported a newer one: an anchor never moves
        back to an older checkpoint (that would report an honest log's anchor as stale). On open
        (``monotonic=False``) the checkpoint read back from the file replaces whatever is there."""
        target = anchor_path(self._path)
        if monotonic and _anchor_seq(line) <= _current_anchor_seq(target):
            return
        temporary = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, line + b"\n")
                if self._settings.fsync != "off":
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, target)
        except BaseException:
            with suppress(OSError):
                temporary.unlink()
            raise

    def _refresh_stale_anchor(self, line: bytes) -> None:
        """On open: a writer killed between a checkpoint's fsync and its export left the anchor
        behind the log; the checkpoint read back from the file is durable, so export it now."""
        try:
            current = anchor_path(self._path).read_bytes()
        except FileNotFoundError:
            current = b""
        if current.rstrip(b"\n") != line:
            self._export_anchor(line, monotonic=False)

    def _rotate(self) -> None:
        """Close the full segment with a checkpoint, rename it, and start the next one linked to it."""
        self._checkpoint_locked("rotation")
        self._sync_if_due(force=self._settings.fsync != "off")
        self._finish_rotation()

    def _finish_rotation(self) -> None:
        """Give the segment that ends in a rotation checkpoint its rotated name and install its
        successor. Also run on open and catch-up: a writer killed after the checkpoint leaves a
        segment that promises a successor, and completing the rotation keeps that promise."""
        self._pending_rotation = False
        if self._settings.fsync != "off":
            self._sync_if_due(force=True)  # the closed segment is durable before it is closed
        rotated = rotated_path(self._path, self._segment_index)
        previous = {"name": rotated.name, "last_seq": self._next_seq - 1, "last_hash": self._head}
        self._remove_stale_temporaries()
        self._create_segment(self._segment_index + 1, previous, replacing=rotated)

    def _create_segment(self, index: int, previous: dict[str, Any] | None, *, replacing: Path | None) -> None:
        """Install a new active segment holding only its ``segment_start``, never overwriting a file.

        The record is written to a temporary file and made durable first. Then, for a rotation
        (``replacing`` = the full segment's rotated name), the full segment is hard-linked to its
        rotated name (which fails if that name exists) and the new file renamed over ``PATH``;
        otherwise the new file is linked to ``PATH`` (which fails if ``PATH`` exists). At every
        instant ``PATH`` holds a complete segment, so a crash anywhere leaves a log that verifies:
        at worst the full segment has both names, which the verifier and the next writer recognise.
        """
        self._segment_started = time.time()
        fields = self._segment_start_fields(index, previous)
        line, hex_digest, digest, seq, _ = self._seal("segment_start", fields)
        temporary = next_segment_path(self._path)
        durable = self._settings.fsync != "off"
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
                _fsync_directory(self._path.parent)
        except BaseException:
            os.close(fd)
            with suppress(OSError):
                os.unlink(temporary)
            raise
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = fd
        self._fd_generation += 1
        self._inode = os.fstat(fd).st_ino
        self._offset = len(line)
        self._segment_index = index
        self._written += 1
        if durable:
            with self._sync_state:
                if self._synced == self._written - 1:
                    self._synced = self._written
        self._commit("segment_start", line, hex_digest, digest, seq)

    def _link_full_segment(self, rotated: Path) -> None:
        """Give the active (full) segment its rotated name too, refusing to replace any file."""
        try:
            os.link(self._path, rotated)
        except FileExistsError:
            existing = os.stat(rotated)
            mine = os.fstat(self._fd)
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

    # ----------------------------------------------------------------------- background flushing

    def _start_flusher(self) -> None:
        """Group commit needs a deadline even when appends stop; checkpoints need one in time."""
        if self._settings.fsync != "batch" and self._settings.checkpoint_seconds is None:
            return
        self._flusher = threading.Thread(target=self._flush_loop, name="audit-flush", daemon=True)
        self._flusher.start()

    def _flush_loop(self) -> None:
        """Owned by the writer and joined by :meth:`close`: group-commit fsyncs and timed checkpoints.

        Group commits arrive from the appender as (lines covered, duplicate descriptor, its
        generation) and are fsynced outside every lock, so appends continue while the disk works;
        each covers every line written before its fsync starts. The flusher takes
        the appender's lock only when a deadline passes with nobody appending: to start a group
        commit of the last lines, or to write a checkpoint by time.
        """
        jobs = self._jobs
        while True:
            wait = self._flusher_wait()
            try:
                message = jobs.get() if wait is None else jobs.get(timeout=max(wait, 0.0))
            except queue.Empty:
                message = _WAKE
            if isinstance(message, _Signal):
                if message is _STOP or not self._on_deadline():
                    return
                continue
            covered, fd, generation = message
            # An fsync covers every line whose write returned before it starts, not only the lines
            # counted when the commit was queued: count those too, so the next commit is a whole
            # batch away (read _written first: the appender bumps the generation before it counts
            # a line of a new file).
            written = self._written
            if self._fd_generation == generation:
                covered = max(covered, written)
            try:
                os.fsync(fd)
            except OSError as error:
                self._failure = self._failure or f"{self._path}: fsync failed: {error}"
                return
            finally:
                os.close(fd)
            with self._sync_state:
                self._synced = max(self._synced, covered)
                self._sync_requested = False
                anchor = self._take_covered_anchor()
            if anchor is not None:
                try:
                    self._export_anchor(anchor)
                except OSError as error:
                    self._failure = self._failure or f"cannot export the anchor: {error}"
                    return

    def _flusher_wait(self) -> float | None:
        """Seconds until the flusher's next deadline (``None``: none). Reads without locks: a stale
        value only moves a deadline, and every change that adds one also queues a wake-up."""
        settings = self._settings
        deadlines = []
        if settings.fsync == "batch" and self._written > self._synced and not self._sync_requested:
            deadlines.append(self._unsynced_since + settings.batch_ms / 1000)
        if settings.checkpoint_seconds is not None and self._since_checkpoint:
            deadlines.append(self._last_checkpoint_at + settings.checkpoint_seconds)
        return min(deadlines) - time.monotonic() if deadlines else None

    def _on_deadline(self) -> bool:
        """Start an overdue group commit or write a timed checkpoint; ``False`` ends the flusher."""
        settings = self._settings
        now = time.monotonic()
        with self._mutex:
            if self._closed or self._failure is not None:
                return False
            if (
                settings.fsync == "batch"
                and not self._sync_requested
                and self._written > self._synced
                and now - self._unsynced_since >= settings.batch_ms / 1000
            ):
                try:
                    self._request_sync()
                except OSError as error:
                    self._failure = self._failure or f"{self._path}: cannot duplicate for fsync: {error}"
                    return False
        checkpoint_seconds = settings.checkpoint_seconds
        if (
            checkpoint_seconds is not None
            and self._since_checkpoint
            and now >= self._last_checkpoint_at + checkpoint_seconds
        ):
            try:
                with self._locked():
                    if self._since_checkpoint:
                        self._checkpoint_locked("interval")
            except AuditError:
                return False  # the failure is recorded; the next append reports it
        return True

    def _release_files(self) -> None:
        while True:  # group commits a failed flusher left behind hold descriptors
            try:
                message = self._jobs.get_nowait()
            except queue.Empty:
                break
            if isinstance(message, tuple):
                with suppress(OSError):
                    os.close(message[1])
        for fd in (self._fd, self._lock_fd):
            if fd >= 0:
                with suppress(OSError):
                    os.close(fd)
        self._fd = self._lock_fd = -1


def _epoch_seconds(ts: Any, *, default: float) -> float:
    """Seconds since the epoch of a record's RFC 3339 UTC ``ts`` (``default`` if unreadable)."""
    if not isinstance(ts, str):
        return default
    try:
        whole = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return default
    return float(whole)


def _tree_fields(frontier: MerkleFrontier) -> dict[str, Any]:
    return {"size": frontier.size, "frontier": [root.hex() for root in frontier.roots]}


def _parse_own_line(line: bytes) -> dict[str, Any] | None:
    """A line as a record with the fields the writer relies on, or ``None`` if it is not one."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    seq, digest = record.get("seq"), record.get("hash")
    if type(seq) is not int or not isinstance(digest, str) or len(digest) != 64:
        return None
    return record


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _verifies(line: bytes) -> bool:
    """Whether ``line`` is a whole record whose ``hash`` is the hash of the rest of it."""
    record = _parse_own_line(line)
    if record is None:
        return False
    body = without_member(line, "hash", record["hash"])
    return body is not None and record_hash(body) == record["hash"]


def _write_new_file(path: Path, data: bytes, *, sync: bool) -> None:
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


def _side_fields(side: Path, offset: int, torn: bytes) -> dict[str, Any]:
    return {
        "offset": offset,
        "length": len(torn),
        "sha256": hashlib.sha256(torn).hexdigest(),
        "side_file": side.name,
    }


def _anchor_seq(line: bytes) -> int:
    """``last_seq`` of a checkpoint line, -1 when it is not one."""
    try:
        value = orjson.loads(line)["checkpoint"]["last_seq"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return -1
    return value if isinstance(value, int) else -1


def _current_anchor_seq(target: Path) -> int:
    try:
        return _anchor_seq(target.read_bytes().rstrip(b"\n"))
    except OSError:
        return -1
