"""Where one batch append's CPU goes (``bench_audit.py``'s breakdown of the append target).

The append is measured whole, in its thread and in the process; each step it takes is timed alone
over the same records; and the flusher's share is split into what it does: the group-commit
fsyncs (counted against raw's one per ``batch_records`` lines) and the anchor exports (timed
alone), the rest being its wake-ups and bookkeeping.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from pathlib import Path
from typing import Any

from audit_bench_common import APPEND_CPU_TARGET, BATCH_RECORDS, measure
from dsh_policy.audit.record import _types_in_domain, canonical_bytes_unchecked
from dsh_policy.audit.writer import AuditWriter


def append_phases(
    directory: Path, key: Path, records: list[dict[str, Any]], count: int, flusher: dict[str, float]
) -> dict[str, float]:
    """Where one batch append's CPU goes, in nanoseconds per record (format 3, the default, best
    of 3 each).

    The whole append is measured in the appending thread (``thread_time``) and in the process
    (the flusher's fsyncs and anchor exports are the difference); each step the append takes is
    then timed alone over the same records, and what the steps do not explain is the
    interpreter's own work between them (calls, attribute reads, the receipt, the bookkeeping).
    ``lock + seek`` is what a record paid before batch-mode leases: now once per lease.
    ``flusher`` is :func:`flusher_work`'s answer (its anchor exports are split out).
    """
    from dsh_policy.audit.merkle import MerkleFrontier
    from dsh_policy.audit.record import seal_line_v2
    from dsh_policy.audit.writer.append import UtcClock, check_caller_record

    sample = [records[index % len(records)] for index in range(count)]
    best_thread = best_process = float("inf")
    for attempt in range(3):
        with AuditWriter.open(
            directory / f"phases-{attempt}.jsonl",
            fsync="batch",
            signing_key=key,
            checkpoint_every=1000,
            batch_records=BATCH_RECORDS,
            format_version=3,
        ) as writer:
            process, thread = time.process_time(), time.thread_time()
            for fields in sample:
                writer.append("tool_result", fields)
            writer.flush()
            best_thread = min(best_thread, time.thread_time() - thread)
            best_process = min(best_process, time.process_time() - process)
    clock = UtcClock()
    stamped = [{**fields, "ts": clock.now()} for fields in sample]
    lines = [seal_line_v2(dict(fields), "log", 1, "ab" * 32, "tool_result", 3)[0] for fields in stamped]
    digests = [hashlib.sha256(line).digest() for line in lines]
    scratch = directory / "phases-write.jsonl"
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    lock = os.open(directory / "phases.lock", os.O_RDWR | os.O_CREAT, 0o644)
    frontier = MerkleFrontier()

    def caller_checks() -> None:
        for fields in sample:
            check_caller_record("tool_result", fields)
            dict(fields)

    def stamp() -> None:
        for _ in sample:
            clock.now()

    def walk() -> None:
        for fields in stamped:
            _types_in_domain(fields)

    def dump() -> None:
        for fields in stamped:
            canonical_bytes_unchecked(fields)

    def seal() -> None:
        for seq, fields in enumerate(stamped):
            seal_line_v2(fields, "log", seq, "ab" * 32, "tool_result", 3)

    def tree() -> None:
        for digest in digests:
            frontier.append_leaf(digest)  # format 3: the record hash is the leaf

    def write() -> None:
        for line in lines:
            os.write(fd, line)

    def lock_and_seek() -> None:
        flock, exclusive, unlock = fcntl.flock, fcntl.LOCK_EX, fcntl.LOCK_UN
        for _ in sample:
            flock(lock, exclusive)
            os.lseek(fd, 0, os.SEEK_END)
            flock(lock, unlock)

    steps = {"caller checks + copy": caller_checks, "timestamp": stamp, "seal (all of it)": seal}
    parts = {"  of it: domain type walk": walk, "  of it: sorted orjson dump": dump}
    rest = {"Merkle nodes": tree, "write(2) of the line": write}
    timed: dict[str, float] = {}
    try:
        for name, step in {**steps, **parts, **rest, "lock + seek (before leases)": lock_and_seek}.items():
            timed[name] = min(measure(step).cpu for _ in range(3)) / count * 1e9
    finally:
        os.close(fd)
        os.close(lock)
    explained = sum(timed[name] for name in (*steps, *rest))
    return {
        "append, appending thread": best_thread / count * 1e9,
        "append, whole process": best_process / count * 1e9,
        **timed,
        "flusher, all of it": (best_process - best_thread) / count * 1e9,
        "  of it: anchor exports (alone)": flusher["anchor_export_ns_per_record"],
        "interpreter between the steps": best_thread / count * 1e9 - explained,
    }


def append_budget(append: dict[str, Any], phases: dict[str, float]) -> dict[str, float]:
    """Whether the append target is reachable at all: the floor (a tight loop of the format's
    steps) without its per-record lock (batch mode leases it) plus the two steps every record
    needs that the floor leaves out (the domain type walk: orjson writes floats, enums and UUIDs
    the log must refuse; the timestamp), against what the target allows."""
    raw = append["raw_ns_per_record_cpu"]
    floor = append["floor_ns_per_record_cpu"]
    without_lock = floor - phases["lock + seek (before leases)"]
    format_floor = without_lock + phases["  of it: domain type walk"] + phases["timestamp"]
    return {
        "raw": raw,
        "target": raw / APPEND_CPU_TARGET,
        "floor": floor,
        "floor_without_lock": without_lock,
        "format_floor": format_floor,
        "format_floor_vs_raw": raw / format_floor,
        "batch": append["batch_ns_per_record_cpu"],
    }


def flusher_work(directory: Path, key: Path, records: list[dict[str, Any]], count: int) -> dict[str, float]:
    """What the flusher's share of an append is made of: one untimed run of the bench's batch
    appends counts the fsyncs (the log's group commits and the anchors') and the anchor exports,
    against raw's one fsync per ``BATCH_RECORDS`` lines; then one export of the run's last
    checkpoint is timed alone (best of 5 runs of 10, CPU) and spread over the records per export.
    (Counting wraps ``os.fsync`` and the exporter for that run only: the timed runs are not.)"""
    from dsh_policy.audit.writer.anchors import AnchorExporter

    calls = {"fsync": 0, "export": 0}
    real_fsync, real_export = os.fsync, AnchorExporter.export

    def counted_fsync(fd: int) -> None:
        calls["fsync"] += 1
        real_fsync(fd)

    def counted_export(self: AnchorExporter, line: bytes, *, monotonic: bool = True) -> None:
        calls["export"] += 1
        real_export(self, line, monotonic=monotonic)

    path = directory / "flusher-count.jsonl"
    os.fsync = counted_fsync
    AnchorExporter.export = counted_export  # type: ignore[method-assign]
    try:
        with AuditWriter.open(
            path,
            fsync="batch",
            signing_key=key,
            checkpoint_every=1000,
            batch_records=BATCH_RECORDS,
            format_version=3,
        ) as writer:
            calls.update(fsync=0, export=0)  # what opening did is not the appends' work
            for index in range(count):
                writer.append("tool_result", records[index % len(records)])
            writer.flush()
            counted = dict(calls)  # before close() adds its own checkpoint
    finally:
        os.fsync = real_fsync
        AnchorExporter.export = real_export  # type: ignore[method-assign]
    checkpoint = next(
        line for line in reversed(path.read_bytes().splitlines()) if b'"kind":"checkpoint"' in line
    )
    exporter = AnchorExporter(directory / "flusher-anchor.jsonl", durable=True)

    def export_ten() -> None:
        for _ in range(10):
            exporter.export(checkpoint, monotonic=False)

    per_export = min(measure(export_ten).cpu for _ in range(5)) / 10
    exports = counted["export"]
    return {
        "fsyncs_per_1000_records": counted["fsync"] * 1000 / count,
        "anchor_exports_per_1000_records": exports * 1000 / count,
        "raw_fsyncs_per_1000_records": 1000 / BATCH_RECORDS,
        "anchor_export_cpu_us": per_export * 1e6,
        "anchor_export_ns_per_record": per_export * 1e9 * exports / count,
    }
