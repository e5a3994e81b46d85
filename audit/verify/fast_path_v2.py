"""The verifier's hot loop for formats 2 and 3 (format 3 is format 2's line hashed into its Merkle
leaf; only the hashing differs): whole runs of ordinary records proven by comparing bytes.

A format 2 line starts with its header (``{"v":2,"log_id":…,"seq":…,"prev":…,"kind":"``) and ends
with ``,"hash":"<hex>"}``, and its hash covers every byte before that member
(:mod:`..record_hash`). So a run of lines extends the chain exactly when each line starts with the
header its seq and its predecessor's hash predict and ends with the trailer its own hash predicts:
comparisons of bytes. Nothing is parsed: a line that hashes right is the line the writer wrote
(and, with a key, that a signed checkpoint's Merkle root covers).

A read's lines come whole from :meth:`.lines.SegmentLines.line_lists` (each with its newline, cut
at C speed by ``BytesIO.readlines``); everything after that is done for a whole run at once with
``map`` over C functions, so the interpreter's per-record cost stays close to the hashing's own:

- every line's bytes after the constant start of its header (``{"v":2,"log_id":…,"seq":``) up to
  its trailer are hashed once per read, before any run, from a SHA-256 state primed with the
  format's prefix and that start (the header comparison proves the start is there, so the hash is
  the line's); a read whose log id is learned on its own slow path is hashed again from there, and
  a line the slow path judges is hashed again by it;
- the headers and trailers of a run, cut from the lines, are joined into one string and compared
  with the one string the chain predicts (the constant pieces, each seq, each predecessor's hash
  and each line's own hash, in order): one comparison proves every header's log id, seq and
  ``prev`` and every stated hash;
- the writer's own kinds (recognised right after the header) and the anchor's seq end a run, as do
  a seq that gains a digit (a run's headers have one length) and any line too short to hold both.

The run ends before the first line any check fails; that line goes to the slow path, which
repeats every check and names what is wrong, and the next run starts after it. A run is at most
:attr:`FastPathV2._window` lines long, a window that doubles while runs succeed and falls back
after a line that fails a check, so a log damaged on every line stays linear: the slow path's own
work per line plus the one hash the read spent on it (123 against 107 ms for such a log when
measured, the same report).
"""

from __future__ import annotations

from binascii import hexlify
from collections.abc import Iterator
from itertools import compress, count, repeat
from operator import getitem, lt
from typing import Final, cast

from ..merkle import small_sha256
from ..record_hash import (
    BYTES_HASHERS,
    LEAF_FORMATS,
    RECORD_HASHER_V2,
    V2_HASH_MEMBER,
    V2_TRAILER_LENGTH,
    v2_start,
)
from .anchors import Anchor
from .chain import Chain
from .fast_path import SlowPath
from .tally import Tally

#: The kinds the slow path notes for the report (the writer's own, and ``hook_told``, which it counts),
#: as their value's bytes follow a header's ``"kind":"``.
_WRITER_KINDS: Final = tuple(
    f'{kind}"'.encode()
    for kind in ("checkpoint", "segment_start", "recovery", "key_handover", "records_lost", "hook_told")
)
_HASHER: Final = type(RECORD_HASHER_V2)
_COPY: Final = _HASHER.copy
_UPDATE: Final = _HASHER.update
_DIGEST: Final = _HASHER.digest
_SMALL_DIGEST: Final = type(small_sha256(b"")).digest
_NODE_COPY: Final = type(small_sha256(b"")).copy
_NODE_UPDATE: Final = type(small_sha256(b"")).update
_LEAF: Final = b"\x00"
_NODE: Final = b"\x01"
#: The header's pieces after the seq: ``,"prev":"`` + 64 hex digits + ``","kind":"``.
_PREV: Final = b',"prev":"'
_KIND: Final = b'","kind":"'
_HEADER_AFTER_SEQ: Final = len(_PREV) + 64 + len(_KIND)
#: How a line's trailer begins and ends around its hash.
_HASH: Final = V2_HASH_MEMBER
_TRAILER_END: Final = b'"}\n'
#: ``,"hash":"`` + 64 hex digits + ``"}`` + the newline: the fixed end of every line.
_TRAILER_LENGTH: Final = V2_TRAILER_LENGTH + len(b"\n")
_TRAILER: Final = slice(-_TRAILER_LENGTH, None)
#: Lines in a run at first and after a line that failed a check; the window doubles up to the
#: most while runs succeed.
_WINDOW_FIRST: Final = 64
_WINDOW_MOST: Final = 1 << 20

#: ``b"%03d "`` and ``b"%d "`` of 0..999: the decimal tails :func:`seq_text` joins.
_TAILS: Final = tuple(b"%03d " % low for low in range(1000))
_SMALL: Final = tuple(b"%d " % low for low in range(1000))


