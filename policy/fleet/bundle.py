"""Signed policy bundles: what a publisher builds and signs, and what a gateway accepts.

A bundle is one JSON document: the pack files' text, the params and engine, the digest of the
policy they compile to, a revision that only ever grows, and the publisher's Ed25519 signature
over everything else. The publisher key is not the audit key: whoever may change the fleet's
policy is not whoever may vouch for one host's log (docs/fleet.md, "Keys").

A gateway accepts a bundle only when it is well formed, signed by one of the publisher keys it
holds, newer than the revision in force (a rollback or a replay is refused, even when validly
signed), and compiles to exactly the digest it states. Every refusal is a value naming why.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from dsh_policy.audit.checkpoint import bytes_signature_is_valid, sign_bytes
from dsh_policy.audit.keys import key_id

FORMAT: Final = "dsh-policy/bundle/v1"
_SIGNED_TAG: Final = FORMAT.encode() + b"\0"
#: A bundle larger than this is refused unread (a KV value is bounded by the server anyway).
MAX_BUNDLE_BYTES: Final = 4 * 1024 * 1024

RefusalReason = Literal[
    "MALFORMED",
    "UNSIGNED",
    "FOREIGN_PUBLISHER",
    "BAD_SIGNATURE",
    "ROLLBACK",
    "REPLAY",
    "DOES_NOT_COMPILE",
    "DIGEST_MISMATCH",
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a bundle was not put in force."""

    reason: RefusalReason
    message: str
    revision: int | None = None
    key_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "message": self.message,
            "revision": self.revision,
            "key_id": self.key_id,
        }


