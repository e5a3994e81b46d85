"""One line as a record: decoded, proven canonical and hashing to its own ``hash``, or a finding.

Two paths accept exactly the same lines: :func:`self_consistent` proves the common case without
building findings, :func:`parse_record` names what is wrong. Hashes come from :mod:`..record_hash`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

import orjson

from ..record import FORMAT_VERSION, FORMAT_VERSIONS, OutsideDomainError, canonical_bytes
from ..record_hash import BYTES_HASHERS, hash_of_line, record_hash, v2_header, v2_line_hash, without_member
from .findings import Findings, Reason

ORJSON_CANONICAL: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
#: UTF-8 lead bytes 0xEE-0xF4 start characters >= U+E000, where code point and UTF-16 order differ.
SORT_SENSITIVE_BYTES: Final = re.compile(rb"[\xee-\xf4]")
_HEX: Final = frozenset("0123456789abcdef")
_REQUIRED: Final = (("v", int), ("log_id", str), ("seq", int), ("ts", str), ("kind", str), ("prev", str))


def self_consistent(line: bytes) -> dict[str, Any] | None:
    """The record if ``line`` is well formed, canonical, in the domain and hashes right; else None.

    The verifier's hot path: no findings are built here. ``None`` sends the line through the
    detailed checks, which name what is wrong.
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict:
        return None
    stated = record.get("hash")
    version = record.get("v")
    if type(version) is int and version in BYTES_HASHERS:
        return record if _v2_self_consistent(line, record, stated, version) else None
    if (
        type(stated) is not str
        or len(stated) != 64
        or type(record.get("v")) is not int
        or record["v"] != FORMAT_VERSION
        or type(record.get("seq")) is not int
        or type(record.get("prev")) is not str
        or type(record.get("kind")) is not str
        or type(record.get("log_id")) is not str
        or type(record.get("ts")) is not str
        or contains_float(record)
        or (not line.isascii() and SORT_SENSITIVE_BYTES.search(line) is not None)
    ):
        return None
    try:
        if orjson.dumps(record, option=ORJSON_CANONICAL) != line:
            return None
    except orjson.JSONEncodeError:
        return None
    if hash_of_line(line, stated) != stated:
        return None
    return record


def _v2_self_consistent(line: bytes, record: dict[str, Any], stated: Any, version: int) -> bool:
    """A format 2 or 3 line: the header fields first, in order, and the bytes hashing to the
    stated hash."""
    for name, kind in _REQUIRED:
        if type(record.get(name)) is not kind:
            return False
    header = v2_header(record["log_id"], record["seq"], record["prev"], record["kind"], version)
    return type(stated) is str and line.startswith(header) and v2_line_hash(line, version) == stated


