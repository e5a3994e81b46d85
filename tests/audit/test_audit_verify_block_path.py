"""The hot loop of formats 2 and 3 must give exactly the report the slow path gives, line by line,
for any log: intact, or damaged in the ways a crash or a forger damages one (a byte changed, a line
dropped, doubled, swapped, two lines joined, a foreign line), read in chunks of any size."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from audit_helpers import WriteLog
from dsh_policy.audit.cli import verify_main
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.verify import VerificationReport, parallel, verify_log
from dsh_policy.audit.verify import lines as verify_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Damage = Callable[[list[bytes]], list[bytes]]


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def log_format(request: pytest.FixtureRequest) -> int:
    """Both formats whose hash covers the bytes as written share the hot loop."""
    return int(request.param)


def _slow_path_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every format 2 or 3 line through the detailed checks: the format 1 reader hands them to a
    hot loop that settles only format 1 records."""
    monkeypatch.setattr(verify_lines.SegmentLines, "bytes_format", lambda self: 0)


def _both(
    paths: list[Path], key: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> tuple[VerificationReport, VerificationReport]:
    with monkeypatch.context() as patch:
        patch.setattr(verify_lines, "_READ_CHUNK", chunk)
        fast = verify_log(paths, public_key=key, workers=1)
        _slow_path_only(patch)
        slow = verify_log(paths, public_key=key, workers=1)
    return fast, slow


def _segments(write_log: WriteLog, key: KeyPairFiles, count: int = 60) -> list[Path]:
    path = write_log(count, signing_key=key.private_path, checkpoint_every=7, rotate_bytes=12_000)
    return sorted(
        (
            p
            for p in path.parent.iterdir()
            if p.name.startswith(path.name) and p.suffix not in {".anchor", ".lock"}
        ),
        key=lambda p: (p == path, p.name),
    )


_DAMAGE: dict[str, Damage] = {
    "intact": lambda lines: lines,
    "byte changed": lambda lines: [*lines[:5], lines[5].replace(b"main", b"mainx", 1), *lines[6:]],
    "line dropped": lambda lines: [*lines[:5], *lines[6:]],
    "line doubled": lambda lines: [*lines[:6], lines[5], *lines[6:]],
    "lines swapped": lambda lines: [*lines[:5], lines[6], lines[5], *lines[7:]],
    "lines joined": lambda lines: [*lines[:5], lines[5][:-1] + lines[6], *lines[7:]],
    "trailer cut": lambda lines: [*lines[:5], lines[5][:-40] + b"\n", *lines[6:]],
    "foreign line": lambda lines: [*lines[:5], b'{"v":2,"log_id":"x"}\n', *lines[5:]],
    "short line": lambda lines: [*lines[:5], lines[5][:60] + lines[5][-76:], *lines[6:]],
    "trailer only": lambda lines: [*lines[:5], lines[5][-76:], *lines[6:]],
    "checkpoint dropped": lambda lines: [line for line in lines if b'"kind":"checkpoint"' not in line[:200]],
    "not JSON": lambda lines: [*lines[:5], b"garbage\n", *lines[5:]],
}


@pytest.mark.parametrize("chunk", [97, 4096, 1 << 18])
@pytest.mark.parametrize("damage", list(_DAMAGE), ids=list(_DAMAGE))
def test_the_block_path_reports_what_the_slow_path_reports(
    write_log: WriteLog,
    key_pair: KeyPairFiles,
    monkeypatch: pytest.MonkeyPatch,
    damage: str,
    chunk: int,
) -> None:
    paths = _segments(write_log, key_pair)
    assert len(paths) >= 3
    target = paths[1]
    target.write_bytes(b"".join(_DAMAGE[damage](target.read_bytes().splitlines(keepends=True))))
    fast, slow = _both(paths, key_pair.public_path, monkeypatch, chunk)
    assert fast == slow
    assert fast.intact == (damage == "intact")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_byte_changed_anywhere_is_reported_alike(
    write_log: WriteLog,
    key_pair: KeyPairFiles,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
) -> None:
    source = tmp_path / "source"
    if not source.exists():
        source.mkdir()
        for path in _segments(write_log, key_pair, 30):
            shutil.copy(path, source / path.name)
    copy = tmp_path / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source, copy)
    paths = sorted(copy.iterdir(), key=lambda p: (p.name == "audit.jsonl", p.name))
    target = paths[data.draw(st.integers(0, len(paths) - 1))]
    content = bytearray(target.read_bytes())
    at = data.draw(st.integers(0, len(content) - 1))
    content[at] = data.draw(st.sampled_from(b'0a{}",:\n x'))
    target.write_bytes(bytes(content))
    fast, slow = _both(paths, key_pair.public_path, monkeypatch, data.draw(st.sampled_from([113, 1 << 18])))
    assert fast == slow