def seq_text(first: int, count: int) -> bytes:
    """``b"%d "`` of every seq from ``first``, ``count`` of them, joined: the seqs a run's headers
    must hold. Built a thousand at a time from precomputed tails: within a thousand only the last
    three digits change, so ``prefix.join(tails)`` writes each seq (formatting every number cost a
    tenth of the hashing's time)."""
    pieces = []
    seq, end = first, first + count
    while seq < end:
        high, low = divmod(seq, 1000)
        stop = min(1000, low + end - seq)
        if high:
            prefix = b"%d" % high
            pieces.append(prefix + prefix.join(_TAILS[low:stop]))
        else:
            pieces.append(b"".join(_SMALL[low:stop]))
        seq += stop - low
    return b"".join(pieces)


class FastPathV2:
    """Checks the lines of one format 2 or 3 segment run by run, handing the rest to the slow path."""

    __slots__ = (
        "_anchor",
        "_chain",
        "_digests",
        "_leaves",
        "_prefix",
        "_slow_path",
        "_start",
        "_tally",
        "_version",
        "_window",
    )

    def __init__(self, chain: Chain, tally: Tally, anchor: Anchor, slow_path: SlowPath) -> None:
        self._chain = chain
        self._tally = tally
        self._anchor = anchor
        self._slow_path = slow_path
        self._version = 2
        self._prefix = RECORD_HASHER_V2
        self._leaves = False
        self._window = _WINDOW_FIRST
        self._start = b""
        #: The hash of every line of the lines being checked, as if it began with ``_start``.
        self._digests: list[bytes] = []

    def use_format(self, version: int) -> None:
        """Check the lines that follow as format ``version`` (2 or 3) lines: a segment's format."""
        self._version, self._prefix, self._leaves = version, BYTES_HASHERS[version], version in LEAF_FORMATS

    def check_lines(self, lines: list[bytes], first: int, file: str, count: int) -> int:
        """Check ``lines[first:]``, each ending with its newline (``lines[0]`` is line
        ``count + 1``); return the last line's number."""
        log_id = self._chain.log_id
        index, end = first, len(lines)
        if log_id is not None and index < end:
            self._hash_lines(lines, v2_start(log_id, self._version))
        while index < end:
            index += self._run(lines, index)
            if index < end:  # the line that ended the run: the detailed checks judge it
                self._slow_path(lines[index][:-1], file, count + index + 1, None)
                index += 1
        self._start, self._digests = b"", []
        return count + end

    def _hash_lines(self, lines: list[bytes], start: bytes) -> None:
        """Hash every line as a line that begins with ``start`` (the header's constant start):
        the format's prefix and ``start`` are hashed once, then each line's bytes after them up to
        its trailer. Runs use a line's hash only once its header is proven to begin so."""
        self._start = start
        prefix = self._prefix.copy()
        prefix.update(start)
        hashers = list(map(_COPY, repeat(prefix, len(lines))))
        bodies = cast("Iterator[bytes]", map(getitem, lines, repeat(slice(len(start), -_TRAILER_LENGTH))))
        list(map(_UPDATE, hashers, bodies))
        self._digests = list(map(_DIGEST, hashers))

    def _run(self, lines: list[bytes], at: int) -> int:
        """Prove the longest run of ``lines[at:]`` that extends the chain as ordinary records;
        return its length (0 when the state does not allow the fast path). Every check is done for
        the whole run at once; the run ends before the first line any check fails."""
        chain = self._chain
        head, log_id, next_seq = chain.head, chain.log_id, chain.next_seq
        if head is None or log_id is None or next_seq is None or chain.resync:
            return 0
        prev = head.encode()
        if chain.segment.ended_with_rotation or len(prev) != 64:  # a stated hash of another length
            return 0
        start = v2_start(log_id, self._version)
        if start != self._start:  # a log id first learned on this read's slow path
            self._hash_lines(lines, start)
        digits = len(b"%d" % next_seq)
        # One header length per run: the run stops before the seq that gains a digit.
        size = min(len(lines) - at, self._window, 10**digits - next_seq)
        anchor_seq = self._anchor.seq
        if anchor_seq is not None and next_seq <= anchor_seq < next_seq + size:
            size = anchor_seq - next_seq  # the anchor's record is the slow path's to keep
        if size <= 0:
            return 0
        run = lines[at : at + size]
        header = len(start) + digits + _HEADER_AFTER_SEQ
        # The writer's own kinds follow the header: they are the slow path's. So is a line too
        # short to hold a header and a trailer.
        writers = map(bytes.startswith, run, repeat(_WRITER_KINDS), repeat(header))
        size = next(compress(count(), writers), size)
        if size and min(map(len, run[:size])) < header + _TRAILER_LENGTH:
            size = next(compress(count(), map(lt, map(len, run), repeat(header + _TRAILER_LENGTH))))
        if not size:
            return 0
        del run[size:]
        digests = self._digests[at : at + size]
        hashes = hexlify(b"".join(digests), b"|", 32)  # the lines' hex hashes, "|" between them
        size = _proven(run, _predicted(start, digits, next_seq, prev, hashes))
        if size < len(run):
            self._window = _WINDOW_FIRST
            if not size:
                return 0
        elif size == self._window:
            self._window = min(2 * size, _WINDOW_MOST)
        self.extend_tree(digests[:size], leaves=self._leaves)
        head = hashes[65 * (size - 1) : 65 * size - 1].decode()
        settle_run(self._tally, chain, size, head, next_seq + size)
        return size

    def extend_tree(self, digests: list[bytes], *, leaves: bool = False) -> None:
        """Append the records' leaves to the RFC 6962 frontier a level at a time, as a binary
        counter adds a number: at each height the frontier's root there (when the size has that
        bit) is the left sibling of the first new node, consecutive nodes pair into the next
        height's in one pass of C calls, and a node left without a partner becomes the frontier's
        root at its height. ``leaves``: the record hashes are their leaves (format 3)."""
        frontier = self._chain.frontier
        size = frontier.size
        if not leaves:
            digests = list(map(_SMALL_DIGEST, map(small_sha256, map(_LEAF.__add__, digests))))
        # The frontier's roots by height (they are stored largest first, one per bit of the size).
        heights = [height for height in range(size.bit_length() - 1, -1, -1) if size >> height & 1]
        roots = dict(zip(heights, frontier.roots, strict=True))
        node_prefix = small_sha256(_NODE)
        level, height = digests, 0
        while level:
            left = roots.pop(height, None)
            if left is not None:
                level = [left, *level]
            pairs = len(level) // 2
            if len(level) & 1:
                roots[height] = level[-1]
            # A node hasher copied from one holding the 0x01 prefix and fed both children: no
            # concatenated input built per node.
            nodes = list(map(_NODE_COPY, repeat(node_prefix, pairs)))
            list(map(_NODE_UPDATE, nodes, level[0 : 2 * pairs : 2]))
            list(map(_NODE_UPDATE, nodes, level[1 : 2 * pairs : 2]))
            level = list(map(_SMALL_DIGEST, nodes))
            height += 1
        frontier.roots = [roots[height] for height in sorted(roots, reverse=True)]
        frontier.size = size + len(digests)


