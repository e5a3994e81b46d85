"""Canonical bytes and hashes of audit records (AUDIT.md "Record").

A record is hashed over its RFC 8785 (JCS) canonical form. Our value domain keeps JCS simple: no
floats, integers within the IEEE-754 safe range (+/-(2**53 - 1)), strings of Unicode scalar values,
booleans, null, objects with string keys and arrays. Inside that domain a sorted-key ``orjson`` dump
is byte-identical to JCS except for one thing: orjson sorts keys by code point while JCS sorts by
UTF-16 code unit, which differ only when a key holds a character at or above U+E000. Objects with
such keys take the pure-Python path below; everything else takes the fast path. Both are tested
byte for byte against the ``rfc8785`` reference package.
"""

from __future__ import annotations

import re
from binascii import hexlify
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

# The record hash itself lives in .record_hash (shared by writer and verifier). Re-exported here
# for one release; import these names from .record_hash.
from .record_hash import GENESIS_TAG as GENESIS_TAG
from .record_hash import RECORD_HASH_TAG as RECORD_HASH_TAG
from .record_hash import RECORD_HASHER as RECORD_HASHER
from .record_hash import genesis_prev as genesis_prev
from .record_hash import hash_of_line as hash_of_line
from .record_hash import record_hash as record_hash
from .record_hash import without_member as without_member

from .record_hash import BYTES_HASHERS, BYTES_STARTS, V2_HASH_MEMBER, V2_HEADER, V2_KINDS, v2_kind, v2_start  # isort: skip

#: The format version of v1 logs (kept as ``FORMAT_VERSION`` for one release; see FORMAT_VERSIONS).
FORMAT_VERSION: Final = 1
#: Every format version the verifier reads; new logs are written in ``DEFAULT_FORMAT_VERSION``.
FORMAT_VERSIONS: Final = (1, 2, 3)
#: Format 2 stays the default for one release: writers before format 3 do not refuse a log in a
#: format they do not know, so one of them appending to a format 3 log would mix leaf rules in its
#: Merkle tree. Writers from this release refuse (ChainState.absorb); the next can default to 3.
DEFAULT_FORMAT_VERSION: Final = 2
MAX_SAFE_INTEGER: Final = 2**53 - 1

_ORJSON_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
# Keys containing a character at or above U+E000 may sort differently by code point and by UTF-16.
_SORT_SENSITIVE: Final = "\ue000"
# UTF-8 lead bytes 0xEE-0xF4 start exactly the characters at or above U+E000.
_SORT_SENSITIVE_BYTES: Final = re.compile(rb"[\xee-\xf4]")


