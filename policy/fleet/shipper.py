"""Evidence back: every line of the local audit log, shipped as written, acknowledged, resumable.

The local log stays the source of truth and is also the outbox: nothing is copied aside. What has
been shipped is one small cursor file beside the log (``LOG.shipped``: the last acknowledged seq,
its hash, and where it ends), moved forward only after JetStream acknowledged every line up to it.
After any outage (the bus, the network, this process) the shipper starts again from the cursor;
lines sent but not seen acknowledged are sent again under the same ``Nats-Msg-Id``, which the
server drops as duplicates. Checkpoint records ship like any other line, so the last one shipped
is the off-host anchor of that log.

The shipper also watches what it already shipped: a line under a shipped seq whose hash differs
(a rewritten log) or an active segment shorter than the shipped offset (a cut tail) is a finding,
reported to the fleet and never shipped over the evidence already on the bus.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from dsh_policy.audit.segments import discover_segments
from dsh_policy.policy.fleet.acks import AckInbox
from dsh_policy.policy.fleet.bus import evidence_subject, message_id

CURSOR_SUFFIX = ".shipped"


def _seq_and_hash(data: bytes) -> tuple[int, str] | None:
    try:
        record = orjson.loads(data)
        return int(record["seq"]), str(record["hash"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


_READ_LIMIT = 8 * 1024 * 1024  # bytes read per segment per pass (a backlog ships in slices)


@dataclass(slots=True)
class Cursor:
    """The last line JetStream acknowledged: its seq and hash, and its segment's inode and end."""

    log_id: str | None = None
    seq: int = -1
    hash: str | None = None
    inode: int | None = None
    offset: int = 0
    length: int = 0  # of that line, newline included: where it starts is offset - length

    @classmethod
    def load(cls, path: Path) -> Cursor:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                document["log_id"],
                int(document["seq"]),
                document["hash"],
                document["inode"],
                int(document["offset"]),
                int(document.get("length", 0)),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return cls()

    def save(self, path: Path) -> None:
        # No fsync: a cursor that falls back after a crash only re-sends lines the server or the
        # central verifier drops as duplicates.
        handle, temporary = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(
                {
                    "log_id": self.log_id,
                    "seq": self.seq,
                    "hash": self.hash,
                    "inode": self.inode,
                    "offset": self.offset,
                    "length": self.length,
                },
                out,
            )
        os.replace(temporary, path)


@dataclass(frozen=True, slots=True)
class Line:
    seq: int
    hash: str
    log_id: str
    data: bytes  # the exact bytes written, newline excluded
    inode: int
    end: int  # offset just past the newline


@dataclass(slots=True)
class ShipperState:
    """What the status report tells about shipping."""

    shipped: int = 0
    backlog: int = 0
    last_error: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)


