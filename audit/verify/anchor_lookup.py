"""Which anchor file belongs to a log: found by the log's id, not by its file name.

A log renamed on its way to an auditor (``laptop42-2026-12.jsonl``) no longer sits next to
``laptop42-2026-12.jsonl.anchor``; its writer's ``audit.jsonl.anchor`` still names the log id. So
the verifier reads the log id from the first record and looks at every ``*.anchor`` beside the log:
one of this log wins (the newest, by seq, if several); the file under the log's own anchor name is
used even when it is another log's, so that a foreign anchor there is reported as foreign.

Anchors are read only from regular files (:func:`read_regular`): a named pipe (FIFO) under an
anchor's name would block the verifier forever on its first read. One under the log's own anchor
name is handed on to be refused as unreadable; others beside the log are passed over.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import orjson

from ..segments import anchor_path

#: How much of a file is read to find its first record's log id (a record is far smaller).
_PEEK_BYTES: Final = 1 << 16
#: Anchors beside a log that are read at most (a folder of exported copies stays cheap).
_MAX_CANDIDATES: Final = 10_000


#: What a file that is not a regular file is, for the error that refuses it.
_KINDS: Final = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def read_regular(path: Path, limit: int = -1) -> bytes:
    """Up to ``limit`` bytes (all with -1) of ``path``, which must be a regular file. Opened without
    blocking and checked on the open descriptor, so a FIFO (whose open or read would wait for a
    writer) is refused at once, and a file swapped after a check cannot slip in. Raises
    ``OSError`` (``EINVAL`` with a message naming what the file is, for a file that is not regular)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise OSError(errno.EINVAL, f"{kind}, not a regular file: an anchor is read only from a file")
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return handle.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)


@dataclass(frozen=True, slots=True)
class FoundAnchor:
    """An anchor found beside the log: ``by`` says whether its name or the log id matched."""

    path: Path
    by: Literal["name", "log_id"]


def first_log_id(path: Path) -> str | None:
    """The ``log_id`` of the first line of ``path``, or None when it cannot be read."""
    try:
        head = read_regular(path, _PEEK_BYTES)
    except OSError:
        return None
    return _log_id_and_seq(head.split(b"\n", 1)[0])[0]


def find_anchor(active: Path, log_id: str | None) -> FoundAnchor | None:
    """The anchor beside the log at ``active`` (see the module docstring), or None."""
    by_name = anchor_path(active)
    # Whatever file sits under the log's own anchor name is its anchor: a FIFO there is handed on
    # (and refused as unreadable), never silently taken for "no anchor".
    named = by_name if by_name.exists() and not by_name.is_dir() else None
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
        data = read_regular(path, _PEEK_BYTES)
    except OSError:  # unreadable, or not a regular file (a FIFO would block): not this log's
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
