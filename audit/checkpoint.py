"""Checkpoint statements: what a checkpoint commits to, and its Ed25519 signature.

A checkpoint covers the log from seq 0 through ``last_seq``: the chain head (hash of ``last_seq``),
the RFC 6962 Merkle root over every record hash so far, and the log id. The signature covers a
domain-separated canonical encoding of exactly those fields plus the key id, so neither the range
nor the key attribution can be edited without breaking it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .record import canonical_bytes

CHECKPOINT_SIGNATURE_TAG: Final = b"dsh-policy/audit/checkpoint/v1\x00"


@dataclass(frozen=True, slots=True)
class CheckpointStatement:
    """The signed content of a checkpoint."""

    log_id: str
    first_seq: int
    last_seq: int
    head: str
    merkle_root: str
    key_id: str | None

    def to_bytes(self) -> bytes:
        """Domain tag + canonical JSON of the statement: the exact bytes that are signed."""
        body: dict[str, Any] = {
            "log_id": self.log_id,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "head": self.head,
            "merkle_root": self.merkle_root,
            "key_id": self.key_id,
        }
        return CHECKPOINT_SIGNATURE_TAG + canonical_bytes(body)


def sign_statement(private_key: Ed25519PrivateKey, statement: CheckpointStatement) -> str:
    """Hex Ed25519 signature over :meth:`CheckpointStatement.to_bytes`."""
    return private_key.sign(statement.to_bytes()).hex()


def signature_is_valid(
    public_key: Ed25519PublicKey, statement: CheckpointStatement, signature_hex: str
) -> bool:
    """Whether ``signature_hex`` is a valid signature of ``statement`` by ``public_key``."""
    try:
        signature = bytes.fromhex(signature_hex)
    except ValueError:
        return False
    try:
        public_key.verify(signature, statement.to_bytes())
    except InvalidSignature:
        return False
    return True
