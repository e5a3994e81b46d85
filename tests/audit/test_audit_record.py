"""Canonical bytes: the orjson fast path must equal the rfc8785 reference byte for byte."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest
import rfc8785
from dsh_policy.audit.record import (
    MAX_SAFE_INTEGER,
    OutsideDomainError,
    canonical_bytes,
    find_domain_violation,
    seal_record,
)
from dsh_policy.audit.record_hash import (
    GENESIS_TAG,
    RECORD_HASH_TAG,
    genesis_prev,
    hash_of_line,
    record_hash,
    without_member,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# Every Unicode scalar value, weighted towards the troublesome ones: control characters, U+2028/9,
# DEL, characters just below and above U+E000 and non-BMP characters (UTF-16 surrogate pairs).
_tricky = st.sampled_from(
    [
        "\x00",
        "\x1f",
        "\x7f",
        "\u2028",
        "\u2029",
        '"',
        "\\",
        "/",
        "\ud7ff",
        "\ue000",
        "\uffff",
        "\U00010000",
        "\U0001f600",
        "\U0010ffff",
        "é",
        "a",
        "Z",
        "0",
    ]
)
_text = st.lists(st.one_of(_tricky, st.characters(exclude_categories=["Cs"])), max_size=8).map("".join)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER), _text)
_values = st.recursive(
    _scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_text, children, max_size=5)),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_canonical_bytes_equal_rfc8785_reference(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_text, _scalars, min_size=2, max_size=8))
def test_key_order_follows_utf16_code_units_like_the_reference(value: dict[str, Any]) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_keys_above_u_e000_and_non_bmp_keys_sort_by_utf16_not_code_point() -> None:
    value = {"\ue000": 1, "\U00010000": 2, "a": 3}
    # Code point order would put U+E000 before U+10000; UTF-16 puts the surrogate pair (D800) first.
    assert canonical_bytes(value) == '{"a":3,"\U00010000":2,"\ue000":1}'.encode()
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_escaping_matches_jcs_for_controls_line_separators_and_non_ascii() -> None:
    value = {"s": '\x00\x08\t\n\x0c\r\x1f\x7f\u2028\u2029"\\/é\U0001f600'}
    assert canonical_bytes(value) == rfc8785.dumps(value)
    assert b"\\u001f" in canonical_bytes(value)
    assert "\u2028".encode() in canonical_bytes(value)


def test_integer_bounds_are_the_ieee_safe_range() -> None:
    assert canonical_bytes(MAX_SAFE_INTEGER) == rfc8785.dumps(MAX_SAFE_INTEGER)
    assert canonical_bytes(-MAX_SAFE_INTEGER) == rfc8785.dumps(-MAX_SAFE_INTEGER)
    for outside in (MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 2**64):
        with pytest.raises(OutsideDomainError, match="outside"):
            canonical_bytes({"n": outside})


@pytest.mark.parametrize(
    ("value", "path", "problem"),
    [
        ({"call": {"args": [1, 2.5]}}, "$.call.args[1]", "float"),
        ({"a": {1: "x"}}, "$.a", "not a string"),
        ({"a": "\ud800"}, "$.a", "lone surrogate"),
        ({"a": b"bytes"}, "$.a", "bytes is not a JSON value"),
        ({"a": {1, 2}}, "$.a", "set is not a JSON value"),
        ({"n": 2**60}, "$.n", "outside"),
    ],
)
def test_values_outside_the_domain_are_rejected_with_their_path(value: Any, path: str, problem: str) -> None:
    violation = find_domain_violation(value)
    assert violation is not None
    assert violation.path == path
    assert problem in violation.problem
    with pytest.raises(OutsideDomainError) as raised:
        canonical_bytes(value)
    assert raised.value.violation == violation


def test_read_only_mappings_and_tuples_serialize_as_objects_and_arrays() -> None:
    from types import MappingProxyType

    value = {"m": MappingProxyType({"b": 1, "a": (True, None)})}
    assert canonical_bytes(value) == b'{"m":{"a":[true,null],"b":1}}'


def test_hash_is_sha256_over_tag_and_canonical_record_without_hash() -> None:
    record: dict[str, Any] = {"seq": 0, "kind": "x", "prev": "p"}
    sealed = seal_record(record)
    body = canonical_bytes(record)
    assert "hash" not in record
    assert sealed.hash == hashlib.sha256(RECORD_HASH_TAG + body).hexdigest() == record_hash(body)
    assert sealed.line == canonical_bytes({**record, "hash": sealed.hash})
    assert without_member(sealed.line, "hash", sealed.hash) == body


def test_hash_member_is_removed_wherever_it_sorts() -> None:
    for record in ({"z": 1}, {"a": 1}, {"a": 1, "z": {"hash": "nested"}}):
        sealed = seal_record(dict(record))
        assert without_member(sealed.line, "hash", sealed.hash) == canonical_bytes(record)


def test_genesis_prev_is_tied_to_the_log_id() -> None:
    assert genesis_prev("log-a") == hashlib.sha256(GENESIS_TAG + b"log-a").hexdigest()
    assert genesis_prev("log-a") != genesis_prev("log-b")


def test_hash_of_line_equals_hashing_the_body_without_the_member() -> None:
    for record in ({"z": 1}, {"a": 1}, {"a": 1, "z": {"hash": "nested"}}, {}):
        sealed = seal_record(dict(record))
        assert hash_of_line(sealed.line, sealed.hash) == sealed.hash
    assert hash_of_line(b'{"a":1}', "0" * 64) is None


def test_fit_to_domain_turns_floats_and_huge_ints_into_strings_and_keeps_the_rest() -> None:
    from types import MappingProxyType

    from dsh_policy.audit.record import fit_to_domain

    value = {"t": 0.7, "n": [2**60, 3, True, None], "m": MappingProxyType({"x": (1.0, "s")})}
    fitted = fit_to_domain(value)
    assert fitted == {"t": "0.7", "n": [str(2**60), 3, True, None], "m": {"x": ["1.0", "s"]}}
    assert canonical_bytes(fitted) == rfc8785.dumps(fitted)
    assert find_domain_violation(fit_to_domain({"b": b"x"})) is not None  # not JSON: still refused


_splice_keys = st.sampled_from(["a", "h", "ha", "has", "hash0", "hasi", "hb", "i", "id", "kind", "z"])
_splice_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.text(max_size=4)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_splice_keys, inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_splice_keys, _splice_values, max_size=6))
def test_the_spliced_hash_member_lands_where_jcs_puts_it(record: dict[str, Any]) -> None:
    """seal_record serializes once and splices ``hash`` in; the line must equal serializing with
    it, wherever ``hash`` sorts and whether or not its neighbour's key also appears nested."""
    sealed = seal_record(dict(record))
    assert sealed.hash == record_hash(canonical_bytes(record))
    assert (
        sealed.line
        == canonical_bytes({**record, "hash": sealed.hash})
        == rfc8785.dumps({**record, "hash": sealed.hash})
    )


