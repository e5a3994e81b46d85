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

__all__ = ["only_reference_servers", "reference_server_words", "unknown_remote_servers"]

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


# A remote MCP server's address in a client config: `"url"`/`"serverUrl"`/`"httpUrl"` in JSON,
# `url = "..."` in codex's TOML, `url:` in YAML.
_REMOTE_URL = lazy_compile(
    r"(?i)[\"']?(?:url|serverUrl|httpUrl|uri)[\"']?\s*[:=]\s*[\"']?((?:https?|wss?)://[^\s\"'/?#]+)"
)
_LOOPBACK = lazy_compile(r"(?i)^(?:localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0|host\.docker\.internal)$")
# The vendors' own remote MCP endpoints, as their documentation gives them to paste into a client
# (the remote counterpart of the reference servers): a server the vendor of the service runs.
# Anything else is a new server whose tool descriptions and results the agent will trust.
_VENDOR_HOSTS = lazy_compile(
    r"(?i)^(?:api\.githubcopilot\.com|mcp\.(?:atlassian\.com|linear\.app|notion\.com|sentry\.dev|stripe\.com"
    r"|supabase\.com|vercel\.com|asana\.com|paypal\.com|squareup\.com|neon\.tech|deepwiki\.com|context7\.com"
    r"|figma\.com|intercom\.com|plaid\.com|webflow\.com|wix\.com|zapier\.com|canva\.com|monday\.com|exa\.ai"
    r"|tavily\.com|firecrawl\.dev|semgrep\.ai|prisma\.io|apify\.com|socket\.dev|render\.com|hubspot\.com)"
    r"|[\w-]+\.mcp\.cloudflare\.com|huggingface\.co|gitlab\.com|learn\.microsoft\.com"
    r"|knowledge-mcp\.global\.api\.aws|remote\.mcp\.pipedream\.net)$"
)


def unknown_remote_servers(text: str) -> list[str]:
    """The hosts of the remote MCP servers a client config names that are neither on this machine
    nor a vendor's own endpoint (plain http to another machine is never a vendor's)."""
    found: list[str] = []
    for match in _REMOTE_URL.finditer(text[:200_000]):
        address = match.group(1)
        scheme, _, host = address.partition("://")
        host = host.rsplit("@", 1)[-1].lower()
        name = host if host.startswith("[") else host.split(":", 1)[0]
        if _LOOPBACK.match(name):
            continue
        if scheme.lower() in ("https", "wss") and _VENDOR_HOSTS.match(name):
            continue
        if name not in found:
            found.append(name)
    return found
