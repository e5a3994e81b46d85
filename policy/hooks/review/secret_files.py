"""What the secret-read guards share: the file a call would print that holds a secret, a path as
the call means it, and the head of a file as text.

Its own module so that :mod:`.secret_reads` (Read, Bash) and :mod:`.secret_greps` (Grep) both
build on it, and neither on the other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

MAX_SCAN_BYTES: Final[int] = 1024 * 1024  # the head of each file that is reviewed


@dataclass(frozen=True, slots=True)
class SecretFile:
    """A file a call reads that the policy would redact or withhold."""

    path: str
    types: tuple[str, ...]
    action: str


def resolve_path(path: str | None, cwd: str | None) -> str | None:
    """``path`` as an absolute, normalised path (``~`` expanded; relative to ``cwd``), or None."""
    if not path:
        return None
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        if not cwd:
            return None
        expanded = os.path.join(cwd, expanded)
    return os.path.normpath(expanded)


def text_head(path: str, size: int) -> str | None:
    """The first ``size`` bytes of ``path`` as text; None when unreadable or binary (no text
    secret detector reads a binary file, and the tools print noise for one)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(size)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")
