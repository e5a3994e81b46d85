"""The verifier's hot loop for formats 2 and 3, a block of lines at a time, with no per-line Python
work (format 3 is format 2's line hashed into its Merkle leaf; only the hashing differs).

A format 2 line is ``{"v":2,"log_id":…,"seq":…,"prev":…,"kind":…`` … ``,"hash":"<hex>"}``, and its
hash covers every byte before ``,"hash":"`` (:mod:`..record_hash`). One regular expression split
of a whole block (C code) cuts every line's hashed bytes from its trailer and, in the same pass,
proves each next line's header: its log id, its seq (captured), its ``prev`` equal to the hash just
cut (a back-reference) and whether its kind is one of the writer's own. What is left is done on
whole lists: the seqs are compared with the expected numbers as one string, the hashes (one
SHA-256 per line, through ``map``) with the stated ones as one hex string, and the Merkle tree is
extended a level at a time. The first line of a block is checked by a separate match of its header.

The checks are exactly those :mod:`.fast_path_v2` makes line by line; only how they are computed
differs. A block whose shape the split does not recognise (a line without the
trailer, a header that is not the writer's) goes whole to :class:`.fast_path_v2.FastPathV2`, which
finds the line and hands it to the slow path. Inside a recognised block, a line that fails a check,
a writer's kind and the anchor's seq end the run: that line goes to the slow path (rebuilt exactly
from its pieces), and the next run starts after it.
"""

from __future__ import annotations

import re
from binascii import hexlify
from functools import lru_cache
from itertools import compress, repeat
from typing import Final

import orjson

from ..record_hash import BYTES_HASHERS, LEAF_FORMATS, RECORD_HASHER_V2, V2_HASH_MEMBER
from .anchors import Anchor
from .chain import Chain
from .fast_path import SlowPath
from .fast_path_v2 import FastPathV2, settle_run
from .tally import Tally

#: The writer's own kinds and ``hook_told`` (the slow path's to note), as a header's kind; the
#: empty alternative leaves the group ``None`` for every other kind.
_WRITER_KIND: Final = rb'(?:(checkpoint"|segment_start"|recovery"|key_handover"|records_lost"|hook_told")|)'
_HASHER_TYPE: Final = type(RECORD_HASHER_V2)
_COPY: Final = _HASHER_TYPE.copy
_UPDATE: Final = _HASHER_TYPE.update
_DIGEST: Final = _HASHER_TYPE.digest
_TRAILER_END: Final = b'"}'


