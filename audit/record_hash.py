"""The record hash of the log format (AUDIT.md "Record"): the one place that says what a record's
``hash`` covers, shared by the writer (which seals records) and the verifier (which rechecks them).

Format version 1 hashes the domain tag followed by the record's RFC 8785 canonical bytes without
its ``hash`` member. A record's ``prev`` is the previous record's hash, and the first record's
``prev`` is :func:`genesis_prev` of the log id. A new format version that hashes something else
changes this module (and :data:`~.record.FORMAT_VERSION`), not the writer or the verifier.
"""

from __future__ import annotations

import hashlib
from typing import Final

import orjson

#: Domain-separation tags: a record hash can never be mistaken for a genesis value, a checkpoint
#: statement or anything else hashed with SHA-256.
RECORD_HASH_TAG: Final = b"dsh-policy/audit/record/v1\x00"
GENESIS_TAG: Final = b"dsh-policy/audit/genesis/v1\x00"
#: SHA-256 state after the record tag, for hot loops (the writer's seal, the verifier's fast
#: path): ``copy()`` it, never ``update`` it. Copying skips re-hashing the tag.
RECORD_HASHER: Final = hashlib.sha256(RECORD_HASH_TAG)


def record_hash(record_without_hash: bytes) -> str:
    """Hex SHA-256 over the record tag and the canonical bytes of the record minus ``hash``."""
    hasher = RECORD_HASHER.copy()
    hasher.update(record_without_hash)
    return hasher.hexdigest()


def genesis_prev(log_id: str) -> str:
    """The fixed ``prev`` of a log's first record: it ties seq 0 to this log's id."""
    return hashlib.sha256(GENESIS_TAG + log_id.encode("utf-8")).hexdigest()


def without_member(line: bytes, key: str, value: str) -> bytes | None:
    """``line`` minus its top-level ``"key":"value"`` member, for a line already proven canonical.

    Cheaper than re-serializing. If the first occurrence found is a nested one, the result still
    contains the real member and so cannot hash to ``value`` except by a SHA-256 fixed point.
    """
    member = b'"' + key.encode() + b'":' + orjson.dumps(value)
    at = line.find(member)
    if at <= 0:
        return None
    end = at + len(member)
    if line[at - 1 : at] == b",":
        return line[: at - 1] + line[end:]
    if line[at - 1 : at] == b"{" and line[end : end + 1] == b",":
        return line[:at] + line[end + 1 :]
    if line[at - 1 : at] == b"{" and line[end : end + 1] == b"}":
        return line[:at] + line[end:]
    return None


def hash_of_line(line: bytes, stated_hash: str) -> str | None:
    """:func:`record_hash` of a canonical ``line`` minus its ``hash`` member, without copying it.

    The verifier's hot path: hashes the bytes around the member instead of building the body.
    ``None`` when the member is not where a canonical line would have it.
    """
    member = b'"hash":' + orjson.dumps(stated_hash)
    at = line.find(member)
    if at <= 0:
        return None
    end = at + len(member)
    before, after = line[at - 1], line[end] if end < len(line) else 0
    view = memoryview(line)
    digest = RECORD_HASHER.copy()
    if before == 0x2C:  # ','
        digest.update(view[: at - 1])
        digest.update(view[end:])
    elif before == 0x7B and after == 0x2C:  # '{' then ','
        digest.update(view[:at])
        digest.update(view[end + 1 :])
    elif before == 0x7B and after == 0x7D:  # '{' then '}'
        digest.update(view[:at])
        digest.update(view[end:])
    else:
        return None
    return digest.hexdigest()
