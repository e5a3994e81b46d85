"""Segments verified on every core, then stitched: the same report as one walk in log order.

What costs time in a walk is the hot loops (:mod:`.fast_path_v2`, :mod:`.fast_path`): hashing and
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

Processes are sized to the work (:func:`walk_in_shares`): the segments are cut into contiguous
shares of near-equal bytes, one per process; the main process walks the first share itself, as a
serial walk would (nothing to replay, its caches warm), while one forked child per other share
scans it and leaves its scans in an anonymous file. A child that fails in any way (killed, out of
memory, an exception) leaves its share to the main process. The pool of workers fed a segment at a
time that this replaced cost 1.4x the CPU of one process (its start-up, a cold process per core
beside a main process that only waited); shares cost 1.1-1.2x (``benchmarks/bench_audit.py``).
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from pathlib import Path
from typing import BinaryIO

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


def replay_segment(walker: ChainWalker, path: Path, scan: SegmentScan | None, *, is_last: bool) -> None:
    """Take one segment into ``walker`` from a worker's scan, exactly as walking it would; walk it
    here when there is no scan (the worker failed)."""
    if scan is None or scan.first_line is None or scan.last is None:
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


#: The least share of bytes worth a process of its own when the number is left to us: below it,
#: forking and warming a process costs more than it saves (measured: benchmarks/bench_audit.py).
SHARE_FROM_BYTES = 4 << 20


def processes_for(files: Sequence[Path], workers: int | None) -> int:
    """How many processes verify ``files``: ``workers`` (at most one per segment), or with
    ``None`` one per :data:`SHARE_FROM_BYTES` of segments, up to every usable core."""
    if workers is None:
        workers = usable_cores() if len(files) > 1 else 1
        workers = min(workers, sum(segment_sizes(files)) // SHARE_FROM_BYTES)
    return max(1, min(workers, len(files)))


def segment_sizes(files: Sequence[Path]) -> list[int]:
    """Each segment's size in bytes (0 for one that cannot be stat'ed: its walk reports it)."""
    sizes = []
    for path in files:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    return sizes


def contiguous_shares(sizes: Sequence[int], count: int) -> list[range]:
    """At most ``count`` runs of consecutive segments, in log order, of near-equal bytes: each cut
    falls at the segment boundary nearest its even part of the total. None is empty."""
    total, cuts = sum(sizes), [0]
    ends = list(accumulate(sizes))
    for part in range(1, count):
        target = total * part / count
        after = cuts[-1] + 1  # at least one segment per share, and one left for the rest
        if after >= len(sizes):
            break
        cuts.append(min(range(after, len(sizes)), key=lambda cut: abs(ends[cut - 1] - target)))
    cuts.append(len(sizes))
    return [range(start, stop) for start, stop in pairwise(cuts) if stop > start]


def walk_in_shares(
    walker: ChainWalker,
    files: Sequence[Path],
    processes: int,
    on_segment: Callable[[int, int, str], None] | None = None,
) -> None:
    """Walk ``files`` into ``walker`` on ``processes`` processes, this one included: the report is
    the one a serial walk gives (see the module docstring)."""
    shares = contiguous_shares(segment_sizes(files), processes)
    last = len(files) - 1
    anchor_seq = walker.anchor.seq
    children = [
        _Scanner.start([(str(files[i]), i == last) for i in share], anchor_seq) for share in shares[1:]
    ]
    try:
        for position in shares[0]:
            walker.walk_file(files[position], is_last=position == last)
            if on_segment is not None:
                on_segment(position + 1, len(files), str(files[position]))
        for child, share in zip(children, shares[1:], strict=True):
            scans = child.collect() if child is not None else []
            for offset, position in enumerate(share):
                scan = scans[offset] if offset < len(scans) else None
                replay_segment(walker, files[position], scan, is_last=position == last)
                if on_segment is not None:
                    on_segment(position + 1, len(files), str(files[position]))
    finally:
        for child in children:
            if child is not None:
                child.stop()


@dataclass(slots=True)
class _Scanner:
    """A forked child scanning a share of segments into an anonymous file."""

    pid: int
    output: BinaryIO

    @classmethod
    def start(cls, segments: list[tuple[str, bool]], anchor_seq: int | None) -> _Scanner | None:
        """Fork a child that scans ``segments`` ((path, is the log's last)); ``None`` when no
        child can be started (the main process then walks the share)."""
        fork = getattr(os, "fork", None)  # none on Windows: the main process walks every share
        if fork is None:
            return None
        try:
            output = _anonymous_file()
        except OSError:
            return None
        try:
            pid = fork()
        except OSError:
            output.close()
            return None
        if pid == 0:  # pragma: no cover - runs in the child, which never returns to the caller
            code = 70
            try:
                gc.disable()  # a collection would touch (and so copy) every page the parent shares
                scans = [scan_segment(path, anchor_seq, is_last) for path, is_last in segments]
                pickle.dump(scans, output, protocol=pickle.HIGHEST_PROTOCOL)
                output.flush()
                code = 0
            finally:
                os._exit(code)
        return cls(pid, output)

    def collect(self) -> list[SegmentScan]:
        """The child's scans once it has exited; none if it failed in any way."""
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = -1
        self.pid = 0
        try:
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                return []
            self.output.seek(0)
            scans = pickle.load(self.output)
        except (OSError, EOFError, pickle.UnpicklingError):
            return []
        finally:
            self.output.close()
        if not isinstance(scans, list) or not all(isinstance(scan, SegmentScan) for scan in scans):
            return []
        return scans

    def stop(self) -> None:
        """Make sure the child is gone (the main process was interrupted before collecting it)."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = 0
        self.output.close()


def _anonymous_file() -> BinaryIO:
    """A file no other process can open, for a child's scans (a pipe would stall a child whose
    scans outgrow it while the main process walks its own share)."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        try:
            return open(memfd_create("dsh-policy-verify-scans", os.MFD_CLOEXEC), "w+b")
        except OSError:
            pass
    return tempfile.TemporaryFile()
