"""The verifier's hot loop for formats 2 and 3 (format 2's line, hashed into its Merkle leaf):
whole runs of ordinary records proven by comparing bytes.

A format 2 line starts with its header (``{"v":2,"log_id":…,"seq":…,"prev":…,"kind":"``) and ends
with ``,"hash":"<hex>"}``, and its hash covers every byte before that member
(:mod:`..record_hash`). So a run of lines extends the chain exactly when each line starts with the
header its seq and its predecessor's hash predict and each hashes to its stated hash: comparisons
of bytes, done here for a whole run at once with ``map`` over C functions, so the interpreter's
per-record cost stays close to the hashing's own. Nothing is parsed: a line that hashes right is
the line the writer wrote (and, with a key, that a signed checkpoint's Merkle root covers).

The run ends before the first line any check fails; that line goes to the slow path, which
repeats every check and names what is wrong, and the next run starts after it. So do the writer's
own kinds (recognised right after the header), the anchor's seq, and any line while the walk
rebuilds its chain state.
"""

from __future__ import annotations

import hashlib
from binascii import hexlify
from collections.abc import Iterator
from itertools import repeat
from operator import getitem, sub
from typing import Final, cast

import orjson

from ..merkle import small_sha256
from ..record_hash import (
    LEAF_FORMATS,
    RECORD_HASH_TAG_V2,
    RECORD_HASH_TAG_V3,
    V2_HASH_MEMBER,
    V2_TRAILER_LENGTH,
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
_DIGEST: Final = type(hashlib.sha256()).digest
_SMALL_DIGEST: Final = type(small_sha256(b"")).digest
_NODE_COPY: Final = type(small_sha256(b"")).copy
_NODE_UPDATE: Final = type(small_sha256(b"")).update
_NODE_DIGEST: Final = _SMALL_DIGEST
_BODY: Final = slice(0, -V2_TRAILER_LENGTH)
_STATED: Final = slice(-66, -2)
_LEAF: Final = b"\x00"
_NODE: Final = b"\x01"
#: What each format hashes before a line's bytes (format 3: the leaf prefix, then its tag).
_PREFIXES: Final = {2: RECORD_HASH_TAG_V2, 3: _LEAF + RECORD_HASH_TAG_V3}


class FastPathV2:
    """Checks the lines of one format 2 or 3 segment run by run, handing the rest to the slow path."""

    __slots__ = ("_anchor", "_chain", "_slow_path", "_tally", "_version")

    def __init__(self, chain: Chain, tally: Tally, anchor: Anchor, slow_path: SlowPath) -> None:
        self._chain = chain
        self._tally = tally
        self._anchor = anchor
        self._slow_path = slow_path
        self._version = 2

    def use_format(self, version: int) -> None:
        """Check the lines that follow as format ``version`` (2 or 3) lines: a segment's format."""
        self._version = version

    def check_lines(self, lines: list[bytes], first: int, file: str, count: int) -> int:
        """Check ``lines[first:]`` (``lines[0]`` is line ``count + 1``); return the last line's number."""
        index, end = first, len(lines)
        while index < end:
            index += self._run(lines, index)
            if index < end:  # the line that ended the run: the detailed checks judge it
                self._slow_path(lines[index], file, count + index + 1, None)
                index += 1
        return count + len(lines)

    def _run(self, lines: list[bytes], start: int) -> int:
        """Prove the longest run of ``lines[start:]`` that extends the chain as ordinary records;
        return its length (0 when the state does not allow the fast path). Every check is done for
        every line at once; the run ends before the first line any check fails."""
        chain = self._chain
        head, log_id, next_seq = chain.head, chain.log_id, chain.next_seq
        if head is None or log_id is None or next_seq is None or chain.resync:
            return 0
        if chain.segment.ended_with_rotation:
            return 0
        run = lines[start:]
        size = len(run)
        anchor_seq = self._anchor.seq
        if anchor_seq is not None and next_seq <= anchor_seq < next_seq + size:
            size = anchor_seq - next_seq  # the anchor's record is the slow path's to keep
            run = run[:size]
        if not size:
            return 0
        stated = cast("list[bytes]", list(map(getitem, run, repeat(_STATED))))
        # Header: v, log id, this seq and the previous record's hash, in the writer's bytes.
        template = (
            b'{"v":%d,"log_id":' % self._version
            + orjson.dumps(log_id).replace(b"%", b"%%")
            + b',"seq":%d,"prev":"%s","kind":"'
        )
        headers = list(
            map(
                template.__mod__,
                zip(range(next_seq, next_seq + size), [head.encode(), *stated[:-1]], strict=True),
            )
        )
        good = _count_true(map(bytes.startswith, run, headers))
        # The writer's own kinds follow the header: they are the slow path's.
        good = min(
            good, _count_false(map(bytes.startswith, run[:good], repeat(_WRITER_KINDS), map(len, headers)))
        )
        run = run[:good]
        # Trailer: ',"hash":"' at its fixed place and '"}' last; then the hash of the bytes before it.
        good = min(
            good,
            _count_true(
                map(
                    bytes.startswith,
                    run,
                    repeat(V2_HASH_MEMBER),
                    map(sub, map(len, run), repeat(V2_TRAILER_LENGTH)),
                )
            ),
            _count_true(map(bytes.endswith, run, repeat(b'"}'))),
        )
        run = run[:good]
        digests: list[bytes] = list(
            map(
                _DIGEST,
                map(
                    hashlib.sha256,
                    map(
                        _PREFIXES[self._version].__add__,
                        cast("Iterator[bytes]", map(getitem, run, repeat(_BODY))),
                    ),
                ),
            )
        )
        good = _count_true(map(bytes.__eq__, map(hexlify, digests), stated))
        if not good:
            return 0
        self.extend_tree(digests[:good], leaves=self._version in LEAF_FORMATS)
        self._settle(good, stated[good - 1].decode(), next_seq + good)
        return good

    def extend_tree(self, digests: list[bytes], *, leaves: bool = False) -> None:
        """Append the records' leaves to the RFC 6962 frontier, a perfect subtree at a time: each
        level of a subtree is hashed in one pass of C calls, and the subtree's root merges into
        the frontier as one leaf of its height would. ``leaves``: the record hashes are their
        leaves (format 3)."""
        frontier = self._chain.frontier
        sha256, size, roots = small_sha256, frontier.size, frontier.roots
        node_prefix = sha256(_NODE)
        if not leaves:
            digests = list(map(_SMALL_DIGEST, map(sha256, map(_LEAF.__add__, digests))))
        at, total = 0, len(digests)
        while at < total:
            # The largest perfect subtree that fits both the rest and the frontier's alignment.
            width = size & -size if size else 1 << (total - at).bit_length()
            while width > total - at:
                width >>= 1
            level = digests[at : at + width]
            while len(level) > 1:
                # A node hasher copied from one holding the 0x01 prefix and fed both children:
                # no concatenated input built per node.
                nodes = list(map(_NODE_COPY, repeat(node_prefix, len(level) // 2)))
                list(map(_NODE_UPDATE, nodes, level[0::2]))
                list(map(_NODE_UPDATE, nodes, level[1::2]))
                level = list(map(_NODE_DIGEST, nodes))
            node = level[0]
            bits = size // width
            while bits & 1:
                node = sha256(_NODE + roots.pop() + node).digest()
                bits >>= 1
            roots.append(node)
            size += width
            at += width
        frontier.size = size

    def _settle(self, settled: int, head: str, next_seq: int) -> None:
        """Write back what :meth:`_run` proved for ``settled`` records."""
        settle_run(self._tally, self._chain, settled, head, next_seq)


def settle_run(tally: Tally, chain: Chain, settled: int, head: str, next_seq: int) -> None:
    """Write back a run of ``settled`` ordinary records proved in one go (every check a record
    gets one by one), ending with ``head`` just before ``next_seq``: the counts, the chain's head
    and the segment's last record. Shared by the line and block paths of formats 2 and 3."""
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


def _count_true(flags: Iterator[bool]) -> int:
    """How many of ``flags`` are true before the first false one."""
    values = list(flags)
    return values.index(False) if False in values else len(values)


def _count_false(flags: Iterator[bool]) -> int:
    """How many of ``flags`` are false before the first true one."""
    values = list(flags)
    return values.index(True) if True in values else len(values)
