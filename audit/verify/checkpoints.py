"""Checkpoints and signatures: each checkpoint against the records it covers, each signature
against the key in force (the given key, then any key it handed over to), and whether every
record is covered by a signed checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..checkpoint import CheckpointStatement, HandoverStatement, bytes_signature_is_valid, signature_is_valid
from ..keys import key_id as key_id_of
from ..keys import public_key_from_hex
from .chain import Chain
from .findings import Findings, Reason
from .records import int_or, mapping, str_or_none
from .tally import Tally


class Checkpoints:
    """Checks checkpoints and key hand-overs in log order; keeps what the report says of them."""

    __slots__ = (
        "_chain",
        "_findings",
        "_tally",
        "anchored_through",
        "checkpoints_invalid",
        "checkpoints_signed",
        "checkpoints_valid",
        "key",
        "key_handovers",
        "last_checkpoint_seq",
        "last_valid_checkpoint_seq",
        "signed_seen",
        "trusted",
        "trusted_id",
    )

    def __init__(self, key: Ed25519PublicKey | None, chain: Chain, findings: Findings, tally: Tally) -> None:
        self.key = key
        self._chain = chain
        self._findings = findings
        self._tally = tally
        self.checkpoints_valid = 0
        self.checkpoints_invalid = 0
        self.checkpoints_signed = 0
        self.key_handovers = 0
        self.anchored_through: int | None = None
        self.last_valid_checkpoint_seq: int | None = None
        self.last_checkpoint_seq: int | None = None
        # Strict verification state: the key in force (the given one, then any it handed over to).
        self.trusted: Ed25519PublicKey | None = None
        self.trusted_id: str | None = None
        self.signed_seen = False
        if key is not None:
            self.trusted, self.trusted_id = key, key_id_of(key)

    def check(self, record: dict[str, Any], file: str, number: int) -> None:
        """A checkpoint against the records before it and, with a key, its signature; a valid one
        anchors every record before it."""
        chain = self._chain
        seq = record["seq"]
        body = mapping(record.get("checkpoint"))
        problems: list[tuple[str, str | None, str | None]] = []
        expected_root = chain.frontier.root().hex()
        first_seq, last_seq = body.get("first_seq"), body.get("last_seq")
        if type(first_seq) is not int or first_seq != 0 or type(last_seq) is not int or last_seq != seq - 1:
            problems.append(
                ("range does not end just before the checkpoint", str(seq - 1), str(body.get("last_seq")))
            )
        if body.get("head") != chain.head:
            problems.append(("head does not match the previous record", chain.head, str(body.get("head"))))
        if body.get("merkle_root") != expected_root:
            problems.append(
                ("Merkle root does not match the records", expected_root, str(body.get("merkle_root")))
            )
        if body.get("frontier") != [r.hex() for r in chain.frontier.roots]:
            problems.append(("Merkle frontier does not match the records", None, None))
        for message, expected, actual in problems[:1]:
            self._findings.error(
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
            signature_ok = self.signature_ok(body, record, file, number, in_log=True)
        self.last_checkpoint_seq = seq
        if problems or not signature_ok or self._findings.bad:
            self.checkpoints_invalid += 1
            return
        self.checkpoints_valid += 1
        self.anchored_through = seq - 1
        self.last_valid_checkpoint_seq = seq
        self._tally.records_after_anchor = 0

    def signature_ok(
        self, body: Mapping[str, Any], record: dict[str, Any], file: str, number: int, *, in_log: bool
    ) -> bool:
        """Whether a checkpoint is validly signed by the key in force; a finding says why not."""
        assert self.trusted is not None and self.trusted_id is not None
        seq = record["seq"]
        signature, stated_key = body.get("signature"), body.get("key_id")
        if not isinstance(signature, str) or stated_key is None:
            self._findings.error(
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
                self._findings.error(
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
                self._findings.error(
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
            first_seq=int_or(body.get("first_seq")),
            last_seq=int_or(body.get("last_seq")),
            head=str(body.get("head")),
            merkle_root=str(body.get("merkle_root")),
            key_id=self.trusted_id,
        )
        if not signature_is_valid(self.trusted, statement, signature):
            self._findings.error(
                Reason.CHECKPOINT_SIGNATURE, file, number, seq, "checkpoint signature is invalid"
            )
            return False
        if in_log:
            self.signed_seen = True
        return True

    def check_handover(self, record: dict[str, Any], file: str, number: int) -> None:
        """A change of signing key: followed when the key in force signed it (and the new key
        countersigned), a ``KEY_CHANGE`` when it is unsigned or signed by a key not in force."""
        self.key_handovers += 1
        if self.trusted is None:
            return
        seq = record["seq"]
        body = mapping(record.get("handover"))
        to_key = public_key_from_hex(body.get("to_public_key"))
        from_id, to_id = body.get("from_key_id"), body.get("to_key_id")
        statement = HandoverStatement(
            log_id=str(record["log_id"]),
            seq=seq,
            prev=str(record["prev"]),
            from_key_id=str(from_id),
            from_public_key=str_or_none(body.get("from_public_key")),
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
            self._findings.error(
                Reason.KEY_CHANGE, file, number, seq, problem, expected=self.trusted_id, actual=str(to_id)
            )
            return
        assert to_key is not None
        self.trusted, self.trusted_id = to_key, key_id_of(to_key)

    def judge(self, *, last_file: str, live: bool) -> None:
        """Once every line is read, with a key: is every record covered by a signed checkpoint?
        (``last_file``: where the findings about the whole log are reported.)"""
        if self.key is None:
            return
        if self.last_valid_checkpoint_seq is None:
            self._findings.error(
                Reason.UNSIGNED,
                last_file,
                None,
                self._chain.first_seq,
                f"no valid checkpoint signed by {key_id_of(self.key)} covers any of the"
                f" {self._tally.records_checked} records: nothing proves who wrote them",
            )
        elif self._tally.records_after_anchor:
            first = self.last_valid_checkpoint_seq + 1
            message = (
                f"{self._tally.records_after_anchor} record(s) from seq {first} come after the last signed"
                f" checkpoint (seq {self.last_valid_checkpoint_seq}): nothing proves who wrote them"
            )
            if live:
                self._findings.warn(Reason.UNSIGNED_TAIL, last_file, None, message + " (--live)", seq=first)
            else:
                self._findings.error(
                    Reason.UNSIGNED_TAIL,
                    last_file,
                    None,
                    first,
                    message + "; pass --live if the log is still being written",
                    expected="0",
                    actual=str(self._tally.records_after_anchor),
                )
