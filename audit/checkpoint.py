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
HANDOVER_SIGNATURE_TAG: Final = b"dsh-policy/audit/key-handover/v1\x00"


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


@dataclass(frozen=True, slots=True)
class HandoverStatement:
    """What both keys sign when a log changes signing keys: the new key is bound to this log and
    to the exact place in its chain (the hand-over record's ``seq`` and ``prev``)."""

    log_id: str
    seq: int
    prev: str
    from_key_id: str
    from_public_key: str | None  #: raw Ed25519 public key, hex
    to_key_id: str
    to_public_key: str

    def to_bytes(self) -> bytes:
        """Domain tag + canonical JSON of the statement: the exact bytes that are signed."""
        body: dict[str, Any] = {
            "log_id": self.log_id,
            "seq": self.seq,
            "prev": self.prev,
            "from_key_id": self.from_key_id,
            "from_public_key": self.from_public_key,
            "to_key_id": self.to_key_id,
            "to_public_key": self.to_public_key,
        }
        return HANDOVER_SIGNATURE_TAG + canonical_bytes(body)


def sign_bytes(private_key: Ed25519PrivateKey, message: bytes) -> str:
    """Hex Ed25519 signature over ``message`` (a statement's ``to_bytes()``)."""
    return private_key.sign(message).hex()


def bytes_signature_is_valid(public_key: Ed25519PublicKey, message: bytes, signature_hex: Any) -> bool:
    """Whether ``signature_hex`` is ``public_key``'s valid signature of ``message``."""
    if not isinstance(signature_hex, str):
        return False
    try:
        public_key.verify(bytes.fromhex(signature_hex), message)
    except (InvalidSignature, ValueError):
        return False
    return True


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
