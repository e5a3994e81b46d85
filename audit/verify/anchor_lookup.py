"""Which anchor file belongs to a log: found by the log's id, not by its file name.

A log renamed on its way to an auditor (``laptop42-2026-12.jsonl``) no longer sits next to
``laptop42-2026-12.jsonl.anchor``; its writer's ``audit.jsonl.anchor`` still names the log id. So
the verifier reads the log id from the first record and looks at every ``*.anchor`` beside the log:
one of this log wins (the newest, by seq, if several); the file under the log's own anchor name is
used even when it is another log's, so that a foreign anchor there is reported as foreign.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import orjson

from ..segments import anchor_path

#: How much of a file is read to find its first record's log id (a record is far smaller).
_PEEK_BYTES: Final = 1 << 16
#: Anchors beside a log that are read at most (a folder of exported copies stays cheap).
_MAX_CANDIDATES: Final = 10_000


@dataclass(frozen=True, slots=True)
class FoundAnchor:
    """An anchor found beside the log: ``by`` says whether its name or the log id matched."""

    path: Path
    by: Literal["name", "log_id"]


def first_log_id(path: Path) -> str | None:
    """The ``log_id`` of the first line of ``path``, or None when it cannot be read."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_PEEK_BYTES)
    except OSError:
        return None
    return _log_id_and_seq(head.split(b"\n", 1)[0])[0]


def find_anchor(active: Path, log_id: str | None) -> FoundAnchor | None:
    """The anchor beside the log at ``active`` (see the module docstring), or None."""
    by_name = anchor_path(active)
    named = by_name if by_name.is_file() else None
    if log_id is not None:
        best: tuple[int, Path] | None = None
        for index, candidate in enumerate(sorted(active.parent.glob("*.anchor"))):
            if index >= _MAX_CANDIDATES:
                break
            found_id, seq = _read_anchor(candidate)
            if found_id != log_id or not candidate.is_file():
                continue
            if best is None or seq > best[0] or (seq == best[0] and candidate == by_name):
                best = (seq, candidate)
        if best is not None:
            return FoundAnchor(best[1], "name" if best[1] == by_name else "log_id")
    return FoundAnchor(named, "name") if named is not None else None


def _read_anchor(path: Path) -> tuple[str | None, int]:
    try:
        with path.open("rb") as handle:
            data = handle.read(_PEEK_BYTES)
    except OSError:
        return None, -1
    log_id, seq = _log_id_and_seq(data.split(b"\n", 1)[0])
    return log_id, seq if seq is not None else -1


def _log_id_and_seq(line: bytes) -> tuple[str | None, int | None]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None, None
    if type(record) is not dict:
        return None, None
    log_id, seq = record.get("log_id"), record.get("seq")
    return (log_id if type(log_id) is str else None), (seq if type(seq) is int else None)
