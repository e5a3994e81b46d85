"""``AuditWriter``: the writer's public face, composing one collaborator per job.

It owns the order of things: every append takes the thread lock, then the OS lock, catches up
with the file, appends, does the checkpoint and group-commit bookkeeping, releases the OS lock,
and only then fsyncs when the append must wait for it (so other processes append meanwhile).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..keys import KeyFileError, key_id, load_private_key
from ..record import DEFAULT_FORMAT_VERSION
from ..segments import lock_path
from .anchors import AnchorExporter
from .append import Appender, AppendReceipt, check_caller_record
from .chain import ChainState
from .checkpoints import Checkpointer
from .errors import AuditWriteError
from .files import ActiveFile
from .flusher import Flusher
from .group_commit import WAKE, GroupCommit
from .handover import KeyHandover
from .locking import WriterLock
from .recovery import Recovery
from .rotation import Rotation
from .settings import FsyncMode, WriterSettings


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
        signing_key_id = key_id(signing_key.public_key()) if signing_key is not None else None
        self._chain = chain = ChainState(requested_log_id, settings.format_version)
        self._file = file = ActiveFile()
        self._anchors = AnchorExporter(path, durable=settings.durable)
        self._lock = lock = WriterLock(path)  # opens PATH.lock: OSError is open()'s to report
        self._commits = commits = GroupCommit(settings, file, lock, self._anchors)
        self._appender = appender = Appender(path, settings, chain, file, commits, lock)
        self._checkpoints = Checkpointer(settings, chain, appender, commits, signing_key, signing_key_id)
        self._rotation = Rotation(path, settings, chain, file, appender, self._checkpoints, commits)
        appender.rotate = self._rotation.rotate
        self._recovery = Recovery(path, settings, chain, file, appender, self._rotation, commits)
        self._handover = KeyHandover(
            path, chain, appender, self._checkpoints, signing_key, previous_signing_key
        )
        self._flusher = Flusher(settings, commits, chain, lock, self._locked, self._checkpoints.write)
        #: Appends a lease covers (0: none). Leases need the flusher (it ends an idle one), which
        #: batch mode always runs; a lease of one append would cover two.
        self._lease_records = (
            settings.batch_records if settings.fsync == "batch" and settings.batch_records > 1 else 0
        )

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
        format_version: int = DEFAULT_FORMAT_VERSION,
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
        without it is recorded unsigned and verification with the old key reports it.
        ``format_version`` is a new log's (3, bytes-as-written hashing into the record's Merkle
        leaf, by default; 2 bytes-as-written hashing and 1 the canonical form of earlier releases);
        an existing log is continued in its own. Raises
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
            format_version=format_version,
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
        writer._flusher.start()
        return writer

    @property
    def log_id(self) -> str:
        """The id every record of this log carries."""
        return self._chain.log_id

    @property
    def failure(self) -> str | None:
        """Why the writer stopped accepting records (a write or fsync error), or ``None``."""
        return self._lock.failure

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
        check_caller_record(kind, fields)
        return self._append(kind, dict(fields))

    def report_losses(self, fields: Mapping[str, Any]) -> AppendReceipt:
        """Append a ``records_lost`` record (see :mod:`..losses`): how many records a fail-open
        caller could not write before this one, of which kinds, when, and the last error."""
        return self._append("records_lost", {"lost": dict(fields["lost"])})

    def _append(self, kind: str, record: dict[str, Any]) -> AppendReceipt:
        """Write one record under both locks; an fsync it must wait for runs after the OS lock is
        released, so other processes append while this one waits for the disk.

        In ``batch`` mode a burst keeps the OS lock as a lease (:class:`.locking.WriterLock`) for
        up to ``batch_records`` appends or ``batch_ms``: other processes wait at most that long,
        the same bound group commit already puts on durability.

        (The hot path: the same steps as ``_locked`` without a generator-based context manager.)
        """
        lock, commits = self._lock, self._commits
        with lock.mutex:
            if not lock.leased:
                self._acquire()
            elif lock.failure is not None or lock.closed:
                lock.release()
                self._acquire()  # raises why no record is accepted
            try:
                receipt = self._appender.append_locked(kind, record)
                self._checkpoints.after_record()
                sync_now = commits.after_append()
            except OSError as error:
                lock.release()
                raise lock.fail(f"{self._path}: {error}") from None
            except BaseException:
                lock.release()
                raise
            if sync_now or not self._lease_records:
                lock.release()
            elif lock.leased:
                lock.lease_left -= 1
                if lock.lease_left <= 0 or lock.lease_over(time.monotonic()):
                    lock.release()
            else:
                lock.begin_lease(self._lease_records - 1, time.monotonic() + self._settings.batch_ms / 1000)
                commits.jobs.put(WAKE)  # the flusher ends the lease on time if we go quiet
            if sync_now:
                # Our descriptor still names the file our lines went to, whatever another process
                # renames meanwhile; the thread lock keeps this writer's own state still.
                try:
                    commits.sync_if_due(force=True)
                except OSError as error:
                    raise lock.fail(f"{self._path}: {error}") from None
            if commits.all_durable():
                return AppendReceipt(receipt.seq, receipt.hash, receipt.ts, receipt.segment, True)
        return receipt

    def checkpoint(self) -> AppendReceipt | None:
        """Write a checkpoint now (``None`` if every record is already covered by one)."""
        with self._locked():
            receipt = self._checkpoints.write("manual") if self._chain.since_checkpoint else None
            self._commits.sync_if_due(force=self._settings.durable)
        return receipt

    def flush(self) -> None:
        """Make every record written so far durable now (no-op in ``off`` mode)."""
        with self._locked():
            self._commits.sync_if_due(force=self._settings.durable)

    def close(self) -> None:
        """Write a closing checkpoint when records are uncovered, sync, and release the files.

        Raises :class:`AuditWriteError` if a background fsync failed and no append has reported
        it yet: records acknowledged as not yet durable may be lost, and the caller must know.
        """
        lock = self._lock
        with lock.mutex:
            if lock.closed:
                return
            lock.closed = True
        self._flusher.stop()
        try:
            if lock.failure is None:
                with self._locked(closing=True):
                    if self._chain.since_checkpoint:
                        self._checkpoints.write("close")
                    self._commits.sync_if_due(force=self._settings.durable)
        finally:
            self._release_files()
        if lock.failure is not None and not lock.failure_reported:
            lock.failure_reported = True
            raise AuditWriteError(f"audit writer failed in the background: {lock.failure}")

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
        lock = self._lock
        with lock.mutex:
            self._acquire(closing=closing)
            try:
                yield
            except OSError as error:
                raise lock.fail(f"{self._path}: {error}") from None
            finally:
                lock.release()

    def _acquire(self, *, closing: bool = False) -> None:
        """With the thread lock held: take the OS lock and catch up with other processes."""
        lock = self._lock
        lock.take(closing=closing)
        try:
            if self._file.fd >= 0:
                self._recovery.catch_up()
        except OSError as error:
            lock.release()
            raise lock.fail(f"{self._path}: {error}") from None
        except BaseException:
            lock.release()
            raise

    def _attach(self) -> None:
        """Open the active segment under the lock: recover a torn tail, restore chain state, and
        leave the log as a verifier expects it (every recovery recorded, no rotation half done)."""
        self._rotation.remove_stale_temporaries()
        self._recovery.open_active()
        self._handover.hand_over_if_changed()
        self._chain.last_checkpoint_at = time.monotonic()
        self._commits.sync_if_due(force=self._settings.durable)
        if self._settings.export_anchor and self._chain.last_checkpoint_line:
            self._anchors.refresh_if_stale(self._chain.last_checkpoint_line)

    def _release_files(self) -> None:
        self._commits.close_queued_descriptors()
        for fd in (self._file.fd, self._lock.fd):
            if fd >= 0:
                with suppress(OSError):
                    os.close(fd)
        self._file.fd = self._lock.fd = -1