def test_a_key_that_lies_about_its_order_never_reaches_the_hash_splice() -> None:
    class Liar(str):
        def __gt__(self, other: object) -> bool:
            return False

        def __lt__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    record: dict[str, Any] = {Liar("zz"): 1, "a": 2, "kind": "x"}
    with pytest.raises(OutsideDomainError, match="not a string"):
        seal_record(record)


@pytest.mark.parametrize(
    ("log_id", "kind", "seq", "prev"),
    [
        ("8c3b2b1e-0f5d-4c39-9a51-3f7d2f0c1a2b", "tool_result", 0, "ab" * 32),
        ("laptop42 \u00e9\u4e2d", 'k\u00e9ind "quoted"', 2**53 - 1, "f" * 64),
        ("x", "checkpoint", 17, 'not hex, "escaped"\n'),
    ],
)
@pytest.mark.parametrize("version", [2, 3])
def test_a_v2_line_starts_with_the_header_record_hash_defines(
    log_id: str, kind: str, seq: int, prev: str, version: int
) -> None:
    """The writer builds v2 and v3 headers from cached pieces; they must be v2_header's bytes
    exactly, and the hash the bytes before the hash member (format 3: as an RFC 6962 leaf), for
    empty and non-empty fields."""
    from dsh_policy.audit.record import seal_line_v2
    from dsh_policy.audit.record_hash import v2_header, v2_line_hash

    tag = b"dsh-policy/audit/record/v2\x00" if version == 2 else b"\x00dsh-policy/audit/record/v3\x00"
    for fields in ({}, {"ts": "2026-12-02T16:00:00.000000Z", "a": [1, {"b": None}]}):
        for _ in range(2):  # the second time from the caches
            line, hex_digest, digest = seal_line_v2(dict(fields), log_id, seq, prev, kind, version)
            assert line.startswith(v2_header(log_id, seq, prev, kind, version))
            assert line.endswith(b'"}\n') and v2_line_hash(line[:-1], version) == hex_digest == digest.hex()
            assert hashlib.sha256(tag + line[: line.rindex(b',"hash":"')]).digest() == digest
            assert orjson.loads(line) == {
                "v": version,
                "log_id": log_id,
                "seq": seq,
                "prev": prev,
                "kind": kind,
                **fields,
                "hash": hex_digest,
            }
