"""File names around one audit log: rotated segments, lock, anchor and torn-tail side files.

The active segment always lives at the configured path; rotation renames it to ``PATH.NNNNNN``
(its segment index, zero-padded so names sort in order) and starts a new file at ``PATH``.
"""

from __future__ import annotations

import re
from pathlib import Path

_ROTATED = re.compile(r"^(?P<base>.+)\.(?P<index>\d{6})$")


def rotated_path(active: Path, index: int) -> Path:
    """Where segment ``index`` of the log at ``active`` lives once rotated."""
    return active.with_name(f"{active.name}.{index:06d}")


def lock_path(active: Path) -> Path:
    """The lock file writers of one log share (never rotated, so the lock is stable)."""
    return active.with_name(f"{active.name}.lock")


def next_segment_path(active: Path) -> Path:
    """Where a writer prepares the next segment under the lock before installing it at ``active``
    (one name suffices: only the lock holder creates it; a leftover is a dead writer's)."""
    return active.with_name(f"{active.name}.next")


def anchor_path(active: Path) -> Path:
    """The exported latest checkpoint: copy it off the host to detect a cut tail later."""
    return active.with_name(f"{active.name}.anchor")


def torn_path(active: Path, segment_index: int, offset: int) -> Path:
    """Side file that keeps torn bytes found at ``offset`` of a segment."""
    return active.with_name(f"{active.name}.torn-{segment_index:06d}-{offset}")


def rotated_segments(active: Path) -> list[tuple[int, Path]]:
    """Rotated siblings of ``active`` as (index, path), oldest first."""
    found: list[tuple[int, Path]] = []
    if not active.parent.is_dir():
        return found
    for candidate in active.parent.iterdir():
        match = _ROTATED.match(candidate.name)
        if match and match.group("base") == active.name and candidate.is_file():
            found.append((int(match.group("index")), candidate))
    found.sort()
    return found


def active_path_of(path: Path) -> Path:
    """The active path of the log ``path`` belongs to (``PATH.000003`` -> ``PATH``)."""
    match = _ROTATED.match(path.name)
    if match:
        return path.with_name(match.group("base"))
    return path


def discover_segments(path: Path) -> list[Path]:
    """Every segment of the log that ``path`` (active or rotated) belongs to, oldest first."""
    active = active_path_of(path)
    segments = [candidate for _, candidate in rotated_segments(active)]
    if active.exists():
        segments.append(active)
    if not segments:
        segments.append(path)  # let the reader report it as unreadable rather than skip it
    # A missing active file with rotated siblings is left out: the verifier then reports the last
    # rotated segment's promised successor as SEGMENT_MISSING (deleted, or a rotation cut short).
    return segments