_PARALLEL_CASES = [
    ("intact", 1),
    ("byte changed", 0),
    ("byte changed", -1),
    ("line dropped", 1),
    ("lines joined", 1),
    ("foreign line", 1),
    ("checkpoint dropped", 1),
]


@pytest.mark.parametrize(("damage", "segment"), _PARALLEL_CASES)
def test_segments_verified_in_parallel_give_the_serial_report(
    write_log: WriteLog, key_pair: KeyPairFiles, damage: str, segment: int
) -> None:
    paths = _segments(write_log, key_pair)
    target = paths[segment]
    target.write_bytes(b"".join(_DAMAGE[damage](target.read_bytes().splitlines(keepends=True))))
    serial = verify_log([paths[-1]], public_key=key_pair.public_path, workers=1)  # siblings found
    assert verify_log([paths[-1]], public_key=key_pair.public_path, workers=3) == serial
    assert serial.intact == (damage == "intact")


def test_a_segment_left_out_is_reported_alike_in_parallel(
    write_log: WriteLog, key_pair: KeyPairFiles
) -> None:
    paths = _segments(write_log, key_pair)
    named = [paths[0], *paths[2:]]
    serial = verify_log(named, public_key=key_pair.public_path, workers=1)
    assert not serial.intact
    assert verify_log(named, public_key=key_pair.public_path, workers=2) == serial


def _worker_dies(path: str, anchor_seq: int | None, is_last: bool) -> None:
    os._exit(3)  # a worker killed (out of memory, a signal) mid-scan


def test_a_worker_that_dies_leaves_its_segments_to_the_main_process(
    write_log: WriteLog, key_pair: KeyPairFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _segments(write_log, key_pair)
    serial = verify_log(paths, public_key=key_pair.public_path, workers=1)
    monkeypatch.setattr(parallel, "scan_segment", _worker_dies)
    assert verify_log(paths, public_key=key_pair.public_path, workers=2) == serial


def test_verify_jobs_gives_the_same_report(
    write_log: WriteLog, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _segments(write_log, key_pair)
    outputs = []
    for jobs in ("1", "2"):
        code = verify_main(
            [str(paths[-1]), "--key", str(key_pair.public_path), "--jobs", jobs, "--format", "json"]
        )
        assert code == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert verify_main([str(paths[-1]), "--jobs", "0"]) == 2


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**53 - 1), st.integers(min_value=0, max_value=2500))
def test_the_expected_seq_text_is_every_seq_formatted(first: int, count: int) -> None:
    """The block path compares the captured seqs with text built a thousand at a time from
    precomputed tails; it must be exactly every seq in decimal, across thousands and digit counts."""
    from dsh_policy.audit.verify.fast_path_v2 import seq_text

    assert seq_text(first, count) == b"".join(b"%d " % seq for seq in range(first, first + count))
    for edge in (0, 999, 1000, 999_999, 10**15 - 2):
        assert seq_text(edge, 3) == b"".join(b"%d " % seq for seq in range(edge, edge + 3))
