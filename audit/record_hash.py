"""The record hash of the log format (AUDIT.md "Record"): the one place that says what a record's
``hash`` covers, shared by the writer (which seals records) and the verifier (which rechecks them).

Format version 1 hashes the domain tag followed by the record's RFC 8785 canonical bytes without
its ``hash`` member, so proving a line needs its canonical form (a re-serialization).

Format version 2 hashes the bytes as written: a line is :data:`V2_HEADER` fields first
(``{"v":2,"log_id":…,"seq":…,"prev":…,"kind":…``), the other members in canonical order, and
last ``,"hash":"<64 hex>"}``; the hash is SHA-256 of the v2 tag followed by every byte of the line
before ``,"hash":"``. A byte that changes breaks the hash, so nothing is re-serialized to prove a
line, and the fixed header lets a verifier check seq, prev and log id by comparing bytes.

Format version 3 is format 2's line with the record hash *being* the record's RFC 6962 Merkle leaf:
SHA-256 of ``0x00``, the v3 tag and the same bytes. The Merkle tree the checkpoints sign is then
built on the record hashes themselves (a v1 or v2 record's leaf is SHA-256 of ``0x00`` and its
hash), one SHA-256 a record fewer for the writer and the verifier; ``LEAF_FORMATS`` names them, and
:meth:`.merkle.MerkleFrontier.append_record` adds a record by its format.

A record's ``prev`` is the previous record's hash, and the first record's ``prev`` is
:func:`genesis_prev` of the log id.
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


RECORD_HASH_TAG_V2: Final = b"dsh-policy/audit/record/v2\x00"
RECORD_HASHER_V2: Final = hashlib.sha256(RECORD_HASH_TAG_V2)
#: The fields a v2 line starts with, in this order (then the rest, canonical, then ``hash``).
V2_HEADER: Final = ("v", "log_id", "seq", "prev", "kind")
#: ``,"hash":"`` + 64 hex digits + ``"}``: the fixed tail of every v2 line.
V2_TRAILER_LENGTH: Final = 75
V2_HASH_MEMBER: Final = b',"hash":"'
RECORD_HASH_TAG_V3: Final = b"dsh-policy/audit/record/v3\x00"
#: The RFC 6962 leaf prefix and the v3 tag: a v3 record hash is the leaf hash of tag + bytes.
RECORD_HASHER_V3: Final = hashlib.sha256(b"\x00" + RECORD_HASH_TAG_V3)
#: The formats whose hash covers the bytes as written (format 2's line layout), with the SHA-256
#: state after their prefix.
BYTES_HASHERS: Final = {2: RECORD_HASHER_V2, 3: RECORD_HASHER_V3}
#: The formats whose record hash is its Merkle leaf.
LEAF_FORMATS: Final = frozenset({3})


def v2_line_hash(line: bytes, version: int = 2) -> str | None:
    """The hash of a format 2 or 3 ``line`` (without its newline) if it ends as such a line must,
    else None."""
    if len(line) <= V2_TRAILER_LENGTH or line[-V2_TRAILER_LENGTH:-66] != V2_HASH_MEMBER or line[-2:] != b'"}':
        return None
    hasher = BYTES_HASHERS[version].copy()
    hasher.update(memoryview(line)[:-V2_TRAILER_LENGTH])
    return hasher.hexdigest()


#: Built v2 header pieces: the start per log id and the end per kind (:func:`v2_start`,
#: :func:`v2_kind`). A hot caller looks here first (``V2_STARTS.get(log_id) or v2_start(log_id)``,
#: no call when cached); bounded, as a verifier may meet many logs and callers many kinds.
#: ``BYTES_STARTS`` holds the starts of each format of that layout (2 and 3).
V2_STARTS: Final[dict[str, bytes]] = {}
BYTES_STARTS: Final[dict[int, dict[str, bytes]]] = {2: V2_STARTS, 3: {}}
V2_KINDS: Final[dict[str, bytes]] = {}
_V2_PIECES_LIMIT: Final = 256


def v2_start(log_id: str, version: int = 2) -> bytes:
    """The bytes every line of format ``version`` (2 or 3) of log ``log_id`` starts with, up to
    its seq's digits."""
    starts = BYTES_STARTS[version]
    start = starts.get(log_id)
    if start is None:
        start = b'{"v":%d,"log_id":%b,"seq":' % (version, orjson.dumps(log_id))
        if len(starts) >= _V2_PIECES_LIMIT:
            starts.clear()
        starts[log_id] = start
    return start


def v2_kind(kind: str) -> bytes:
    """The bytes that end a v2 header of ``kind``."""
    tail = V2_KINDS.get(kind)
    if tail is None:
        tail = b',"kind":' + orjson.dumps(kind)
        if len(V2_KINDS) >= _V2_PIECES_LIMIT:
            V2_KINDS.clear()
        V2_KINDS[kind] = tail
    return tail


def v2_header(log_id: str, seq: int, prev: str, kind: str, version: int = 2) -> bytes:
    """The bytes a format ``version`` (2 or 3) line with these header fields starts with (through
    the kind's value)."""
    return b'%b%d,"prev":%b%b' % (v2_start(log_id, version), seq, orjson.dumps(prev), v2_kind(kind))


def line_hashes_right(line: bytes, record: dict[str, object]) -> bool:
    """Whether ``line`` (a parsed ``record``) hashes to its stated ``hash`` in its own version's
    terms (the writer's check that a line read back is whole)."""
    stated = record.get("hash")
    if not isinstance(stated, str):
        return False
    version = record.get("v")
    if type(version) is int and version in BYTES_HASHERS:
        return v2_line_hash(line, version) == stated
    body = without_member(line, "hash", stated)
    return body is not None and record_hash(body) == stated


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
