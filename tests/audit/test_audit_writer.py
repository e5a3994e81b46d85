"""The writer: chained canonical lines, fsync modes, reopen, rotation, checkpoints, recovery."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from audit_helpers import WriteLog, gateway_fields, read_lines
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.record_hash import genesis_prev
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditRecordError, AuditWriteError, AuditWriter


def _records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in read_lines(path)]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_records_carry_writer_fields_and_chain_from_a_genesis_tied_to_the_log_id(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(
        path, log_id="log-1", fsync="off", checkpoint_every=None, format_version=version
    ) as writer:
        receipt = writer.append("tool_result", gateway_fields(1))
    records = _records(path)
    assert [r["kind"] for r in records] == ["segment_start", "tool_result", "checkpoint"]
    assert [r["seq"] for r in records] == [0, 1, 2]
    assert records[0]["prev"] == genesis_prev("log-1")
    assert records[1]["prev"] == records[0]["hash"] and records[2]["prev"] == records[1]["hash"]
    assert (receipt.seq, receipt.hash) == (1, records[1]["hash"])
    assert records[1]["call"] == gateway_fields(1)["call"]
    assert records[1]["ts"].endswith("Z") and records[1]["ts"][10] == "T"
    assert all(r["log_id"] == "log-1" and r["v"] == version for r in records)


@pytest.mark.parametrize(("old_version", "asked"), [(1, 3), (2, 3), (3, 2), (3, 1)])
def test_new_logs_are_format_2_and_a_log_is_continued_in_its_own_format(
    tmp_path: Path, old_version: int, asked: int
) -> None:
    """Format 2 stays the default for one release (writers before format 3 would mix leaf rules
    in a format 3 log); whatever a writer is asked for, an existing log keeps its format."""
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off") as writer:
        writer.append("tool_result", gateway_fields(1))
    line = path.read_bytes().splitlines()[1]
    assert line.startswith(b'{"v":2,"log_id":') and line[-75:-66] == b',"hash":"'
    old = tmp_path / "old.jsonl"
    with AuditWriter.open(old, fsync="off", format_version=old_version) as writer:
        writer.append("tool_result", gateway_fields(1))
    with AuditWriter.open(old, fsync="off", format_version=asked) as writer:
        writer.append("tool_result", gateway_fields(2))
    assert {r["v"] for r in _records(old)} == {old_version}
    assert verify_log([old]).intact


@pytest.mark.parametrize("where", ["last line", "earlier line"])
def test_a_log_in_a_format_this_writer_does_not_know_is_refused_not_continued(
    tmp_path: Path, where: str
) -> None:
    """A newer release's record is neither moved aside as torn (it is whole) nor continued in an
    older format (the Merkle tree would mix leaf rules): the writer refuses, naming the record."""
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", checkpoint_every=None) as writer:
        for index in range(3):
            writer.append("tool_result", gateway_fields(index))
    lines = path.read_bytes().splitlines(keepends=True)
    target = -1 if where == "last line" else -2
    lines[target] = lines[target].replace(b'{"v":2,', b'{"v":9,', 1)
    before = b"".join(lines)
    path.write_bytes(before)
    with pytest.raises(AuditWriteError, match=r"audit format 9; this writer knows formats 1, 2, 3"):
        AuditWriter.open(path, fsync="off")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "torn" in p.name) == []


def test_a_format_3_record_hash_is_its_rfc6962_leaf_and_checkpoints_sign_the_tree_of_them(
    tmp_path: Path,
) -> None:
    """Format 3 hashes 0x00, its tag and the bytes before the hash member: the RFC 6962 leaf hash
    of tag + bytes, so the Merkle tree is built on the record hashes themselves."""
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", checkpoint_every=None, format_version=3) as writer:
        for index in range(5):
            writer.append("tool_result", gateway_fields(index))
    lines = path.read_bytes().splitlines()
    for line in lines:
        body = line[: line.rindex(b',"hash":"')]
        stated = orjson.loads(line)["hash"]
        assert hashlib.sha256(b"\x00dsh-policy/audit/record/v3\x00" + body).hexdigest() == stated
    records = _records(path)
    checkpoint = records[-1]["checkpoint"]
    hashes = [bytes.fromhex(r["hash"]) for r in records[:-1]]

    def root(leaves: list[bytes]) -> bytes:  # RFC 6962 MTH over leaf hashes given
        if len(leaves) == 1:
            return leaves[0]
        split = 1 << ((len(leaves) - 1).bit_length() - 1)
        return hashlib.sha256(b"\x01" + root(leaves[:split]) + root(leaves[split:])).digest()

    assert checkpoint["merkle_root"] == root(hashes).hex()
    assert verify_log([path]).intact


@pytest.mark.parametrize("field", ["seq", "hash", "prev", "kind", "log_id", "ts", "v"])
def test_caller_fields_may_not_collide_with_writer_fields(tmp_path: Path, field: str) -> None:
    with (
        AuditWriter.open(tmp_path / "a.jsonl", fsync="off") as writer,
        pytest.raises(AuditRecordError, match=field),
    ):
        writer.append("tool_result", {field: 1})


@pytest.mark.parametrize("kind", ["checkpoint", "segment_start", "recovery", ""])
def test_writer_kinds_are_reserved(tmp_path: Path, kind: str) -> None:
    with AuditWriter.open(tmp_path / "a.jsonl", fsync="off") as writer, pytest.raises(AuditRecordError):
        writer.append(kind, {})


def test_a_float_is_rejected_with_its_path_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, fsync="off", checkpoint_every=None) as writer:
        before = path.stat().st_size
        with pytest.raises(AuditRecordError, match=r"\$\.call\.args\.ratio: float"):
            writer.append("tool_result", {"call": {"args": {"ratio": 0.5}}})
        assert path.stat().st_size == before
        writer.append("tool_result", {"ok": True})
    assert verify_log([path]).intact


def test_reopening_continues_the_chain_and_rejects_another_log_id(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, log_id="L", fsync="off") as writer:
        writer.append("tool_result", gateway_fields(0))
    with AuditWriter.open(path, fsync="off") as writer:
        assert writer.log_id == "L"
        assert writer.append("tool_result", gateway_fields(1)).seq == 3
    with pytest.raises(AuditWriteError, match="log id"):
        AuditWriter.open(path, log_id="other", fsync="off")
    report = verify_log([path])
    assert report.intact and report.records_checked == 5


@pytest.mark.parametrize("mode", ["always", "batch", "off"])
def test_fsync_modes_report_durability_in_the_receipt(tmp_path: Path, mode: Any) -> None:
    with AuditWriter.open(tmp_path / "a.jsonl", fsync=mode, batch_records=3, batch_ms=10_000) as writer:
        receipts = [writer.append("tool_result", {"i": i}) for i in range(3)]
    durable = [r.durable for r in receipts]
    # batch: the third record reaches the bound and hands the background fsync its group commit;
    # none waits for it (the third may only read True if that fsync already finished meanwhile).
    expected = {"always": [True] * 3, "batch": [False] * 2, "off": [False] * 3}
    assert durable[: len(expected[mode])] == expected[mode]


def test_batch_mode_syncs_within_its_time_bound_even_when_appends_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    with AuditWriter.open(tmp_path / "a.jsonl", fsync="batch", batch_records=1000, batch_ms=20) as writer:
        synced.clear()
        writer.append("tool_result", {"i": 1})
        deadline = time.monotonic() + 5
        while not synced and time.monotonic() < deadline:
            time.sleep(0.005)
        assert synced, "the background group commit never fsynced the pending record"


def test_an_fsync_error_is_fatal_and_never_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = AuditWriter.open(tmp_path / "a.jsonl", fsync="always")
    writer.append("tool_result", {"i": 1})
    calls: list[int] = []

    def failing_fsync(fd: int) -> None:
        calls.append(fd)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(AuditWriteError, match="fsync failed"):
        writer.append("tool_result", {"i": 2})
    with pytest.raises(AuditWriteError, match="failed earlier"):
        writer.append("tool_result", {"i": 3})
    assert len(calls) == 1
    writer.close()


def test_periodic_checkpoints_by_count_and_a_closing_checkpoint(write_log: WriteLog) -> None:
    path = write_log(10, checkpoint_every=4, checkpoint_seconds=None)
    kinds = [r["kind"] for r in _records(path)]
    checkpoints = [i for i, k in enumerate(kinds) if k == "checkpoint"]
    assert checkpoints == [4, 9, 13]  # after 4 records (incl. segment_start), every 4, then on close
    report = verify_log([path])
    assert report.intact and report.checkpoints_valid == 3 and report.unanchored_records == 0


def test_periodic_checkpoints_by_time(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, fsync="off", checkpoint_every=None, checkpoint_seconds=0.05) as writer:
        writer.append("tool_result", {"i": 1})
        deadline = time.monotonic() + 5
        while b'"checkpoint"' not in path.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        reasons = [r["checkpoint"]["reason"] for r in _records(path) if r["kind"] == "checkpoint"]
        assert reasons == ["interval"]


def test_signed_checkpoints_carry_key_id_merkle_root_and_signature(
    write_log: WriteLog, key_pair: KeyPairFiles
) -> None:
    path = write_log(3, signing_key=key_pair.private_path)
    checkpoint = _records(path)[-1]["checkpoint"]
    assert checkpoint["key_id"] == key_pair.key_id
    assert len(checkpoint["signature"]) == 128 and len(checkpoint["merkle_root"]) == 64
    assert (checkpoint["first_seq"], checkpoint["last_seq"], checkpoint["reason"]) == (0, 3, "close")
    assert verify_log([path], public_key=key_pair.public_path).intact


def test_rotation_links_segments_and_continues_the_global_sequence(write_log: WriteLog) -> None:
    path = write_log(40, rotate_bytes=4096)
    segments = sorted(path.parent.glob("audit.jsonl.0*"))
    assert len(segments) >= 3
    first_of_second = _records(segments[1])[0]
    last_of_first = _records(segments[0])[-1]
    assert first_of_second["kind"] == "segment_start"
    assert first_of_second["segment"]["previous"] == {
        "name": segments[0].name,
        "last_seq": last_of_first["seq"],
        "last_hash": last_of_first["hash"],
    }
    assert first_of_second["seq"] == last_of_first["seq"] + 1
    assert last_of_first["checkpoint"]["reason"] == "rotation"
    report = verify_log([path])
    assert report.intact and len(report.files) == len(segments) + 1


def test_a_torn_tail_is_moved_aside_and_recorded_never_silently_truncated(write_log: WriteLog) -> None:
    path = write_log(5)
    intact_size = path.stat().st_size
    torn = b'{"call":{"args":{"command":"rm -'
    with path.open("ab") as handle:
        handle.write(torn)
    with AuditWriter.open(path, fsync="off") as writer:
        writer.append("tool_result", gateway_fields(99))
    side_files = list(path.parent.glob("audit.jsonl.torn-*"))
    assert [p.read_bytes() for p in side_files] == [torn]
    recovery = next(r for r in _records(path) if r["kind"] == "recovery")["recovery"]
    assert recovery["offset"] == intact_size and recovery["length"] == len(torn)
    assert recovery["side_file"] == side_files[0].name
    report = verify_log([path])
    assert report.intact and len(report.recoveries) == 1
    reported = report.recoveries[0]
    assert (reported.offset, reported.length, reported.side_file) == (
        intact_size,
        len(torn),
        side_files[0].name,
    )
    assert reported.sha256 == hashlib.sha256(torn).hexdigest()


def test_a_complete_last_line_that_does_not_verify_is_moved_aside(write_log: WriteLog) -> None:
    path = write_log(3)
    lines = read_lines(path)
    forged = lines[-1].replace(b'"reason":"close"', b'"reason":"manual"')
    path.write_bytes(b"".join(lines[:-1]) + forged)
    with AuditWriter.open(path, fsync="off"):
        pass
    assert [p.read_bytes() for p in path.parent.glob("audit.jsonl.torn-*")] == [forged]
    assert verify_log([path]).intact


def test_a_side_file_orphaned_by_a_crash_during_recovery_is_recorded_on_the_next_open(
    write_log: WriteLog,
) -> None:
    path = write_log(2)
    orphan = path.parent / f"audit.jsonl.torn-000000-{path.stat().st_size}"
    orphan.write_bytes(b"partial")
    with AuditWriter.open(path, fsync="off"):
        pass
    recoveries = [r["recovery"] for r in _records(path) if r["kind"] == "recovery"]
    assert [r["side_file"] for r in recoveries] == [orphan.name]


def test_appending_after_close_is_an_error(tmp_path: Path) -> None:
    writer = AuditWriter.open(tmp_path / "a.jsonl", fsync="off")
    writer.close()
    writer.close()  # idempotent
    with pytest.raises(AuditWriteError, match="closed"):
        writer.append("tool_result", {})


def test_keygen_private_key_is_owner_only(key_pair: KeyPairFiles) -> None:
    assert stat.S_IMODE(key_pair.private_path.stat().st_mode) == 0o600
    assert key_pair.key_id.startswith("ed25519:")


def test_reopening_reads_a_large_segment_in_bounded_chunks(
    write_log: WriteLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dsh_policy.audit.writer.recovery as recovery_module

    path = write_log(40, checkpoint_every=None)
    with path.open("ab") as handle:
        handle.write(b'{"torn')
    monkeypatch.setattr(recovery_module, "_READ_CHUNK", 2048)
    with AuditWriter.open(path, fsync="off") as writer:
        # start 0, records 1-40, closing checkpoint 41, recovery 42
        assert writer.append("tool_result", gateway_fields(40)).seq == 43
    report = verify_log([path])
    assert report.intact and len(report.recoveries) == 1


def test_a_crash_between_rename_and_new_segment_is_completed_once_on_reopen(write_log: WriteLog) -> None:
    path = write_log(40, rotate_bytes=6000)
    rotated = sorted(path.parent.glob("audit.jsonl.0*"))
    # The moment after a rename: the last rotated segment ends in its rotation checkpoint and the
    # active file does not exist yet (nor does an anchor newer than that checkpoint).
    path.unlink()
    path.with_name("audit.jsonl.anchor").unlink()
    assert b'"reason":"rotation"' in read_lines(rotated[-1])[-1]
    with AuditWriter.open(path, fsync="off") as writer:
        writer.append("tool_result", gateway_fields(99))
    assert sorted(path.parent.glob("audit.jsonl.0*")) == rotated  # completed once, no empty segment
    first = _records(path)[0]
    assert first["kind"] == "segment_start" and first["segment"]["previous"]["name"] == rotated[-1].name
    assert verify_log([path]).intact


def test_batch_mode_exports_the_anchor_once_the_group_commit_covers_the_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    anchor = tmp_path / "a.jsonl.anchor"
    with AuditWriter.open(path, fsync="batch", batch_ms=10, checkpoint_every=3) as writer:
        for index in range(3):
            writer.append("tool_result", {"i": index})
        deadline = time.monotonic() + 5
        while not anchor.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        exported = orjson.loads(anchor.read_bytes())
        assert exported["kind"] == "checkpoint" and exported["seq"] == 3
    assert orjson.loads(anchor.read_bytes())["checkpoint"]["reason"] == "close"
    assert verify_log([path]).anchor_file == str(anchor)


def test_threads_sharing_one_writer_produce_one_chain(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, fsync="batch", checkpoint_every=50) as writer:
        threads = [
            threading.Thread(
                target=lambda t=t: [writer.append("tool_result", {"t": t, "i": i}) for i in range(100)]
            )
            for t in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    report = verify_log([path])
    assert report.intact and sum(1 for r in _records(path) if r["kind"] == "tool_result") == 400


def test_a_signing_key_readable_by_others_is_refused(tmp_path: Path, key_pair: KeyPairFiles) -> None:
    exposed = tmp_path / "exposed.key"
    exposed.write_bytes(key_pair.private_path.read_bytes())
    exposed.chmod(0o644)
    with pytest.raises(AuditWriteError, match="too open"):
        AuditWriter.open(tmp_path / "a.jsonl", signing_key=exposed)


def test_a_background_fsync_failure_surfaces_on_the_next_append_or_at_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    writer = AuditWriter.open(tmp_path / "a.jsonl", fsync="batch", batch_ms=1, checkpoint_every=None)
    monkeypatch.setattr(os, "fsync", failing_fsync)
    writer.append("tool_result", {"i": 1})  # not durable yet: the flusher's fsync fails later
    deadline = time.monotonic() + 5
    while writer.failure is None and time.monotonic() < deadline:
        time.sleep(0.005)
    with pytest.raises(AuditWriteError, match="fsync failed"):
        writer.close()
    monkeypatch.undo()

    other = AuditWriter.open(tmp_path / "b.jsonl", fsync="batch", batch_ms=1, checkpoint_every=None)
    monkeypatch.setattr(os, "fsync", failing_fsync)
    other.append("tool_result", {"i": 1})
    deadline = time.monotonic() + 5
    while other.failure is None and time.monotonic() < deadline:
        time.sleep(0.005)
    with pytest.raises(AuditWriteError, match="failed earlier"):
        other.append("tool_result", {"i": 2})
    other.close()  # already reported: closing quietly releases the files


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_group_commits_handed_to_the_flusher_leave_no_descriptor_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each group commit carries a duplicate descriptor: it is closed after its fsync, whether that
    succeeded or failed, and nothing is left open once the writer is closed."""
    before = _open_descriptors()
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, fsync="batch", batch_records=2, batch_ms=1, checkpoint_every=7) as writer:
        for index in range(300):
            writer.append("tool_result", {"i": index})
    assert _open_descriptors() == before
    assert verify_log([path]).intact

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    writer = AuditWriter.open(tmp_path / "b.jsonl", fsync="batch", batch_records=1, checkpoint_every=None)
    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(AuditWriteError):
        for index in range(1000):  # some commits queue up behind the failing one
            writer.append("tool_result", {"i": index})
    writer.close()  # the append already reported the failure
    assert _open_descriptors() == before


