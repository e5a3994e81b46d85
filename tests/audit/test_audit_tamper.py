"""Tampering with logs written by the real writer: each kind is caught with the right reason and line.

Every test runs on both format versions (``log_format``): 1 hashes the canonical form, 2 the bytes
as written. Where the two name a re-serialized line differently, the test says which is which.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from audit_helpers import WriteLog, forge_rechained, gateway_fields, read_lines
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.record import MAX_SAFE_INTEGER
from dsh_policy.audit.verify import Reason, VerificationReport, verify_log
from dsh_policy.audit.writer import WRITER_FIELDS, AuditWriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture(params=[1, 2, 3], ids=["v1", "v2", "v3"])
def log_format(request: pytest.FixtureRequest) -> int:
    """Every format version, for every test of this module."""
    return int(request.param)


@pytest.fixture
def signed_log(write_log: WriteLog, key_pair: KeyPairFiles) -> Path:
    """30 gateway records, a signed checkpoint every 8 records and on close."""
    return write_log(30, signing_key=key_pair.private_path, checkpoint_every=8)


def _verify(path: Path, key_pair: KeyPairFiles, **options: Any) -> VerificationReport:
    return verify_log([path], public_key=key_pair.public_path, **options)


def _first(report: VerificationReport) -> tuple[str, int | None]:
    assert report.first_error is not None, "tampering went unnoticed"
    return report.first_error.reason.value, report.first_error.line


def test_an_untouched_signed_log_is_intact(signed_log: Path, key_pair: KeyPairFiles) -> None:
    report = _verify(signed_log, key_pair)
    assert report.intact and report.errors == () and report.warnings == ()
    assert report.records_checked == report.records_valid == 35  # 30 + segment_start + 4 checkpoints
    assert report.checkpoints_valid == 4 and report.checkpoints_invalid == 0
    assert report.anchored_through == 33 and report.unanchored_records == 0


def test_an_edited_field_in_any_record_is_a_hash_mismatch_on_that_line(
    signed_log: Path, key_pair: KeyPairFiles
) -> None:
    lines = read_lines(signed_log)
    for index, line in enumerate(lines):
        ts = orjson.loads(line)["ts"].encode()
        edited = line.replace(b'"ts":"' + ts, b'"ts":"' + ts.replace(b"Z", b"1Z"), 1)
        assert edited != line  # still canonical (v1), no longer hashed
        signed_log.write_bytes(b"".join([*lines[:index], edited, *lines[index + 1 :]]))
        report = _verify(signed_log, key_pair)
        assert _first(report) == ("HASH_MISMATCH", index + 1), f"edit of line {index + 1}"
        assert report.records_invalid >= 1


def test_an_edited_decision_is_caught_even_deep_inside_the_record(
    signed_log: Path, key_pair: KeyPairFiles
) -> None:
    lines = read_lines(signed_log)
    lines[5] = lines[5].replace(b'"outcome":"allow"', b'"outcome":"deny!"')
    signed_log.write_bytes(b"".join(lines))
    assert _first(_verify(signed_log, key_pair)) == ("HASH_MISMATCH", 6)


def test_a_deleted_record_is_a_sequence_gap_where_it_was(signed_log: Path, key_pair: KeyPairFiles) -> None:
    lines = read_lines(signed_log)
    del lines[12]
    signed_log.write_bytes(b"".join(lines))
    report = _verify(signed_log, key_pair)
    assert _first(report) == ("SEQ_GAP", 13)
    assert report.reason_counts["PREV_MISMATCH"] >= 1


def test_two_swapped_records_are_caught_at_the_first_of_them(
    signed_log: Path, key_pair: KeyPairFiles
) -> None:
    lines = read_lines(signed_log)
    lines[3], lines[4] = lines[4], lines[3]
    signed_log.write_bytes(b"".join(lines))
    assert _first(_verify(signed_log, key_pair)) == ("SEQ_GAP", 4)


def test_a_copied_record_inserted_is_a_duplicate_sequence_number(
    signed_log: Path, key_pair: KeyPairFiles
) -> None:
    lines = read_lines(signed_log)
    lines.insert(7, lines[5])
    signed_log.write_bytes(b"".join(lines))
    assert _first(_verify(signed_log, key_pair)) == ("SEQ_DUPLICATE", 8)


def test_a_well_formed_forged_record_inserted_is_caught_at_the_record_it_displaced(
    signed_log: Path, key_pair: KeyPairFiles
) -> None:
    from dsh_policy.audit.record import seal_record

    lines = read_lines(signed_log)
    before = orjson.loads(lines[9])
    forged = {**gateway_fields(500), "v": before["v"], "log_id": before["log_id"], "seq": before["seq"] + 1}
    forged.update(ts=before["ts"], kind="tool_result", prev=before["hash"])
    lines.insert(10, seal_record(forged).line + b"\n")
    signed_log.write_bytes(b"".join(lines))
    report = _verify(signed_log, key_pair)
    assert _first(report) == ("SEQ_DUPLICATE", 12)  # line 11 is the forgery, 12 the record it displaced
    assert report.reason_counts["CHECKPOINT_MISMATCH"] >= 1  # the Merkle root no longer matches


def test_a_rehashed_forgery_passes_the_chain_but_not_the_signatures(
    signed_log: Path, key_pair: KeyPairFiles
) -> None:
    lines = read_lines(signed_log)
    lines[2] = lines[2].replace(b'"outcome":"allow"', b'"outcome":"deny"')
    signed_log.write_bytes(b"".join(forge_rechained(lines)))
    signed_log.with_name("audit.jsonl.anchor").unlink()  # a careful forger drops the local anchor too
    unsigned = verify_log([signed_log])
    assert unsigned.intact and unsigned.signature_mode == "unsigned-verified"  # the limit without a key
    report = _verify(signed_log, key_pair)
    first_checkpoint = next(i for i, line in enumerate(lines) if b'"kind":"checkpoint"' in line)
    assert _first(report) == ("CHECKPOINT_SIGNATURE", first_checkpoint + 1)
    assert report.checkpoints_valid == 0 and report.anchored_through is None


def test_unsigned_checkpoints_fail_when_a_key_is_required(
    write_log: WriteLog, key_pair: KeyPairFiles
) -> None:
    path = write_log(5)
    report = _verify(path, key_pair)
    assert _first(report) == ("UNSIGNED_CHECKPOINT", 7)
    assert report.reason_counts["UNSIGNED"] == 1  # and nothing else covers the records


@pytest.mark.parametrize("cut_inside_a_line", [False, True])
def test_a_tail_cut_before_the_last_checkpoint_is_truncated_given_the_anchor(
    signed_log: Path, key_pair: KeyPairFiles, cut_inside_a_line: bool
) -> None:
    lines = read_lines(signed_log)
    kept = lines[:20]
    tail = lines[20][:15] if cut_inside_a_line else b""
    signed_log.write_bytes(b"".join(kept) + tail)
    report = _verify(signed_log, key_pair)
    assert _first(report) == ("TRUNCATED", 21)
    assert report.first_error is not None and report.first_error.seq == 20
    assert report.torn_tail is not None if cut_inside_a_line else report.warnings == ()
    # The exported anchor may live off the host; naming it explicitly works the same.
    # (Kept in another folder: beside the log it would be found by the log's id.)
    moved = signed_log.parent / "off-host" / "copy.anchor"
    moved.parent.mkdir()
    signed_log.with_name("audit.jsonl.anchor").rename(moved)
    # Without any anchor a clean cut is a valid prefix: the records after the last checkpoint are
    # left to say something is wrong, and the missing anchor is a warning saying so.
    assert verify_log([signed_log]).intact
    report = _verify(signed_log, key_pair)
    assert {e.reason.value for e in report.errors} == {"UNSIGNED_TAIL"}
    assert [w.reason.value for w in report.warnings if w.reason.value != "TORN_TAIL"] == ["ANCHOR_MISSING"]
    assert not report.tail_proven
    required = verify_log([signed_log], public_key=key_pair.public_path, require_anchor=True)
    assert {e.reason.value for e in required.errors} == {"UNSIGNED_TAIL", "ANCHOR_MISSING"}
    assert _first(_verify(signed_log, key_pair, anchor=moved)) == ("TRUNCATED", 21)


def test_a_deleted_middle_segment_is_segment_missing(write_log: WriteLog, key_pair: KeyPairFiles) -> None:
    path = write_log(60, rotate_bytes=6000, signing_key=key_pair.private_path)
    segments = sorted(path.parent.glob("audit.jsonl.0*"))
    assert len(segments) >= 3
    segments[1].unlink()
    discovered = _verify(path, key_pair)
    assert _first(discovered) == ("SEGMENT_MISSING", 1)
    assert discovered.first_error is not None and discovered.first_error.file == str(segments[2])
    assert discovered.reason_counts == {"SEGMENT_MISSING": 1}
    explicit = verify_log([segments[0], *segments[2:], path], public_key=key_pair.public_path)
    assert _first(explicit) == ("SEGMENT_MISSING", 1)


def test_a_deleted_active_segment_is_segment_missing(write_log: WriteLog, key_pair: KeyPairFiles) -> None:
    path = write_log(40, rotate_bytes=6000)
    path.unlink()
    last_rotated = sorted(path.parent.glob("audit.jsonl.0*"))[-1]
    report = verify_log([last_rotated])
    assert report.first_error is not None and report.first_error.reason is Reason.SEGMENT_MISSING


def test_a_segment_cut_short_in_the_middle_of_the_log_is_truncated(write_log: WriteLog) -> None:
    path = write_log(40, rotate_bytes=6000)
    first = sorted(path.parent.glob("audit.jsonl.0*"))[0]
    first.write_bytes(b"".join(read_lines(first)[:-2]))
    report = verify_log([path])
    assert report.first_error is not None and report.first_error.reason is Reason.TRUNCATED
    assert report.reason_counts == {"TRUNCATED": 1}  # the chain resumes from the segment link


def test_a_torn_last_line_is_a_warning_not_tampering(signed_log: Path, key_pair: KeyPairFiles) -> None:
    with AuditWriter.open(signed_log, fsync="off", signing_key=key_pair.private_path) as writer:
        writer.append("tool_result", gateway_fields(1))
    with signed_log.open("ab") as handle:
        handle.write(b'{"call":{"args":{"comm')  # a crash mid-write
    report = _verify(signed_log, key_pair)
    assert report.intact
    assert report.torn_tail is not None and report.torn_tail.line == len(read_lines(signed_log))


def test_a_non_canonical_line_and_duplicate_keys_are_rejected(
    signed_log: Path, key_pair: KeyPairFiles, log_format: int
) -> None:
    lines = read_lines(signed_log)
    original = lines[4]
    # v1 names a re-serialized line NOT_CANONICAL; v2 hashes the bytes, so it is an edited record.
    spaced = (
        original.replace(b'{"agent"', b'{ "agent"', 1)
        if log_format == 1
        else original.replace(b'"agent":"main"', b'"agent": "main"', 1)
    )
    assert spaced != original
    lines[4] = spaced
    signed_log.write_bytes(b"".join(lines))
    assert _first(_verify(signed_log, key_pair)) == (
        "NOT_CANONICAL" if log_format == 1 else "HASH_MISMATCH",
        5,
    )
    lines[4] = original.replace(b'"agent":"main"', b'"agent":"main","agent":"main"', 1)
    signed_log.write_bytes(b"".join(lines))
    assert _first(_verify(signed_log, key_pair)) == ("MALFORMED" if log_format == 1 else "HASH_MISMATCH", 5)
    report = _verify(signed_log, key_pair)
    assert report.first_error is not None, report.first_error


def test_verification_keeps_going_after_the_first_error(signed_log: Path, key_pair: KeyPairFiles) -> None:
    lines = read_lines(signed_log)
    for index in (3, 18, 25):  # tool_result records (checkpoints sit at 8, 17, 26)
        lines[index] = lines[index].replace(b'"agent":"main"', b'"agent":"evil"')
    signed_log.write_bytes(b"".join(lines))
    report = _verify(signed_log, key_pair)
    assert [(e.reason.value, e.line) for e in report.errors] == [("HASH_MISMATCH", n) for n in (4, 19, 26)]
    assert report.records_invalid == 3 and report.records_valid == 32


# --------------------------------------------------------------------------- properties

_LOG_BYTES: dict[str, bytes] = {}


def _checkpointed_log(directory: Path, key_pair: KeyPairFiles, log_format: int) -> Path:
    path = directory / "audit.jsonl"
    with AuditWriter.open(
        path, fsync="off", checkpoint_every=4, signing_key=key_pair.private_path, format_version=log_format
    ) as writer:
        for index in range(10):
            writer.append("tool_result", gateway_fields(index))
    return path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_single_byte_change_in_a_checkpointed_log_is_detected(
    tmp_path_factory: pytest.TempPathFactory, key_pair: KeyPairFiles, log_format: int, data: st.DataObject
) -> None:
    if f"log{log_format}" not in _LOG_BYTES:
        path = _checkpointed_log(tmp_path_factory.mktemp("byteflip"), key_pair, log_format)
        _LOG_BYTES[f"log{log_format}"], _LOG_BYTES[f"anchor{log_format}"] = (
            path.read_bytes(),
            path.with_name("audit.jsonl.anchor").read_bytes(),
        )
    original = _LOG_BYTES[f"log{log_format}"]
    position = data.draw(st.integers(0, len(original) - 1), label="position")
    replacement = data.draw(st.integers(0, 255).filter(lambda b: b != original[position]), label="byte")
    directory = tmp_path_factory.mktemp("flip")
    path = directory / "audit.jsonl"
    path.write_bytes(original[:position] + bytes([replacement]) + original[position + 1 :])
    directory.joinpath("audit.jsonl.anchor").write_bytes(_LOG_BYTES[f"anchor{log_format}"])
    report = verify_log([path], public_key=key_pair.public_path)
    assert not report.intact


_field_names = st.text(min_size=1, max_size=6).filter(lambda k: k not in WRITER_FIELDS)
_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=10),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.dictionaries(_field_names, _values, max_size=4), max_size=25),
    checkpoint_every=st.one_of(st.none(), st.integers(1, 7)),
    rotate=st.one_of(st.none(), st.integers(1024, 3000)),
)
def test_any_sequence_of_records_written_then_verified_passes(
    tmp_path_factory: pytest.TempPathFactory,
    key_pair: KeyPairFiles,
    log_format: int,
    records: list[dict[str, Any]],
    checkpoint_every: int | None,
    rotate: int | None,
) -> None:
    path = tmp_path_factory.mktemp("roundtrip") / "audit.jsonl"
    with AuditWriter.open(
        path,
        fsync="off",
        checkpoint_every=checkpoint_every,
        rotate_bytes=rotate,
        signing_key=key_pair.private_path,
        format_version=log_format,
    ) as writer:
        for fields in records:
            writer.append("tool_result", fields)
    report = verify_log([path], public_key=key_pair.public_path)
    assert report.intact, report.errors[:3]
    assert report.unanchored_records == 0
    assert report.records_checked == report.records_valid >= len(records) + 2


def test_lines_split_across_read_chunks_verify_the_same(
    signed_log: Path, key_pair: KeyPairFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dsh_policy.audit.verify.lines as verify_lines

    lines = read_lines(signed_log)
    lines[7] = lines[7].replace(b'"agent":"main"', b'"agent":"mein"')
    signed_log.write_bytes(b"".join(lines) + b'{"torn')
    whole = _verify(signed_log, key_pair)
    monkeypatch.setattr(verify_lines, "_READ_CHUNK", 97)
    chunked = _verify(signed_log, key_pair)
    assert chunked == whole
    assert _first(chunked) == ("HASH_MISMATCH", 8) and chunked.torn_tail is not None


def test_a_rehashed_record_with_a_boolean_version_is_malformed(signed_log: Path, log_format: int) -> None:
    lines = read_lines(signed_log)
    version = b'"v":1}' if log_format == 1 else b'{"v":%d,' % log_format
    lines[4] = lines[4].replace(version, version.replace(str(log_format).encode(), b"true"))
    signed_log.write_bytes(b"".join(forge_rechained(lines)))
    signed_log.with_name("audit.jsonl.anchor").unlink()
    assert _first(verify_log([signed_log])) == ("MALFORMED", 5)
