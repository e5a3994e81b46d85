"""Tool calls from Claude Code session transcripts committed to a repository.

Two forms are read. Exports and raw session logs hold the API's own ``tool_use`` blocks
(``{"type": "tool_use", "name": "Bash", "input": {...}}``), found with a JSON decoder wherever a
JSON value starts a line (JSONL lines, or JSON arrays inside a markdown export). Console
transcripts saved from the terminal show a call as ``⏺ Bash(command)``: only calls shown whole on
one line are taken (a wrapped or elided command would be a guess), and only the kinds whose
arguments the line holds in full (Bash, Read).

Read from the git objects of a fetched snapshot; nothing is executed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from automaker import RawCall, _git

_CONSOLE_CALL = re.compile(r"^⏺ (Bash|Read)\((.+)\)(?:…)?\s*$")
_JSON_START = re.compile(r"^\s*[\[{]", re.MULTILINE)


def _tool_uses(value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(value, dict):
        name, arguments = value.get("name"), value.get("input")
        if value.get("type") == "tool_use" and isinstance(name, str) and isinstance(arguments, dict):
            yield name, arguments
            return
        for item in value.values():
            yield from _tool_uses(item)
    elif isinstance(value, list):
        for item in value:
            yield from _tool_uses(item)


def json_calls(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``tool_use`` block of every JSON value that starts a line."""
    decoder = json.JSONDecoder()
    position = 0
    while (match := _JSON_START.search(text, position)) is not None:
        start = match.end() - 1
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        position = end
        yield from _tool_uses(value)


def console_calls(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``⏺ Bash(cmd)`` and ``⏺ Read(path)`` lines shown whole."""
    for line in text.splitlines():
        match = _CONSOLE_CALL.match(line)
        if match is None or match.group(2).endswith("…"):
            continue
        name, argument = match.groups()
        yield (name, {"command": argument}) if name == "Bash" else (name, {"file_path": argument})


def _is_transcript(path: str) -> bool:
    """A committed session record: named like one, and not a test fixture made up for a parser."""
    if re.search(r"(?i)(?:^|/)(?:fixtures?|tests?|specs?|examples?)/", path):
        return False
    named = re.search(r"(?i)claude|session|transcript|conversation|dev-log|prompts?/", path)
    return bool(named) and path.endswith((".md", ".jsonl", ".json"))


def extract(repo_dir: Path, repo: str) -> Iterator[RawCall]:
    """Every tool call of every transcript in one snapshot (the newest version of each file)."""
    found: dict[str, str] = {}
    commit = ""
    for line in _git(repo_dir, "log", "--all", "--format=@%H", "--name-only").splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.strip() and line not in found and _is_transcript(line):
            found[line] = commit
    for path, commit in sorted(found.items()):
        text = _git(repo_dir, "show", f"{commit}:{path}")
        if '"tool_use"' in text:
            calls = list(json_calls(text))
        elif "⏺ " in text:
            calls = list(console_calls(text))
        else:
            continue
        for name, arguments in calls:
            yield RawCall(name, arguments, repo, commit, path)
