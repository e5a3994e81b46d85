"""Segments verified on every core, then stitched: the same report as one walk in log order.

What costs time in a walk is the hot loops (:mod:`.block_path_v2`, :mod:`.fast_path`): hashing and
settling runs of ordinary records. What they do to the walk's state is small and exact: a run adds
its length to four counts and leaves the chain's head, next seq and Merkle frontier where its last
record put them. Everything else is the slow path's (:meth:`.walker.ChainWalker.check_line`), one
line at a time: segment starts, checkpoints and their signatures, hand-overs, anything damaged.

So a worker process walks one segment on its own (:func:`scan_segment`), with a walker that starts
from nothing but what the segment's first record states, and records, before each line it hands to
the slow path, how many records the hot loops settled since the previous one and the chain state
they left; it keeps the segment's first line and the chain state right after it. The main process
then takes segments in log order (:func:`replay_segment`): it checks the first line itself, against
the previous segment as a serial walk would, and compares the chain state that leaves with the
worker's. Equal, the worker's hot loops saw exactly what a serial walk's would have (they read
nothing but that state, the anchor's seq and the lines), so the main process applies the recorded
runs and gives every recorded line to its own slow path: the report is the serial one. Different
(a segment that does not continue the previous one: a file missing, cut or forged), it walks the
rest of that segment itself.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..merkle import MerkleFrontier
from .chain import Chain, SegmentState
from .walker import ChainWalker

#: What the hot loops read of the chain: (log id, head, next seq, resync, segment ended with
#: rotation, frontier size, frontier roots).
ChainState = tuple[str | None, str | None, int | None, bool, bool, int, tuple[bytes, ...]]


def chain_state(chain: Chain) -> ChainState:
    """The state the hot loops depend on."""
    frontier = chain.frontier
    return (
        chain.log_id,
        chain.head,
        chain.next_seq,
        chain.resync,
        chain.segment.ended_with_rotation,
        frontier.size,
        tuple(frontier.roots),
    )


@dataclass(slots=True)
class Settled:
    """Records the hot loops settled in a row, and the chain state they left."""

    records: int
    head: str | None
    next_seq: int | None
    frontier_size: int
    frontier_roots: tuple[bytes, ...]


@dataclass(slots=True)
class SlowLine:
    """A line the worker's walk handed to the slow path, after ``before`` was settled."""

    before: Settled
    line: bytes
    number: int


@dataclass(slots=True)
class SegmentScan:
    """One segment as a worker walked it; ``first_line`` is ``None`` when the walk in the main
    process must do it all (unreadable, empty, or a first line without a newline)."""

    first_line: bytes | None = None
    after_first: ChainState | None = None
    slow_lines: list[SlowLine] = field(default_factory=list)
    last: Settled | None = None
    lines: int = 0
    torn: bytes = b""
    bytes_read: int = 0


class _ScanningWalker(ChainWalker):
    """A walker that records what the main process needs to replay its walk of one segment."""

    def __init__(self, anchor_seq: int | None) -> None:
        super().__init__(None)
        self.anchor.seq = anchor_seq
        self.scan = SegmentScan()
        self._counted = 0

    def settled(self) -> Settled:
        chain = self.chain
        records = self.tally.records_checked - self._counted
        return Settled(records, chain.head, chain.next_seq, chain.frontier.size, tuple(chain.frontier.roots))

    def check_line(self, line: bytes, file: str, number: int, previous_segment: SegmentState | None) -> None:
        if number == 1:
            self.scan.first_line = line
        else:
            self.scan.slow_lines.append(SlowLine(self.settled(), line, number))
        super().check_line(line, file, number, previous_segment)
        self._counted = self.tally.records_checked
        if number == 1:
            self.scan.after_first = chain_state(self.chain)


def scan_segment(path: str, anchor_seq: int | None, is_last: bool) -> SegmentScan:
    """Walk one segment on its own (in a worker process) and record it for :func:`replay_segment`."""
    walker = _ScanningWalker(anchor_seq)
    walker.walk_file(Path(path), is_last=is_last)
    scan = walker.scan
    if walker.unreadable:
        return SegmentScan()
    scan.last = walker.settled()
    scan.lines, scan.torn, scan.bytes_read = (
        walker.last_file_lines,
        walker.last_torn,
        walker.tally.bytes_checked,
    )
    return scan


def replay_segment(walker: ChainWalker, path: Path, future: Future[SegmentScan], *, is_last: bool) -> None:
    """Take one segment into ``walker`` from a worker's scan, exactly as walking it would; walk it
    here when there is no scan (the worker died: killed, out of memory)."""
    try:
        scan = future.result()
    except (BrokenProcessPool, OSError):
        scan = SegmentScan()
    if scan.first_line is None or scan.last is None:
        walker.walk_file(path, is_last=is_last)
        return
    name = str(path)
    previous_segment = walker.chain.begin_segment()
    walker.check_line(scan.first_line, name, 1, previous_segment)
    if chain_state(walker.chain) != scan.after_first:
        walker.walk_file(path, is_last=is_last, first_line_done=True)
        return
    for slow in scan.slow_lines:
        _apply(walker, slow.before)
        walker.check_line(slow.line, name, slow.number, None)
    _apply(walker, scan.last)
    walker.tally.bytes_checked += scan.bytes_read
    walker.end_file(path, name, scan.lines, scan.torn, is_last=is_last)


def _apply(walker: ChainWalker, settled: Settled) -> None:
    """What the hot loops' settling did for ``settled.records`` records."""
    records = settled.records
    if not records:
        return
    tally, chain = walker.tally, walker.chain
    tally.records_checked += records
    tally.records_seen += records
    tally.hashed_right += records
    tally.records_after_anchor += records
    chain.head, chain.next_seq = settled.head, settled.next_seq
    chain.frontier = MerkleFrontier(settled.frontier_size, list(settled.frontier_roots))
    last = (settled.next_seq or 0) - 1
    if last > chain.seen_max_seq:
        chain.seen_max_seq = last
    segment = chain.segment
    segment.last_seq, segment.last_hash, segment.ended_with_rotation = last, settled.head, False


def usable_cores() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextmanager
def segment_scans(
    files: Sequence[Path], anchor_seq: int | None, workers: int
) -> Iterator[list[Future[SegmentScan]]]:
    """Every segment's scan, started at once on ``workers`` processes (forked: nothing to import)."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [
            pool.submit(scan_segment, str(path), anchor_seq, position == len(files) - 1)
            for position, path in enumerate(files)
        ]
        try:
            yield futures
        finally:
            for future in futures:
                future.cancel()