def _predicted(
    start: bytes, digits: int, next_seq: int, prev: bytes, hashes: bytes
) -> list[tuple[slice, bytes]]:
    """What the chain predicts for each of three columns of fixed width a line: the header up to
    ``prev`` (its seq), ``prev`` and ``"kind":"`` (the previous line's hash) and the trailer (the
    line's own hash); as the cut of each line and the column's lines joined, built in C.
    ``hashes``: the lines' hex hashes with ``|`` between them."""
    lines = (len(hashes) + 1) // 65
    seqs = len(start) + digits + len(_PREV)
    before = hashes[:-65].replace(b"|", _KIND) + _KIND if lines > 1 else b""
    return [
        (slice(0, seqs), start + seq_text(next_seq, lines).replace(b" ", _PREV + start)[: -len(start)]),
        (slice(seqs, seqs + _HEADER_AFTER_SEQ - len(_PREV)), prev + _KIND + before),
        (_TRAILER, _HASH + hashes.replace(b"|", _TRAILER_END + _HASH) + _TRAILER_END),
    ]


def _proven(run: list[bytes], columns: list[tuple[slice, bytes]]) -> int:
    """How many lines of ``run`` from the first hold what ``columns`` predicts, column by column."""
    size = len(run)
    for cut, predicted in columns:
        stated = b"".join(cast("Iterator[bytes]", map(getitem, run[:size], repeat(cut))))
        if stated != predicted[: len(stated)]:
            width = len(predicted) // len(run)  # every line's share of the column
            size = next(
                line
                for line in range(size)
                if stated[line * width : (line + 1) * width] != predicted[line * width : (line + 1) * width]
            )
    return size


def settle_run(tally: Tally, chain: Chain, settled: int, head: str, next_seq: int) -> None:
    """Write back a run of ``settled`` ordinary records proved in one go (every check a record
    gets one by one), ending with ``head`` just before ``next_seq``: the counts, the chain's head
    and the segment's last record."""
    tally.records_checked += settled
    tally.records_seen += settled
    tally.hashed_right += settled
    tally.records_after_anchor += settled
    chain.head, chain.next_seq = head, next_seq
    last = next_seq - 1
    if last > chain.seen_max_seq:
        chain.seen_max_seq = last
    segment = chain.segment
    segment.last_seq, segment.last_hash, segment.ended_with_rotation = last, head, False
