"""Reading a segment: complete lines in bounded chunks, which of them may hold a float, and the
torn rest.

Chunks are read whole and split once, never copied whole; a line longer than a chunk is joined
from its pieces. Which lines may hold a float is found by scanning the chunk at C speed, so only
those pay for the walk over the parsed record (:func:`float_suspects`).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

#: Read size: big enough to amortize per-chunk work, small enough to stay in the CPU caches while
#: its lines are checked (measured: 1 MiB beats 8 MiB by a quarter of a microsecond a record).
_READ_CHUNK: Final = 1 << 20
_NEWLINE: Final = 0x0A
#: How a format 2 and a format 3 line start (index + 2 is the format).
_BYTES_STARTS: Final = (b'{"v":2,', b'{"v":3,')
# The ends of float tokens as orjson writes them (see float_suspects). Literal-led patterns, one
# each: Python's re scans for a literal first byte several times faster than for a class.
_FLOAT_TAILS: Final = (
    re.compile(rb"\.[0-9]+[,}\]]"),  # 0.5 (an exponent form also ends like one below)
    re.compile(rb"e-[0-9]+[,}\]]"),  # 1e-07, 1.5e-07
)
_FLOAT_POSITIVE_EXPONENT_TAIL: Final = re.compile(rb"e\+[0-9]+[,}\]]")  # 1e+16, 1.5e+300


class SegmentLines:
    """One segment's lines, batch by batch (:meth:`batches`); afterwards ``torn`` holds the bytes
    after the last newline and ``bytes_read`` what was read. ``OSError`` propagates.

    ``data``: the segment's bytes, already in memory (a central copy of a shipped log); ``path``
    then only names it and no file is opened. They are read in the same chunks as a file.
    """

    __slots__ = ("bytes_read", "data", "path", "torn")

    def __init__(self, path: Path, data: bytes | None = None) -> None:
        self.path = path
        self.data = data
        self.torn = b""
        self.bytes_read = 0

    def _open(self, buffered: bool = True) -> io.RawIOBase | io.BufferedIOBase:
        if self.data is not None:
            return io.BytesIO(self.data)  # reads copy each chunk, as from a file
        return self.path.open("rb") if buffered else self.path.open("rb", buffering=0)

    def batches(self) -> Iterator[tuple[list[bytes], frozenset[int]]]:
        """(complete lines of one chunk, indices of those that may hold a float), in file order."""
        with self._open() as handle:
            pending: list[bytes] = []  # the pieces of a line that has not ended yet
            scan = True
            while chunk := handle.read(_READ_CHUNK):
                self.bytes_read += len(chunk)
                # Split and scan each chunk once, never copying it whole.
                lines = chunk.split(b"\n")
                if len(lines) == 1:  # no line ends here: a line longer than a chunk
                    pending.append(chunk)
                    continue
                if self.bytes_read == len(chunk):  # formats 2 and 3 hash bytes: no float can hide
                    scan = not chunk.startswith(_BYTES_STARTS)
                suspects = float_suspects(chunk) if scan else frozenset()
                if pending:  # the chunk's first line continues the previous chunk's last one
                    lines[0] = b"".join((*pending, lines[0]))
                    if scan and float_suspects(lines[0]):
                        suspects = suspects | {0}
                tail = lines.pop()  # an incomplete line waits for the next chunk
                pending = [tail] if tail else []
                yield lines, suspects
            self.torn = b"".join(pending)

    def bytes_format(self) -> int:
        """The format (2 or 3) whose hash covers the bytes as written, when the segment's first
        line is such a record's (each segment keeps its format); else 0."""
        if self.data is not None:
            first = self.data[:7]
        else:
            with self._open() as handle:
                first = handle.read(7)
        return _BYTES_STARTS.index(first) + 2 if first in _BYTES_STARTS else 0

    def line_lists(self) -> Iterator[list[bytes]]:
        """The complete lines of each read, each with its newline, in file order, for the hot loop
        of formats 2 and 3 (:mod:`.fast_path_v2`). ``BytesIO.readlines`` cuts a read at C speed
        (it finds newlines with ``memchr`` and copies each line out once: measured, a fifth of
        a regular expression's split and a third of ``bytes.split``); a line that straddles two
        reads is joined from its pieces.
        """
        with self._open(buffered=False) as handle:
            pending: list[bytes] = []  # the pieces of a line that has not ended yet
            while chunk := handle.read(_READ_CHUNK):
                self.bytes_read += len(chunk)
                lines = io.BytesIO(chunk).readlines()
                if lines[-1][-1] != _NEWLINE:
                    if len(lines) == 1:  # no line ends here: a line longer than a read
                        pending.append(chunk)
                        continue
                    tail = lines.pop()
                else:
                    tail = b""
                if pending:  # the read's first line continues the previous read's last one
                    pending.append(lines[0])
                    lines[0] = b"".join(pending)
                pending = [tail] if tail else []
                yield lines
            self.torn = b"".join(pending)


def float_suspects(buffer: bytes) -> frozenset[int]:
    """Indices of the lines of ``buffer`` that may hold a float; only those need the float walk.

    orjson renders every finite float as ``D.D``, ``D.De+D``, ``D.De-D``, ``De+D`` or ``De-D``
    (``D`` a run of digits; tested), and in a canonical line a number ends at ``,``, ``}`` or
    ``]``. So a canonical line whose parsed record holds a float contains one of the tails matched
    here; a non-canonical line is rejected by the byte comparison whatever it holds. A string that
    merely looks like a float's tail (``"v1.5,"``) costs its line the walk, never a wrong verdict.
    Scanning a whole chunk at C speed is what makes this cheaper than walking every record.
    """
    patterns = _FLOAT_TAILS if b"+" not in buffer else (*_FLOAT_TAILS, _FLOAT_POSITIVE_EXPONENT_TAIL)
    hits = [match.start() for pattern in patterns for match in pattern.finditer(buffer)]
    if not hits:
        return frozenset()
    lines: set[int] = set()
    line = last = 0
    for at in sorted(hits):
        line += buffer.count(b"\n", last, at)
        last = at
        lines.add(line)
    return frozenset(lines)