@lru_cache(maxsize=8)
def _patterns(log_id: str, version: int = 2) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(the block split, the header of a block's first line) for format ``version`` lines of
    ``log_id``.

    The split matches each line's trailer and newline, then (without consuming it) the next
    line's header, capturing the stated hash, the next seq and the next kind when it is the
    writer's; the last line of a block is followed by the end instead. ``.`` never matches a newline,
    so a match cannot leave its line.
    """
    header = rb'\{"v":%d,"log_id":' % version + re.escape(orjson.dumps(log_id)) + rb',"seq":([0-9]+),"prev":"'
    split = re.compile(rb',"hash":"(.{64})"\}\n(?:(?=' + header + rb'\1","kind":"' + _WRITER_KIND + rb")|\Z)")
    first = re.compile(header + rb'(.{64})","kind":"' + _WRITER_KIND)
    return split, first


#: ``b"%03d "`` and ``b"%d "`` of 0..999: the decimal tails :func:`seq_text` joins.
_TAILS: Final = tuple(b"%03d " % low for low in range(1000))
_SMALL: Final = tuple(b"%d " % low for low in range(1000))


def seq_text(first: int, count: int) -> bytes:
    """``b"%d "`` of every seq from ``first``, ``count`` of them, joined: the text the seqs a run
    captured must equal. Built a thousand at a time from precomputed tails: within a thousand only
    the last three digits change, so ``prefix.join(tails)`` writes each seq (formatting every
    number cost a tenth of the hashing's time)."""
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


class BlockPathV2:
    """Checks blocks of format 2 or 3 lines; what it cannot settle goes to the slow path."""

    __slots__ = ("_anchor", "_chain", "_hasher", "_leaves", "_lines", "_slow_path", "_tally", "_version")

    def __init__(
        self, chain: Chain, tally: Tally, anchor: Anchor, slow_path: SlowPath, lines: FastPathV2
    ) -> None:
        self._chain = chain
        self._tally = tally
        self._anchor = anchor
        self._slow_path = slow_path
        self._lines = lines
        self._version = 2
        self._hasher = RECORD_HASHER_V2
        self._leaves = False

    def use_format(self, version: int) -> None:
        """Check the lines that follow as format ``version`` (2 or 3) lines: a segment's format."""
        self._version, self._hasher, self._leaves = version, BYTES_HASHERS[version], version in LEAF_FORMATS
        self._lines.use_format(version)

    def check_block(
        self, block: bytes | memoryview, file: str, count: int, newlines: int | None = None
    ) -> int:
        """Check the complete lines of ``block`` (the first is line ``count + 1``; ``newlines``:
        how many it holds, counted when not given); return the last line's number."""
        log_id = self._chain.log_id
        if log_id is None:
            return self._by_lines(block, file, count)
        split, first_header = _patterns(log_id, self._version)
        parts = split.split(block)
        bodies: list[bytes] = parts[0::4]
        # Every newline was matched (the block holds one per match, each match holds one, so none
        # is left in what was cut) and the last one ends the block: else some line's trailer or
        # next header is not the writer's.
        lines = len(bodies) - 1
        if newlines is None:
            newlines = bytes(block).count(b"\n")
        if bodies.pop() or newlines != lines:
            return self._by_lines(block, file, count)
        stated: list[bytes] = parts[1::4]
        seqs: list[bytes | None] = parts[2::4]
        kinds: list[bytes | None] = parts[3::4]
        header = first_header.match(bodies[0])
        # Line i's seq and kind were captured after line i - 1's trailer; the first line's here.
        seqs.pop()
        kinds.pop()
        if header is None:
            seqs.insert(0, None)
            kinds.insert(0, b"?")  # not a header of this log: the slow path judges the line
            first_prev = b""
        else:
            seqs.insert(0, header[1])
            kinds.insert(0, header[3])
            first_prev = header[2]
        hashers = list(map(_COPY, repeat(self._hasher, lines)))
        list(map(_UPDATE, hashers, bodies))
        digests = list(map(_DIGEST, hashers))
        computed = hexlify(b"".join(digests))
        # The lines whose kind was captured (a non-empty bytes value), picked in C.
        ends = list(compress(range(lines), kinds))
        ends.append(lines)
        at = 0
        while at < lines:
            good = self._run(at, ends, seqs, stated, computed, first_prev)
            if good > at:
                self._lines.extend_tree(digests[at:good], leaves=self._leaves)
                self._settle(good - at, stated[good - 1].decode())
            if good < lines:  # the line that ended the run: the detailed checks judge it
                line = b"".join((bodies[good], V2_HASH_MEMBER, stated[good], _TRAILER_END))
                self._slow_path(line, file, count + good + 1, None)
            at = good + 1
        return count + lines

    def _run(
        self,
        at: int,
        ends: list[int],
        seqs: list[bytes | None],
        stated: list[bytes],
        computed: bytes,
        first_prev: bytes,
    ) -> int:
        """Where the run of lines from ``at`` that extend the chain as ordinary records ends."""
        chain = self._chain
        head, next_seq = chain.head, chain.next_seq
        if head is None or next_seq is None or chain.resync or chain.segment.ended_with_rotation:
            return at
        if (stated[at - 1] if at else first_prev) != head.encode():
            return at
        end = next(stop for stop in ends if stop >= at)
        anchor_seq = self._anchor.seq
        if anchor_seq is not None and next_seq <= anchor_seq < next_seq + end - at:
            end = at + anchor_seq - next_seq  # the anchor's record is the slow path's to keep
        if end == at:
            return at
        size = end - at
        wanted = seq_text(next_seq, size)
        if b" ".join(seqs[at:end]) + b" " != wanted:  # type: ignore[arg-type]  # no None before an end
            expected = wanted.split()
            end = at + next(i for i, seq in enumerate(seqs[at:end]) if seq != expected[i])
        if computed[64 * at : 64 * end] != b"".join(stated[at:end]):
            end = at + next(
                i for i in range(end - at) if computed[64 * (at + i) : 64 * (at + i + 1)] != stated[at + i]
            )
        return end

    def _settle(self, settled: int, head: str) -> None:
        """Write back what a run proved for ``settled`` records."""
        settle_run(self._tally, self._chain, settled, head, (self._chain.next_seq or 0) + settled)

    def _by_lines(self, block: bytes | memoryview, file: str, count: int) -> int:
        """A block of unexpected shape: line by line (:class:`.fast_path_v2.FastPathV2`)."""
        lines = bytes(block).split(b"\n")
        lines.pop()  # after the last newline: nothing
        return self._lines.check_lines(lines, 0, file, count)
