"""Move a whole log (every segment, its anchor and torn-tail side files) to a new name, intact.

``dsh-policy run`` starts each scripted session on a fresh log, so following the README twice gives
what the README shows; the previous log is kept, never truncated or deleted, as
``PATH.previous/NAME.previous-<UTC time>`` (its rotated segments become ``...previous-<time>.NNNNNN``
beside it, which is where ``verify`` looks for them, so the moved log still verifies as it did).
One folder beside the log holds them all: re-runs do not pile files up where the log lives (the
README's demo writes into the repository root). A log another process holds open (its lock is
taken) is not moved.
"""

from __future__ import annotations

import datetime
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from .segments import anchor_path, lock_path, rotated_segments


@dataclass(frozen=True, slots=True)
class MovedLog:
    """Where the log went, and how many files moved."""

    path: Path
    files: int


def log_files(active: Path) -> list[Path]:
    """Every file that belongs to the log at ``active`` except its lock, oldest segment first."""
    files = [path for _, path in rotated_segments(active)]
    if active.is_file():
        files.append(active)
    if anchor_path(active).is_file():
        files.append(anchor_path(active))
    if active.parent.is_dir():
        files += sorted(p for p in active.parent.glob(f"{_glob_escape(active.name)}.torn-*") if p.is_file())
    return files


def move_log_aside(active: Path, now: datetime.datetime | None = None) -> MovedLog | str | None:
    """Rename the log at ``active`` to ``PATH.previous/NAME.previous-<time>``: the new name, None
    when there is no log, or an error message (another process holds the log, a rename failed)."""
    files = log_files(active)
    if not files:
        return None
    stamp = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    folder = previous_folder(active)
    target = folder / f"{active.name}.previous-{stamp}"
    lock = lock_path(active)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as error:
        return f"{lock}: cannot open the lock file: {error.strerror or error}"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return f"{active}: another process is writing this log"
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as error:
            return f"{folder}: cannot make the folder for previous logs: {error.strerror or error}"
        moved = 0
        for path in files:
            new = target.with_name(target.name + path.name[len(active.name) :])
            try:
                os.rename(path, new)
            except OSError as error:
                return f"{path}: cannot move it to {new}: {error.strerror or error}"
            moved += 1
        return MovedLog(target, moved)
    finally:
        os.close(fd)


def previous_folder(active: Path) -> Path:
    """The one folder, beside the log, that holds every log moved aside from ``active``."""
    return active.with_name(f"{active.name}.previous")


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
