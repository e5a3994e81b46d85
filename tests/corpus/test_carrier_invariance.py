"""A command means the same inside a carrier as on its own, and a file the same under every name the
file system opens it by (issue 24: coverage by effect, not by spelling). Every corpus's shell
entries that the shipped packs already judge right are re-spelled through carriers that keep
their effect - ``bash -c``, ``sh -lc``, ``eval``, a ``{ ...; }`` group, an ``if`` body, a ``cd``
before them - and must be judged the same: a dangerous one still blocked, an everyday one still
allowed. This is the method the held-out corpora are measured against (a new
spelling of a known effect), so it is checked on every corpus, not on a list.

File-tool calls naming a path in the workspace are re-spelled the same way: ``./x``,
``/workspace/x``, ``src/../x``, ``a//b``, ``a/./b`` and, for the dangerous side, the upper-cased
name a case-insensitive volume (macOS, Windows) opens as the same file.

By default a deterministic sample (every SAMPLE_EVERY-th entry) keeps CI fast; ``DSH_CORPUS_FULL=1``
takes every entry (a few minutes). Nothing here is run: the strings go to the policy engine only.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_public_corpus import ENGINE, FULL, Entry, decide, load_entries

CORPORA = Path(__file__).resolve().parent
NAMES = ("public", "techniques", "heldout", "probe3", "probe4", "probe5", "probe6", "probe7")
SAMPLE_EVERY = 1 if FULL else 13

CARRIERS: dict[str, Callable[[str], str]] = {
    "bash -c": lambda line: "bash -c " + shlex.quote(line),
    "sh -lc": lambda line: "sh -lc " + shlex.quote(line),
    "eval": lambda line: "eval " + shlex.quote(line),
    "group": lambda line: "{ " + line + "; }",
    "if body": lambda line: "if true; then " + line + "; fi",
    "after cd": lambda line: "cd /workspace && " + line,
}
"""Carriers that keep what a line does (``eval`` and ``sh -c`` run their text as the line would;
a group and an ``if true`` body run it in the current shell)."""

#: Carriers an everyday line keeps its verdict through: running text as code (`eval`) is judged on
#: its own merits, so it is not one of them.
EVERYDAY_CARRIERS = ("bash -c", "sh -lc", "group", "if body", "after cd")


def _sampled(side: str) -> list[Entry]:
    entries = [
        entry
        for name in NAMES
        for entry in load_entries(side, CORPORA / name)
        if entry.tool == "shell" and entry.debatable is None
    ]
    return entries[::SAMPLE_EVERY]


def _blocked(decision: str) -> bool:
    return decision in ("deny", "ask")


def _carried(entry: Entry, line: str) -> Entry:
    return Entry(entry.side, entry.category, "shell", {"command": line}, entry.source, None)


#: Fewest entries a test must carry: every check below skips what the packs already get wrong
#: (the corpus tests report that), so a policy that blocked or allowed everything would otherwise
#: leave nothing to compare and pass.
MIN_CARRIED = 40


def test_a_blocked_dangerous_command_stays_blocked_in_every_carrier() -> None:
    misses = []
    carried = 0
    for entry in _sampled("dangerous"):
        if not _blocked(decide(entry, ENGINE)[0]):
            continue  # the corpus tests report what the packs miss outright
        carried += 1
        for carrier, wrap in CARRIERS.items():
            line = wrap(entry.args["command"])
            if not _blocked(decide(_carried(entry, line), ENGINE)[0]):
                misses.append(f"{carrier}: {line[:200]!r}")
    assert carried >= MIN_CARRIED, carried
    assert not misses, "\n".join(misses)


@pytest.mark.parametrize("carrier", EVERYDAY_CARRIERS)
def test_an_allowed_everyday_command_stays_allowed_in_a_carrier(carrier: str) -> None:
    wrap = CARRIERS[carrier]
    misses = []
    carried = 0
    for entry in _sampled("benign"):
        if decide(entry, ENGINE)[0] != "allow":
            continue
        carried += 1
        line = wrap(entry.args["command"])
        decision, rules = decide(_carried(entry, line), ENGINE)
        if decision != "allow":
            misses.append(f"{decision} {rules}: {line[:200]!r}")
    assert carried >= MIN_CARRIED, carried
    assert not misses, "\n".join(misses)


PATH_KEYS = ("path", "file_path", "filePath", "target_file", "filename", "file", "notebook_path")
PATH_SPELLINGS: dict[str, Callable[[str], str]] = {
    "./x": lambda rel: "./" + rel,
    "/workspace/x": lambda rel: "/workspace/" + rel,
    "src/../x": lambda rel: "src/../" + rel,
    "a//b": lambda rel: rel.replace("/", "//", 1),
    "a/./b": lambda rel: rel.replace("/", "/./", 1),
    "case-folded": lambda rel: rel.upper(),
}
FILE_CORPORA = (*NAMES, "toolcalls")


def _workspace_relative(path: str) -> str | None:
    if path.startswith("/workspace/"):
        return path.removeprefix("/workspace/")
    return None if path.startswith(("/", "~", "$")) else path.removeprefix("./")


def _respelled(side: str) -> list[tuple[Entry, str, dict[str, Any]]]:
    """(entry, spelling, new args) for the sampled file-tool entries of ``side`` naming a path."""
    entries = [
        entry
        for name in FILE_CORPORA
        for entry in load_entries(side, CORPORA / name)
        if entry.tool != "shell" and entry.debatable is None
    ]
    out = []
    for entry in entries[:: max(1, SAMPLE_EVERY // 3)]:
        key = next((k for k in PATH_KEYS if isinstance(entry.args.get(k), str)), None)
        relative = _workspace_relative(entry.args[key]) if key else None
        if not key or not relative:
            continue
        for spelling, respell in PATH_SPELLINGS.items():
            if spelling == "case-folded" and side == "benign":
                continue  # on a case-sensitive volume it may be another file
            new = respell(relative)
            if new != entry.args[key]:
                out.append((entry, spelling, {**entry.args, key: new}))
    return out


@pytest.mark.parametrize("side", ["dangerous", "benign"])
def test_a_file_call_is_judged_the_same_under_every_name_of_its_path(side: str) -> None:
    misses = []
    compared = 0
    for entry, spelling, args in _respelled(side):
        base = decide(entry, ENGINE)[0]
        if _blocked(base) != (side == "dangerous"):
            continue
        variant = Entry(entry.side, entry.category, entry.tool, args, entry.source, None)
        decision, rules = decide(variant, ENGINE)
        if _blocked(decision) != (side == "dangerous"):
            misses.append(f"{spelling}: {decision} {rules}: {entry.tool} {args}")
        compared += 1
    assert compared >= MIN_CARRIED, compared
    assert not misses, "\n".join(misses)
