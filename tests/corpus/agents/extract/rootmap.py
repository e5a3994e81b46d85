"""Spell each run's project root as ``/workspace``, the packs' default ``params.workspace``.

A deployment sets ``params.workspace`` to the folder the agent works in; the corpus is judged with
the default params, so a recorded ``/Users/ann/Sites/app/src/x.ts`` (or ``C:\\Code\\App\\src\\x.ts``)
is rewritten to ``/workspace/src/x.ts``, as that deployment would see it. The root is found by
method, not by name: the prefix of a recorded absolute path that is followed by one of the
repository's own top-level entries (read from the snapshot), the most frequent such prefix per
repository winning. Paths outside the project (``/tmp``, ``~/.cache``) are left as recorded.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

_ABSOLUTE = re.compile(r"(?:[A-Za-z]:[\\/]|/)[^\s\"'`;|&<>()]*")


def top_level(repo_dir: Path, commit: str) -> frozenset[str]:
    done = subprocess.run(
        ["git", "-C", str(repo_dir), "ls-tree", "--name-only", commit],
        capture_output=True,
        text=True,
        check=False,
    )
    return frozenset(done.stdout.split()) if done.returncode == 0 else frozenset()


def _parts(path: str) -> list[str]:
    return [p for p in re.split(r"[\\/]+", path) if p]


def _canonical_root(parts: list[str]) -> str:
    """A root's separator-free key: drive letters and msys ``/c/`` spell the same folder."""
    first = parts[0].rstrip(":").lower() if parts else ""
    rest = [p.lower() for p in parts[1:]]
    return "/".join([first, *rest]) if len(first) == 1 else "/".join(p.lower() for p in parts)


def _roots_of(path: str, entries: frozenset[str]) -> list[str]:
    parts = _parts(path)
    return [_canonical_root(parts[:i]) for i in range(2, len(parts)) if parts[i] in entries]


def root_candidates(paths: Iterable[str], commands: Iterable[str], entries: frozenset[str]) -> Counter[str]:
    """How often each prefix precedes one of the repository's top-level entries: whole recorded
    file paths first (they may hold spaces); absolute words of commands only when none did."""
    found: Counter[str] = Counter(
        root for path in paths if _ABSOLUTE.match(path) for root in _roots_of(path, entries)
    )
    if not found:
        for command in commands:
            found.update(root for m in _ABSOLUTE.finditer(command) for root in _roots_of(m.group(0), entries))
    return found


def rewrite(text: str, root_key: str) -> str:
    """Every absolute path under the root, in any spelling, rewritten under /workspace."""

    def replace(match: re.Match[str]) -> str:
        raw = match.group(0)
        parts = _parts(raw)
        depth = len(root_key.split("/"))
        if len(parts) >= depth and _canonical_root(parts[:depth]) == root_key:
            rest = parts[depth:]
            return (
                "/workspace"
                + ("/" + "/".join(rest) if rest else "")
                + ("/" if raw.endswith(("/", "\\")) and rest else "")
            )
        return raw

    return _ABSOLUTE.sub(replace, text)


def rewrite_path(path: str, root_key: str) -> str:
    """A whole recorded path (it may hold spaces or parentheses) rewritten under /workspace."""
    parts = _parts(path)
    depth = len(root_key.split("/"))
    if _ABSOLUTE.match(path) and len(parts) >= depth and _canonical_root(parts[:depth]) == root_key:
        return "/".join(["/workspace", *parts[depth:]])
    return path


def rewrite_quoted(text: str, root_key: str) -> str:
    """Also a root written inside double quotes with spaces (``cd "C:\\My Projects\\App"``)."""

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        parts = _parts(inner)
        depth = len(root_key.split("/"))
        if " " in inner and len(parts) >= depth and _canonical_root(parts[:depth]) == root_key:
            rest = parts[depth:]
            return '"/workspace' + ("/" + "/".join(rest) if rest else "") + '"'
        return match.group(0)

    return _ABSOLUTE.sub(
        lambda m: rewrite(m.group(0), root_key), re.sub(r'"((?:[A-Za-z]:[\\/]|/)[^"\n]*)"', replace, text)
    )
