"""The verifier's hot loops and its parallel walk take shortcuts (whole runs proved by comparing
bytes, segments scanned by forked children and stitched): none may let a changed byte through.
Every test runs on every format version, and the parallel walk must give the serial report."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from audit_helpers import gateway_fields
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.record_hash import record_hash, v2_line_hash, without_member
from dsh_policy.audit.verify import VerificationReport, parallel, verify_log
from dsh_policy.audit.verify import run as verify_run
from dsh_policy.audit.writer import AuditWriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture(params=[1, 2, 3], ids=["v1", "v2", "v3"])
def log_format(request: pytest.FixtureRequest) -> int:
    """Every format version, for every test of this module."""
    return int(request.param)


#: (segment names, their bytes, the anchor's bytes) per format: written once per session.
_LOGS: dict[int, tuple[list[str], list[bytes], bytes]] = {}


def _segmented_log(
    directory: Path, key_pair: KeyPairFiles, log_format: int
) -> tuple[list[str], list[bytes], bytes]:
    """90 records in about four segments, a signed checkpoint every 25: runs long enough for the
    hot loops to settle many records at once, in every segment."""
    if log_format not in _LOGS:
        path = directory / "audit.jsonl"
        with AuditWriter.open(
            path,
            fsync="off",
            checkpoint_every=25,
            rotate_bytes=24_000,
            signing_key=key_pair.private_path,
            format_version=log_format,
        ) as writer:
            for index in range(90):
                writer.append("tool_result", gateway_fields(index))
        names = [
            *sorted(p.name for p in directory.iterdir() if p.name.startswith("audit.jsonl.0")),
            "audit.jsonl",
        ]
        _LOGS[log_format] = (
            names,
            [(directory / name).read_bytes() for name in names],
            (directory / "audit.jsonl.anchor").read_bytes(),
        )
    return _LOGS[log_format]


def _write(directory: Path, names: list[str], contents: list[bytes], anchor: bytes) -> Path:
    for name, content in zip(names, contents, strict=True):
        (directory / name).write_bytes(content)
    (directory / "audit.jsonl.anchor").write_bytes(anchor)
    return directory / "audit.jsonl"


def _serial_and_parallel(path: Path, key: Path) -> tuple[VerificationReport, ...]:
    return tuple(verify_log([path], public_key=key, workers=workers) for workers in (1, 2, 3))


def test_the_segmented_log_is_intact_in_every_mode(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, key_pair: KeyPairFiles, log_format: int
) -> None:
    names, contents, anchor = _segmented_log(tmp_path_factory.mktemp("source"), key_pair, log_format)
    assert len(names) >= 4
    reports = _serial_and_parallel(_write(tmp_path, names, contents, anchor), key_pair.public_path)
    assert all(report.intact for report in reports)
    assert reports[0] == reports[1] == reports[2]
    assert reports[0].records_checked > 90


#: Byte flips per format: three formats share about the CI time two had at 80 (each example
#: verifies a log three ways, forking); ``DSH_FUZZ_EXAMPLES=N`` runs N for a longer search.
BYTE_FLIPS = int(os.environ.get("DSH_FUZZ_EXAMPLES") or 45)


@settings(max_examples=BYTE_FLIPS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_changed_byte_anywhere_is_found_serially_and_in_parallel(
    tmp_path_factory: pytest.TempPathFactory, key_pair: KeyPairFiles, log_format: int, data: st.DataObject
) -> None:
    """Any byte of any segment, whatever it becomes (a hex digit's case, a newline, a digit of a
    seq): the log is not intact, and every mode reports exactly the same findings."""
    names, contents, anchor = _segmented_log(tmp_path_factory.mktemp("source"), key_pair, log_format)
    segment = data.draw(st.integers(0, len(names) - 1), label="segment")
    original = contents[segment]
    position = data.draw(st.integers(0, len(original) - 1), label="position")
    was = original[position]
    nearby = {was ^ 0x20, was + 1 & 0xFF, was - 1 & 0xFF, ord("\n"), ord("0")}  # case, neighbour digit
    replacement = data.draw(
        st.one_of(st.sampled_from(sorted(nearby)), st.integers(0, 255)).filter(lambda b: b != was),
        label="byte",
    )
    changed = [*contents]
    changed[segment] = original[:position] + bytes([replacement]) + original[position + 1 :]
    path = _write(tmp_path_factory.mktemp("flip"), names, changed, anchor)
    serial, two, three = _serial_and_parallel(path, key_pair.public_path)
    assert not serial.intact
    assert two == serial and three == serial
    # Found where it is, as the detailed checks of that line alone would: a shortcut that let the
    # line through would be caught later (at the next link or checkpoint), on another line.
    if not (segment == len(names) - 1 and position == len(original) - 1):  # the last newline: a torn tail
        assert serial.first_error is not None
        assert (serial.first_error.file, serial.first_error.line) == (
            str(path.with_name(names[segment])),
            original.count(b"\n", 0, position) + 1,
        )


def _rehashed(line: bytes, log_format: int) -> bytes:
    """``line`` (with its newline) with its ``hash`` recomputed, as a forger without the key can."""
    body = line[:-1]
    stated = orjson.loads(body)["hash"]
    if log_format in (2, 3):
        fresh = v2_line_hash(body, log_format)
    else:
        without = without_member(body, "hash", stated)
        assert without is not None
        fresh = record_hash(without)
    assert fresh is not None
    return body.replace(stated.encode(), fresh.encode()) + b"\n"


@pytest.mark.parametrize("where", ["first record after the segment start", "middle", "last record"])
def test_a_rehashed_record_inside_a_signed_range_is_found_in_every_mode(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    key_pair: KeyPairFiles,
    log_format: int,
    where: str,
) -> None:
    """An edited record whose own hash is recomputed hashes right: only the next record's link
    (or, for the segment's last, the next segment's) and the Merkle root a signed checkpoint
    covers can catch it, in one process and in shares alike."""
    names, contents, anchor = _segmented_log(tmp_path_factory.mktemp("source"), key_pair, log_format)
    path = _write(tmp_path, names, contents, anchor)
    lines = (tmp_path / names[1]).read_bytes().splitlines(keepends=True)
    ordinary = [i for i, line in enumerate(lines) if b'"kind":"tool_result"' in line]
    index = {"first record after the segment start": 0, "middle": len(ordinary) // 2, "last record": -1}[
        where
    ]
    target = ordinary[index]
    edited = lines[target].replace(b'"outcome":"allow"', b'"outcome":"deny"', 1)
    assert edited != lines[target]
    lines[target] = _rehashed(edited, log_format)
    (tmp_path / names[1]).write_bytes(b"".join(lines))
    reports = _serial_and_parallel(path, key_pair.public_path)
    assert not reports[0].intact and reports[0].first_error is not None
    assert reports[0].first_error.line is not None and reports[0].first_error.line > target
    assert reports[0] == reports[1] == reports[2]


def _child_fails(path: str, anchor_seq: int | None, is_last: bool) -> parallel.SegmentScan:
    raise RuntimeError("a scanner that breaks mid-share")


def test_a_child_that_raises_leaves_its_share_to_the_main_process(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    key_pair: KeyPairFiles,
    log_format: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names, contents, anchor = _segmented_log(tmp_path_factory.mktemp("source"), key_pair, log_format)
    path = _write(tmp_path, names, contents, anchor)
    serial = verify_log([path], public_key=key_pair.public_path, workers=1)
    monkeypatch.setattr(parallel, "scan_segment", _child_fails)
    assert verify_log([path], public_key=key_pair.public_path, workers=2) == serial


def test_processes_are_sized_to_the_work(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    key_pair: KeyPairFiles,
    log_format: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Left to us (``workers=None``, the ``verify`` command's default), a small log is walked by one
    process; one process per ``SHARE_FROM_BYTES`` of segments, up to the usable cores."""
    names, contents, anchor = _segmented_log(tmp_path_factory.mktemp("source"), key_pair, log_format)
    path = _write(tmp_path, names, contents, anchor)
    files = [tmp_path / name for name in names]
    calls: list[int] = []
    real = verify_run.walk_in_shares

    def counted(walker: object, files: list[Path], processes: int, on_segment: object = None) -> None:
        calls.append(processes)
        real(walker, files, processes, on_segment)  # type: ignore[arg-type]

    monkeypatch.setattr(verify_run, "walk_in_shares", counted)
    serial = verify_log([path], public_key=key_pair.public_path, workers=None)
    assert calls == [] and parallel.processes_for(files, None) == 1
    monkeypatch.setattr(parallel, "SHARE_FROM_BYTES", sum(map(len, contents)) // 2)
    monkeypatch.setattr(parallel, "usable_cores", lambda: 8)
    assert parallel.processes_for(files, None) == 2
    assert verify_log([path], public_key=key_pair.public_path, workers=None) == serial
    assert calls == [2]
    assert parallel.processes_for(files, 64) == len(files)
    assert parallel.processes_for(files[:1], None) == 1


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30), st.integers(1, 12))
def test_shares_are_contiguous_non_empty_and_near_even(sizes: list[int], count: int) -> None:
    shares = parallel.contiguous_shares(sizes, count)
    assert [index for share in shares for index in share] == list(range(len(sizes)))
    assert all(len(share) for share in shares)
    assert len(shares) <= min(count, len(sizes))
    # Each cut is the boundary nearest its even part: no share exceeds its part by more than a segment.
    total = sum(sizes)
    for share in shares:
        assert sum(sizes[i] for i in share) <= total / count + 2 * max(sizes) + 1
