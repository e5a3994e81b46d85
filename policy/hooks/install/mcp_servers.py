"""Wrapping the MCP servers a client already has behind ``dsh-policy mcp proxy``, and back.

A stdio server entry (Claude Code's ``.mcp.json`` ``mcpServers.NAME``, Codex's ``config.toml``
``[mcp_servers.NAME]``) is ``command`` + ``args`` with optional ``env`` and ``cwd``. Wrapping
rewrites only ``command`` and ``args``: the proxy line, then ``--``, then the original command and
arguments, so ``env`` and ``cwd`` (which the client applies to the proxy, and the proxy's child
inherits) and every other key stay as they were. Unwrapping takes back what follows ``--``. Both
are idempotent: an entry already wrapped (or not wrapped) is left alone. HTTP entries (a ``url``)
are reported, not rewritten: the HTTP proxy is a listener someone has to run.

Codex's TOML is edited in place, line by line, so comments and layout survive; the result is
parsed again and must hold exactly the intended values, or the file is left untouched.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dsh_policy.policy.hooks.harness_files import SettingsError

_PROXY_ARGS = ("mcp", "proxy")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass(slots=True)
class McpEdit:
    """What a wrap or unwrap did: the new text, the servers changed, and those left as they were
    with why."""

    text: str
    changed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def proxy_args(name: str, deployment: str, command: str, args: list[str]) -> list[str]:
    """The proxy's arguments in front of one server."""
    return [*_PROXY_ARGS, "--config", deployment, "--name", name, "--", command, *args]


def wrapped_command(entry: Mapping[str, Any]) -> list[str] | None:
    """The original command line of a wrapped entry (``... mcp proxy ... -- COMMAND ARGS``, the
    proxy possibly started through a launcher such as ``python -m`` or ``uvx``), or None."""
    args = entry.get("args")
    if not isinstance(args, list) or "--" not in args:
        return None
    split = args.index("--")
    head = [str(part) for part in args[:split]]
    if not any(tuple(head[i : i + 2]) == _PROXY_ARGS for i in range(len(head) - 1)):
        return None
    original = [str(part) for part in args[split + 1 :]]
    return original or None


def _why_not(name: str, entry: Any, wrap: bool) -> str | None:
    if not isinstance(entry, Mapping):
        return "not a table"
    if "url" in entry or entry.get("type") in ("http", "sse", "streamable-http", "streamable_http"):
        return (
            "an HTTP server: run `dsh-policy mcp proxy --upstream URL --listen 127.0.0.1:PORT` "
            "and point the entry at it"
        )
    if not isinstance(entry.get("command"), str):
        return "no command"
    if "args" in entry and not isinstance(entry["args"], list):
        return "args is not a list"
    if wrap and (not _SERVER_NAME.fullmatch(name) or "__" in name):
        return "the name cannot be an MCP proxy server name (letters, digits, '-', single '_')"
    if wrap and wrapped_command(entry) is not None:
        return "already behind the proxy"
    if not wrap and wrapped_command(entry) is None:
        return "not behind the proxy"
    return None


def _rewritten(
    name: str, entry: Mapping[str, Any], deployment: str, program: str, wrap: bool
) -> tuple[str, list[str]]:
    if wrap:
        return program, proxy_args(
            name, deployment, entry["command"], [str(a) for a in entry.get("args", [])]
        )
    original = wrapped_command(entry)
    assert original is not None
    return original[0], original[1:]


# --- Claude Code: .mcp.json ----------------------------------------------------------------------------


def edit_claude_code(
    existing: str | None, deployment: str, *, program: str = "dsh-policy", wrap: bool = True
) -> McpEdit:
    """``.mcp.json`` with each stdio server wrapped (or unwrapped)."""
    if existing is None or not existing.strip():
        return McpEdit(existing or "")
    try:
        document = json.loads(existing)
    except ValueError as error:
        raise SettingsError(f"not valid JSON ({error})") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        return McpEdit(existing)
    edit = McpEdit(existing)
    for name, entry in servers.items():
        why = _why_not(name, entry, wrap)
        if why is not None:
            edit.skipped[name] = why
            continue
        entry["command"], entry["args"] = _rewritten(name, entry, deployment, program, wrap)
        edit.changed.append(name)
    if edit.changed:
        edit.text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return edit


# --- Codex: config.toml ---------------------------------------------------------------------------------


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def _table_span(lines: list[str], name: str) -> tuple[int, int] | None:
    headers = {f"[mcp_servers.{name}]", f'[mcp_servers."{name}"]'}
    start = next((i for i, line in enumerate(lines) if line.strip() in headers), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    return start, end


def _key_span(lines: list[str], start: int, end: int, key: str) -> tuple[int, int] | None:
    """The lines of ``key = value`` inside a table (a multi-line array runs to its closing bracket)."""
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for i in range(start + 1, end):
        if pattern.match(lines[i]):
            j, depth = i, lines[i].count("[") - lines[i].count("]")
            while depth > 0 and j + 1 < end:
                j += 1
                depth += lines[j].count("[") - lines[j].count("]")
            return i, j + 1
    return None


def edit_codex(
    existing: str | None, deployment: str, *, program: str = "dsh-policy", wrap: bool = True
) -> McpEdit:
    """``config.toml`` with each ``[mcp_servers.NAME]`` stdio server wrapped (or unwrapped)."""
    text = existing or ""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"not valid TOML ({error})") from None
    servers = document.get("mcp_servers")
    edit = McpEdit(text)
    if not isinstance(servers, dict):
        return edit
    lines = text.splitlines(keepends=True)
    expected: dict[str, tuple[str, list[str]]] = {}
    for name, entry in servers.items():
        why = _why_not(name, entry, wrap)
        span = _table_span(lines, name) if why is None else None
        command_at = _key_span(lines, *span, "command") if span is not None else None
        if why is None and command_at is None:
            why = "written in a form init does not rewrite (inline or dotted table); edit it by hand"
        if why is not None:
            edit.skipped[name] = why
            continue
        assert span is not None and command_at is not None
        command, args = _rewritten(name, entry, deployment, program, wrap)
        args_line = "args = [" + ", ".join(_toml_string(a) for a in args) + "]\n"
        args_at = _key_span(lines, *span, "args")
        replacements = sorted(
            [(command_at, f"command = {_toml_string(command)}\n")]
            + ([(args_at, args_line)] if args_at is not None else []),
            reverse=True,
        )
        for (first, last), new in replacements:
            lines[first:last] = [new]
        if args_at is None:
            lines.insert(command_at[0] + 1, args_line)
        expected[name] = (command, args)
        edit.changed.append(name)
    if not edit.changed:
        return edit
    merged = "".join(lines)
    try:
        after = tomllib.loads(merged)["mcp_servers"]
    except (tomllib.TOMLDecodeError, KeyError) as error:
        raise SettingsError(f"cannot rewrite its mcp_servers in place ({error}); edit them by hand") from None
    for name, (command, args) in expected.items():
        kept = {k: v for k, v in servers[name].items() if k not in ("command", "args")}
        now = after.get(name, {})
        if (now.get("command"), now.get("args")) != (command, args) or {
            k: v for k, v in now.items() if k not in ("command", "args")
        } != kept:
            raise SettingsError(
                f"rewriting [mcp_servers.{name}] would change more than its command; edit it by hand"
            )
    edit.text = merged
    return edit


def describe(entry: Mapping[str, Any]) -> str:
    """A server entry's command line, for messages."""
    return shlex.join([str(entry.get("command", "")), *map(str, entry.get("args", []) or [])])