class Shipper:
    """Ships one log's lines to the evidence stream, from its cursor on."""

    def __init__(
        self,
        log: str | os.PathLike[str],
        host: str,
        *,
        batch: int = 512,
        on_finding: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.log = Path(log)
        self.host = host
        self.batch = batch
        self.cursor_path = Path(str(self.log) + CURSOR_SUFFIX)
        self.cursor = Cursor.load(self.cursor_path)
        self.state = ShipperState()
        self._positions: dict[int, int] = {}
        if self.cursor.inode is not None:
            self._positions[self.cursor.inode] = self.cursor.offset
        self._on_finding = on_finding
        self._reported: set[str] = set()
        self._acks: AckInbox | None = None
        self._subjects: dict[str, str] = {}

    # --- reading the outbox ----------------------------------------------------------------------

    def pending(self, limit: int) -> list[Line]:
        """Up to ``limit`` complete lines after the cursor, oldest first."""
        out: list[Line] = []
        for segment in discover_segments(self.log):
            try:
                with open(segment, "rb") as handle:
                    info = os.fstat(handle.fileno())
                    start = self._positions.get(info.st_ino, 0)
                    if start and info.st_ino == self.cursor.inode and start == self.cursor.offset:
                        start = self._still_shipped(handle, info.st_size, segment)
                    if info.st_size == start:
                        continue
                    handle.seek(start)
                    chunk = handle.read(_READ_LIMIT)
            except OSError:
                continue  # rotated away between listing and opening: the next pass finds it
            position = start
            end_of_complete = chunk.rfind(b"\n") + 1
            for raw in chunk[:end_of_complete].splitlines(keepends=True):
                position += len(raw)
                line = self._line(raw.rstrip(b"\n"), info.st_ino, position)
                if line is None:
                    continue
                if line.seq <= self.cursor.seq and line.log_id == self.cursor.log_id:
                    if line.seq == self.cursor.seq and self.cursor.hash not in (None, line.hash):
                        self._finding(
                            "REWRITTEN",
                            f"seq {line.seq} now hashes {line.hash}, {self.cursor.hash} was shipped",
                        )
                    self._positions[info.st_ino] = position
                    continue
                out.append(line)
                if len(out) >= limit:
                    return out
        return out

    def _still_shipped(self, handle: Any, size: int, segment: Path) -> int:
        """Where to go on reading the cursor's segment: the cursor's offset while the last line
        shipped is still there, unchanged; otherwise report the cut or rewrite and read the
        segment again from its start (lines up to the cursor's seq are not shipped again)."""
        cursor = self.cursor
        if size >= cursor.offset and cursor.length:
            handle.seek(cursor.offset - cursor.length)
            found = _seq_and_hash(handle.read(cursor.length).rstrip(b"\n"))
            if found == (cursor.seq, cursor.hash):
                return cursor.offset
        if size < cursor.offset:
            self._finding(
                "TRUNCATED", f"{segment} is {size} bytes; {cursor.offset} were shipped (seq {cursor.seq})"
            )
        else:
            self._finding("REWRITTEN", f"{segment}: the line shipped as seq {cursor.seq} is no longer there")
        self._positions[cursor.inode or 0] = 0
        cursor.inode = None  # read the segment afresh from here on
        return 0

    def _line(self, data: bytes, inode: int, end: int) -> Line | None:
        try:
            record = orjson.loads(data)
            return Line(int(record["seq"]), str(record["hash"]), str(record["log_id"]), data, inode, end)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            self._finding(
                "UNREADABLE_LINE",
                f"{self.log}: a complete line that is not a record at offset {end - len(data) - 1}",
            )
            return None

    def _finding(self, reason: str, message: str) -> None:
        key = f"{reason}:{self.cursor.log_id}:{self.cursor.seq}"  # one report per damage found
        if key in self._reported:
            return
        self._reported.add(key)
        finding = {"reason": reason, "message": message, "log": str(self.log)}
        self.state.findings.append(finding)
        if self._on_finding is not None:
            self._on_finding(finding)

    # --- shipping ------------------------------------------------------------------------------

    async def ship_once(self, connection: Any, timeout: float = 5.0) -> int:
        """Ship one batch over the NATS ``connection``; the number of lines acknowledged (the
        cursor moved that far: up to the first line not acknowledged within ``timeout``). A line
        whose log id differs from the cursor's starts that log's cursor afresh (a new log)."""
        lines = self.pending(self.batch)
        self.state.backlog = len(lines)
        if not lines:
            return 0
        if self._acks is None or self._acks.connection is not connection:
            self._acks = AckInbox(connection)
        acks = self._acks
        futures: list[asyncio.Future[None]] = []
        done = 0
        try:
            for line in lines:
                subject = self._subjects.get(line.log_id)
                if subject is None:
                    subject = self._subjects[line.log_id] = evidence_subject(self.host, line.log_id)
                line_id = message_id(line.log_id, line.seq, line.hash)
                futures.append(await acks.publish(subject, line.data, line_id))
            await asyncio.wait(futures, timeout=timeout)
            for line, future in zip(lines, futures, strict=True):
                if not future.done():
                    raise TimeoutError(f"no acknowledgement within {timeout:g} s")
                future.result()  # AckRefused: the bus answered "not stored"
                self._advance(line)
                done += 1
        except Exception as error:  # the bus went away or refused: resume from the cursor next time
            self.state.last_error = f"{type(error).__name__}: {error}"
        finally:
            acks.forget(futures[done:])
            if done:
                self.cursor.save(self.cursor_path)
        self.state.shipped += done
        self.state.backlog = len(lines) - done
        if done == len(lines):
            self.state.last_error = None
        return done

    def _advance(self, line: Line) -> None:
        cursor = self.cursor
        cursor.log_id, cursor.seq, cursor.hash, cursor.inode, cursor.offset = (
            line.log_id,
            line.seq,
            line.hash,
            line.inode,
            line.end,
        )
        cursor.length = len(line.data) + 1
        self._positions[line.inode] = line.end

    async def ship_all(self, connection: Any, *, timeout: float = 5.0) -> int:
        """Ship until nothing is pending or the bus fails; the number shipped."""
        total = 0
        while True:
            count = await self.ship_once(connection, timeout)
            total += count
            if count == 0 or self.state.last_error is not None:
                return total
