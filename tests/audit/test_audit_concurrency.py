"""Writers that share a log never lose or fork it: stale writers, rotation crashes, failed recoveries."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from audit_helpers import gateway_fields
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.segments import discover_segments, rotated_segments
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriteError, AuditWriter
from dsh_policy.audit.writer import rotation as rotation_module


class _Crash(BaseException):
    """Stands for SIGKILL at one exact point: nothing after it runs, no cleanup, no close."""


def _abandon(writer: AuditWriter) -> None:
    """What a killed process leaves: its threads stop, its descriptors go, nothing else happens."""
    writer._lock.closed = True
    writer._flusher.stop()
    writer._release_files()


def _records(path: Path) -> dict[int, str]:
    found: dict[int, str] = {}
    for segment in discover_segments(path):
        for line in segment.read_bytes().splitlines():
            record = orjson.loads(line)
            found[record["seq"]] = record["hash"]
    return found


def _digests(paths: list[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def test_a_writer_rotations_behind_meets_a_segment_holding_only_its_start_and_loses_nothing(
    tmp_path: Path, key_pair: KeyPairFiles
) -> None:
    """The reproduction of issue 11: a writer two or more rotations behind met an active segment
    holding only the segment_start its creator wrote before being killed, took it for a torn tail,
    moved the genuine segment aside without a recovery record, restarted the chain from its stale
    head, and a later rename overwrote rotated segments."""
    path = tmp_path / "audit.jsonl"
    options: dict[str, Any] = {"fsync": "off", "rotate_bytes": 2048, "signing_key": key_pair.private_path}
    stale = AuditWriter.open(path, **options)
    acknowledged = {stale.append("tool_result", gateway_fields(0)).seq: ""}
    fast = AuditWriter.open(path, **options)
    for index in range(1, 12):
        receipt = fast.append("tool_result", gateway_fields(index))
        acknowledged[receipt.seq] = receipt.hash
    assert len(rotated_segments(path)) >= 2
    with fast._locked():
        fast._rotation.rotate()  # the creator installs a new segment ...
    _abandon(fast)  # ... and is killed before its next record
    assert len(path.read_bytes().splitlines()) == 1  # only the segment_start
    rotated_before = _digests([p for _, p in rotated_segments(path)])

    receipt = stale.append("tool_result", gateway_fields(99))  # two or more rotations behind
    acknowledged[receipt.seq] = receipt.hash
    stale.close()

    assert not list(tmp_path.glob("audit.jsonl.torn-*"))
    rotated_after = _digests([p for _, p in rotated_segments(path)])
    assert {name: rotated_after[name] for name in rotated_before} == rotated_before  # none overwritten
    records = _records(path)
    assert sorted(records) == list(range(len(records)))
    assert all(records[seq] == digest for seq, digest in acknowledged.items() if digest)
    report = verify_log([path], public_key=key_pair.public_path)
    assert report.intact, report.errors[:3]
    assert report.recoveries == ()


_ROTATION_POINTS = ("before_next_segment", "before_link", "before_rename", "before_directory_fsync")


@pytest.mark.parametrize("point", _ROTATION_POINTS)
def test_a_crash_at_any_point_of_rotation_leaves_a_log_that_verifies_without_reopening(
    tmp_path: Path, key_pair: KeyPairFiles, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    path = tmp_path / "audit.jsonl"
    writer = AuditWriter.open(path, fsync="always", rotate_bytes=2048, signing_key=key_pair.private_path)
    writer.append("tool_result", gateway_fields(0))
    acknowledged = {}

    def crash(*_: Any, **__: Any) -> None:
        raise _Crash(point)

    real_link, real_rename = os.link, os.rename
    if point == "before_next_segment":
        monkeypatch.setattr(rotation_module.Rotation, "remove_stale_temporaries", crash)
    elif point == "before_link":
        monkeypatch.setattr(rotation_module.os, "link", crash)
    elif point == "before_rename":
        monkeypatch.setattr(rotation_module.os, "rename", crash)
    else:
        monkeypatch.setattr(rotation_module, "fsync_directory", crash)
    with pytest.raises(_Crash):
        for index in range(1, 50):
            receipt = writer.append("tool_result", gateway_fields(index))
            acknowledged[receipt.seq] = receipt.hash
    monkeypatch.setattr(rotation_module.os, "link", real_link)
    monkeypatch.setattr(rotation_module.os, "rename", real_rename)
    monkeypatch.undo()
    _abandon(writer)

    as_left = verify_log([path], public_key=key_pair.public_path, live=True)
    assert as_left.intact, (point, as_left.errors[:3])
    assert {w.reason.value for w in as_left.warnings} <= {"TORN_TAIL", "UNSIGNED_TAIL"}
    assert verify_log([path]).intact

    reopened = AuditWriter.open(path, fsync="always", rotate_bytes=2048, signing_key=key_pair.private_path)
    receipt = reopened.append("tool_result", gateway_fields(100))
    acknowledged[receipt.seq] = receipt.hash
    reopened.close()
    assert not list(tmp_path.glob("audit.jsonl.next*"))
    records = _records(path)
    assert sorted(records) == list(range(len(records)))
    assert all(records[seq] == digest for seq, digest in acknowledged.items())
    strict = verify_log([path], public_key=key_pair.public_path)
    assert strict.intact, (point, strict.errors[:3])


def test_a_segment_holding_only_its_start_is_valid_for_the_writer_and_the_verifier(
    tmp_path: Path, key_pair: KeyPairFiles
) -> None:
    path = tmp_path / "audit.jsonl"
    writer = AuditWriter.open(path, fsync="off", rotate_bytes=2048, signing_key=key_pair.private_path)
    for index in range(6):
        writer.append("tool_result", gateway_fields(index))
    with writer._locked():
        writer._rotation.rotate()
    _abandon(writer)
    start_only = path.read_bytes()
    assert len(start_only.splitlines()) == 1
    assert verify_log([path], public_key=key_pair.public_path, live=True).intact
    AuditWriter.open(path, fsync="off", signing_key=key_pair.private_path).close()
    assert path.read_bytes().startswith(start_only)  # kept, not moved aside
    assert not list(tmp_path.glob("audit.jsonl.torn-*"))
    assert verify_log([path], public_key=key_pair.public_path).intact


def test_a_rotation_never_overwrites_an_existing_rotated_segment(
    tmp_path: Path, key_pair: KeyPairFiles
) -> None:
    path = tmp_path / "audit.jsonl"
    writer = AuditWriter.open(path, fsync="off", rotate_bytes=2048, signing_key=key_pair.private_path)
    writer.append("tool_result", gateway_fields(0))
    squatter = path.with_name("audit.jsonl.000000")
    squatter.write_bytes(b"someone else's file\n")
    with pytest.raises(AuditWriteError, match="refusing to overwrite"):
        for index in range(1, 20):
            writer.append("tool_result", gateway_fields(index))
    assert squatter.read_bytes() == b"someone else's file\n"
    assert not list(tmp_path.glob("audit.jsonl.next*"))
    _abandon(writer)


def test_a_failed_recovery_leaves_no_empty_side_file(
    tmp_path: Path, key_pair: KeyPairFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "audit.jsonl"
    AuditWriter.open(path, fsync="off").close()
    with path.open("ab") as handle:
        handle.write(b'{"torn":')
    real_write = os.write

    def disk_full(fd: int, data: bytes) -> int:
        if data == b'{"torn":':
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(rotation_module.os, "write", disk_full)
    for _ in range(3):
        with pytest.raises(AuditWriteError):
            AuditWriter.open(path, fsync="off")
    monkeypatch.undo()
    assert not list(tmp_path.glob("audit.jsonl.torn-*"))
    AuditWriter.open(path, fsync="off").close()
    sides = list(tmp_path.glob("audit.jsonl.torn-*"))
    assert len(sides) == 1 and sides[0].read_bytes() == b'{"torn":'
    assert len(verify_log([path]).recoveries) == 1
