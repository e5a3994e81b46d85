"""Audit records a fail-open deployment could not write: counted, and reported in the log itself.

An :class:`~.writer.AuditWriter` that hit a write or fsync error refuses every later record (we no
longer know what reached the disk). A deployment that fails open keeps running without its record,
so the loss must not vanish: :class:`ReopeningWriter` counts every record that could not be
written, reopens the log on the next record (the reopening writer recovers a torn tail as after a
crash), and before that record writes a ``records_lost`` record saying how many were lost, of which
kinds, when, and the last error. ``verify`` adds these up for the auditor.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from .writer import AppendReceipt, AuditError, AuditWriteError, AuditWriter


@dataclass(slots=True)
class LossLedger:
    """Records not written since the last ``records_lost`` record."""

    count: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    first_ts: str | None = None
    last_ts: str | None = None
    last_error: str | None = None
    total: int = 0  #: every loss this process saw, reported or not

    def note(self, kind: str, error: str) -> None:
        """One more record lost."""
        now = _utc_now()
        self.count += 1
        self.total += 1
        self.kinds[kind] += 1
        self.first_ts = self.first_ts or now
        self.last_ts = now
        self.last_error = error[:500]

    def fields(self) -> dict[str, Any]:
        """The body of the ``records_lost`` record."""
        return {
            "lost": {
                "count": self.count,
                "kinds": dict(sorted(self.kinds.items())),
                "first_ts": self.first_ts,
                "last_ts": self.last_ts,
                "last_error": self.last_error,
            }
        }

    def reported(self) -> None:
        """The pending losses are now in the log."""
        self.count = 0
        self.kinds.clear()
        self.first_ts = self.last_ts = self.last_error = None


class ReopeningWriter:
    """An audit log that survives a failed writer: losses are counted and reported, the log reopened.

    ``opener`` opens the log with the deployment's settings; ``writer`` is an already open one.
    :meth:`append` raises like :meth:`AuditWriter.append` (the caller decides between failing
    closed and going on); a record it could not write is counted as lost. A caller that gives up
    on a record for its own reasons calls :meth:`note_loss`. Reopening is tried at most once per
    ``retry_seconds`` (opening reads the active segment back), records in between are counted.
    """

    def __init__(
        self,
        opener: Callable[[], AuditWriter],
        writer: AuditWriter | None = None,
        *,
        retry_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._opener = opener
        self._writer = writer
        self._retry_seconds = retry_seconds
        self._clock = clock
        self._next_attempt = 0.0
        self.losses = LossLedger()

    @property
    def writer(self) -> AuditWriter | None:
        """The writer in use, or ``None`` until the log can be opened again."""
        return self._writer

    @property
    def lost(self) -> int:
        """Records lost and not yet reported in the log."""
        return self.losses.count

    def note_loss(self, kind: str, error: str) -> None:
        """Count one record that will not be written."""
        self.losses.note(kind, error)

    def append(self, kind: str, fields: Mapping[str, Any]) -> AppendReceipt:
        """Append one record, reopening the log first if the last writer failed."""
        try:
            writer = self._current()
            if self.losses.count:
                writer.report_losses(self.losses.fields())
                self.losses.reported()
            return writer.append(kind, fields)
        except AuditWriteError as error:
            if self._writer is not None and self._writer.failure is not None:
                self._next_attempt = self._clock() + self._retry_seconds
            self._drop_writer()
            self.losses.note(kind, str(error))
            raise

    def close(self) -> None:
        """Close the writer (its closing checkpoint); raises :class:`AuditWriteError` like it."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def _current(self) -> AuditWriter:
        if self._writer is not None and self._writer.failure is None:
            return self._writer
        self._drop_writer()
        now = self._clock()
        if now < self._next_attempt:
            raise AuditWriteError("the audit log failed; reopening is retried shortly")
        self._next_attempt = now + self._retry_seconds
        self._writer = self._opener()
        return self._writer

    def _drop_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            with suppress(AuditError, OSError):
                writer.close()


def _utc_now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