@dataclass(frozen=True, slots=True)
class DomainViolation:
    """Why a value cannot be hashed canonically, and where (a JSONPath-like ``$.call.args[2]``)."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


class OutsideDomainError(ValueError):
    """A value is outside the canonical record domain; ``violation`` says where and why."""

    def __init__(self, violation: DomainViolation) -> None:
        super().__init__(str(violation))
        self.violation = violation


def find_domain_violation(value: Any) -> DomainViolation | None:
    """Return the first place where ``value`` leaves the record domain, or ``None``."""
    if _scan(value) is not _OUTSIDE:
        return None
    return _locate(value, "$")


# _scan results: identity-compared sentinels keep the hot path free of allocations.
_PLAIN: Final = 0
_UTF16: Final = 1
_OUTSIDE: Final = 2


def _scan(value: Any) -> int:
    """Classify ``value``: in domain (_PLAIN), in domain with sort-sensitive keys, or outside.

    On the append hot path: scalars are checked inline in the container loops, so a record costs
    one call per container rather than one per value.
    """
    kind = type(value)
    if kind is dict:
        return _scan_mapping(value)
    if kind is list or kind is tuple:
        return _scan_items(value)
    if kind is str:
        return _PLAIN if value.isascii() or _encodable(value) else _OUTSIDE
    if kind is int:
        return _PLAIN if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else _OUTSIDE
    if value is None or kind is bool:
        return _PLAIN
    if isinstance(value, Mapping):
        return _scan_mapping(value)
    return _OUTSIDE


def _scan_mapping(mapping: Mapping[Any, Any]) -> int:
    result = _PLAIN
    for key, item in mapping.items():
        if type(key) is not str:
            return _OUTSIDE
        if not key.isascii():
            if not _encodable(key):
                return _OUTSIDE
            if max(key) >= _SORT_SENSITIVE:
                result = _UTF16
        kind = type(item)
        if kind is str:
            if not item.isascii() and not _encodable(item):
                return _OUTSIDE
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                return _OUTSIDE
        elif item is None or kind is bool:
            continue
        else:
            nested = _scan(item)
            if nested == _OUTSIDE:
                return _OUTSIDE
            result |= nested
    return result


def _scan_items(items: list[Any] | tuple[Any, ...]) -> int:
    result = _PLAIN
    for item in items:
        kind = type(item)
        if kind is str:
            if not item.isascii() and not _encodable(item):
                return _OUTSIDE
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                return _OUTSIDE
        elif item is None or kind is bool:
            continue
        else:
            nested = _scan(item)
            if nested == _OUTSIDE:
                return _OUTSIDE
            result |= nested
    return result


def _encodable(text: str) -> bool:
    # Lone surrogates cannot be encoded as UTF-8; both serializers would fail less clearly.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _locate(value: Any, path: str) -> DomainViolation | None:
    """Slow twin of :func:`_scan` that names the offending path; only runs on rejection."""
    kind = type(value)
    if kind is str:
        return None if _encodable(value) else DomainViolation(path, "string contains a lone surrogate")
    if value is None or kind is bool:
        return None
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return None
        return DomainViolation(path, f"integer {value} outside +/-(2**53 - 1)")
    if isinstance(value, Mapping) and kind is not list and kind is not tuple:
        for key, item in value.items():
            if type(key) is not str:
                return DomainViolation(path, f"object key {key!r} is not a string")
            if not _encodable(key):
                return DomainViolation(path, f"object key {key!r} contains a lone surrogate")
            found = _locate(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    if kind is list or kind is tuple:
        for index, item in enumerate(value):
            found = _locate(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(value, float):
        return DomainViolation(path, f"float {value!r} not allowed in hashed records (use int or str)")
    if isinstance(value, int):
        return DomainViolation(path, f"{kind.__name__} (an int subclass) not allowed: ambiguous rendering")
    return DomainViolation(path, f"{kind.__name__} is not a JSON value")


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 bytes of ``value``; raise :class:`OutsideDomainError` outside the record domain."""
    return _encode(value)[0]


