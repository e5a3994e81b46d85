"""Verification of audit log segments (AUDIT.md "Verification").

:func:`verify_log` recomputes every record hash, the chain links, the global sequence, the segment
links, the Merkle root and (given the public key) the signature of every checkpoint. It never stops
at the first error: every line gets a verdict, and the report says how far the log is anchored by
a valid checkpoint. Without a key, checkpoints can only be checked for internal consistency: a
forger who rehashes the whole file also recomputes those, so such a report says ``chain-only``.
With a key verification is strict: INTACT means every record is covered by a checkpoint that key
(or a key it handed over to) signed, and the on-host anchor must be present and current; ``live``
relaxes only what a log still being written cannot have yet (its unsigned tail, a lagging anchor).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .checkpoint import CheckpointStatement, HandoverStatement, bytes_signature_is_valid, signature_is_valid
from .keys import key_id as key_id_of
from .keys import load_public_key, public_key_from_hex
from .merkle import MerkleFrontier
from .record import (
    FORMAT_VERSION,
    RECORD_HASHER,
    OutsideDomainError,
    canonical_bytes,
    genesis_prev,
    hash_of_line,
    record_hash,
    without_member,
)
from .segments import active_path_of, anchor_path, discover_segments

_ORJSON_CANONICAL: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_SORT_SENSITIVE_BYTES: Final = re.compile(rb"[\xee-\xf4]")
_HEX: Final = frozenset("0123456789abcdef")
_REQUIRED: Final = (("v", int), ("log_id", str), ("seq", int), ("ts", str), ("kind", str), ("prev", str))
#: Read size: big enough to amortize per-chunk work, small enough to stay in the CPU caches while
#: its lines are checked (measured: 1 MiB beats 8 MiB by a quarter of a microsecond a record).
_READ_CHUNK: Final = 1 << 20
_WRITER_KINDS: Final = frozenset({"checkpoint", "segment_start", "recovery", "key_handover", "records_lost"})
# The ends of float tokens as orjson writes them (see _float_suspects). Literal-led patterns, one
# each: Python's re scans for a literal first byte several times faster than for a class.
_FLOAT_TAILS: Final = (
    re.compile(rb"\.[0-9]+[,}\]]"),  # 0.5 (an exponent form also ends like one below)
    re.compile(rb"e-[0-9]+[,}\]]"),  # 1e-07, 1.5e-07
)
_FLOAT_POSITIVE_EXPONENT_TAIL: Final = re.compile(rb"e\+[0-9]+[,}\]]")  # 1e+16, 1.5e+300
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


@dataclass(frozen=True, slots=True)
class Recovery:
    """A repair the writer made on reopening, as its ``recovery`` record tells it: a torn tail
    moved aside (``reason`` ``torn_tail``) or a missing active segment restarted (``active_missing``)."""

    file: str
    line: int
    seq: int
    offset: int | None
    length: int | None
    sha256: str | None
    side_file: str | None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form for ``--format json``."""
        return {
            "file": self.file,
            "line": self.line,
            "seq": self.seq,
            "offset": self.offset,
            "length": self.length,
            "sha256": self.sha256,
            "side_file": self.side_file,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class UnsignedTail:
    """Records after the last checkpoint signed by the key: ``count`` of them from ``first_seq``."""

    count: int
    first_seq: int | None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form for ``--format json``."""
        return {"count": self.count, "first_seq": self.first_seq}


#: "signature-verified": a key was given and every checkpoint's signature was checked with it.
#: "unsigned-verified": no key was given; checkpoints were only checked against the records.
SignatureMode = Literal["signature-verified", "unsigned-verified"]


@dataclass(frozen=True, slots=True)
class VerificationReport:
    """Everything an auditor needs to judge a log; ``intact`` is the one-word answer."""

    files: tuple[str, ...]
    log_id: str | None
    records_checked: int
    records_valid: int
    records_invalid: int
    checkpoints_valid: int
    checkpoints_invalid: int
    signature_mode: SignatureMode
    key_id: str | None
    first_seq: int | None
    last_seq: int | None
    anchored_through: int | None
    unanchored_records: int
    recoveries: tuple[Recovery, ...]
    bytes_checked: int
    errors: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    reason_counts: Mapping[str, int]
    unreadable: tuple[str, ...] = ()
    anchor_file: str | None = None
    not_a_log: str | None = None  #: why the input is no audit log at all (exit 2)
    live: bool = False  #: verified as a log still being written (an unsigned tail is only a warning)
    unsigned_tail: UnsignedTail | None = None
    checkpoints_signed: int = 0  #: checkpoints that carry a signature (checked or not)
    key_handovers: int = 0
    records_lost: int = 0  #: records the writer reported it could not write (fail-open losses)
    anchor_kind: str | None = None  #: "off-host" (--anchor), "on-host" (PATH.anchor) or None
    error_total: int = 0  #: integrity findings, including those beyond MAX_FINDINGS

    @property
    def intact(self) -> bool:
        """True when every input was readable, is an audit log, and no integrity finding was made."""
        return not self.errors and not self.unreadable and not self.not_a_log and not self._dropped_errors

    @property
    def verdict(self) -> str:
        """One word: ``NOT_A_LOG``, ``UNREADABLE``, ``INTACT`` or ``INTEGRITY_FAILURE``."""
        if self.not_a_log:
            return "NOT_A_LOG"
        if self.unreadable:
            return "UNREADABLE"
        return "INTACT" if self.intact else "INTEGRITY_FAILURE"

    @property
    def assurance(self) -> str:
        """What INTACT proves: ``signed`` (every record under a checkpoint the key signed; with
        ``live``, up to the last one) or ``chain-only`` (no key: nothing proves who wrote it)."""
        return "signed" if self.signature_mode == "signature-verified" else "chain-only"

    @property
    def _dropped_errors(self) -> int:
        return max(self.error_total - len(self.errors), 0)

    @property
    def first_error(self) -> Finding | None:
        """The first bad record in log order (the place to start looking)."""
        return self.errors[0] if self.errors else None

    @property
    def torn_tail(self) -> Finding | None:
        """The torn last line, if the log ends in one."""
        return next((w for w in self.warnings if w.reason is Reason.TORN_TAIL), None)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form for ``--format json``."""
        return {
            "verdict": self.verdict,
            "intact": self.intact,
            "assurance": self.assurance,
            "assurance_note": ASSURANCE_NOTES[self.assurance],
            "live": self.live,
            "not_a_log": self.not_a_log,
            "files": list(self.files),
            "unreadable": list(self.unreadable),
            "log_id": self.log_id,
            "records": {
                "checked": self.records_checked,
                "valid": self.records_valid,
                "invalid": self.records_invalid,
                "first_seq": self.first_seq,
                "last_seq": self.last_seq,
            },
            "checkpoints": {
                "valid": self.checkpoints_valid,
                "invalid": self.checkpoints_invalid,
                "signed": self.checkpoints_signed,
                "signatures": self.signature_mode,
                "key_id": self.key_id,
                "key_handovers": self.key_handovers,
            },
            "anchored_through": self.anchored_through,
            "unanchored_records": self.unanchored_records,
            "unsigned_tail": self.unsigned_tail.to_json() if self.unsigned_tail else None,
            "anchor_file": self.anchor_file,
            "anchor_kind": self.anchor_kind,
            "records_lost": self.records_lost,
            "recoveries": [r.to_json() for r in self.recoveries],
            "bytes_checked": self.bytes_checked,
            "first_error": self.first_error.to_json() if self.first_error else None,
            "reason_counts": dict(self.reason_counts),
            "errors": [e.to_json() for e in self.errors],
            "warnings": [w.to_json() for w in self.warnings],
        }


ASSURANCE_NOTES: Final = {
    "signed": "every record up to the last signed checkpoint is proven written by the key holder",
    "chain-only": "only the hash chain was checked: anyone who can write the files can rewrite the"
    " whole log consistently; nothing proves who wrote it (verify with --key)",
}


PublicKeySource = str | os.PathLike[str] | Ed25519PublicKey | Ed25519PrivateKey


def verify_log(
    paths: Sequence[str | os.PathLike[str]],
    *,
    public_key: PublicKeySource | None = None,
    anchor: str | os.PathLike[str] | None = None,
    live: bool = False,
    on_segment: Callable[[int, int, str], None] | None = None,
) -> VerificationReport:
    """Verify a log given its segments.

    One path: it and its sibling segments (``PATH.NNNNNN``) are discovered, and ``PATH.anchor``
    (the on-host anchor) is checked: missing, older than the log's last checkpoint, or from
    another log is reported, and is a failure with a key. Several paths: exactly those, in that
    order; links between them are checked, so a segment left out is ``SEGMENT_MISSING``.
    ``anchor`` is an exported checkpoint line kept off the host: a log that ends before it is
    ``TRUNCATED``. ``public_key`` (PEM path or key) makes verification strict: INTACT then means
    every record is covered by a checkpoint that key (or a key it handed over to) signed.
    ``live`` is for a log still being written: records after the last signed checkpoint are then
    a warning instead of ``UNSIGNED_TAIL``, and nothing proves them. Raises ``KeyFileError`` if
    the key cannot be loaded. ``on_segment(done, total, file)`` is called after each segment (for
    a progress display).
    """
    key = load_public_key(public_key) if public_key is not None else None
    given = [Path(p) for p in paths]
    anchor_kind = "off-host" if anchor is not None else None
    walker = _ChainWalker(key, live=live)
    if len(given) == 1:
        files = discover_segments(given[0])
        if len(files) > 1 and _same_file(files[-1], files[-2]):
            # A writer died after hard-linking the full segment to its rotated name and before
            # renaming the new segment over PATH: one file under two names, a rotation cut short.
            files.pop()
            walker.rotation_cut_short = True
        if anchor is None:
            anchor_kind = "on-host"
            anchor = anchor_path(active_path_of(files[-1]))
            if not Path(anchor).is_file():
                walker.on_host_anchor_missing = str(anchor)
                anchor, anchor_kind = None, None
    else:
        files = given
    # The anchor is read before the log: a writer still running may export a newer one meanwhile,
    # which must not make the log we read look truncated.
    anchor_bytes = walker.read_anchor(Path(anchor)) if anchor is not None else None
    for position, path in enumerate(files):
        walker.walk_file(path, is_last=position == len(files) - 1)
        if on_segment is not None:
            on_segment(position + 1, len(files), str(path))
    walker.judge_not_a_log()
    if anchor is not None and anchor_bytes is not None:
        walker.check_anchor(Path(anchor), anchor_bytes, on_host=anchor_kind == "on-host")
    walker.judge_signatures()
    walker.judge_missing_anchor()
    return walker.report(
        [str(p) for p in files], str(anchor) if anchor is not None else None, anchor_kind
    )


class RecordChecker:
    """:func:`verify_log`'s checks of one record at a time, in log order, for a reader that shows
    records as it verifies them (``dsh-policy log``): the same walker verify uses, on its detailed
    path (which accepts exactly what its fast path accepts), so the two never disagree about a
    record. The whole-log verdict (cut tail, missing segment, anchor) is verify's alone."""

    __slots__ = ("_walker",)

    def __init__(self, key: Ed25519PublicKey | None) -> None:
        self._walker = _ChainWalker(key)

    def begin_segment(self) -> SegmentState:
        """Start the next segment; pass what this returns with the segment's first record."""
        return self._walker.begin_segment()

    def check(self, line: bytes, file: str, number: int, previous: SegmentState | None) -> tuple[str, ...]:
        """Why the record on ``line`` (``file``, line ``number``) fails verification, as
        ``REASON: message`` each (only the reason once the kept findings are full); empty when it
        verifies. ``previous``: the previous segment's state, for the segment's first record."""
        walker = self._walker
        counts_before = Counter(walker.counts)
        errors_before = len(walker.errors)
        walker._check_line(line, file, number, previous)
        new_reasons = walker.counts - counts_before
        messages = [f"{e.reason.value}: {e.message}" for e in walker.errors[errors_before:]]
        return tuple(messages) or tuple(sorted(new_reasons))


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


@dataclass(slots=True)
class SegmentState:
    """Where one segment stands: its index and how it ended. The state the previous segment
    ended in is handed to the first record of the next, whose segment link must match it."""

    index: int | None = None
    ended_with_rotation: bool = False
    last_seq: int | None = None
    last_hash: str | None = None


@dataclass(slots=True)
class _ChainWalker:
    """Walks records in log order keeping the expected chain state; records findings as it goes."""

    key: Ed25519PublicKey | None
    live: bool = False
    log_id: str | None = None
    next_seq: int | None = None
    head: str | None = None
    seen_max_seq: int = -1
    frontier: MerkleFrontier = field(default_factory=MerkleFrontier)
    records_checked: int = 0
    records_invalid: int = 0
    checkpoints_valid: int = 0
    checkpoints_invalid: int = 0
    first_seq: int | None = None
    anchored_through: int | None = None
    records_after_anchor: int = 0
    recoveries: list[Recovery] = field(default_factory=list)
    bytes_checked: int = 0
    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    unreadable: list[str] = field(default_factory=list)
    segment: SegmentState = field(default_factory=SegmentState)
    anchor_seq: int | None = None
    anchor_line: bytes | None = None
    anchor_where: tuple[str, int] | None = None
    last_file: str = ""
    last_file_lines: int = 0
    resync: bool = False
    _bad: bool = False
    # Strict verification state: the key in force (the given one, then any it handed over to).
    trusted: Ed25519PublicKey | None = None
    trusted_id: str | None = None
    signed_seen: bool = False
    checkpoints_signed: int = 0
    key_handovers: int = 0
    last_valid_checkpoint_seq: int | None = None
    last_checkpoint_seq: int | None = None
    records_lost: int = 0
    error_total: int = 0
    lines_total: int = 0
    records_seen: int = 0  # lines that parsed as records of this format
    segment_starts: int = 0
    hashed_right: int = 0
    not_a_log: str | None = None
    rotation_cut_short: bool = False
    on_host_anchor_missing: str | None = None

    def __post_init__(self) -> None:
        if self.key is not None:
            self.trusted, self.trusted_id = self.key, key_id_of(self.key)

    # ------------------------------------------------------------------------------- per file

    def begin_segment(self) -> SegmentState:
        """Start the next segment; the state the previous one ended in (for the link check)."""
        previous = self.segment
        self.segment = SegmentState()
        return previous

    def walk_file(self, path: Path, *, is_last: bool) -> None:
        """Check every line of one segment, reading it in bounded chunks."""
        name = str(path)
        previous_segment = self.begin_segment()
        count = 0
        torn = b""
        try:
            with path.open("rb") as handle:
                pending: list[bytes] = []  # the pieces of a line that has not ended yet
                while chunk := handle.read(_READ_CHUNK):
                    self.bytes_checked += len(chunk)
                    # Split and scan each chunk once, never copying it whole.
                    lines = chunk.split(b"\n")
                    if len(lines) == 1:  # no line ends here: a line longer than a chunk
                        pending.append(chunk)
                        continue
                    suspects = _float_suspects(chunk)
                    if pending:  # the chunk's first line continues the previous chunk's last one
                        lines[0] = b"".join((*pending, lines[0]))
                        if _float_suspects(lines[0]):
                            suspects = suspects | {0}
                    tail = lines.pop()  # an incomplete line waits for the next chunk
                    pending = [tail] if tail else []
                    first = 0
                    if count == 0 and lines:
                        self._check_line(lines[0], name, 1, previous_segment)
                        first = 1
                    count = self._check_lines(lines, first, suspects, name, count)
                torn = b"".join(pending)
        except OSError as error:
            self.unreadable.append(f"{path}: {error.strerror or error}")
            return
        self.last_file, self.last_file_lines = name, count
        self.lines_total += count + (1 if torn else 0)
        if not count and not torn:
            if is_last and active_path_of(path) == path:
                # A writer died between creating the next segment and writing its first record.
                self._warn(Reason.TORN_TAIL, name, 1, "active segment is empty: a rotation cut short")
            else:
                self._finding(Reason.MALFORMED, name, None, None, "segment file is empty")
        if torn:
            line_number = count + 1
            if is_last:
                self._warn(
                    Reason.TORN_TAIL,
                    name,
                    line_number,
                    f"last line has no newline ({len(torn)} bytes): a write cut short, e.g. by a crash;"
                    " reopening the log with the writer moves it to a side file",
                )
            else:
                self._finding(
                    Reason.MALFORMED, name, line_number, None, "line without newline inside a rotated segment"
                )
        # A rotated segment (PATH.NNNNNN) promises a successor. The active file ending in a rotation
        # checkpoint is only a writer that died before renaming it; reopening completes the rotation.
        if is_last and self.segment.ended_with_rotation and self.rotation_cut_short:
            self._warn(
                Reason.TORN_TAIL,
                name,
                count,
                f"rotation cut short: {active_path_of(path)} is this segment under its active name;"
                " the next writer to open the log installs its successor",
            )
        elif is_last and self.segment.ended_with_rotation and active_path_of(path) != path:
            self._finding(
                Reason.SEGMENT_MISSING,
                name,
                count,
                self.segment.last_seq,
                "segment ends with a rotation checkpoint but no later segment was given",
            )

    # ------------------------------------------------------------------------------- per line

    def _check_lines(
        self, lines: list[bytes], first: int, float_suspects: frozenset[int], file: str, count: int
    ) -> int:
        """Check ``lines[first:]`` (``lines[0]`` is line ``count + 1``); return the last line's number.

        The verifier's hot loop. An ordinary record that is well formed, canonical, hashes right
        and extends the chain is settled here with its state in local variables; anything else
        (a special kind, the anchor's seq, any doubt at all) goes to :meth:`_check_line`, which
        repeats every check with findings. Both paths accept exactly the same lines.
        """
        loads, dumps = orjson.loads, orjson.dumps
        decode_error, encode_error = orjson.JSONDecodeError, orjson.JSONEncodeError
        sha256, prefix = hashlib.sha256, RECORD_HASHER
        special, sort_sensitive = _WRITER_KINDS, _SORT_SENSITIVE_BYTES.search
        anchor_seq = self.anchor_seq
        after_rotation = self.segment.ended_with_rotation
        log_id, head, next_seq = self.log_id, self.head, self.next_seq
        frontier = self.frontier
        roots, size = frontier.roots, frontier.size
        settled = 0
        for index in range(first, len(lines)):
            line = lines[index]
            record: Any = None
            if head is not None and log_id is not None and not self.resync and not after_rotation:
                try:
                    record = loads(line)
                except decode_error:
                    record = None
            if type(record) is dict:
                stated, seq, v = record.get("hash"), record.get("seq"), record.get("v")
                kind, prev = record.get("kind"), record.get("prev")
                if (
                    type(seq) is int
                    and seq == next_seq
                    and seq != anchor_seq
                    and type(stated) is str
                    and len(stated) == 64
                    and prev == head
                    and prev != stated
                    and type(v) is int
                    and v == FORMAT_VERSION
                    and type(kind) is str
                    and kind not in special
                    and record.get("log_id") == log_id
                    and type(record.get("ts")) is str
                    and (line.isascii() or sort_sensitive(line) is None)
                    and (index not in float_suspects or not _contains_float(record))
                ):
                    try:
                        canonical = dumps(record, option=_ORJSON_CANONICAL) == line
                    except encode_error:
                        canonical = False
                    # In a canonical line the top-level "hash" member follows another member.
                    # Whatever member is found first, the bytes around it are hashed: if it was
                    # a nested one, the real member is still in what is hashed, which then
                    # cannot hash to its own value (as in hash_of_line); the slow path judges.
                    at = line.find(b',"hash":"') if canonical else -1
                    if at > 0 and line[at + 73 : at + 74] == b'"':
                        view = memoryview(line)
                        hasher = prefix.copy()
                        hasher.update(view[:at])
                        hasher.update(view[at + 74 :])
                        digest = hasher.digest()
                        if digest.hex() == stated:
                            # RFC 6962 frontier append (see MerkleFrontier.append), inlined.
                            node = sha256(b"\x00" + digest).digest()
                            bits = size
                            while bits & 1:
                                node = sha256(b"\x01" + roots.pop() + node).digest()
                                bits >>= 1
                            roots.append(node)
                            size += 1
                            head, next_seq = stated, seq + 1
                            settled += 1
                            continue
            # Slow path: hand over the state, let the detailed checks judge, take the state back.
            self._settle(settled, head, next_seq, size)
            settled = 0
            self._check_line(line, file, count + index + 1, None)
            after_rotation = self.segment.ended_with_rotation
            log_id, head, next_seq = self.log_id, self.head, self.next_seq
            frontier = self.frontier
            roots, size = frontier.roots, frontier.size
        self._settle(settled, head, next_seq, size)
        return count + len(lines)

    def _settle(self, settled: int, head: str | None, next_seq: int | None, size: int) -> None:
        """Write back what the hot loop of :meth:`_check_lines` proved for ``settled`` records."""
        if not settled:
            return
        self.records_checked += settled
        self.records_seen += settled
        self.hashed_right += settled
        self.records_after_anchor += settled
        self.head, self.next_seq = head, next_seq
        self.frontier.size = size
        last = next_seq - 1 if next_seq is not None else -1
        if last > self.seen_max_seq:
            self.seen_max_seq = last
        segment = self.segment
        segment.last_seq, segment.last_hash, segment.ended_with_rotation = last, head, False

    def _check_line(
        self, line: bytes, file: str, number: int, previous_segment: SegmentState | None
    ) -> None:
        """One record: a fast path proves the common case; any doubt replays the detailed checks."""
        self.records_checked += 1
        self._bad = False
        record = _self_consistent(line)
        if record is not None:
            self.hashed_right += 1
        else:
            record = self._parse(line, file, number)
            if record is not None and not self._bad:
                self.hashed_right += 1
            if record is None:
                self.records_invalid += 1
                self.records_after_anchor += 1
                self.resync = True  # seq and prev of the next record cannot be judged against this one
                return
        self.records_seen += 1
        seq: int = record["seq"]
        stated_hash: str = record["hash"]
        if self.segment.ended_with_rotation:
            self._finding(
                Reason.AFTER_ROTATION,
                file,
                number,
                seq,
                "record after its segment's rotation checkpoint: a closed segment was appended to",
            )
        if previous_segment is not None:
            self._check_segment_link(record, file, number, previous_segment)
        prev = record["prev"]
        if (
            self.resync
            or seq != self.next_seq
            or prev != self.head
            or prev == stated_hash
            or record["log_id"] != self.log_id
        ):
            self._check_chain(record, seq, stated_hash, file, number)
        kind = record["kind"]
        if kind == "checkpoint":
            self._check_checkpoint(record, line, file, number)
        elif kind == "segment_start":
            self.segment_starts += 1
            if number == 1:
                self._check_tree(record, file, number)
            else:
                self._finding(Reason.MALFORMED, file, number, seq, "segment_start record inside a segment")
        elif kind == "recovery":
            info = _mapping(record.get("recovery"))
            self.recoveries.append(
                Recovery(
                    file,
                    number,
                    seq,
                    _int_or_none(info.get("offset")),
                    _int_or_none(info.get("length")),
                    _str_or_none(info.get("sha256")),
                    _str_or_none(info.get("side_file")),
                    _str_or_none(info.get("reason")),
                )
            )
        elif kind == "key_handover":
            self._check_handover(record, file, number)
        elif kind == "records_lost":
            lost = _mapping(record.get("lost"))
            count = _int_or(lost.get("count"))
            if count > 0:
                self.records_lost += count
                self._warn(
                    Reason.RECORDS_LOST,
                    file,
                    number,
                    f"the writer reports {count} record(s) it could not write (fail-open) between"
                    f" {lost.get('first_ts')} and {lost.get('last_ts')}: {lost.get('last_error')}",
                    seq=seq,
                )
        self.frontier.append(bytes.fromhex(stated_hash))
        self.head = stated_hash
        self.next_seq = seq + 1
        if seq > self.seen_max_seq:
            self.seen_max_seq = seq
        segment = self.segment
        segment.last_seq, segment.last_hash = seq, stated_hash
        segment.ended_with_rotation = (
            kind == "checkpoint" and _mapping(record.get("checkpoint")).get("reason") == "rotation"
        )
        if seq == self.anchor_seq and self.anchor_line is None:
            self.anchor_line, self.anchor_where = line, (file, number)
        if self._bad:
            self.records_invalid += 1
            self.records_after_anchor += 1
        elif kind != "checkpoint":
            self.records_after_anchor += 1

    def _parse(self, line: bytes, file: str, number: int) -> dict[str, Any] | None:
        """Decode one line and prove it canonical and self-consistent; ``None`` if unusable."""
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            self._finding(Reason.MALFORMED, file, number, None, f"not JSON: {error}")
            return None
        if type(record) is not dict:
            self._finding(Reason.MALFORMED, file, number, None, "line is not a JSON object")
            return None
        seq = record.get("seq")
        seq_value = seq if type(seq) is int else None
        stated = record.get("hash")
        if not _is_digest(stated):
            self._finding(Reason.MALFORMED, file, number, seq_value, "missing or malformed hash field")
            return None
        for name, kind in _REQUIRED:
            if type(record.get(name)) is not kind:
                self._finding(
                    Reason.MALFORMED,
                    file,
                    number,
                    seq_value,
                    f"field {name!r} missing or not {kind.__name__}",
                )
                return None
        if record["v"] != FORMAT_VERSION:
            self._finding(Reason.MALFORMED, file, number, seq_value, f"unknown format version {record['v']}")
            return None
        if not self._is_canonical(line, record, file, number, seq_value):
            return record if self._duplicate_free(line) else None
        body = without_member(line, "hash", str(stated))
        computed = record_hash(body) if body is not None else None
        if computed != stated:
            self._finding(
                Reason.HASH_MISMATCH,
                file,
                number,
                seq_value,
                "record hash does not match its content",
                expected=computed,
                actual=stated,
            )
        return record

    def _is_canonical(
        self, line: bytes, record: dict[str, Any], file: str, number: int, seq: int | None
    ) -> bool:
        if _contains_float(record):
            self._finding(Reason.NOT_CANONICAL, file, number, seq, "floats are not allowed in records")
            return False
        try:
            if line.isascii() or not _may_need_utf16_order(line):
                canonical = orjson.dumps(record, option=_ORJSON_CANONICAL)
            else:
                canonical = canonical_bytes(record)
        except (orjson.JSONEncodeError, OutsideDomainError) as error:
            self._finding(
                Reason.NOT_CANONICAL, file, number, seq, f"value outside the record domain: {error}"
            )
            return False
        if canonical == line:
            return True
        if self._duplicate_free(line):
            self._finding(
                Reason.NOT_CANONICAL,
                file,
                number,
                seq,
                "line is not in RFC 8785 canonical form",
                expected=_excerpt(canonical, line),
                actual=_excerpt(line, canonical),
            )
        else:
            self._finding(Reason.MALFORMED, file, number, seq, "duplicate key in JSON object")
        return False

    @staticmethod
    def _duplicate_free(line: bytes) -> bool:
        def reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            keys = [key for key, _ in pairs]
            if len(keys) != len(set(keys)):
                raise ValueError("duplicate key")
            return dict(pairs)

        try:
            json.loads(line, object_pairs_hook=reject_duplicates)
        except ValueError:
            return False
        return True

    def _check_chain(
        self, record: dict[str, Any], seq: int, stated_hash: str, file: str, number: int
    ) -> None:
        log_id: str = record["log_id"]
        if self.log_id is None:
            self.log_id = log_id
            self.first_seq = seq
        elif log_id != self.log_id:
            self._finding(
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
            self._finding(
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
            self._finding(
                Reason.PREV_MISMATCH,
                file,
                number,
                seq,
                "prev does not match the previous record's hash",
                expected=expected_prev,
                actual=record["prev"],
            )
        if record["prev"] == stated_hash:
            self._finding(Reason.PREV_MISMATCH, file, number, seq, "record names itself as its predecessor")

    def _check_segment_link(
        self, record: dict[str, Any], file: str, number: int, previous: SegmentState
    ) -> None:
        seq = record["seq"]
        if record["kind"] != "segment_start":
            self._finding(
                Reason.MALFORMED, file, number, seq, "segment does not begin with a segment_start record"
            )
            return
        info = _mapping(record.get("segment"))
        index, link = info.get("index"), info.get("previous")
        if type(index) is not int:
            self._finding(Reason.MALFORMED, file, number, seq, "segment_start without an integer index")
            return
        self.segment.index = index
        expected_index = 0 if previous.index is None and self.head is None else (previous.index or 0) + 1
        link = _mapping(link)
        link_seq, link_hash = link.get("last_seq"), link.get("last_hash")
        if index != expected_index:
            missing = ", ".join(str(i) for i in range(expected_index, index)) or "?"
            self._finding(
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
                self._finding(
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
                self._finding(
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
        if type(link_seq) is int and _is_digest(link_hash):
            self.next_seq, self.head = link_seq + 1, link_hash
            self.seen_max_seq = max(self.seen_max_seq, link_seq)
            self.log_id = self.log_id or record["log_id"]
            self.frontier = _restore_frontier(_mapping(record.get("tree"))) or self.frontier

    def _check_tree(self, record: dict[str, Any], file: str, number: int) -> None:
        tree = _mapping(record.get("tree"))
        if self.head is None and tree.get("size", 0) and record["seq"] != 0:
            self.frontier = _restore_frontier(tree) or self.frontier
            return
        if tree.get("size") != self.frontier.size or tree.get("frontier") != [
            r.hex() for r in self.frontier.roots
        ]:
            self._finding(
                Reason.CHECKPOINT_MISMATCH,
                file,
                number,
                record["seq"],
                "segment_start's Merkle tree state does not match the records before it",
            )

    def _check_checkpoint(self, record: dict[str, Any], line: bytes, file: str, number: int) -> None:
        seq = record["seq"]
        body = _mapping(record.get("checkpoint"))
        problems: list[tuple[str, str | None, str | None]] = []
        expected_root = self.frontier.root().hex()
        first_seq, last_seq = body.get("first_seq"), body.get("last_seq")
        if type(first_seq) is not int or first_seq != 0 or type(last_seq) is not int or last_seq != seq - 1:
            problems.append(
                ("range does not end just before the checkpoint", str(seq - 1), str(body.get("last_seq")))
            )
        if body.get("head") != self.head:
            problems.append(("head does not match the previous record", self.head, str(body.get("head"))))
        if body.get("merkle_root") != expected_root:
            problems.append(
                ("Merkle root does not match the records", expected_root, str(body.get("merkle_root")))
            )
        if body.get("frontier") != [r.hex() for r in self.frontier.roots]:
            problems.append(("Merkle frontier does not match the records", None, None))
        for message, expected, actual in problems[:1]:
            self._finding(
                Reason.CHECKPOINT_MISMATCH,
                file,
                number,
                seq,
                f"checkpoint {message}",
                expected=expected,
                actual=actual,
            )
        if isinstance(body.get("signature"), str):
            self.checkpoints_signed += 1
        signature_ok = True
        if self.key is not None:
            signature_ok = self._signature_ok(body, record, file, number, in_log=True)
        self.last_checkpoint_seq = seq
        if problems or not signature_ok or self._bad:
            self.checkpoints_invalid += 1
            return
        self.checkpoints_valid += 1
        self.anchored_through = seq - 1
        self.last_valid_checkpoint_seq = seq
        self.records_after_anchor = 0

    def _signature_ok(
        self, body: Mapping[str, Any], record: dict[str, Any], file: str, number: int, *, in_log: bool
    ) -> bool:
        """Whether a checkpoint is validly signed by the key in force; a finding says why not."""
        assert self.trusted is not None and self.trusted_id is not None
        seq = record["seq"]
        signature, stated_key = body.get("signature"), body.get("key_id")
        if not isinstance(signature, str) or stated_key is None:
            self._finding(
                Reason.UNSIGNED_CHECKPOINT,
                file,
                number,
                seq,
                "checkpoint carries no signature, in a log verified with a key",
                expected=self.trusted_id,
                actual=str(stated_key),
            )
            return False
        if stated_key != self.trusted_id:
            if self.signed_seen and in_log:
                self._finding(
                    Reason.KEY_CHANGE,
                    file,
                    number,
                    seq,
                    f"checkpoint signed by {stated_key}, but the log was signed by {self.trusted_id}"
                    " and no signed key_handover names the new key",
                    expected=self.trusted_id,
                    actual=str(stated_key),
                )
            else:
                self._finding(
                    Reason.CHECKPOINT_SIGNATURE,
                    file,
                    number,
                    seq,
                    "checkpoint is not signed by the given key",
                    expected=self.trusted_id,
                    actual=str(stated_key),
                )
            return False
        statement = CheckpointStatement(
            log_id=str(record["log_id"]),
            first_seq=_int_or(body.get("first_seq")),
            last_seq=_int_or(body.get("last_seq")),
            head=str(body.get("head")),
            merkle_root=str(body.get("merkle_root")),
            key_id=self.trusted_id,
        )
        if not signature_is_valid(self.trusted, statement, signature):
            self._finding(Reason.CHECKPOINT_SIGNATURE, file, number, seq, "checkpoint signature is invalid")
            return False
        if in_log:
            self.signed_seen = True
        return True

    def _check_handover(self, record: dict[str, Any], file: str, number: int) -> None:
        """A change of signing key: followed when the key in force signed it (and the new key
        countersigned), a ``KEY_CHANGE`` when it is unsigned or signed by a key not in force."""
        self.key_handovers += 1
        if self.trusted is None:
            return
        seq = record["seq"]
        body = _mapping(record.get("handover"))
        to_key = public_key_from_hex(body.get("to_public_key"))
        from_id, to_id = body.get("from_key_id"), body.get("to_key_id")
        statement = HandoverStatement(
            log_id=str(record["log_id"]),
            seq=seq,
            prev=str(record["prev"]),
            from_key_id=str(from_id),
            from_public_key=_str_or_none(body.get("from_public_key")),
            to_key_id=str(to_id),
            to_public_key=str(body.get("to_public_key")),
        ).to_bytes()
        problem = None
        if from_id != self.trusted_id:
            problem = f"hand-over from {from_id}, which is not the key in force ({self.trusted_id})"
        elif not bytes_signature_is_valid(self.trusted, statement, body.get("from_signature")):
            problem = "hand-over is not signed by the key in force: a key change without a signed hand-over"
        elif to_key is None or key_id_of(to_key) != to_id:
            problem = "hand-over names a new key whose id does not match its public key"
        elif not bytes_signature_is_valid(to_key, statement, body.get("to_signature")):
            problem = "hand-over is not countersigned by the new key"
        if problem is not None:
            self._finding(
                Reason.KEY_CHANGE, file, number, seq, problem, expected=self.trusted_id, actual=str(to_id)
            )
            return
        assert to_key is not None
        self.trusted, self.trusted_id = to_key, key_id_of(to_key)

    def judge_not_a_log(self) -> None:
        """Once every line is read: whether the input is an audit log at all."""
        if self.lines_total == 0:
            self.not_a_log = "the input holds no line at all (an empty file)"
        elif self.records_seen == 0:
            self.not_a_log = "no line is an audit record (not JSON lines of this format)"
        elif self.segment_starts == 0 and self.hashed_right == 0:
            self.not_a_log = "no segment_start and no line that hashes like an audit record"

    def judge_signatures(self) -> None:
        """Once every line is read, with a key: is every record covered by a signed checkpoint?"""
        if self.not_a_log or self.key is None:
            return
        first_file = self.last_file
        if self.last_valid_checkpoint_seq is None:
            self._finding(
                Reason.UNSIGNED,
                first_file,
                None,
                self.first_seq,
                f"no valid checkpoint signed by {key_id_of(self.key)} covers any of the"
                f" {self.records_checked} records: nothing proves who wrote them",
            )
        elif self.records_after_anchor:
            first = self.last_valid_checkpoint_seq + 1
            message = (
                f"{self.records_after_anchor} record(s) from seq {first} come after the last signed"
                f" checkpoint (seq {self.last_valid_checkpoint_seq}): nothing proves who wrote them"
            )
            if self.live:
                self._warn(Reason.UNSIGNED_TAIL, self.last_file, None, message + " (--live)", seq=first)
            else:
                self._finding(
                    Reason.UNSIGNED_TAIL,
                    self.last_file,
                    None,
                    first,
                    message + "; pass --live if the log is still being written",
                    expected="0",
                    actual=str(self.records_after_anchor),
                )

    def judge_missing_anchor(self) -> None:
        """A log with checkpoints whose writer exported no ``PATH.anchor`` (or it was deleted)."""
        if self.on_host_anchor_missing and self.last_checkpoint_seq is not None and not self.not_a_log:
            self._anchor_problem(
                Reason.ANCHOR_MISSING,
                self.on_host_anchor_missing,
                None,
                "the on-host anchor is missing: a cut tail or a rollback would go unseen",
            )

    # ------------------------------------------------------------------------------- anchor

    def read_anchor(self, path: Path) -> bytes | None:
        """The anchor file's bytes (noting which seq to keep while walking), or None if unreadable."""
        try:
            data = path.read_bytes()
        except OSError as error:
            self.unreadable.append(f"{path}: {error.strerror or error}")
            return None
        self.anchor_seq = _peek_seq(data)
        return data

    def _anchor_problem(self, reason: Reason, file: str, seq: int | None, message: str) -> None:
        """On-host anchor findings fail with a key and warn without one. A live log's anchor
        missing or stale is a warning too: the writer exports it only once an fsync covers the
        checkpoint, so it lags a log still being written (or killed)."""
        if self.key is not None and not (self.live and reason is not Reason.ANCHOR_FOREIGN):
            self._finding(reason, file, 1, seq, message)
        else:
            self._warn(reason, file, 1, message, seq=seq)

    def check_anchor(self, path: Path, data: bytes, *, on_host: bool = False) -> None:
        """Compare the log with an exported checkpoint line (``on_host``: the writer's own
        ``PATH.anchor``; otherwise a copy kept off the host)."""
        if self.not_a_log:
            return
        name = str(path)
        line = data[:-1] if data.endswith(b"\n") else data
        probe = _ChainWalker(None)
        record = probe._parse(line, name, 1)
        if record is None or probe.errors or record.get("kind") != "checkpoint":
            self._finding(
                Reason.MALFORMED, name, 1, None, "anchor file does not hold one valid checkpoint record"
            )
            return
        seq: int = record["seq"]
        if record["log_id"] != self.log_id:
            self._finding(
                Reason.ANCHOR_FOREIGN,
                name,
                1,
                seq,
                "anchor belongs to another log",
                expected=self.log_id,
                actual=record["log_id"],
            )
            return
        if self.trusted is not None and not self._signature_ok(
            _mapping(record.get("checkpoint")), record, name, 1, in_log=False
        ):
            return
        if on_host and self.last_checkpoint_seq is not None and seq < self.last_checkpoint_seq:
            self._anchor_problem(
                Reason.ANCHOR_STALE,
                name,
                seq,
                f"the on-host anchor is checkpoint seq {seq}, older than the log's last checkpoint"
                f" (seq {self.last_checkpoint_seq}): it no longer proves where the log ends",
            )
        if seq > self.seen_max_seq:
            # Reported where the missing records should start: the end of the last segment.
            self._finding(
                Reason.TRUNCATED,
                self.last_file or name,
                self.last_file_lines + 1,
                self.seen_max_seq + 1,
                f"log ends at seq {self.seen_max_seq}, but the anchor {name} proves it reached seq {seq}",
                expected=str(seq),
                actual=str(self.seen_max_seq),
            )
        elif self.anchor_line != line:
            file, number = self.anchor_where or (name, 1)
            self._finding(
                Reason.CHECKPOINT_MISMATCH,
                file,
                number,
                seq,
                f"record differs from the checkpoint exported to {name}",
            )

    # ------------------------------------------------------------------------------- findings

    def _finding(
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
        self._bad = True
        self.error_total += 1
        self.counts[reason.value] += 1
        if len(self.errors) < MAX_FINDINGS:
            self.errors.append(Finding(reason, file, line, seq, message, expected, actual))

    def _warn(
        self, reason: Reason, file: str, line: int | None, message: str, *, seq: int | None = None
    ) -> None:
        self.counts[reason.value] += 1
        self.warnings.append(Finding(reason, file, line, seq, message))

    def report(self, files: list[str], anchor: str | None, anchor_kind: str | None) -> VerificationReport:
        invalid = self.records_invalid
        return VerificationReport(
            files=tuple(files),
            log_id=self.log_id,
            records_checked=self.records_checked,
            records_valid=self.records_checked - invalid,
            records_invalid=invalid,
            checkpoints_valid=self.checkpoints_valid,
            checkpoints_invalid=self.checkpoints_invalid,
            signature_mode="signature-verified" if self.key is not None else "unsigned-verified",
            key_id=key_id_of(self.key) if self.key is not None else None,
            first_seq=self.first_seq,
            last_seq=self.seen_max_seq if self.seen_max_seq >= 0 else None,
            anchored_through=self.anchored_through,
            unanchored_records=self.records_after_anchor,
            recoveries=tuple(self.recoveries),
            bytes_checked=self.bytes_checked,
            errors=tuple(self.errors),
            warnings=tuple(self.warnings),
            reason_counts=dict(self.counts),
            unreadable=tuple(self.unreadable),
            anchor_file=anchor,
            not_a_log=self.not_a_log,
            live=self.live,
            unsigned_tail=self._unsigned_tail(),
            checkpoints_signed=self.checkpoints_signed,
            key_handovers=self.key_handovers,
            records_lost=self.records_lost,
            anchor_kind=anchor_kind,
            error_total=self.error_total,
        )

    def _unsigned_tail(self) -> UnsignedTail | None:
        if self.key is None or self.not_a_log or not self.records_checked:
            return None
        if self.last_valid_checkpoint_seq is None:
            return UnsignedTail(self.records_checked, self.first_seq)
        if not self.records_after_anchor:
            return None
        return UnsignedTail(self.records_after_anchor, self.last_valid_checkpoint_seq + 1)


def _self_consistent(line: bytes) -> dict[str, Any] | None:
    """The record if ``line`` is well formed, canonical, in the domain and hashes right; else None.

    The verifier's hot path: no findings are built here. ``None`` sends the line through the
    detailed checks, which name what is wrong.
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict:
        return None
    stated = record.get("hash")
    if (
        type(stated) is not str
        or len(stated) != 64
        or type(record.get("v")) is not int
        or record["v"] != FORMAT_VERSION
        or type(record.get("seq")) is not int
        or type(record.get("prev")) is not str
        or type(record.get("kind")) is not str
        or type(record.get("log_id")) is not str
        or type(record.get("ts")) is not str
        or _contains_float(record)
        or (not line.isascii() and _SORT_SENSITIVE_BYTES.search(line) is not None)
    ):
        return None
    try:
        if orjson.dumps(record, option=_ORJSON_CANONICAL) != line:
            return None
    except orjson.JSONEncodeError:
        return None
    if hash_of_line(line, stated) != stated:
        return None
    return record


def _peek_seq(data: bytes) -> int | None:
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    seq = record.get("seq") if isinstance(record, dict) else None
    return seq if type(seq) is int else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int_or(value: Any) -> int:
    return value if type(value) is int else -1


def _is_digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


def _restore_frontier(tree: Mapping[str, Any]) -> MerkleFrontier | None:
    try:
        return MerkleFrontier.restore(int(tree["size"]), [bytes.fromhex(h) for h in tree["frontier"]])
    except (KeyError, TypeError, ValueError):
        return None


def _float_suspects(buffer: bytes) -> frozenset[int]:
    """Indices of the lines of ``buffer`` that may hold a float; only those need the float walk.

    orjson renders every finite float as ``D.D``, ``D.De+D``, ``D.De-D``, ``De+D`` or ``De-D``
    (``D`` a run of digits; tested), and in a canonical line a number ends at ``,``, ``}`` or
    ``]``. So a canonical line whose parsed record holds a float contains one of the tails matched
    here; a non-canonical line is rejected by the byte comparison whatever it holds. A string that
    merely looks like a float's tail (``"v1.5,"``) costs its line the walk, never a wrong verdict.
    Scanning a whole chunk at C speed is what makes this cheaper than walking every record.
    """
    patterns = _FLOAT_TAILS if b"+" not in buffer else (*_FLOAT_TAILS, _FLOAT_POSITIVE_EXPONENT_TAIL)
    hits = [match.start() for pattern in patterns for match in pattern.finditer(buffer)]
    if not hits:
        return frozenset()
    lines: set[int] = set()
    line = last = 0
    for at in sorted(hits):
        line += buffer.count(b"\n", last, at)
        last = at
        lines.add(line)
    return frozenset(lines)


def _contains_float(value: Any) -> bool:
    """Floats hide inside containers only; a lean walk over what JSON parsing can produce."""
    items = value.values() if type(value) is dict else value
    for item in items:
        kind = type(item)
        if kind is float:
            return True
        if (kind is dict or kind is list) and _contains_float(item):
            return True
    return False


def _may_need_utf16_order(line: bytes) -> bool:
    # UTF-8 lead bytes 0xEE-0xF4 start characters >= U+E000, where code point and UTF-16 order differ.
    return _SORT_SENSITIVE_BYTES.search(line) is not None


def _excerpt(text: bytes, other: bytes, width: int = 40) -> str:
    """The part of ``text`` around the first byte where it differs from ``other``."""
    at = next(
        (i for i, (a, b) in enumerate(zip(text, other, strict=False)) if a != b), min(len(text), len(other))
    )
    start = max(0, at - width // 2)
    return text[start : start + width].decode("utf-8", "replace")
