"""The verifier's hot loop: its float prefilter and chunked reading must never accept what the
detailed checks reject. Floats are the interesting case: a line holding ``2.5`` survives the
parse/re-serialize comparison byte for byte, so only the float check stands between it and a pass."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from audit_helpers import WriteLog, read_lines
from dsh_policy.audit.record_hash import record_hash
from dsh_policy.audit.verify import lines as verify_lines
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.verify.lines import float_suspects
from hypothesis import given, settings
from hypothesis import strategies as st

_CANONICAL = orjson.OPT_SORT_KEYS


def _records_without_closing_checkpoint(write_log: WriteLog, count: int) -> list[bytes]:
    lines = read_lines(write_log(count, checkpoint_every=None, checkpoint_seconds=None))
    assert orjson.loads(lines[-1])["kind"] == "checkpoint"  # written on close
    return lines[:-1]


def _forge_next(previous_line: bytes, fields: dict[str, Any]) -> bytes:
    """A record that hashes right and extends the chain, sealed without the writer's domain check."""
    previous = orjson.loads(previous_line)
    record = {
        **fields,
        "v": 1,
        "log_id": previous["log_id"],
        "seq": previous["seq"] + 1,
        "ts": previous["ts"],
        "kind": "tool_result",
        "prev": previous["hash"],
    }
    record["hash"] = record_hash(orjson.dumps(record, option=_CANONICAL))
    return orjson.dumps(record, option=_CANONICAL) + b"\n"


_FLOATS = [
    {"call": {"args": [2.5]}},  # right after "["
    {"call": {"args": [1, 2.5]}},  # right after ","
    {"x": 0.5},  # right after ":"
    {"x": -0.0},
    {"x": {"y": 100.0}},  # ends at "}"
    {"x": 1e-07},  # exponent form without a dot
    {"x": 1e16},  # written 1e+16
    {"x": [1.5e300, 3]},
    {"note": "v1.5, 1e-7]", "x": 2.5},  # a float-looking string next to a real float
]


@pytest.mark.parametrize("chunk", [64, 1000, 1 << 20])
@pytest.mark.parametrize("fields", _FLOATS, ids=[orjson.dumps(f).decode() for f in _FLOATS])
def test_a_hashed_and_chained_line_with_a_float_is_not_canonical(
    write_log: WriteLog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fields: dict[str, Any],
    chunk: int,
) -> None:
    monkeypatch.setattr(verify_lines, "_READ_CHUNK", chunk)  # floats straddling chunk boundaries too
    lines = _records_without_closing_checkpoint(write_log, 6)
    forged = _forge_next(lines[-1], fields)
    follower = _forge_next(forged, {"agent": "main"})
    target = tmp_path / "forged.jsonl"
    target.write_bytes(b"".join([*lines, forged, follower]))
    report = verify_log([target])
    assert report.first_error is not None
    assert (report.first_error.reason.value, report.first_error.line) == ("NOT_CANONICAL", len(lines) + 1)
    assert report.records_invalid == 1  # the follower still chains to the forged line's hash


@pytest.mark.parametrize("chunk", [64, 1 << 20])
def test_strings_that_look_like_float_tails_do_not_spoil_an_intact_log(
    write_log: WriteLog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(verify_lines, "_READ_CHUNK", chunk)
    lines = _records_without_closing_checkpoint(write_log, 3)
    for text in ("v1.5,", "[1e-7]", "x 1e+16}", "2.5", ".5]", "-0.0,"):
        lines.append(_forge_next(lines[-1], {"note": text, "n": [-3, 0, 7]}))
    target = tmp_path / "strings.jsonl"
    target.write_bytes(b"".join(lines))
    report = verify_log([target])
    assert report.intact and report.records_valid == len(lines)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_orjson_writes_trips_the_prefilter(value: float) -> None:
    assert not math.isnan(value)
    for container in ([value], [0, value], {"k": value}, {"k": {"j": value}}):
        line = orjson.dumps(container, option=_CANONICAL)
        assert float_suspects(line) == {0}, line
        assert float_suspects(b"{}\n" + line + b"\n{}") == {1}, line


def test_the_prefilter_names_the_lines_that_hit() -> None:
    buffer = b'{"a":1}\n{"b":[2.5]}\n{"c":"x"}\n{"d":1e-07}\n{"e":1e+16}'
    assert float_suspects(buffer) == {1, 3, 4}
    assert float_suspects(b'{"ts":"2026-11-30T12:54:30.123456Z","n":-5}') == frozenset()


def test_a_nested_hash_member_neither_fools_nor_derails_the_hash_check(
    write_log: WriteLog, tmp_path: Path
) -> None:
    lines = _records_without_closing_checkpoint(write_log, 2)
    for digest in ("0" * 64, "f" * 64):
        lines.append(_forge_next(lines[-1], {"artifact": {"hash": digest}, "zz": {"hash": digest}}))
    target = tmp_path / "nested.jsonl"
    target.write_bytes(b"".join(lines))
    assert verify_log([target]).intact
    edited = lines[-1].replace(b'"artifact":{"hash":"ffff', b'"artifact":{"hash":"fffe', 1)
    assert edited != lines[-1]
    target.write_bytes(b"".join([*lines[:-1], edited]))
    report = verify_log([target])
    assert report.first_error is not None
    assert (report.first_error.reason.value, report.first_error.line) == ("HASH_MISMATCH", len(lines))