def test_batch_mode_keeps_up_when_the_appender_never_pauses(tmp_path: Path) -> None:
    """The appender, not the flusher's timer, starts group commits while appends keep coming: every
    record is durable soon after the last append, and every checkpoint reached the anchor."""
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, fsync="batch", batch_records=16, batch_ms=2, checkpoint_every=100) as writer:
        receipts = [writer.append("tool_result", {"i": index}) for index in range(1000)]
        deadline = time.monotonic() + 5
        # A commit queued before the appender's own fsync caught up may still be in flight: it
        # finds nothing left to cover and clears the request when it lands.
        commits = writer._commits
        while (commits.synced < commits.written or commits.sync_requested) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert commits.synced == commits.written
        assert commits.sync_requested is False
    records = _records(path)
    assert [r["seq"] for r in records] == list(range(len(records)))
    assert receipts[-1].seq == records[-1]["seq"] - 1  # the last append cued the 10th checkpoint
    anchor = orjson.loads(path.with_name("a.jsonl.anchor").read_bytes())
    assert anchor == [r for r in records if r["kind"] == "checkpoint"][-1]
    assert verify_log([path]).intact


def test_a_group_commit_covers_every_line_written_before_its_fsync_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher counts the lines appended while its commit waited in the queue: an fsync makes
    every line written before it durable, so the next commit is a whole batch away."""
    import queue
    import threading

    gate = threading.Event()

    class GatedQueue(queue.SimpleQueue):  # type: ignore[type-arg]
        def get(self, block: bool = True, timeout: float | None = None) -> Any:
            gate.wait()
            return super().get(block, timeout)

    monkeypatch.setattr(queue, "SimpleQueue", GatedQueue)
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(
        path, fsync="batch", batch_records=3, batch_ms=60_000, checkpoint_every=None, checkpoint_seconds=None
    ) as writer:
        start = writer._commits.synced  # the segment_start, synced inline on open
        receipts = [writer.append("tool_result", {"i": index}) for index in range(5)]
        assert not any(receipt.durable for receipt in receipts)
        assert writer._commits.sync_requested  # the third append queued a commit of three lines
        gate.set()
        deadline = time.monotonic() + 5
        while writer._commits.sync_requested and time.monotonic() < deadline:
            time.sleep(0.005)
        assert writer._commits.synced == start + 5 == writer._commits.written
    assert verify_log([path]).intact


def test_an_append_waits_for_its_fsync_without_holding_the_log_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other processes append while this one waits for the disk: in ``always`` mode the fsync
    runs after the OS lock is released, and the append still returns only once it is done."""
    import fcntl

    path = tmp_path / "a.jsonl"
    other = os.open(path.with_name("a.jsonl.lock"), os.O_RDWR | os.O_CREAT, 0o644)  # another "process"
    lock_free_during_fsync: list[bool] = []
    real_fsync = os.fsync

    def probing_fsync(fd: int) -> None:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock_free_during_fsync.append(False)
        else:
            fcntl.flock(other, fcntl.LOCK_UN)
            lock_free_during_fsync.append(True)
        real_fsync(fd)

    try:
        with AuditWriter.open(path, fsync="always", checkpoint_every=None) as writer:
            monkeypatch.setattr(os, "fsync", probing_fsync)
            receipts = [writer.append("tool_result", {"i": index}) for index in range(3)]
            monkeypatch.setattr(os, "fsync", real_fsync)
    finally:
        os.close(other)
    assert lock_free_during_fsync == [True, True, True]
    assert all(receipt.durable for receipt in receipts)
    assert verify_log([path]).intact