@dataclass(frozen=True, slots=True)
class Bundle:
    """A parsed bundle (signed or not)."""

    revision: int
    packs: tuple[tuple[str, str], ...]  # (file name, text)
    params: Mapping[str, Any]
    engine: str
    refuse_weakening: bool
    policy_digest: str
    created: str
    signature: Mapping[str, str] | None = None

    def body(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "revision": self.revision,
            "created": self.created,
            "packs": [{"file": name, "text": text} for name, text in self.packs],
            "params": dict(self.params),
            "engine": self.engine,
            "refuse_weakening": self.refuse_weakening,
            "policy_digest": self.policy_digest,
        }

    def signed_bytes(self) -> bytes:
        return _SIGNED_TAG + orjson.dumps(self.body(), option=orjson.OPT_SORT_KEYS)

    def to_bytes(self) -> bytes:
        document = self.body()
        if self.signature is not None:
            document["signature"] = dict(self.signature)
        return orjson.dumps(document, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"

    def signed(self, key: Ed25519PrivateKey) -> Bundle:
        signature = {"key_id": key_id(key.public_key()), "value": sign_bytes(key, self.signed_bytes())}
        return Bundle(
            self.revision,
            self.packs,
            self.params,
            self.engine,
            self.refuse_weakening,
            self.policy_digest,
            self.created,
            signature,
        )


def pack_files(paths: Sequence[str]) -> tuple[tuple[str, str], ...] | str:
    """The packs' text under names unique within the bundle (``NN-basename``, in order)."""
    out: list[tuple[str, str]] = []
    for index, path in enumerate(paths):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            return f"{path}: cannot read the pack: {error}"
        out.append((f"{index:02d}-{os.path.basename(path)}", text))
    return tuple(out)


def new_bundle(
    packs: tuple[tuple[str, str], ...],
    *,
    revision: int,
    params: Mapping[str, Any],
    engine: str,
    refuse_weakening: bool,
    policy_digest: str,
) -> Bundle:
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return Bundle(revision, packs, dict(params), engine, refuse_weakening, policy_digest, created)


def parse_bundle(data: bytes) -> Bundle | Refusal:
    """The bundle in ``data``, or MALFORMED naming the field."""
    if len(data) > MAX_BUNDLE_BYTES:
        return Refusal("MALFORMED", f"bundle of {len(data)} bytes exceeds {MAX_BUNDLE_BYTES}")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        return Refusal("MALFORMED", f"not JSON: {error}")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return Refusal("MALFORMED", f"field 'format': expected {FORMAT!r}")
    revision = document.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        return Refusal("MALFORMED", "field 'revision': expected an integer >= 1")
    packs = document.get("packs")
    if not isinstance(packs, list) or not packs:
        return Refusal("MALFORMED", "field 'packs': expected a non-empty list", revision)
    files: list[tuple[str, str]] = []
    for index, pack in enumerate(packs):
        name = pack.get("file") if isinstance(pack, dict) else None
        text = pack.get("text") if isinstance(pack, dict) else None
        if not isinstance(name, str) or not isinstance(text, str) or not _safe_name(name):
            return Refusal(
                "MALFORMED", f"field 'packs[{index}]': expected a plain file name and text", revision
            )
        files.append((name, text))
    if len({name for name, _ in files}) != len(files):
        return Refusal("MALFORMED", "field 'packs': file names repeat", revision)
    for field_name, kind in (
        ("params", dict),
        ("engine", str),
        ("refuse_weakening", bool),
        ("policy_digest", str),
        ("created", str),
    ):
        if not isinstance(document.get(field_name), kind):
            return Refusal("MALFORMED", f"field {field_name!r}: expected {kind.__name__}", revision)
    signature = document.get("signature")
    if signature is not None and not (
        isinstance(signature, dict)
        and isinstance(signature.get("key_id"), str)
        and isinstance(signature.get("value"), str)
    ):
        return Refusal("MALFORMED", "field 'signature': expected key_id and value", revision)
    return Bundle(
        revision,
        tuple(files),
        document["params"],
        document["engine"],
        document["refuse_weakening"],
        document["policy_digest"],
        document["created"],
        signature,
    )


def _safe_name(name: str) -> bool:
    return (
        0 < len(name) <= 200
        and "/" not in name
        and "\\" not in name
        and name not in {".", ".."}
        and ("\0" not in name)
    )


def check_signature(bundle: Bundle, publishers: Mapping[str, Ed25519PublicKey]) -> Refusal | None:
    """None when one of ``publishers`` (by key id) signed ``bundle``."""
    if bundle.signature is None:
        return Refusal("UNSIGNED", "the bundle carries no signature", bundle.revision)
    signer = bundle.signature["key_id"]
    key = publishers.get(signer)
    if key is None:
        return Refusal(
            "FOREIGN_PUBLISHER",
            f"signed by {signer}, not a publisher this gateway holds",
            bundle.revision,
            signer,
        )
    if not bytes_signature_is_valid(key, bundle.signed_bytes(), bundle.signature["value"]):
        return Refusal(
            "BAD_SIGNATURE", "the signature does not match the bundle's content", bundle.revision, signer
        )
    return None


def check_revision(bundle: Bundle, active: int | None, active_digest: str | None) -> Refusal | None:
    """None when ``bundle`` may follow the revision in force (``active``)."""
    if active is None or bundle.revision > active:
        return None
    if bundle.revision == active and bundle.policy_digest == active_digest:
        return Refusal("REPLAY", f"revision {active} is already in force", bundle.revision)
    what = "an older" if bundle.revision < active else "the same revision with a different policy than"
    return Refusal(
        "ROLLBACK", f"revision {bundle.revision} is {what} revision {active} in force", bundle.revision
    )


def accept(
    data: bytes,
    publishers: Mapping[str, Ed25519PublicKey],
    active: int | None,
    active_digest: str | None,
) -> Bundle | Refusal:
    """Parse, check the publisher's signature, then the revision (compiling is the caller's)."""
    bundle = parse_bundle(data)
    if isinstance(bundle, Refusal):
        return bundle
    return check_signature(bundle, publishers) or check_revision(bundle, active, active_digest) or bundle