def parse_record(line: bytes, file: str, number: int, findings: Findings) -> dict[str, Any] | None:
    """Decode one line and prove it canonical and self-consistent; ``None`` if unusable."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        findings.error(Reason.MALFORMED, file, number, None, f"not JSON: {error}")
        return None
    if type(record) is not dict:
        findings.error(Reason.MALFORMED, file, number, None, "line is not a JSON object")
        return None
    seq = record.get("seq")
    seq_value = seq if type(seq) is int else None
    stated = record.get("hash")
    if not is_digest(stated):
        findings.error(Reason.MALFORMED, file, number, seq_value, "missing or malformed hash field")
        return None
    for name, kind in _REQUIRED:
        if type(record.get(name)) is not kind:
            findings.error(
                Reason.MALFORMED,
                file,
                number,
                seq_value,
                f"field {name!r} missing or not {kind.__name__}",
            )
            return None
    if record["v"] not in FORMAT_VERSIONS:
        findings.error(Reason.MALFORMED, file, number, seq_value, f"unknown format version {record['v']}")
        return None
    if record["v"] in BYTES_HASHERS:
        return _parse_v2(line, record, file, number, seq_value, str(stated), findings)
    if not _is_canonical(line, record, file, number, seq_value, findings):
        return record if _duplicate_free(line) else None
    body = without_member(line, "hash", str(stated))
    computed = record_hash(body) if body is not None else None
    if computed != stated:
        findings.error(
            Reason.HASH_MISMATCH,
            file,
            number,
            seq_value,
            "record hash does not match its content",
            expected=computed,
            actual=stated,
        )
    return record


def _parse_v2(
    line: bytes,
    record: dict[str, Any],
    file: str,
    number: int,
    seq: int | None,
    stated: str,
    findings: Findings,
) -> dict[str, Any] | None:
    """Formats 2 and 3: the bytes as written are what is hashed, so no canonical form is computed;
    the header must hold the fields the parsed record has (a duplicate key that a parser would
    read differently shows here) and ``hash`` must be the last member."""
    version: int = record["v"]
    header = v2_header(record["log_id"], record["seq"], record["prev"], record["kind"], version)
    if not line.startswith(header):
        findings.error(
            Reason.MALFORMED,
            file,
            number,
            seq,
            f"format {version} line does not start with its v, log_id, seq, prev and kind members in order",
        )
        return None
    computed = v2_line_hash(line, version)
    if computed is None:
        findings.error(
            Reason.MALFORMED, file, number, seq, f"format {version} line does not end with its hash member"
        )
        return None
    if computed != stated:
        findings.error(
            Reason.HASH_MISMATCH,
            file,
            number,
            seq,
            "record hash does not match its content",
            expected=computed,
            actual=stated,
        )
    return record


def _is_canonical(
    line: bytes, record: dict[str, Any], file: str, number: int, seq: int | None, findings: Findings
) -> bool:
    if contains_float(record):
        findings.error(Reason.NOT_CANONICAL, file, number, seq, "floats are not allowed in records")
        return False
    try:
        if line.isascii() or not _may_need_utf16_order(line):
            canonical = orjson.dumps(record, option=ORJSON_CANONICAL)
        else:
            canonical = canonical_bytes(record)
    except (orjson.JSONEncodeError, OutsideDomainError) as error:
        findings.error(Reason.NOT_CANONICAL, file, number, seq, f"value outside the record domain: {error}")
        return False
    if canonical == line:
        return True
    if _duplicate_free(line):
        findings.error(
            Reason.NOT_CANONICAL,
            file,
            number,
            seq,
            "line is not in RFC 8785 canonical form",
            expected=_excerpt(canonical, line),
            actual=_excerpt(line, canonical),
        )
    else:
        findings.error(Reason.MALFORMED, file, number, seq, "duplicate key in JSON object")
    return False


def _duplicate_free(line: bytes) -> bool:
    def reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)

    try:
        json.loads(line, object_pairs_hook=reject_duplicates)
    except ValueError:
        return False
    return True


def contains_float(value: Any) -> bool:
    """Floats hide inside containers only; a lean walk over what JSON parsing can produce."""
    items = value.values() if type(value) is dict else value
    for item in items:
        kind = type(item)
        if kind is float:
            return True
        if (kind is dict or kind is list) and contains_float(item):
            return True
    return False


def _may_need_utf16_order(line: bytes) -> bool:
    return SORT_SENSITIVE_BYTES.search(line) is not None


def _excerpt(text: bytes, other: bytes, width: int = 40) -> str:
    """The part of ``text`` around the first byte where it differs from ``other``."""
    at = next(
        (i for i, (a, b) in enumerate(zip(text, other, strict=False)) if a != b), min(len(text), len(other))
    )
    start = max(0, at - width // 2)
    return text[start : start + width].decode("utf-8", "replace")


# Fields of a parsed record, read defensively: a forged record may hold anything anywhere.


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is an object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def int_or_none(value: Any) -> int | None:
    """``value`` if it is an integer (not a bool), else ``None``."""
    return value if type(value) is int else None


def str_or_none(value: Any) -> str | None:
    """``value`` if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def int_or(value: Any) -> int:
    """``value`` if it is an integer (not a bool), else -1."""
    return value if type(value) is int else -1


def is_digest(value: Any) -> bool:
    """Whether ``value`` is a SHA-256 hex digest as the writer renders it (64 lowercase hex)."""
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)