def _clock_ahead(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Move the writer's wall clock forward (segment ages are wall-clock: shared across processes)."""
    import dsh_policy.audit.writer.settings as settings_module

    real = settings_module.time.time
    monkeypatch.setattr(settings_module.time, "time", lambda: real() + seconds)


def test_rotation_by_time_starts_a_linked_segment_once_the_active_one_is_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", rotate_seconds=3600) as writer:
        for index in range(3):
            writer.append("tool_result", gateway_fields(index))
        assert not list(tmp_path.glob("audit.jsonl.0*"))
        _clock_ahead(monkeypatch, 3601)
        writer.append("tool_result", gateway_fields(3))
    (rotated,) = sorted(tmp_path.glob("audit.jsonl.0*"))
    assert _records(rotated)[-1]["checkpoint"]["reason"] == "rotation"
    assert _records(path)[0]["kind"] == "segment_start"
    assert verify_log([path]).intact


def test_segment_age_survives_reopening_so_short_lived_writers_still_rotate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", rotate_seconds=3600) as writer:
        writer.append("tool_result", gateway_fields(0))
    _clock_ahead(monkeypatch, 3601)
    with AuditWriter.open(path, fsync="off", rotate_seconds=3600) as writer:  # a later hook process
        writer.append("tool_result", gateway_fields(1))
    assert len(list(tmp_path.glob("audit.jsonl.0*"))) == 1
    assert verify_log([path]).intact


def test_rotate_seconds_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rotate_seconds"):
        AuditWriter.open(tmp_path / "audit.jsonl", rotate_seconds=0)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_the_fast_paths_leave_hook_told_records_to_the_count(tmp_path: Path, version: int) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", format_version=version) as writer:
        for index in range(30):
            writer.append("tool_result", gateway_fields(index))
            if index % 10 == 3:
                writer.append("hook_told", {"request": f"r{index}", "told": {"action": "deny"}})
    report = verify_log([path])
    assert report.intact and report.hook_told == 3


def _lock_is_free(path: Path) -> bool:
    """Whether another process (another open file description of ``PATH.lock``) could take the lock."""
    import fcntl

    other = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(other, fcntl.LOCK_UN)
        return True
    finally:
        os.close(other)


def test_a_batch_burst_leases_the_log_lock_only_briefly(tmp_path: Path) -> None:
    """In batch mode a burst keeps the OS lock between appends (a lease), but never for more than
    ``batch_records`` appends, and the flusher ends an idle lease after ``batch_ms``; in ``always``
    mode the lock is free as soon as an append returns."""
    path = tmp_path / "a.jsonl"
    with AuditWriter.open(path, fsync="batch", batch_records=8, batch_ms=20, checkpoint_every=None) as writer:
        free_during_burst = []
        for index in range(64):
            writer.append("tool_result", {"i": index})
            free_during_burst.append(_lock_is_free(path))
        assert not free_during_burst[0]  # the lease began
        assert any(free_during_burst)  # and ended within every batch_records appends
        assert not any(
            all(not free for free in free_during_burst[at : at + 9])
            for at in range(len(free_during_burst) - 8)
        )
        writer.append("tool_result", {"i": 64})
        deadline = time.monotonic() + 2.0
        while not _lock_is_free(path) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert _lock_is_free(path)  # the flusher ended the idle lease
    with AuditWriter.open(path, fsync="always", checkpoint_every=None) as writer:
        writer.append("tool_result", {"i": 65})
        assert _lock_is_free(path)
    with AuditWriter.open(path, fsync="batch", batch_records=1, checkpoint_every=None) as writer:
        for index in range(66, 70):
            writer.append("tool_result", {"i": index})
            assert _lock_is_free(path)  # a lease of one append is no lease
    assert verify_log([path]).intact


@pytest.mark.parametrize("version", [1, 2, 3])
def test_two_writers_on_one_log_leasing_in_turn_keep_one_chain(tmp_path: Path, version: int) -> None:
    """Two writers (two open file descriptions of the lock: two processes as far as the lock can
    tell) appending bursts at once in batch mode: each waits for the other's lease, catches up,
    and the log is one chain holding every record."""
    import threading

    path = tmp_path / "a.jsonl"
    AuditWriter.open(path, fsync="batch", checkpoint_every=100, format_version=version).close()
    writers = [
        AuditWriter.open(path, fsync="batch", batch_records=16, checkpoint_every=100) for _ in range(2)
    ]
    try:
        threads = [
            threading.Thread(
                target=lambda w=writer, t=t: [w.append("tool_result", {"t": t, "i": i}) for i in range(300)]
            )
            for t, writer in enumerate(writers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for writer in writers:
            writer.close()
    records = _records(path)
    assert verify_log([path]).intact
    assert {r["v"] for r in records} == {version}
    assert sorted((r["t"], r["i"]) for r in records if r["kind"] == "tool_result") == [
        (t, i) for t in range(2) for i in range(300)
    ]


def test_a_failed_writer_leaves_the_log_lock_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A background fsync failure ends the flusher; it must not leave a lease held, or every other
    process on the log would wait forever."""
    path = tmp_path / "a.jsonl"
    writer = AuditWriter.open(path, fsync="batch", batch_records=4, batch_ms=10, checkpoint_every=None)
    try:

        def failing_fsync(fd: int) -> None:
            raise OSError(errno.EIO, "injected")

        monkeypatch.setattr(os, "fsync", failing_fsync)
        for index in range(3):
            writer.append("tool_result", {"i": index})
        deadline = time.monotonic() + 2.0
        while (writer.failure is None or not _lock_is_free(path)) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert writer.failure is not None and _lock_is_free(path)
        with pytest.raises(AuditWriteError):
            writer.append("tool_result", {"i": 3})
        assert _lock_is_free(path)
    finally:
        monkeypatch.undo()
        writer.close()  # the append above reported the failure already
