"""Central verification of shipped lines, without a server: the stream's order and re-sends do
not matter, a fork is named, a forged segment boundary inside a record's fields is not one."""

from __future__ import annotations

import random
from pathlib import Path

from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.segments import discover_segments
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.fleet.collect import write_archive
from dsh_policy.policy.fleet.evidence import verify_shipped, verify_shipped_bytes
from dsh_policy.policy.fleet.fleet_verify import verify_archive, verify_logs


def shipped_lines(folder: Path, key: Path, count: int = 120) -> list[bytes]:
    log = folder / "audit.jsonl"
    with AuditWriter.open(
        log, fsync="off", checkpoint_every=25, rotate_bytes=4096, signing_key=key
    ) as writer:
        for n in range(count):
            # A record whose own fields spell a segment boundary must not cut the log.
            writer.append("hook_event", {"n": n, "args": {"kind": "segment_start"}})
    return [line for segment in discover_segments(log) for line in segment.read_bytes().splitlines()]


def test_order_and_resends_do_not_matter_and_a_fork_is_named(
    keys: dict[str, KeyPairFiles], tmp_path: Path
) -> None:
    public = str(keys["audit"].public_path)
    lines = shipped_lines(tmp_path, keys["audit"].private_path)
    in_order = verify_shipped_bytes("h", "l", b"\n".join(lines), public_key=public, live=False)
    assert in_order.intact and in_order.lines == len(lines) and len(in_order.report["files"]) > 1

    shuffled = [*lines, *lines[10:30]]
    random.Random(7).shuffle(shuffled)
    resent = verify_shipped_bytes("h", "l", b"\n".join(shuffled), public_key=public, live=False)
    assert resent.intact and resent.duplicates == 20 and not resent.forks

    victim = next(line for line in lines[40:] if b'"kind":"hook_event"' in line)
    forked = [*lines, victim.replace(b'"n":', b'"m":')]
    verdict = verify_shipped("h", "l", forked, public_key=public, live=False)
    assert not verdict.intact and verdict.forks == (int(victim.split(b'"seq":')[1].split(b",")[0]),)

    cut = verify_shipped_bytes("h", "l", b"\n".join(lines[:50] + lines[60:]), public_key=public, live=False)
    assert not cut.intact and "SEQ_GAP" in cut.report["reason_counts"]


def test_an_archive_verified_on_two_processes_flags_the_cut_and_the_rewritten_host(
    keys: dict[str, KeyPairFiles], tmp_path: Path
) -> None:
    public = str(keys["audit"].public_path)
    honest = shipped_lines(tmp_path / "honest", keys["audit"].private_path)
    cut = shipped_lines(tmp_path / "cut", keys["audit"].private_path)
    rewritten = shipped_lines(tmp_path / "rewritten", keys["audit"].private_path)
    victim = next(index for index, line in enumerate(rewritten) if index > 40 and b"hook_event" in line)
    shipped = {
        ("honest", "a"): honest,
        ("cut", "b"): cut[:70] + cut[71:],
        ("rewritten", "c"): [*rewritten, rewritten[victim].replace(b'"n":', b'"m":')],
        ("resent", "d"): [*honest[:30], *honest],
    }
    write_archive(tmp_path / "archive", shipped)
    one = verify_archive(tmp_path / "archive", key=public, live=False, workers=1)
    two = verify_archive(tmp_path / "archive", key=public, live=False, workers=2)
    assert two.workers == 2 and one.workers == 1
    assert two.to_json() | {"seconds": 0, "workers": 0} == one.to_json() | {"seconds": 0, "workers": 0}
    assert two.flagged_hosts == ["cut", "rewritten"]
    by_host = {verdict.host: verdict for verdict in two.logs}
    assert by_host["cut"].report["reason_counts"].get("SEQ_GAP")
    assert by_host["rewritten"].forks and not by_host["rewritten"].intact
    assert by_host["resent"].intact and by_host["resent"].duplicates == 30
    assert by_host["honest"].report["files"][-1] == "honest/a.jsonl"
    assert by_host["honest"].report["files"][0] == "honest/a.jsonl.000000"
    # Lines already pulled verify as their archive does.
    pulled = verify_logs(shipped, key=public, live=False, workers=2)
    assert pulled.to_json() | {"seconds": 0} == two.to_json() | {"seconds": 0}


def test_a_one_segment_log_after_a_rotated_one_is_judged_on_its_own(
    keys: dict[str, KeyPairFiles], tmp_path: Path
) -> None:
    """One process verifies both (largest first): nothing of the rotated log's segments may be
    taken for the next log's (scratch files reused per process once did just that)."""
    rotated = shipped_lines(tmp_path / "rotated", keys["audit"].private_path, count=200)
    log = tmp_path / "single" / "audit.jsonl"
    with AuditWriter.open(
        log, fsync="off", checkpoint_every=25, signing_key=keys["audit"].private_path
    ) as writer:
        for n in range(30):
            writer.append("hook_event", {"n": n})
    assert len(discover_segments(log)) == 1
    write_archive(
        tmp_path / "archive", {("rotated", "a"): rotated, ("single", "b"): log.read_bytes().splitlines()}
    )
    report = verify_archive(tmp_path / "archive", key=str(keys["audit"].public_path), live=False, workers=1)
    assert report.ok and [len(v.report["files"]) for v in report.logs] == [
        len(discover_segments(tmp_path / "rotated" / "audit.jsonl")),
        1,
    ]
