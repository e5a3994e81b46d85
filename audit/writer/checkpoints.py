"""Checkpoints: the signed statement of the chain's head and Merkle root so far.

Written every ``checkpoint_every`` records, by time (the flusher), on rotation, on a key hand-over,
on close and on request. The newest one becomes ``PATH.anchor`` once an fsync covers it.
"""

from __future__ import annotations

import time
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..checkpoint import CheckpointStatement, sign_statement
from .append import Appender, AppendReceipt
from .chain import ChainState
from .group_commit import WAKE, GroupCommit
from .settings import WriterSettings


class Checkpointer:
    """Writes checkpoints (the locks held) and decides when one is due by count."""

    __slots__ = ("_appender", "_chain", "_commits", "_key", "_key_id", "_settings")

    def __init__(
        self,
        settings: WriterSettings,
        chain: ChainState,
        appender: Appender,
        commits: GroupCommit,
        key: Ed25519PrivateKey | None,
        key_id: str | None,
    ) -> None:
        self._settings = settings
        self._chain = chain
        self._appender = appender
        self._commits = commits
        self._key = key
        self._key_id = key_id

    def after_record(self) -> None:
        """After a caller's record: a checkpoint when ``checkpoint_every`` records are uncovered;
        checkpoints by time are the flusher's job (it sleeps until the deadline)."""
        settings, chain = self._settings, self._chain
        every = settings.checkpoint_every
        if every is not None and chain.since_checkpoint >= every:
            self.write("interval")
        if chain.since_checkpoint == 1 and settings.checkpoint_seconds is not None:
            self._commits.jobs.put(WAKE)  # start the checkpoint clock in the flusher

    def write(self, reason: str) -> AppendReceipt:
        """Append a checkpoint covering every record so far (the OS lock held)."""
        chain = self._chain
        last_seq = chain.next_seq - 1
        statement = CheckpointStatement(
            log_id=chain.log_id,
            first_seq=0,
            last_seq=last_seq,
            head=chain.head,
            merkle_root=chain.frontier.root().hex(),
            key_id=self._key_id,
        )
        signature = sign_statement(self._key, statement) if self._key else None
        body: dict[str, Any] = {
            "checkpoint": {
                "reason": reason,
                "first_seq": 0,
                "last_seq": last_seq,
                "head": chain.head,
                "merkle_root": statement.merkle_root,
                "frontier": [root.hex() for root in chain.frontier.roots],
                "key_id": self._key_id,
                "signature": signature,
            }
        }
        receipt = self._appender.append_locked("checkpoint", body)
        chain.last_checkpoint_at = time.monotonic()
        chain.last_checkpoint_line = chain.last_line[:-1]
        chain.last_key_id, chain.key_known = self._key_id, True
        if self._settings.export_anchor:
            # The anchor must never be durable ahead of the checkpoint it copies, or a power cut
            # would make an honest log look truncated: it is exported once an fsync covers the
            # checkpoint (in batch mode by the flusher, off the append path).
            self._commits.hold_anchor(chain.last_line[:-1])
            if self._settings.fsync == "batch":
                if not self._commits.sync_requested:
                    self._commits.request_sync()
                # else the running commit may miss the checkpoint: the next one, due within
                # batch_ms, covers it.
            else:
                self._commits.sync_if_due(force=True)
        return receipt