def _encode(value: Any) -> tuple[bytes, bool]:
    """Canonical bytes and whether they needed the UTF-16 key order path.

    Division of labour on the hot path: a Python walk checks only the *types* (orjson would
    happily write floats, enums, UUIDs or dataclasses); orjson itself rejects integers beyond
    2**53 - 1, non-string keys and lone surrogates; and only output that holds a character at or
    above U+E000 pays for the full scan that decides the key order.
    """
    if not _types_in_domain(value):
        raise _outside(value)
    try:
        encoded = orjson.dumps(value, default=_plain_mapping, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        raise _outside(value) from None
    if not encoded.isascii() and _SORT_SENSITIVE_BYTES.search(encoded) and _scan(value) == _UTF16:
        return _jcs(value).encode("utf-8"), True
    return encoded, False


def _outside(value: Any) -> OutsideDomainError:
    violation = _locate(value, "$")
    return OutsideDomainError(violation or DomainViolation("$", "value outside the record domain"))


def _types_in_domain(value: Any) -> bool:
    """Whether every value has a JSON type of the domain (checks types only, see :func:`_encode`)."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif kind in _SCALAR_TYPES:
        return True
    elif isinstance(value, Mapping):
        items = value.values()
    else:
        return False
    # Exact types: one set lookup per value (subclasses such as enums go the slow way and fail).
    # A plain loop: all() over a generator measured twice as slow here.
    for item in items:  # noqa: SIM110
        if type(item) not in _SCALAR_TYPES and not _types_in_domain(item):
            return False
    return True


_SCALAR_TYPES: Final = frozenset({str, int, bool, type(None)})


def canonical_bytes_unchecked(value: Any) -> bytes:
    """Fast path for values already known to be in the domain and free of sort-sensitive keys."""
    return orjson.dumps(value, default=_plain_mapping, option=_ORJSON_OPTIONS)


def _plain_mapping(value: Any) -> Any:
    # Read-only mappings (e.g. the harness's FrozenDict) serialize as ordinary objects.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be")


def _jcs(value: Any) -> str:
    """Pure-Python JCS for the record domain; only used when UTF-16 key order matters."""
    if isinstance(value, Mapping):
        members = sorted(value.items(), key=lambda item: _utf16_order(item[0]))
        inner = ",".join(f"{_jcs_string(key)}:{_jcs(item)}" for key, item in members)
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_jcs(item) for item in value) + "]"
    if isinstance(value, str):
        return _jcs_string(value)
    # None, bool and safe ints: orjson's rendering is exactly JCS's.
    return orjson.dumps(value).decode("ascii")


def _jcs_string(text: str) -> str:
    # Scalar strings serialize identically in orjson and JCS (tested); only key order differs.
    return orjson.dumps(text).decode("utf-8")


@dataclass(frozen=True, slots=True)
class SealedRecord:
    """A record with its chain hash: ``line`` is the canonical JSON including ``hash``, no newline."""

    line: bytes
    hash: str
    digest: bytes  #: the same hash as 32 raw bytes (a Merkle leaf's input)


def seal_record(record: dict[str, Any]) -> SealedRecord:
    """Hash ``record`` (which must not yet hold ``hash``) and render its line in the format its
    ``v`` names (2 and 3: header first, bytes hashed as written; otherwise 1, canonical).

    Raises :class:`OutsideDomainError`.
    """
    version = record.get("v")
    if type(version) is int and version in BYTES_HASHERS:
        rest = {key: value for key, value in record.items() if key not in V2_HEADER}
        header = (record.get("log_id"), record.get("seq"), record.get("prev"), record.get("kind"))
        if not all(type(value) is kind for value, kind in zip(header, (str, int, str, str), strict=True)):
            raise OutsideDomainError(
                DomainViolation("$", f"format {version} needs log_id, seq, prev and kind")
            )
        line, hex_digest, digest = seal_line_v2(rest, *header, version)  # type: ignore[arg-type]
        return SealedRecord(line[:-1], hex_digest, digest)
    line, hex_digest, digest = seal_line(record)
    return SealedRecord(line[:-1], hex_digest, digest)


def seal_line(record: dict[str, Any]) -> tuple[bytes, str, bytes]:
    """The writer's hot path of :func:`seal_record`: (canonical line *with* its newline, hex hash,
    raw digest), as a plain tuple. Raises :class:`OutsideDomainError`.

    Serializes once: the ``hash`` member is spliced into the canonical bytes of the record without
    it, in front of the top-level member that follows ``hash`` in key order. Where that member
    cannot be located unambiguously (its key also appears nested) or UTF-16 key order applies,
    the record is serialized a second time with ``hash``.
    """
    body, needs_utf16 = _encode(record)
    hasher = RECORD_HASHER.copy()
    hasher.update(body)
    digest = hasher.digest()
    hex_digest = digest.hex()
    if not needs_utf16:
        keys = tuple(record)
        place = _HASH_PLACES.get(keys)
        if place is None:
            place = _hash_place(keys)
        follower, first = place
        member = b'"hash":"' + hex_digest.encode() + b'"'
        if first:  # every key sorts after "hash", so the body starts with the follower
            return b"{" + member + b"," + body[1:] + b"\n", hex_digest, digest
        # ',"key":' cannot occur inside a JSON string (its quote would be escaped), so exactly one
        # occurrence is the top-level member; more mean the key also appears nested.
        if follower and body.count(follower) == 1:
            at = body.index(follower)
            return b"".join((body[:at], b",", member, body[at:], b"\n")), hex_digest, digest
    render = _render_jcs if needs_utf16 else canonical_bytes_unchecked
    record["hash"] = hex_digest
    try:
        line = render(record)
    finally:
        del record["hash"]
    return line + b"\n", hex_digest, digest


def seal_line_v2(
    fields: dict[str, Any], log_id: str, seq: int, prev: str, kind: str, version: int = 2
) -> tuple[bytes, str, bytes]:
    """Format versions 2 and 3 of :func:`seal_line`: (line with its newline, hex hash, raw digest).

    ``fields`` holds every member but the header ones (``v``, ``log_id``, ``seq``, ``prev``,
    ``kind``) and ``hash``; they are written canonically after the header, and the hash covers
    the bytes as written (:mod:`.record_hash`). Raises :class:`OutsideDomainError`.
    """
    body, _ = _encode(fields)
    try:
        start = BYTES_STARTS[version].get(log_id) or v2_start(log_id, version)
        tail = V2_KINDS.get(kind) or v2_kind(kind)
        prev_json = orjson.dumps(prev)
    except orjson.JSONEncodeError:
        raise _outside({"log_id": log_id, "seq": seq, "prev": prev, "kind": kind}) from None
    # record_hash.v2_header's bytes from its cached pieces and the body without its braces, in
    # one copy; then the hash member, in one more.
    if len(body) > 2:
        hashed = b'%b%d,"prev":%b%b,%b' % (start, seq, prev_json, tail, body[1:-1])
    else:
        hashed = b'%b%d,"prev":%b%b' % (start, seq, prev_json, tail)
    hasher = BYTES_HASHERS[version].copy()
    hasher.update(hashed)
    digest = hasher.digest()
    hex_bytes = hexlify(digest)
    return b'%b%b%b"}\n' % (hashed, V2_HASH_MEMBER, hex_bytes), hex_bytes.decode(), digest


#: Records of one shape share the splice position of ``hash``; bounded, as shapes could be many.
_HASH_PLACES: dict[tuple[str, ...], tuple[bytes, bool]] = {}
_HASH_PLACES_LIMIT: Final = 256


def _hash_place(keys: tuple[str, ...]) -> tuple[bytes, bool]:
    """The ``,"key":`` of the top-level member ``hash`` goes in front of, and whether it is first.

    Only called for key sets outside the UTF-16 path, where sorting by code point is JCS order.
    An empty needle sends the record to the second serialization: no key sorts after ``hash``
    (the writer's own ``kind`` always does), or ``hash`` is already there (a caller's mistake that
    the second serialization answers by overwriting it, as it always did).
    """
    after = [key for key in keys if key > "hash"]
    if not after or "hash" in keys or any(type(key) is not str for key in keys):
        # (orjson already refuses str subclasses as keys; were one to get here, its comparisons,
        # which it may override, must not decide where "hash" goes.)
        place = (b"", False)
    else:
        place = (b"," + orjson.dumps(min(after)) + b":", all(key > "hash" for key in keys))
    if len(_HASH_PLACES) >= _HASH_PLACES_LIMIT:
        _HASH_PLACES.clear()
    _HASH_PLACES[keys] = place
    return place


def _render_jcs(value: Any) -> bytes:
    return _jcs(value).encode("utf-8")


#: Nesting a fitted value keeps: a deeper subtree is replaced by :data:`DEPTH_MARKER` (a record
#: must serialize, and a recursive walk must not exhaust the stack).
MAX_RECORD_DEPTH: Final = 64
DEPTH_MARKER: Final = f"[TRUNCATED: nested deeper than {MAX_RECORD_DEPTH} levels]"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def fit_to_domain(value: Any, *, describe_other: bool = False) -> Any:
    """A copy of a JSON-like value with what the record domain refuses rewritten as strings.

    For callers that must log arbitrary tool arguments (a model may send ``0.7``): floats become
    their shortest round-trip ``repr`` (``"0.7"``, ``"1e+300"``, ``"nan"``), integers beyond
    +/-(2**53 - 1) their decimal digits, a lone surrogate (valid in a JSON escape, not in UTF-8)
    U+FFFD, nesting deeper than :data:`MAX_RECORD_DEPTH` :data:`DEPTH_MARKER`, mappings plain dicts
    with string keys and tuples lists. The string form is deliberate: a float's JSON rendering
    differs between serializers, which would make the hash depend on the serializer.

    Values that are not JSON at all (bytes, sets, objects) are left for :func:`canonical_bytes` to
    reject with their path, unless ``describe_other``: then they become their ``repr``, so that
    every value a model or a tool can produce has a record (the gateway's choice).
    """
    return _fit(value, 0, describe_other)


def _fit(value: Any, depth: int, describe_other: bool) -> Any:
    kind = type(value)
    if kind is bool or value is None:
        return value
    if isinstance(value, str):
        return value if value.isascii() else _utf8_safe(value)
    if isinstance(value, int):
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_RECORD_DEPTH:
        return DEPTH_MARKER
    if isinstance(value, Mapping):
        deeper, other = depth + 1, describe_other
        return {_fit_key(key, other): _fit(item, deeper, other) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_fit(item, depth + 1, describe_other) for item in value]
    return _utf8_safe(repr(value)) if describe_other else value


def _fit_key(key: Any, describe_other: bool) -> Any:
    if isinstance(key, str):
        return _utf8_safe(key)
    return _utf8_safe(str(key)) if describe_other else key


def _utf8_safe(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text
