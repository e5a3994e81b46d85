"""Which agent configs start nothing but the MCP project's own reference servers.

An MCP or agent config that starts a command is code that runs at every session, so the
``starts-command`` signal of ``later_risks`` asks for it. One shape is the quick-start of every MCP
client's documentation and carries no choice of code by the agent: ``npx -y
@modelcontextprotocol/server-<name> <folder>``, a package of the MCP project's own npm scope (a
scope only its owner can publish to), given a project folder, or ``uvx mcp-server-<name>`` for the
servers the project publishes on PyPI (git, fetch, time). :func:`only_reference_servers`
recognises exactly that shape, read from the config as JSON; anything else (another package, a
shell, a path, hooks, permissions, a folder that is the whole disk or a home, text that is no
complete JSON document such as an edit's fragment) is left to ask.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["only_reference_servers", "reference_server_words"]

_REFERENCE_PACKAGE = lazy_compile(r"^@modelcontextprotocol/server-[a-z0-9-]+(?:@[\w.^~-]+)?$")
# The reference servers the MCP project publishes on PyPI and documents as `uvx mcp-server-NAME`
# (modelcontextprotocol/servers: git, fetch, time). PyPI has no scopes, so these are named, not
# matched by prefix: `mcp-server-anything` could be anyone's.
_REFERENCE_PYPI = lazy_compile(r"^mcp-server-(?:git|fetch|time)(?:(?:==|@)[\w.]+)?$")
_RUNNERS = {"npx": (), "bunx": (), "pnpm": ("dlx",), "yarn": ("dlx",), "uvx": (), "pipx": ("run",)}
"""Package runners and the verb each needs before the package."""
# Options of the reference servers that take a value (the value is checked like a folder).
_SERVER_OPTIONS = frozenset({"--repository", "--local-timezone", "--user-agent"})
_WIDE = lazy_compile(r"^(?:/+|~[\w.-]*/*|\$HOME/*|\$\{HOME\}/*|/+(?:home|Users|root|etc|var)(?:/+[^/]*)?/*)$")
_AGENT_CONTROLS = frozenset(
    {"hooks", "permissions", "apiKeyHelper", "PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart"}
)


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _reference_server(entry: dict[str, Any]) -> bool:
    command, args = entry.get("command"), entry.get("args", [])
    if (
        not isinstance(command, str)
        or not isinstance(args, list)
        or not all(isinstance(a, str) for a in args)
    ):
        return False
    verbs = _RUNNERS.get(command.rsplit("/", 1)[-1])
    if verbs is None:
        return False
    rest = [a for a in args if a not in ("-y", "--yes", "-q", "--quiet")]
    if tuple(rest[: len(verbs)]) != verbs:
        return False
    return reference_server_words(command.rsplit("/", 1)[-1], rest[len(verbs) :])


def reference_server_words(runner: str, words: list[str]) -> bool:
    """Whether ``runner`` given ``words`` (its verb already taken) starts a reference server: the
    MCP project's npm scope through an npm runner, or one of its PyPI servers through uvx or
    pipx, given a project folder (no whole disk or home) and only the servers' own options."""
    package = _REFERENCE_PYPI if runner in ("uvx", "pipx") else _REFERENCE_PACKAGE
    if runner not in _RUNNERS or not words or package.match(words[0]) is None:
        return False
    return not any(
        (a.startswith("-") and a.split("=", 1)[0] not in _SERVER_OPTIONS) or _WIDE.match(a.split("=", 1)[-1])
        for a in words[1:]
    )


def only_reference_servers(text: str) -> bool:
    """Whether ``text`` is a JSON config whose every started command is a reference server (see
    the module doc) and which sets no hooks, permissions or key helpers."""
    try:
        document = json.loads(text)
    except ValueError:
        return False
    entries = list(_walk(document))
    if any(_AGENT_CONTROLS & entry.keys() for entry in entries):
        return False
    started = [entry for entry in entries if "command" in entry or "cmd" in entry]
    return bool(started) and all(_reference_server(entry) for entry in started)
