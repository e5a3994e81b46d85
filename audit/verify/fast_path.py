"""The verifier's hot loop: ordinary records that extend the chain, settled without findings.

An ordinary record that is well formed, canonical, hashes right and extends the chain is settled
here with the chain state in local variables; anything else (a writer's kind, the anchor's seq,
any doubt at all) goes to the slow path, which repeats every check and names what is wrong. Both
paths accept exactly the same lines. The hashing is :func:`..record_hash.hash_of_line`'s, inlined
for a line whose ``hash`` member follows another one, as every canonical line's does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Final

import orjson

from ..record import FORMAT_VERSION
from ..record_hash import RECORD_HASHER
from .anchors import Anchor
from .chain import Chain, SegmentState
from .records import ORJSON_CANONICAL, SORT_SENSITIVE_BYTES, contains_float
from .tally import Tally

#: Kinds the slow path notes for the report (the writer's own, and ``hook_told``, which it counts).
_WRITER_KINDS: Final = frozenset(
    {"checkpoint", "segment_start", "recovery", "key_handover", "records_lost", "hook_told"}
)
#: The slow path: (line, file, line number, the previous segment's state for a segment's first line).
SlowPath = Callable[[bytes, str, int, SegmentState | None], None]


class FastPath:
    """Checks runs of lines of one segment, handing every line it cannot settle to the slow path."""

    __slots__ = ("_anchor", "_chain", "_slow_path", "_tally")

    def __init__(self, chain: Chain, tally: Tally, anchor: Anchor, slow_path: SlowPath) -> None:
        self._chain = chain
        self._tally = tally
        self._anchor = anchor
        self._slow_path = slow_path

    def check_lines(
        self, lines: list[bytes], first: int, float_suspects: frozenset[int], file: str, count: int
    ) -> int:
        """Check ``lines[first:]`` (``lines[0]`` is line ``count + 1``); return the last line's number.

        The verifier's hot loop. An ordinary record that is well formed, canonical, hashes right
        and extends the chain is settled here with its state in local variables; anything else
        (a special kind, the anchor's seq, any doubt at all) goes to the slow path, which
        repeats every check with findings. Both paths accept exactly the same lines.
        """
        loads, dumps = orjson.loads, orjson.dumps
        decode_error, encode_error = orjson.JSONDecodeError, orjson.JSONEncodeError
        sha256, prefix = hashlib.sha256, RECORD_HASHER
        special, sort_sensitive = _WRITER_KINDS, SORT_SENSITIVE_BYTES.search
        chain, slow_path = self._chain, self._slow_path
        anchor_seq = self._anchor.seq
        after_rotation = chain.segment.ended_with_rotation
        log_id, head, next_seq = chain.log_id, chain.head, chain.next_seq
        frontier = chain.frontier
        roots, size = frontier.roots, frontier.size
        settled = 0
        for index in range(first, len(lines)):
            line = lines[index]
            record: Any = None
            if head is not None and log_id is not None and not chain.resync and not after_rotation:
                try:
                    record = loads(line)
                except decode_error:
                    record = None
            if type(record) is dict:
                stated, seq, v = record.get("hash"), record.get("seq"), record.get("v")
                kind, prev = record.get("kind"), record.get("prev")
                if (
                    type(seq) is int
                    and seq == next_seq
                    and seq != anchor_seq
                    and type(stated) is str
                    and len(stated) == 64
                    and prev == head
                    and prev != stated
                    and type(v) is int
                    and v == FORMAT_VERSION
                    and type(kind) is str
                    and kind not in special
                    and record.get("log_id") == log_id
                    and type(record.get("ts")) is str
                    and (line.isascii() or sort_sensitive(line) is None)
                    and (index not in float_suspects or not contains_float(record))
                ):
                    try:
                        canonical = dumps(record, option=ORJSON_CANONICAL) == line
                    except encode_error:
                        canonical = False
                    # In a canonical line the top-level "hash" member follows another member.
                    # Whatever member is found first, the bytes around it are hashed: if it was
                    # a nested one, the real member is still in what is hashed, which then
                    # cannot hash to its own value (as in hash_of_line); the slow path judges.
                    at = line.find(b',"hash":"') if canonical else -1
                    if at > 0 and line[at + 73 : at + 74] == b'"':
                        view = memoryview(line)
                        hasher = prefix.copy()
                        hasher.update(view[:at])
                        hasher.update(view[at + 74 :])
                        digest = hasher.digest()
                        if digest.hex() == stated:
                            # RFC 6962 frontier append (see MerkleFrontier.append), inlined.
                            node = sha256(b"\x00" + digest).digest()
                            bits = size
                            while bits & 1:
                                node = sha256(b"\x01" + roots.pop() + node).digest()
                                bits >>= 1
                            roots.append(node)
                            size += 1
                            head, next_seq = stated, seq + 1
                            settled += 1
                            continue
            # Slow path: hand over the state, let the detailed checks judge, take the state back.
            self._settle(settled, head, next_seq, size)
            settled = 0
            slow_path(line, file, count + index + 1, None)
            after_rotation = chain.segment.ended_with_rotation
            log_id, head, next_seq = chain.log_id, chain.head, chain.next_seq
            frontier = chain.frontier
            roots, size = frontier.roots, frontier.size
        self._settle(settled, head, next_seq, size)
        return count + len(lines)

    def _settle(self, settled: int, head: str | None, next_seq: int | None, size: int) -> None:
        """Write back what the hot loop of :meth:`check_lines` proved for ``settled`` records."""
        if not settled:
            return
        tally, chain = self._tally, self._chain
        tally.records_checked += settled
        tally.records_seen += settled
        tally.hashed_right += settled
        tally.records_after_anchor += settled
        chain.head, chain.next_seq = head, next_seq
        chain.frontier.size = size
        last = next_seq - 1 if next_seq is not None else -1
        if last > chain.seen_max_seq:
            chain.seen_max_seq = last
        segment = chain.segment
        segment.last_seq, segment.last_hash, segment.ended_with_rotation = last, head, False
