"""Tool calls from Automaker's per-feature logs (``.automaker/features/<id>/agent-output.md``).

Automaker drives Claude Code (and Codex, through its Bash tool) and commits, for every feature, the
agent's log: each tool call is a ``🔧 Tool: <Name>`` line followed by ``Input: {json}``. The JSON is
the call exactly as the agent sent it, so it is read with a JSON decoder, never by pattern.

Read from the git objects of a fetched snapshot (``git show``); nothing in the log is executed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = "🔧 Tool: "
LOG_GLOB = ".automaker/features/*/agent-output.md"


@dataclass(frozen=True, slots=True)
class RawCall:
    """One tool call as the agent sent it, with where it was found."""

    agent_tool: str
    arguments: dict[str, Any]
    repo: str
    commit: str
    path: str


def _git(repo_dir: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo_dir), *args], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


def newest_logs(repo_dir: Path) -> dict[str, str]:
    """path -> the newest commit holding it, over the snapshot's whole history."""
    found: dict[str, str] = {}
    commit = ""
    for line in _git(repo_dir, "log", "--all", "--format=@%H", "--name-only", "--", LOG_GLOB).splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.strip() and line not in found:
            found[line] = commit
    return found


def calls_in(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(tool name, input object) for every well-formed call in one log."""
    decoder = json.JSONDecoder()
    position = 0
    while (start := text.find(MARKER, position)) >= 0:
        line_end = text.find("\n", start)
        if line_end < 0:
            return
        name = text[start + len(MARKER) : line_end].strip()
        position = line_end + 1
        if not text.startswith("Input: ", position):
            continue
        try:
            value, end = decoder.raw_decode(text, position + len("Input: "))
        except json.JSONDecodeError:
            continue
        position = end
        if isinstance(value, dict):
            yield name, value


def extract(repo_dir: Path, repo: str) -> Iterator[RawCall]:
    """Every tool call of every feature log in one snapshot (the newest version of each log)."""
    for path, commit in sorted(newest_logs(repo_dir).items()):
        text = _git(repo_dir, "show", f"{commit}:{path}")
        for name, arguments in calls_in(text):
            yield RawCall(name, arguments, repo, commit, path)
