"""Crash storm: several writer processes on one log, random SIGKILLs, tiny segments, fsync ``always``.

Every record whose ``append`` returned must be in the log, the log must verify as the storm left it
(no one reopening it) and, once a writer has opened and closed it, verify strictly with the key.

The default budget keeps CI fast. A longer storm::

    DSH_AUDIT_STORM_SECONDS=600 DSH_AUDIT_STORM_WRITERS=6 DSH_AUDIT_STORM_DIR=/tmp/storm \\
        .venv/bin/python -m pytest tests/audit/test_audit_storm.py -s

``DSH_AUDIT_STORM_DIR`` keeps the log and ``acknowledged.txt`` (one ``seq hash`` a line) and its key
``storm-key.pub`` for a later look; by default they live in pytest's temporary directory.
"""

from __future__ import annotations

import os
import random
import selectors
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest
from dsh_policy.audit.keys import KeyPairFiles, write_key_pair
from dsh_policy.audit.segments import discover_segments
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriter

STORM_SECONDS = float(os.environ.get("DSH_AUDIT_STORM_SECONDS", "3"))
STORM_WRITERS = int(os.environ.get("DSH_AUDIT_STORM_WRITERS", "3"))


@dataclass
class _Child:
    pid: int
    fd: int
    buffer: bytes = b""


@dataclass
class _Storm:
    path: Path
    key: Path
    rng: random.Random
    acknowledged: dict[int, str] = field(default_factory=dict)
    kills: int = 0
    spawned: int = 0

    def spawn(self) -> _Child:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child never returns into pytest
            try:
                os.close(read_end)
                _append_forever(self.path, self.key, write_end)
            finally:
                os._exit(1)
        os.close(write_end)
        os.set_blocking(read_end, False)
        self.spawned += 1
        return _Child(pid, read_end)

    def take(self, child: _Child, data: bytes) -> None:
        child.buffer += data
        *complete, child.buffer = child.buffer.split(b"\n")
        for line in complete:
            seq, digest = line.split()
            previous = self.acknowledged.setdefault(int(seq), digest.decode())
            assert previous == digest.decode(), f"seq {int(seq)} acknowledged twice with different hashes"

    def kill(self, child: _Child) -> None:
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
        self.drain(child)
        os.close(child.fd)
        self.kills += 1

    def drain(self, child: _Child) -> None:
        while True:
            try:
                data = os.read(child.fd, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                return
            self.take(child, data)


def _append_forever(path: Path, key: Path, report: int) -> None:
    writer = AuditWriter.open(
        path,
        fsync="always",
        rotate_bytes=4096,
        checkpoint_every=5,
        checkpoint_seconds=None,
        signing_key=key,
    )
    index = 0
    pid = os.getpid()
    while True:
        fields = {"session": "storm", "agent": str(pid), "step": index, "call": {"n": "x" * (index % 61)}}
        receipt = writer.append("tool_result", fields)
        # Reported only after append() returned: with fsync "always" the record is on disk now.
        os.write(report, b"%d %s\n" % (receipt.seq, receipt.hash.encode()))
        index += 1


def _records_on_disk(path: Path) -> dict[int, str]:
    found: dict[int, str] = {}
    for segment in discover_segments(path):
        for line in segment.read_bytes().splitlines():
            record = orjson.loads(line)
            assert found.setdefault(record["seq"], record["hash"]) == record["hash"], record["seq"]
    return found


@pytest.mark.slow
def test_a_crash_storm_of_concurrent_writers_loses_no_acknowledged_record(
    tmp_path: Path, key_pair: KeyPairFiles
) -> None:
    directory = Path(os.environ.get("DSH_AUDIT_STORM_DIR") or tmp_path)
    directory.mkdir(parents=True, exist_ok=True)
    if directory != tmp_path:  # a kept storm keeps its key beside it, for verifying later
        key_pair = write_key_pair(directory / "storm-key")
    path = directory / "storm.jsonl"
    storm = _Storm(path, key_pair.private_path, random.Random(11))
    selector = selectors.DefaultSelector()
    children = [storm.spawn() for _ in range(STORM_WRITERS)]
    for child in children:
        selector.register(child.fd, selectors.EVENT_READ, child)
    deadline = time.monotonic() + STORM_SECONDS
    next_kill = time.monotonic() + storm.rng.uniform(0.01, 0.3)
    while time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.01):
            storm.drain(key.data)
        if time.monotonic() >= next_kill:
            victim = children.pop(storm.rng.randrange(len(children)))
            selector.unregister(victim.fd)
            storm.kill(victim)
            replacement = storm.spawn()
            children.append(replacement)
            selector.register(replacement.fd, selectors.EVENT_READ, replacement)
            next_kill = time.monotonic() + storm.rng.uniform(0.01, 0.3)
    for child in children:
        selector.unregister(child.fd)
        storm.kill(child)
    selector.close()
    (directory / "acknowledged.txt").write_text(
        "".join(f"{seq} {digest}\n" for seq, digest in sorted(storm.acknowledged.items()))
    )

    # As the storm left it: nobody reopened it, yet it verifies (its tail is not signed yet).
    as_left = verify_log([path], public_key=key_pair.public_path, live=True)
    assert as_left.intact, as_left.errors[:3]
    on_disk = _records_on_disk(path)
    lost = sorted(seq for seq, digest in storm.acknowledged.items() if on_disk.get(seq) != digest)
    assert not lost, f"{len(lost)} acknowledged records lost, first {lost[:5]}"
    assert sorted(on_disk) == list(range(len(on_disk)))
    assert not [p for p in directory.glob("storm.jsonl.torn-*") if p.stat().st_size == 0]

    # One more writer opens and closes it: now every record is covered by a signed checkpoint.
    AuditWriter.open(path, fsync="always", signing_key=key_pair.private_path).close()
    strict = verify_log([path], public_key=key_pair.public_path)
    assert strict.intact, strict.errors[:3]
    assert strict.unsigned_tail is None and strict.records_checked >= len(on_disk)
    print(
        f"\nstorm: {STORM_SECONDS:.0f}s, {STORM_WRITERS} writers, {storm.spawned} spawned,"
        f" {storm.kills} SIGKILLs,"
        f" {len(storm.acknowledged)} acknowledged, {strict.records_checked} records in"
        f" {len(strict.files)} segments, {len(strict.recoveries)} recoveries; none lost"
    )
    assert storm.kills >= 3 and len(storm.acknowledged) > storm.kills
