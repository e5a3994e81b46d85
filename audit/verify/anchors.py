"""Anchors: an exported checkpoint line (``PATH.anchor`` on the host, or a copy kept off it)
proves how far the log reached, so a cut tail or a rollback shows.

The anchor is read before the log (a writer still running may export a newer one meanwhile), and
the record at its seq is remembered while walking, to compare once every line is read.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .anchor_lookup import read_regular
from .chain import Chain
from .checkpoints import Checkpoints
from .findings import Findings, Reason
from .records import mapping, parse_record


class Anchor:
    """The anchor given or found, the log's record at its seq, and the checks between them."""

    __slots__ = (
        "_chain",
        "_checkpoints",
        "_findings",
        "_key",
        "_live",
        "line",
        "none_supplied",
        "on_host_missing",
        "require",
        "seq",
        "where",
    )

    def __init__(
        self,
        key: Ed25519PublicKey | None,
        *,
        live: bool,
        chain: Chain,
        checkpoints: Checkpoints,
        findings: Findings,
    ) -> None:
        self._key = key
        self._live = live
        self._chain = chain
        self._checkpoints = checkpoints
        self._findings = findings
        self.seq: int | None = None  #: the anchor's seq: the walk keeps the log's record at it
        self.line: bytes | None = None
        self.where: tuple[str, int] | None = None  # (file, line number) of that record
        #: Where the on-host anchor was looked for when no anchor was given or found.
        self.on_host_missing: str | None = None
        #: No anchor was given or found: nothing shows a cut tail (see :meth:`judge_missing`).
        self.none_supplied = False
        #: ``--require-anchor``: a log verified without an anchor fails.
        self.require = False

    def read(self, path: Path, unreadable: list[str]) -> bytes | None:
        """The anchor file's bytes (noting which seq to keep while walking), or None if unreadable
        (or not a regular file: a FIFO given as the anchor would block the read forever)."""
        try:
            data = read_regular(path)
        except OSError as error:
            unreadable.append(f"{path}: {error.strerror or error}")
            return None
        self.seq = _peek_seq(data)
        return data

    def note(self, seq: int, line: bytes, file: str, number: int) -> None:
        """While walking: keep the log's first record at the anchor's seq."""
        if seq == self.seq and self.line is None:
            self.line, self.where = line, (file, number)

    def _problem(self, reason: Reason, file: str, seq: int | None, message: str) -> None:
        """On-host anchor findings fail with a key and warn without one. A live log's anchor
        missing or stale is a warning too: the writer exports it only once an fsync covers the
        checkpoint, so it lags a log still being written (or killed)."""
        if self._key is not None and not (self._live and reason is not Reason.ANCHOR_FOREIGN):
            self._findings.error(reason, file, 1, seq, message)
        else:
            self._findings.warn(reason, file, 1, message, seq=seq)

    def check(self, path: Path, data: bytes, *, on_host: bool, last_file: str, last_file_lines: int) -> None:
        """Compare the log with an exported checkpoint line (``on_host``: the writer's own
        ``PATH.anchor``; otherwise a copy kept off the host). A cut tail is reported where the
        missing records should start: after line ``last_file_lines`` of ``last_file``."""
        name = str(path)
        line = data[:-1] if data.endswith(b"\n") else data
        probe = Findings()
        record = parse_record(line, name, 1, probe)
        if record is None or probe.errors or record.get("kind") != "checkpoint":
            self._findings.error(
                Reason.MALFORMED, name, 1, None, "anchor file does not hold one valid checkpoint record"
            )
            return
        seq: int = record["seq"]
        if record["log_id"] != self._chain.log_id:
            self._findings.error(
                Reason.ANCHOR_FOREIGN,
                name,
                1,
                seq,
                "anchor belongs to another log",
                expected=self._chain.log_id,
                actual=record["log_id"],
            )
            return
        checkpoints = self._checkpoints
        if checkpoints.trusted is not None and not checkpoints.signature_ok(
            mapping(record.get("checkpoint")), record, name, 1, in_log=False
        ):
            return
        if on_host and checkpoints.last_checkpoint_seq is not None and seq < checkpoints.last_checkpoint_seq:
            self._problem(
                Reason.ANCHOR_STALE,
                name,
                seq,
                f"the on-host anchor is checkpoint seq {seq}, older than the log's last checkpoint"
                f" (seq {checkpoints.last_checkpoint_seq}): it no longer proves where the log ends",
            )
        seen_max_seq = self._chain.seen_max_seq
        if seq > seen_max_seq:
            # Reported where the missing records should start: the end of the last segment.
            self._findings.error(
                Reason.TRUNCATED,
                last_file or name,
                last_file_lines + 1,
                seen_max_seq + 1,
                f"log ends at seq {seen_max_seq}, but the anchor {name} proves it reached seq {seq}",
                expected=str(seq),
                actual=str(seen_max_seq),
            )
        elif self.line != line:
            file, number = self.where or (name, 1)
            self._findings.error(
                Reason.CHECKPOINT_MISMATCH,
                file,
                number,
                seq,
                f"record differs from the checkpoint exported to {name}",
            )

    def judge_missing(self) -> None:
        """No anchor given or found: INTACT can then prove no more than a valid prefix of the log.

        A warning (a cut tail cannot be excluded, and the report says so), or with ``require``
        (``--require-anchor``) a failure, for auditors whose rule is "no anchor, no verdict".
        """
        if not self.none_supplied:
            return
        where = self.on_host_missing or "-"
        if self.require:
            self._findings.error(Reason.ANCHOR_MISSING, where, None, None, NO_ANCHOR + " (--require-anchor)")
        elif self._checkpoints.last_checkpoint_seq is not None:
            self._findings.warn(Reason.ANCHOR_MISSING, where, None, NO_ANCHOR)


#: What a verdict without an anchor cannot prove, in the words the report uses.
NO_ANCHOR = "no anchor supplied: a cut tail cannot be excluded"


def _peek_seq(data: bytes) -> int | None:
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    seq = record.get("seq") if isinstance(record, dict) else None
    return seq if type(seq) is int else None
