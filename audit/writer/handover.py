"""Key hand-over: a writer signing with another key than the log's last checkpoint says so in the log.

With the previous key given, the ``key_handover`` record is signed by both keys and strict
verification follows it; without it the record is unsigned, and verification with the old key
reports the change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..checkpoint import HandoverStatement, sign_bytes
from ..keys import key_id, public_key_hex
from ..segments import rotated_path
from .append import Appender
from .chain import ChainState, parse_own_line
from .checkpoints import Checkpointer

_TAIL_PROBE: Final = 1 << 16  # enough of a segment's end to hold its last checkpoint line


class KeyHandover:
    """Appends a ``key_handover`` (and a checkpoint by the new key) when the signing key changed."""

    __slots__ = ("_appender", "_chain", "_checkpoints", "_key", "_key_id", "_path", "_previous_key")

    def __init__(
        self,
        path: Path,
        chain: ChainState,
        appender: Appender,
        checkpoints: Checkpointer,
        key: Ed25519PrivateKey | None,
        previous_key: Ed25519PrivateKey | None,
    ) -> None:
        self._path = path
        self._chain = chain
        self._appender = appender
        self._checkpoints = checkpoints
        self._key = key
        self._key_id = key_id(key.public_key()) if key is not None else None
        self._previous_key = previous_key

    def hand_over_if_changed(self) -> None:
        """A ``key_handover`` signed by both keys when the previous key was given, unsigned (which
        strict verification reports as a key change) when it was not (the OS lock held)."""
        if self._key is None:
            return
        chain = self._chain
        previous_id = chain.last_key_id if chain.key_known else self._key_id_before_this_segment()
        if previous_id is None or previous_id == self._key_id:
            return
        old = self._previous_key
        handover: dict[str, Any] = {
            "from_key_id": previous_id,
            "from_public_key": None,
            "to_key_id": self._key_id,
            "to_public_key": public_key_hex(self._key.public_key()),
            "from_signature": None,
            "to_signature": None,
        }
        if old is not None and key_id(old.public_key()) == previous_id:
            handover["from_public_key"] = public_key_hex(old.public_key())
        statement = HandoverStatement(
            log_id=chain.log_id,
            seq=chain.next_seq,
            prev=chain.head,
            from_key_id=previous_id,
            from_public_key=handover["from_public_key"],
            to_key_id=str(self._key_id),
            to_public_key=handover["to_public_key"],
        )
        handover["to_signature"] = sign_bytes(self._key, statement.to_bytes())
        if old is not None and handover["from_public_key"] is not None:
            handover["from_signature"] = sign_bytes(old, statement.to_bytes())
        self._appender.append_locked("key_handover", {"handover": handover})
        self._checkpoints.write("handover")

    def _key_id_before_this_segment(self) -> str | None:
        """The key id of the last checkpoint before the active segment (its predecessor's
        rotation checkpoint), for a segment that has none of its own yet."""
        segment_index = self._chain.segment_index
        if segment_index == 0:
            return None
        try:
            handle = open(rotated_path(self._path, segment_index - 1), "rb")  # noqa: SIM115
        except FileNotFoundError:
            return None
        with handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_PROBE))
            tail = handle.read()
        for line in reversed(tail.split(b"\n")):
            record = parse_own_line(line)
            if record is not None and record.get("kind") in ("checkpoint", "key_handover"):
                body = record.get("checkpoint") or {}
                if record.get("kind") == "key_handover":
                    return (record.get("handover") or {}).get("to_key_id")
                return body.get("key_id")
        return None
