"""Verification one record at a time, for a reader that shows records as it verifies them."""

from __future__ import annotations

from collections import Counter

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .chain import SegmentState
from .walker import ChainWalker


class RecordChecker:
    """:func:`~.run.verify_log`'s checks of one record at a time, in log order, for a reader that
    shows records as it verifies them (``dsh-policy log``): the same walker verify uses, on its
    detailed path (which accepts exactly what its fast path accepts), so the two never disagree
    about a record. The whole-log verdict (cut tail, missing segment, anchor) is verify's alone."""

    __slots__ = ("_walker",)

    def __init__(self, key: Ed25519PublicKey | None) -> None:
        self._walker = ChainWalker(key)

    def begin_segment(self) -> SegmentState:
        """Start the next segment; pass what this returns with the segment's first record."""
        return self._walker.chain.begin_segment()

    def check(self, line: bytes, file: str, number: int, previous: SegmentState | None) -> tuple[str, ...]:
        """Why the record on ``line`` (``file``, line ``number``) fails verification, as
        ``REASON: message`` each (only the reason once the kept findings are full); empty when it
        verifies. ``previous``: the previous segment's state, for the segment's first record."""
        findings = self._walker.findings
        counts_before = Counter(findings.counts)
        errors_before = len(findings.errors)
        self._walker.check_line(line, file, number, previous)
        new_reasons = findings.counts - counts_before
        messages = [f"{e.reason.value}: {e.message}" for e in findings.errors[errors_before:]]
        return tuple(messages) or tuple(sorted(new_reasons))
