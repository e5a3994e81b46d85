"""The statements an approver signs, and their Ed25519 signatures.

A decision or a grant in the queue is a claim anyone who can write the queue folder could make;
only the signature of a key the deployment lists (:mod:`.approvers`) turns it into a person's
decision. Each statement is signed as a domain tag followed by its canonical JSON (RFC 8785), the
way audit checkpoints are, so a signature over one kind of statement can never be replayed as
another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from dsh_policy.audit.checkpoint import bytes_signature_is_valid, sign_bytes
from dsh_policy.audit.record import canonical_bytes

DECISION_TAG: Final[bytes] = b"dsh-policy/approval/decision/v1\x00"
GRANT_TAG: Final[bytes] = b"dsh-policy/approval/grant/v1\x00"

#: The fields of a decision statement, in the order the CLI shows them.
DECISION_FIELDS: Final[tuple[str, ...]] = (
    "request",
    "binding",
    "verdict",
    "approver",
    "key_id",
    "issued",
    "expires",
)
#: The fields of a grant statement.
GRANT_FIELDS: Final[tuple[str, ...]] = (
    "grant",
    "rules",
    "session",
    "agent",
    "tool",
    "match",
    "approver",
    "key_id",
    "issued",
    "until",
    "reason",
)


def statement_bytes(tag: bytes, statement: Mapping[str, Any], fields: tuple[str, ...]) -> bytes:
    """The exact bytes signed: the tag and the canonical JSON of exactly ``fields``."""
    return tag + canonical_bytes({name: statement.get(name) for name in fields})


def sign(
    private_key: Ed25519PrivateKey, tag: bytes, statement: Mapping[str, Any], fields: tuple[str, ...]
) -> str:
    """Hex signature of ``statement`` under ``tag``."""
    return sign_bytes(private_key, statement_bytes(tag, statement, fields))


def verify(
    public_key: Ed25519PublicKey,
    tag: bytes,
    statement: Mapping[str, Any],
    fields: tuple[str, ...],
    signature: Any,
) -> bool:
    """Whether ``signature`` is ``public_key``'s over ``statement`` (False for anything malformed)."""
    try:
        message = statement_bytes(tag, statement, fields)
    except (TypeError, ValueError):
        return False
    return bytes_signature_is_valid(public_key, message, signature)
