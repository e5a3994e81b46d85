"""The hash chain: the state a record must extend (log id, seq, ``prev``, Merkle tree, segment)
and the checks of a record, a segment link and a segment's tree state against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..merkle import MerkleFrontier
from ..record_hash import genesis_prev
from .findings import Findings, Reason
from .records import is_digest, mapping


@dataclass(slots=True)
class SegmentState:
    """Where one segment stands: its index and how it ended. The state the previous segment
    ended in is handed to the first record of the next, whose segment link must match it."""

    index: int | None = None
    ended_with_rotation: bool = False
    last_seq: int | None = None
    last_hash: str | None = None


class Chain:
    """Where the chain stands after the records walked so far, and the checks against it."""

    __slots__ = (
        "_findings",
        "first_seq",
        "frontier",
        "head",
        "log_id",
        "next_seq",
        "resync",
        "seen_max_seq",
        "segment",
    )

    def __init__(self, findings: Findings) -> None:
        self._findings = findings
        self.log_id: str | None = None
        self.next_seq: int | None = None
        self.head: str | None = None
        self.seen_max_seq = -1
        self.first_seq: int | None = None
        self.frontier = MerkleFrontier()
        #: The previous line was unusable: the next record's seq and prev cannot be judged.
        self.resync = False
        self.segment = SegmentState()

    def begin_segment(self) -> SegmentState:
        """Start the next segment; the state the previous one ended in (for the link check)."""
        previous = self.segment
        self.segment = SegmentState()
        return previous

    def extends(self, record: dict[str, Any], seq: int, stated_hash: str) -> bool:
        """Whether ``record`` simply extends the chain (so :meth:`check_links` has nothing to say)."""
        prev = record["prev"]
        return not (
            self.resync
            or seq != self.next_seq
            or prev != self.head
            or prev == stated_hash
            or record["log_id"] != self.log_id
        )

    def advance(self, seq: int, stated_hash: str, version: object, *, ends_with_rotation: bool) -> None:
        """Take a checked record (of format ``version``) as the chain's new head."""
        self.frontier.append_record(version, bytes.fromhex(stated_hash))
        self.head = stated_hash
        self.next_seq = seq + 1
        if seq > self.seen_max_seq:
            self.seen_max_seq = seq
        segment = self.segment
        segment.last_seq, segment.last_hash = seq, stated_hash
        segment.ended_with_rotation = ends_with_rotation

    def check_links(self, record: dict[str, Any], seq: int, stated_hash: str, file: str, number: int) -> None:
        """Log id, seq and ``prev`` of a record that does not simply extend the chain."""
        log_id: str = record["log_id"]
        if self.log_id is None:
            self.log_id = log_id
            self.first_seq = seq
        elif log_id != self.log_id:
            self._findings.error(
                Reason.MALFORMED,
                file,
                number,
                seq,
                "record belongs to another log",
                expected=self.log_id,
                actual=log_id,
            )
        expected_seq = 0 if self.next_seq is None else self.next_seq
        if self.resync:
            self.resync = False
            return
        if seq != expected_seq:
            reason = Reason.SEQ_DUPLICATE if seq <= self.seen_max_seq else Reason.SEQ_GAP
            self._findings.error(
                reason,
                file,
                number,
                seq,
                "sequence number out of order",
                expected=str(expected_seq),
                actual=str(seq),
            )
        expected_prev = self.head if self.head is not None else genesis_prev(self.log_id or log_id)
        if record["prev"] != expected_prev:
            self._findings.error(
                Reason.PREV_MISMATCH,
                file,
                number,
                seq,
                "prev does not match the previous record's hash",
                expected=expected_prev,
                actual=record["prev"],
            )
        if record["prev"] == stated_hash:
            self._findings.error(
                Reason.PREV_MISMATCH, file, number, seq, "record names itself as its predecessor"
            )

    def check_segment_link(
        self, record: dict[str, Any], file: str, number: int, previous: SegmentState
    ) -> None:
        """A segment's first record: a ``segment_start`` whose link matches how ``previous`` ended."""
        seq = record["seq"]
        if record["kind"] != "segment_start":
            self._findings.error(
                Reason.MALFORMED, file, number, seq, "segment does not begin with a segment_start record"
            )
            return
        info = mapping(record.get("segment"))
        index, link = info.get("index"), info.get("previous")
        if type(index) is not int:
            self._findings.error(
                Reason.MALFORMED, file, number, seq, "segment_start without an integer index"
            )
            return
        self.segment.index = index
        expected_index = 0 if previous.index is None and self.head is None else (previous.index or 0) + 1
        link = mapping(link)
        link_seq, link_hash = link.get("last_seq"), link.get("last_hash")
        if index != expected_index:
            missing = ", ".join(str(i) for i in range(expected_index, index)) or "?"
            self._findings.error(
                Reason.SEGMENT_MISSING,
                file,
                number,
                seq,
                f"segment(s) {missing} missing before this one (it links to {link.get('name')})",
                expected=str(expected_index),
                actual=str(index),
            )
            self._resume_from_link(record, link_seq, link_hash)
            return
        if not link:
            return
        if index == expected_index and type(link_seq) is int and previous.last_seq is not None:
            if link_seq > previous.last_seq:
                self._findings.error(
                    Reason.TRUNCATED,
                    file,
                    number,
                    seq,
                    f"previous segment {link.get('name')} ended at seq {link_seq}, but only"
                    f" {previous.last_seq} remains",
                    expected=str(link_seq),
                    actual=str(previous.last_seq),
                )
                self._resume_from_link(record, link_seq, link_hash)
            elif link_hash != previous.last_hash:
                self._findings.error(
                    Reason.PREV_MISMATCH,
                    file,
                    number,
                    seq,
                    "segment link does not match the previous segment",
                    expected=str(link_hash),
                    actual=previous.last_hash,
                )

    def _resume_from_link(self, record: dict[str, Any], link_seq: Any, link_hash: Any) -> None:
        """Continue the chain where the segment link says the missing records ended, so one lost
        file or cut segment is one finding rather than a cascade of SEQ_GAP and PREV_MISMATCH."""
        if type(link_seq) is int and is_digest(link_hash):
            self.next_seq, self.head = link_seq + 1, link_hash
            self.seen_max_seq = max(self.seen_max_seq, link_seq)
            self.log_id = self.log_id or record["log_id"]
            self.frontier = restore_frontier(mapping(record.get("tree"))) or self.frontier

    def check_tree(self, record: dict[str, Any], file: str, number: int) -> None:
        """A ``segment_start``'s Merkle tree state against the records before it."""
        tree = mapping(record.get("tree"))
        if self.head is None and tree.get("size", 0) and record["seq"] != 0:
            self.frontier = restore_frontier(tree) or self.frontier
            return
        if tree.get("size") != self.frontier.size or tree.get("frontier") != [
            r.hex() for r in self.frontier.roots
        ]:
            self._findings.error(
                Reason.CHECKPOINT_MISMATCH,
                file,
                number,
                record["seq"],
                "segment_start's Merkle tree state does not match the records before it",
            )


def restore_frontier(tree: Mapping[str, Any]) -> MerkleFrontier | None:
    """The Merkle frontier a ``segment_start`` carries, ``None`` when it is not readable."""
    try:
        return MerkleFrontier.restore(int(tree["size"]), [bytes.fromhex(h) for h in tree["frontier"]])
    except (KeyError, TypeError, ValueError):
        return None
