"""The verification report: what an auditor reads, the one-word verdict, and its JSON form.

The walk (:mod:`.walker`) fills it in; this module only says what the figures mean. Verdict
wording and the JSON layout change here (the text rendering is :mod:`..cli`'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from .findings import Finding, Reason


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
    #: ``hook_told`` records: a hook told the agent something other than the decision its gateway
    #: recorded (a safe answer after a lost, late or broken answer). Not an integrity finding.
    hook_told: int = 0

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
            "hook_told": self.hook_told,
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
