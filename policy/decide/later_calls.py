"""The shell calls a file write implies: a write of a file that runs later (a git hook, a folder-open
task, an MCP server entry, an install-time package script) is judged like the shell command that
would run, by the same rules as any shell line.

The packs decide whether what runs can be read at all (``path.later_unread``: another language,
a file or package the text does not show, a process left running keep their deny or ask); this
module hands each command line the file will run (``cmdline.effects.later_commands``) to the same
policy's pre-execute stage as a ``shell`` call, and the write takes the strictest answer. The
derived calls are shell calls, so they imply nothing further.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Final

from dsh_policy.cmdline.effects.later import later_class
from dsh_policy.cmdline.effects.later_commands import later_commands
from dsh_policy.policy.events import DECISION_STRICTNESS, ToolCallEvent, ToolCallVerdict
from dsh_policy.policy.patch_files import added_texts

# Plain shell scripts (a ``.sh`` file, an extensionless file whose ``#!`` names a shell) and
# Makefile recipes: read by later_commands like a hook, but only a denied line makes their write
# stricter.
_SCRIPT_CLASSES: Final[frozenset[str]] = frozenset({"script", "", "build-file", "source-code", "test-hook"})


@lru_cache(maxsize=256)  # asked once per allowed line of a file: a script's lines share its path
def _deny_only(path: str) -> bool:
    """Whether only a denied line of the file at ``path`` counts (scripts, recipes, program
    files; a setup.py is program code too, unlike package.json's lifecycle scripts)."""
    return later_class(path) in _SCRIPT_CLASSES or path.endswith("setup.py")


# Canonical file-writing tools whose whole new text is an argument (a patch's or a multi-edit's
# text is not a file's text: those writes keep the packs' decision unread).
_WRITERS: Final[frozenset[str]] = frozenset({"write_file", "edit_file"})
_PATCHER: Final[str] = "apply_patch"  # its added lines, file by file (patch_files.added_texts)
_PATH_ARGS: Final[tuple[str, ...]] = ("path", "file_path")
_TEXT_ARGS: Final[tuple[str, ...]] = ("content", "new_string", "new")
_SHOWN: Final[int] = 120  # characters of a command line quoted in a message


def is_writer(tool: str) -> bool:
    """Whether ``tool`` is a file-writing tool whose writes may imply shell calls."""
    return (
        tool in _WRITERS
        or tool == _PATCHER
        or (tool.startswith("mcp__") and tool.rsplit("__", 1)[-1] in _WRITERS)
    )


def implied_lines(event: ToolCallEvent) -> Iterator[tuple[str, str]]:
    """``(path, command line)`` for each command the written file will run later."""
    args = event.args
    if not is_writer(event.tool) or not isinstance(args, Mapping):
        return
    if event.tool == _PATCHER:
        # an apply_patch's added lines, file by file (probe25: a script added or extended by a
        # patch is read as the same script written whole)
        patch = args.get("patch")
        if isinstance(patch, str):
            for path, text in added_texts(patch):
                for line in later_commands(path, text):
                    yield path, line
        return
    if any(key in args for key in ("patch", "input", "edits")):
        return
    text = "\n".join(str(args[key]) for key in _TEXT_ARGS if isinstance(args.get(key), str))
    for key in _PATH_ARGS:
        target = args.get(key)
        if isinstance(target, str) and target:
            for line in later_commands(target, text):
                yield target, line


def judge_implied(
    event: ToolCallEvent, verdict: ToolCallVerdict, decide: Callable[[ToolCallEvent], ToolCallVerdict]
) -> ToolCallVerdict:
    """``verdict``, or the stricter verdict of a command line the write makes run later (judged
    by ``decide`` as a ``shell`` call), naming the file and the line."""
    if verdict.decision == "deny":
        return verdict
    strictest: tuple[str, str, ToolCallVerdict] | None = None
    for path, line in implied_lines(event):
        implied = ToolCallEvent(
            "shell",
            {"command": line},
            session_id=event.session_id,
            agent_id=event.agent_id,
            turn=event.turn,
            step=event.step,
            cwd=event.cwd,
        )
        found = decide(implied)
        if found.decision != "deny" and _deny_only(path):
            # a script is written to be run by hand or by another script: only what the packs
            # deny on the command line makes its write a technique (a dev database restored with
            # `pg_restore --clean`, asked when typed, is an everyday script to write)
            continue
        best = strictest[2].decision if strictest is not None else verdict.decision
        if DECISION_STRICTNESS.get(found.decision, 2) > DECISION_STRICTNESS.get(best, 2):
            strictest = (path, line, found)
            if found.decision == "deny":
                break
    if strictest is None:
        return verdict
    path, line, found = strictest
    shown = line if len(line) <= _SHOWN else line[:_SHOWN] + "..."
    message = f"{path} will run `{shown}` later, judged as that command: {found.message or found.decision}"
    return ToolCallVerdict(
        found.decision,
        verdict.rules + tuple(rule for rule in found.rules if rule not in verdict.rules),
        message,
        verdict.shadow_rules,
        verdict.trace,
        found.internal_error or verdict.internal_error,
        policy=verdict.policy,
    )
