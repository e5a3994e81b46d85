"""The walk: every line of every segment, in log order, through each phase's checks.

:class:`ChainWalker` owns the order of things and composes one object per phase: reading lines
(:mod:`.lines`), the fast path (:mod:`.fast_path`), one record (:mod:`.records`), the chain
(:mod:`.chain`), checkpoints and signatures (:mod:`.checkpoints`) and the anchor
(:mod:`.anchors`). Findings go to one collector (:mod:`.findings`) and counts to one
:class:`~.tally.Tally`; :meth:`ChainWalker.report` turns them into the report.
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..keys import key_id as key_id_of
from ..segments import active_path_of
from .anchors import Anchor
from .chain import Chain, SegmentState
from .checkpoints import Checkpoints
from .fast_path import FastPath
from .fast_path_v2 import FastPathV2
from .findings import Findings, Reason
from .lines import SegmentLines
from .records import int_or, int_or_none, mapping, parse_record, self_consistent, str_or_none
from .report import Recovery, UnsignedTail, VerificationReport
from .tally import Tally


class ChainWalker:
    """Walks records in log order keeping the expected chain state; records findings as it goes."""

    def __init__(self, key: Ed25519PublicKey | None, *, live: bool = False) -> None:
        self.key = key
        self.live = live
        self.findings = findings = Findings()
        self.tally = tally = Tally()
        self.chain = chain = Chain(findings)
        self.checkpoints = Checkpoints(key, chain, findings, tally)
        self.anchor = Anchor(key, live=live, chain=chain, checkpoints=self.checkpoints, findings=findings)
        self._fast_path = FastPath(chain, tally, self.anchor, self.check_line)
        self._fast_path_v2 = FastPathV2(chain, tally, self.anchor, self.check_line)
        self.recoveries: list[Recovery] = []
        self.unreadable: list[str] = []
        self.records_lost = 0
        #: ``hook_told`` records: the agent was told a safe answer, not the decision recorded.
        self.hook_told = 0
        self.last_file = ""
        self.last_file_lines = 0
        self.last_torn = b""
        self.not_a_log: str | None = None
        #: The last segment is the full one under its active name too (a rotation cut short).
        self.rotation_cut_short = False

    # ------------------------------------------------------------------------------- per file

    def walk_file(
        self, path: Path, *, is_last: bool, first_line_done: bool = False, data: bytes | None = None
    ) -> None:
        """Check every line of one segment, reading it in bounded chunks. ``first_line_done``: the
        segment was begun and its first line checked already (:mod:`.parallel`). ``data``: the
        segment's bytes, already in memory (``path`` only names it)."""
        name = str(path)
        previous_segment = None if first_line_done else self.chain.begin_segment()
        count = 0
        reader = SegmentLines(path, data)
        try:
            version = reader.bytes_format()  # the segment's format, as its first line says
            if version:  # formats 2 and 3: their own hot loop
                self._fast_path_v2.use_format(version)
                for lines in reader.line_lists():
                    first = 0
                    if count == 0:
                        if not first_line_done:
                            self.check_line(lines[0][:-1], name, 1, previous_segment)
                        first = 1
                    count = self._fast_path_v2.check_lines(lines, first, name, count)
            else:
                for lines, suspects in reader.batches():
                    first = 0
                    if count == 0 and lines:
                        if not first_line_done:
                            self.check_line(lines[0], name, 1, previous_segment)
                        first = 1
                    count = self._fast_path.check_lines(lines, first, suspects, name, count)
        except OSError as error:
            self.unreadable.append(f"{path}: {error.strerror or error}")
            return
        finally:
            self.tally.bytes_checked += reader.bytes_read
        self.end_file(path, name, count, reader.torn, is_last=is_last)

    def end_file(self, path: Path, name: str, count: int, torn: bytes, *, is_last: bool) -> None:
        """What a segment's end says: an empty file, a torn last line, a rotation without successor."""
        self.last_file, self.last_file_lines, self.last_torn = name, count, torn
        self.tally.lines_total += count + (1 if torn else 0)
        findings, segment = self.findings, self.chain.segment
        if not count and not torn:
            if is_last and active_path_of(path) == path:
                # A writer died between creating the next segment and writing its first record.
                findings.warn(Reason.TORN_TAIL, name, 1, "active segment is empty: a rotation cut short")
            else:
                findings.error(Reason.MALFORMED, name, None, None, "segment file is empty")
        if torn:
            line_number = count + 1
            if is_last:
                findings.warn(
                    Reason.TORN_TAIL,
                    name,
                    line_number,
                    f"last line has no newline ({len(torn)} bytes): a write cut short, e.g. by a crash;"
                    " reopening the log with the writer moves it to a side file",
                )
            else:
                findings.error(
                    Reason.MALFORMED, name, line_number, None, "line without newline inside a rotated segment"
                )
        # A rotated segment (PATH.NNNNNN) promises a successor. The active file ending in a rotation
        # checkpoint is only a writer that died before renaming it; reopening completes the rotation.
        if is_last and segment.ended_with_rotation and self.rotation_cut_short:
            findings.warn(
                Reason.TORN_TAIL,
                name,
                count,
                f"rotation cut short: {active_path_of(path)} is this segment under its active name;"
                " the next writer to open the log installs its successor",
            )
        elif is_last and segment.ended_with_rotation and active_path_of(path) != path:
            findings.error(
                Reason.SEGMENT_MISSING,
                name,
                count,
                segment.last_seq,
                "segment ends with a rotation checkpoint but no later segment was given",
            )

    # ------------------------------------------------------------------------------- per line

    def check_line(self, line: bytes, file: str, number: int, previous_segment: SegmentState | None) -> None:
        """One record (the slow path): a self-consistency check proves the common case; any doubt
        replays the detailed checks, which name what is wrong. ``previous_segment``: the state the
        previous segment ended in, for a segment's first record."""
        tally, chain, findings = self.tally, self.chain, self.findings
        tally.records_checked += 1
        findings.bad = False
        record = self_consistent(line)
        if record is not None:
            tally.hashed_right += 1
        else:
            record = parse_record(line, file, number, findings)
            if record is not None and not findings.bad:
                tally.hashed_right += 1
            if record is None:
                tally.records_invalid += 1
                tally.records_after_anchor += 1
                chain.resync = True  # seq and prev of the next record cannot be judged against this one
                return
        tally.records_seen += 1
        seq: int = record["seq"]
        stated_hash: str = record["hash"]
        if chain.segment.ended_with_rotation:
            findings.error(
                Reason.AFTER_ROTATION,
                file,
                number,
                seq,
                "record after its segment's rotation checkpoint: a closed segment was appended to",
            )
        if previous_segment is not None:
            chain.check_segment_link(record, file, number, previous_segment)
        if not chain.extends(record, seq, stated_hash):
            chain.check_links(record, seq, stated_hash, file, number)
        kind = record["kind"]
        if kind == "checkpoint":
            self.checkpoints.check(record, file, number)
        elif kind == "segment_start":
            tally.segment_starts += 1
            if number == 1:
                chain.check_tree(record, file, number)
            else:
                findings.error(Reason.MALFORMED, file, number, seq, "segment_start record inside a segment")
        elif kind == "recovery":
            self._note_recovery(record, file, number, seq)
        elif kind == "key_handover":
            self.checkpoints.check_handover(record, file, number)
        elif kind == "records_lost":
            self._note_records_lost(record, file, number, seq)
        elif kind == "hook_told":
            self.hook_told += 1
        chain.advance(
            seq,
            stated_hash,
            record["v"],
            ends_with_rotation=kind == "checkpoint"
            and mapping(record.get("checkpoint")).get("reason") == "rotation",
        )
        self.anchor.note(seq, line, file, number)
        if findings.bad:
            tally.records_invalid += 1
            tally.records_after_anchor += 1
        elif kind != "checkpoint":
            tally.records_after_anchor += 1

    def _note_recovery(self, record: dict[str, object], file: str, number: int, seq: int) -> None:
        """A repair the writer made on reopening, for the report."""
        info = mapping(record.get("recovery"))
        self.recoveries.append(
            Recovery(
                file,
                number,
                seq,
                int_or_none(info.get("offset")),
                int_or_none(info.get("length")),
                str_or_none(info.get("sha256")),
                str_or_none(info.get("side_file")),
                str_or_none(info.get("reason")),
            )
        )

    def _note_records_lost(self, record: dict[str, object], file: str, number: int, seq: int) -> None:
        """Records a fail-open writer reports it could not write: a warning, never a failure."""
        lost = mapping(record.get("lost"))
        count = int_or(lost.get("count"))
        if count > 0:
            self.records_lost += count
            self.findings.warn(
                Reason.RECORDS_LOST,
                file,
                number,
                f"the writer reports {count} record(s) it could not write (fail-open) between"
                f" {lost.get('first_ts')} and {lost.get('last_ts')}: {lost.get('last_error')}",
                seq=seq,
            )

    # ------------------------------------------------------------------------ once all is read

    def judge_not_a_log(self) -> None:
        """Once every line is read: whether the input is an audit log at all."""
        tally = self.tally
        if tally.lines_total == 0:
            self.not_a_log = "the input holds no line at all (an empty file)"
        elif tally.records_seen == 0:
            self.not_a_log = "no line is an audit record (not JSON lines of this format)"
        elif tally.segment_starts == 0 and tally.hashed_right == 0:
            self.not_a_log = "no segment_start and no line that hashes like an audit record"

    def check_anchor(self, path: Path, data: bytes, *, on_host: bool = False) -> None:
        """Compare the log with an exported checkpoint line (see :meth:`.anchors.Anchor.check`)."""
        if self.not_a_log:
            return
        self.anchor.check(
            path, data, on_host=on_host, last_file=self.last_file, last_file_lines=self.last_file_lines
        )

    def judge_signatures(self) -> None:
        """With a key: is every record covered by a signed checkpoint?"""
        if self.not_a_log:
            return
        self.checkpoints.judge(last_file=self.last_file, live=self.live)

    def judge_missing_anchor(self) -> None:
        """A log with checkpoints whose writer exported no ``PATH.anchor`` (or it was deleted)."""
        if not self.not_a_log:
            self.anchor.judge_missing()

    def report(
        self,
        files: list[str],
        anchor: str | None,
        anchor_kind: str | None,
        anchor_found_by: str | None = None,
    ) -> VerificationReport:
        """The report of everything walked and judged so far."""
        tally, chain, checkpoints, findings = self.tally, self.chain, self.checkpoints, self.findings
        invalid = tally.records_invalid
        return VerificationReport(
            files=tuple(files),
            log_id=chain.log_id,
            records_checked=tally.records_checked,
            records_valid=tally.records_checked - invalid,
            records_invalid=invalid,
            checkpoints_valid=checkpoints.checkpoints_valid,
            checkpoints_invalid=checkpoints.checkpoints_invalid,
            signature_mode="signature-verified" if self.key is not None else "unsigned-verified",
            key_id=key_id_of(self.key) if self.key is not None else None,
            first_seq=chain.first_seq,
            last_seq=chain.seen_max_seq if chain.seen_max_seq >= 0 else None,
            anchored_through=checkpoints.anchored_through,
            unanchored_records=tally.records_after_anchor,
            recoveries=tuple(self.recoveries),
            bytes_checked=tally.bytes_checked,
            errors=tuple(findings.errors),
            warnings=tuple(findings.warnings),
            reason_counts=dict(findings.counts),
            unreadable=tuple(self.unreadable),
            anchor_file=anchor,
            not_a_log=self.not_a_log,
            live=self.live,
            unsigned_tail=self._unsigned_tail(),
            checkpoints_signed=checkpoints.checkpoints_signed,
            key_handovers=checkpoints.key_handovers,
            records_lost=self.records_lost,
            hook_told=self.hook_told,
            anchor_kind=anchor_kind,
            anchor_found_by=anchor_found_by,
            require_anchor=self.anchor.require,
            error_total=findings.error_total,
        )

    def _unsigned_tail(self) -> UnsignedTail | None:
        tally, last_valid = self.tally, self.checkpoints.last_valid_checkpoint_seq
        if self.key is None or self.not_a_log or not tally.records_checked:
            return None
        if last_valid is None:
            return UnsignedTail(tally.records_checked, self.chain.first_seq)
        if not tally.records_after_anchor:
            return None
        return UnsignedTail(tally.records_after_anchor, last_valid + 1)
