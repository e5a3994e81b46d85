"""Nested agents and MCP server entries: a harness started so that its hooks do not apply, and a
server entry added to a client's configuration, which the client will run as a command.

A nested harness inherits nothing from the hooks of the one that starts it unless it reads the
same settings: switching its settings source, its configuration folder, its home, or its hooks
feature off (all documented options of Claude Code, Codex and Gemini CLI) starts an unguarded
agent. An MCP server entry is judged as the command it runs (:func:`server_commands`), by the same
check as any shell line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

# Harness programs (``npx @anthropic-ai/claude-code`` is read by the shell reader as
# ``claude-code``).
HARNESSES: Final[frozenset[str]] = frozenset(
    {
        "claude",
        "claude-code",
        "codex",
        "codex-cli",
        "gemini",
        "gemini-cli",
        "qwen",
        "opencode",
        "cursor-agent",
    }
)
# Options that take a harness's hooks (or its approvals, which are what its hooks answer) away:
# Claude Code (``--settings``, ``--setting-sources``, ``--bare``, permission bypasses), Codex
# (``-c``/``--config`` over hooks or features, ``--disable FEATURE``, ``--profile`` from an
# unvetted file, the sandbox bypass), Gemini CLI (``--yolo``, ``--approval-mode yolo``).
UNHOOKING: Final[re.Pattern[str]] = re.compile(
    r"^(?:--settings|--setting-sources|--bare|--dangerously[-\w]*|--allow-dangerously[-\w]*"
    r"|--permission-mode(?:=bypassPermissions)?|--disable|--yolo|-y|--approval-mode(?:=yolo)?"
    r"|--no-hooks|--disable-hooks)(?:=.*)?$"
)
CONFIG_OVERRIDE: Final[re.Pattern[str]] = re.compile(
    r"hook|feature|notify|sandbox|approval|profile", re.IGNORECASE
)
# Files where a client reads MCP server entries, by trailing path.
MCP_FILES: Final[tuple[tuple[str, ...], ...]] = (
    (".mcp.json",),
    (".claude.json",),
    (".gemini", "settings.json"),
    (".cursor", "mcp.json"),
    (".vscode", "mcp.json"),
    (".codeium", "windsurf", "mcp_config.json"),
    ("claude_desktop_config.json",),
)


def harness_of(argv: Sequence[str]) -> str | None:
    program = os.path.basename(argv[0]) if argv else ""
    return program if program in HARNESSES else None


def unhooks(argv: Sequence[str]) -> str | None:
    """Why this harness start would run without its hooks, or ``None``."""
    harness = harness_of(argv)
    if harness is None:
        return None
    words = list(argv[1:])
    for index, word in enumerate(words):
        if UNHOOKING.match(word):
            if word.startswith("--permission-mode") and "bypass" not in " ".join(words[index : index + 2]):
                continue
            if word.startswith("--approval-mode") and "yolo" not in " ".join(words[index : index + 2]):
                continue
            if word == "-y" and harness not in ("gemini", "gemini-cli", "qwen"):
                continue
            return f"{harness} {word}"
        if word in ("-c", "--config") and index + 1 < len(words) and CONFIG_OVERRIDE.search(words[index + 1]):
            return f"{harness} {word} {words[index + 1]}"
        if word.startswith("--config=") and CONFIG_OVERRIDE.search(word):
            return f"{harness} {word}"
        if "disableAllHooks" in word or "allowManagedHooksOnly" in word:
            return f"{harness} {word}"
    if harness == "claude" and words[:1] == ["config"] and words[1:2] in (["set"], ["add"], ["remove"]):
        return "claude config " + words[1]
    return None


def server_commands(argv: Sequence[str]) -> Iterator[list[str]]:
    """The commands an ``mcp add`` of a harness registers (``claude mcp add NAME -- CMD ...``,
    ``claude mcp add-json NAME JSON``, ``codex mcp add NAME -- CMD``, ``gemini mcp add NAME CMD``)."""
    if harness_of(argv) is None or len(argv) < 3 or argv[1] != "mcp":
        return
    verb, rest = argv[2], list(argv[3:])
    if verb == "add-json":
        operands = [w for w in rest if not w.startswith("-")]
        if len(operands) >= 2:
            try:
                document = json.loads(operands[1])
            except ValueError:
                yield [operands[1]]
                return
            yield from _entry_commands(document)
        return
    if verb != "add":
        return
    if "--" in rest:
        command = rest[rest.index("--") + 1 :]
        if command:
            yield command
        return
    valued = {
        "-s",
        "--scope",
        "-t",
        "--transport",
        "-e",
        "--env",
        "-H",
        "--header",
        "--url",
        "--bearer-token-env-var",
    }
    named: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word.startswith("-") and not named[1:]:
            skip = word in valued
            continue
        named.append(word)
    if len(named) >= 2:
        yield named[1:]


def is_mcp_file(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return any(tuple(parts[-len(suffix) :]) == suffix for suffix in MCP_FILES)


def file_commands(content: str) -> Iterator[list[str]]:
    """The commands MCP server entries in a client's configuration text run (JSON; a fragment
    that does not parse is searched for ``"command"`` values)."""
    try:
        document = json.loads(content)
    except ValueError:
        for match in re.finditer(r'"command"\s*:\s*"((?:[^"\\]|\\.)*)"', content):
            yield [match.group(1)]
        return
    yield from _entry_commands(document)


def _entry_commands(document: Any) -> Iterator[list[str]]:
    """Every ``{"command": ..., "args": [...]}`` inside a JSON value."""
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            command = item.get("command")
            if isinstance(command, str):
                args = item.get("args")
                yield (
                    [command, *(str(a) for a in args if isinstance(a, str | int | float))]
                    if isinstance(args, list)
                    else [command]
                )
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
