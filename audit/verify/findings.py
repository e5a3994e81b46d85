"""What verification can find: the fixed vocabulary of reasons, one finding, and the collector.

A finding is an integrity failure unless its reason is a warning (:data:`WARNING_REASONS`, or a
finding the walk reports as a warning on purpose, such as an unsigned tail of a ``--live`` log).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

#: Findings kept in full; counts per reason stay exact beyond this.
MAX_FINDINGS: Final = 1000


class Reason(StrEnum):
    """The fixed vocabulary of verification findings."""

    MALFORMED = "MALFORMED"
    NOT_CANONICAL = "NOT_CANONICAL"
    HASH_MISMATCH = "HASH_MISMATCH"
    PREV_MISMATCH = "PREV_MISMATCH"
    SEQ_GAP = "SEQ_GAP"
    SEQ_DUPLICATE = "SEQ_DUPLICATE"
    CHECKPOINT_SIGNATURE = "CHECKPOINT_SIGNATURE"
    CHECKPOINT_MISMATCH = "CHECKPOINT_MISMATCH"
    TRUNCATED = "TRUNCATED"
    SEGMENT_MISSING = "SEGMENT_MISSING"
    TORN_TAIL = "TORN_TAIL"  # a warning: what a crash mid-write leaves behind
    NOT_A_LOG = "NOT_A_LOG"  # the input is no audit log at all (empty, not JSON lines, no record)
    # With a key, INTACT means every record is covered by a checkpoint that key signed:
    UNSIGNED = "UNSIGNED"  # no checkpoint signed by the key covers any record
    UNSIGNED_TAIL = "UNSIGNED_TAIL"  # records after the last signed checkpoint (a warning with --live)
    UNSIGNED_CHECKPOINT = "UNSIGNED_CHECKPOINT"  # a checkpoint without signature in a log verified by key
    KEY_CHANGE = "KEY_CHANGE"  # checkpoints signed by another key with no signed hand-over to it
    AFTER_ROTATION = "AFTER_ROTATION"  # a record after its segment's rotation checkpoint
    # The on-host anchor (PATH.anchor); failures with a key, warnings without (FOREIGN always fails):
    ANCHOR_MISSING = "ANCHOR_MISSING"
    ANCHOR_STALE = "ANCHOR_STALE"  # older than the log's last checkpoint
    ANCHOR_FOREIGN = "ANCHOR_FOREIGN"  # belongs to another log
    RECORDS_LOST = "RECORDS_LOST"  # a warning: the writer reports records it could not write (fail-open)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (file, 1-based line, seq if known), why, and expected vs actual values."""

    reason: Reason
    file: str
    line: int | None
    seq: int | None
    message: str
    expected: str | None = None
    actual: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form for ``--format json``."""
        return {
            "reason": self.reason.value,
            "file": self.file,
            "line": self.line,
            "seq": self.seq,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
        }


#: Findings that never make a log fail on their own.
WARNING_REASONS: Final = frozenset({Reason.TORN_TAIL, Reason.RECORDS_LOST})


class Findings:
    """Collects errors and warnings in log order; ``bad`` says whether the record being checked
    drew an error (each record's check resets it)."""

    __slots__ = ("bad", "counts", "error_total", "errors", "warnings")

    def __init__(self) -> None:
        self.errors: list[Finding] = []
        self.warnings: list[Finding] = []
        self.counts: Counter[str] = Counter()
        self.error_total = 0  # integrity findings, including those beyond MAX_FINDINGS
        self.bad = False

    def error(
        self,
        reason: Reason,
        file: str,
        line: int | None,
        seq: int | None,
        message: str,
        *,
        expected: str | None = None,
        actual: str | None = None,
    ) -> None:
        """An integrity failure (kept in full up to :data:`MAX_FINDINGS`, counted beyond)."""
        self.bad = True
        self.error_total += 1
        self.counts[reason.value] += 1
        if len(self.errors) < MAX_FINDINGS:
            self.errors.append(Finding(reason, file, line, seq, message, expected, actual))

    def warn(
        self, reason: Reason, file: str, line: int | None, message: str, *, seq: int | None = None
    ) -> None:
        """A finding that does not make the log fail."""
        self.counts[reason.value] += 1
        self.warnings.append(Finding(reason, file, line, seq, message))
