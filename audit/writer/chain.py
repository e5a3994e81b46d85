"""Where the log's chain stands for this writer: the state every record it writes depends on.

The state is valid while the OS lock is held and the file has not changed under us: records this
writer writes advance it (:meth:`ChainState.commit`), records read back from the file (opening,
catching up with other processes) rebuild it (:meth:`ChainState.absorb`).
"""

from __future__ import annotations

import calendar
import time
from pathlib import Path
from typing import Any

import orjson

from ..merkle import MerkleFrontier
from ..record import DEFAULT_FORMAT_VERSION, FORMAT_VERSIONS
from .errors import AuditWriteError


class ChainState:
    """The head, the next seq, the Merkle frontier, the active segment and the last checkpoint."""

    __slots__ = (
        "frontier",
        "head",
        "key_known",
        "last_checkpoint_at",
        "last_checkpoint_line",
        "last_key_id",
        "last_line",
        "log_id",
        "next_seq",
        "pending_rotation",
        "requested_log_id",
        "segment_has_records",
        "segment_index",
        "segment_started",
        "since_checkpoint",
        "version",
    )

    def __init__(self, requested_log_id: str | None, version: int = DEFAULT_FORMAT_VERSION) -> None:
        #: The format version records are sealed in: a new log's is the writer's setting, an
        #: existing log keeps the version of the records read back (one log, one format).
        self.version = version
        self.log_id = requested_log_id or ""
        self.requested_log_id = requested_log_id
        self.next_seq = 0
        self.head = ""
        self.frontier = MerkleFrontier()
        self.segment_index = 0
        self.since_checkpoint = 0
        self.last_checkpoint_at = time.monotonic()
        self.segment_has_records = False
        #: Wall-clock start of the active segment (its segment_start record's ts), shared by every
        #: process on the log, so time-based rotation happens once whoever appends.
        self.segment_started = time.time()
        #: The segment ends in a rotation checkpoint whose successor is not installed yet.
        self.pending_rotation = False
        self.last_line = b""  # with its newline
        #: The key id of the newest checkpoint or hand-over read back (``key_known`` once one was).
        self.last_key_id: str | None = None
        self.key_known = False
        self.last_checkpoint_line = b""  # the newest checkpoint read back, for the anchor

    def start_new_log(self, log_id: str) -> None:
        """Chain state of a log that has no record yet."""
        self.log_id = log_id
        self.next_seq, self.head, self.frontier = 0, "", MerkleFrontier()

    def link_to_previous(self, name: str) -> dict[str, Any]:
        """The ``segment.previous`` of a new segment that follows the segment ``name``."""
        return {"name": name, "last_seq": self.next_seq - 1, "last_hash": self.head}

    def segment_start_fields(self, index: int, previous: dict[str, Any] | None) -> dict[str, Any]:
        """The caller fields of segment ``index``'s ``segment_start`` (the tree state it starts at)."""
        return {"segment": {"index": index, "previous": previous}, "tree": tree_fields(self.frontier)}

    def commit(self, kind: str, line: bytes, hex_digest: str, digest: bytes, seq: int) -> None:
        """Chain state after ``line`` reached the active segment."""
        self.next_seq = seq + 1
        self.head = hex_digest
        self.frontier.append_record(self.version, digest)
        self.since_checkpoint = 0 if kind == "checkpoint" else self.since_checkpoint + 1
        self.segment_has_records = kind != "segment_start"
        self.pending_rotation = False  # a record after a rotation checkpoint: nothing left to finish
        self.last_line = line

    def absorb(self, record: dict[str, Any], line: bytes, *, allow_start: bool, path: Path) -> None:
        """Update chain state from one record read back from the file (``path``, for errors)."""
        kind = record.get("kind")
        self.segment_has_records = kind != "segment_start"
        if kind == "segment_start" and (allow_start or self.head == ""):
            self.segment_started = epoch_seconds(record.get("ts"), default=self.segment_started)
            segment = record.get("segment") or {}
            self.segment_index = int(segment.get("index", 0))
            tree = record.get("tree") or {}
            self.frontier = MerkleFrontier.restore(
                int(tree.get("size", 0)), [bytes.fromhex(h) for h in tree.get("frontier", [])]
            )
            self.since_checkpoint = 0  # a segment starts after its predecessor's rotation checkpoint
        if not self.log_id or self.head == "":
            existing = str(record.get("log_id", ""))
            if self.requested_log_id and existing != self.requested_log_id:
                raise AuditWriteError(
                    f"{path}: log id is {existing!r}, but {self.requested_log_id!r} was requested"
                )
            self.log_id = existing
        refuse_unknown_format(record, path)
        self.version = int(record["v"])
        self.next_seq = int(record["seq"]) + 1
        self.head = str(record["hash"])
        self.frontier.append_record(record.get("v"), bytes.fromhex(self.head))
        self.since_checkpoint = 0 if kind == "checkpoint" else self.since_checkpoint + 1
        self.pending_rotation = False
        if kind == "checkpoint":
            body = record.get("checkpoint") or {}
            self.pending_rotation = body.get("reason") == "rotation"
            self.last_key_id = body.get("key_id")
            self.last_checkpoint_line = line
            self.key_known = True
        elif kind == "key_handover":
            self.last_key_id = (record.get("handover") or {}).get("to_key_id")
            self.key_known = True


def tree_fields(frontier: MerkleFrontier) -> dict[str, Any]:
    """The Merkle tree state a ``segment_start`` carries."""
    return {"size": frontier.size, "frontier": [root.hex() for root in frontier.roots]}


def epoch_seconds(ts: Any, *, default: float) -> float:
    """Seconds since the epoch of a record's RFC 3339 UTC ``ts`` (``default`` if unreadable)."""
    if not isinstance(ts, str):
        return default
    try:
        whole = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return default
    return float(whole)


def refuse_unknown_format(record: dict[str, Any] | None, path: Path) -> None:
    """Raise :class:`AuditWriteError` for a whole record in a format this writer does not know.

    Such a record is a newer writer's (or a damaged ``v``): continuing the log in an older format
    would mix two leaf rules in one Merkle tree and fail every later checkpoint, and moving the
    record aside as torn would misname a valid record, so the writer stops and says why."""
    if record is not None and record.get("v") not in FORMAT_VERSIONS:
        raise AuditWriteError(
            f"{path}: record seq {record.get('seq')!r} is in audit format {record.get('v')!r}; this"
            f" writer knows formats {', '.join(map(str, FORMAT_VERSIONS))}: upgrade every process"
            " that appends to this log"
        )


def parse_own_line(line: bytes) -> dict[str, Any] | None:
    """A line as a record with the fields the writer relies on, or ``None`` if it is not one."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    seq, digest = record.get("seq"), record.get("hash")
    if type(seq) is not int or not isinstance(digest, str) or len(digest) != 64:
        return None
    return record
