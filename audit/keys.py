"""Ed25519 keys for checkpoint signatures: generation, PEM files, key ids.

The private key belongs somewhere the agent process cannot read (AUDIT.md); verification needs only
the public key. A key id is a prefix of SHA-256 over the raw 32-byte public key, so a checkpoint can
say which key signed it without carrying the key.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_ID_PREFIX = "ed25519:"
_KEY_ID_HEX_CHARS = 32  # 128 bits of the public key digest: ample to tell keys apart


class KeyFileError(ValueError):
    """A key file is missing, unreadable or not an Ed25519 key of the expected kind."""


@dataclass(frozen=True, slots=True)
class KeyPairFiles:
    """Where :func:`write_key_pair` put the two halves, and the key id."""

    private_path: Path
    public_path: Path
    key_id: str


def key_id(public_key: Ed25519PublicKey) -> str:
    """``ed25519:`` + the first 128 bits (hex) of SHA-256 over the raw public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KEY_ID_PREFIX + hashlib.sha256(raw).hexdigest()[:_KEY_ID_HEX_CHARS]


def public_key_hex(public_key: Ed25519PublicKey) -> str:
    """The raw 32-byte public key as hex (how a key hand-over names the keys it links)."""
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def public_key_from_hex(text: Any) -> Ed25519PublicKey | None:
    """The key :func:`public_key_hex` rendered, or ``None`` if ``text`` is not one."""
    if not isinstance(text, str) or len(text) != 64:
        return None
    try:
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))
    except ValueError:
        return None


def write_key_pair(prefix: str | os.PathLike[str]) -> KeyPairFiles:
    """Generate a key pair; write ``PREFIX.key`` (PKCS#8 PEM, mode 0600) and ``PREFIX.pub``.

    Refuses to overwrite either file: replacing a signing key silently would orphan old logs.
    """
    base = Path(prefix)
    private_path, public_path = Path(f"{base}.key"), Path(f"{base}.pub")
    for existing in (private_path, public_path):
        if existing.exists():
            raise KeyFileError(f"{existing}: already exists; refusing to overwrite a key")
    private_key = Ed25519PrivateKey.generate()
    private_pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_key = private_key.public_key()
    public_pem = public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # O_EXCL with mode 0600 from the start: the private key is never readable by others, not even
    # for the instant between create and chmod.
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_pem)
    fd = os.open(public_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(public_pem)
    return KeyPairFiles(private_path, public_path, key_id(public_key))


def load_private_key(source: str | os.PathLike[str] | Ed25519PrivateKey) -> Ed25519PrivateKey:
    """A signing key from a PEM file (unencrypted PKCS#8) or an existing key object."""
    if isinstance(source, Ed25519PrivateKey):
        return source
    try:
        mode = Path(source).stat().st_mode
    except OSError as error:
        raise KeyFileError(f"{source}: cannot read key file ({error.strerror or error})") from None
    if mode & 0o077:
        # Like ssh: a signing key others can read no longer proves who signed.
        raise KeyFileError(f"{source}: permissions {mode & 0o777:o} are too open; chmod 600 it")
    data = _read(source)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise KeyFileError(f"{source}: not an unencrypted PEM private key ({error})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{source}: private key is {type(key).__name__}, expected Ed25519")
    return key


def load_public_key(
    source: str | os.PathLike[str] | Ed25519PublicKey | Ed25519PrivateKey,
) -> Ed25519PublicKey:
    """A verification key from a PEM file or a key object (a private key yields its public half)."""
    if isinstance(source, Ed25519PublicKey):
        return source
    if isinstance(source, Ed25519PrivateKey):
        return source.public_key()
    data = _read(source)
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError as error:
        raise KeyFileError(f"{source}: not a PEM public key ({error})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{source}: public key is {type(key).__name__}, expected Ed25519")
    return key


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read key file ({error.strerror or error})") from None
