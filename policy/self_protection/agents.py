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
import shlex
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import yaml
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import operands as operands_of

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
        "copilot",
        "qwen-code",
        "opencode-ai",
    }
)
# Wrappers that run what follows as another user (with that user's home and settings) or in a
# container (with none of this machine's hook settings): a harness started through one of them
# runs without this gateway's hooks.
USER_SWITCHES: Final[frozenset[str]] = frozenset({"sudo", "su", "doas", "runuser", "pkexec", "machinectl"})
CONTAINERS: Final[frozenset[str]] = frozenset(
    {
        "docker",
        "podman",
        "nerdctl",
        "lxc",
        "incus",
        "systemd-nspawn",
        "toolbox",
        "distrobox",
        "kubectl",
        "apptainer",
        "singularity",
    }
)
# Harnesses whose hooks live in the project only (Gemini CLI, Qwen Code, OpenCode's plugin folder,
# Copilot CLI's ``.github/hooks``, and for the folder trust they need): started in another folder
# they load none of them. Claude Code and Codex join them when no user or managed settings of
# theirs run this gateway (:func:`user_hooked`).
PROJECT_HOOKED: Final[frozenset[str]] = frozenset(
    {"gemini", "gemini-cli", "qwen", "qwen-code", "opencode", "opencode-ai", "copilot", "cursor-agent"}
)
# Options that name the folder a harness works in.
FOLDER_OPTIONS: Final[frozenset[str]] = frozenset(
    {"--dir", "--cwd", "-C", "--cd", "--workdir", "--directory"}
)
# Agent SDKs: code that imports one starts the harness itself, and the SDKs load no settings
# (so no hooks) unless told to (Claude Agent SDK ``setting_sources``/``settingSources``).
SDK_NAMES: Final[re.Pattern[str]] = lazy_compile(
    r"claude_agent_sdk|claude_code_sdk|@anthropic-ai/claude-agent-sdk|@anthropic-ai/claude-code"
    r"|@openai/codex-sdk|@github/copilot-sdk|github_copilot_sdk|copilot_sdk|@google/gemini-cli-core"
)
_SDK_WITH_USER_SETTINGS: Final[re.Pattern[str]] = lazy_compile(
    r"(?:setting_sources|settingSources)\s*[=:]\s*\[[^\]]*['\"]user['\"]"
)
# Options that take a harness's hooks (or its approvals, which are what its hooks answer) away:
# Claude Code (``--settings``, ``--setting-sources``, ``--bare``, permission bypasses), Codex
# (``-c``/``--config`` over hooks or features, ``--disable FEATURE``, ``--profile`` from an
# unvetted file, the sandbox bypass), Gemini CLI (``--yolo``, ``--approval-mode yolo``).
UNHOOKING: Final[re.Pattern[str]] = lazy_compile(
    r"^(?:--settings|--setting-sources|--bare|--dangerously[-\w]*|--allow-dangerously[-\w]*"
    r"|--permission-mode(?:=bypassPermissions)?|--disable|--yolo|-y|--approval-mode(?:=yolo)?"
    r"|--no-hooks|--disable-hooks|--allow-all-tools|--allow-all|--allow-all-paths|--config-dir)(?:=.*)?$"
)
CONFIG_OVERRIDE: Final[re.Pattern[str]] = lazy_compile(
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
    (".qwen", "settings.json"),
    (".copilot", "mcp-config.json"),
    ("opencode.json",),
    ("opencode.jsonc",),
)


# Argument names under which tools of MCP shell servers take a command line.
COMMAND_KEYS: Final[frozenset[str]] = frozenset({"command", "cmd", "commandLine", "command_line", "script"})


def command_lines(args: Any) -> list[str]:
    """The command lines an unknown tool's arguments hand a shell (:data:`COMMAND_KEYS`; a line,
    or an argv list joined as the shell would read it)."""
    lines: list[str] = []
    for key in sorted(COMMAND_KEYS & set(args)) if isinstance(args, Mapping) else ():
        value = args[key]
        if isinstance(value, list | tuple):
            value = shlex.join(str(word) for word in value)
        if isinstance(value, str) and value.strip():
            lines.append(value)
    return lines


def harness_of(argv: Sequence[str]) -> str | None:
    program = os.path.basename(argv[0]) if argv else ""
    return program if program in HARNESSES else None


# Agent CLIs this gateway wires no hooks into (``dsh-policy init`` wires Claude Code, Codex, Gemini
# CLI, Qwen Code, OpenCode and Copilot CLI): whatever one of them does answers to no rule here,
# so starting one on a task starts an unguarded agent, whatever its approval options say (several
# approve everything by default when run headless: goose, cursor-agent's print mode, aider's
# edits). Only asking one about itself stays allowed (:data:`AGENT_QUERIES`).
UNHOOKED_AGENTS: Final[frozenset[str]] = frozenset(
    {
        "aider",
        "aider-chat",
        "goose",
        "amp",
        "crush",
        "cursor-agent",
        "droid",
        "auggie",
        "cline",
        "kiro-cli",
        "plandex",
        "openhands",
        "kilocode",
        "gptme",
    }
)
# Words that only ask an agent CLI about itself (version, help, its models, its sessions, its
# login), never give it a task.
AGENT_QUERIES: Final[frozenset[str]] = frozenset(
    {
        "--version",
        "-v",
        "-V",
        "version",
        "--help",
        "-h",
        "help",
        "info",
        "list",
        "ls",
        "models",
        "--list-models",
        "--models",
        "status",
        "login",
        "logout",
        "doctor",
        "completion",
    }
)


def unguarded_start(argv: Sequence[str]) -> str | None:
    """An agent this gateway has no hooks in (:data:`UNHOOKED_AGENTS`) started on anything but a
    question about itself."""
    program = os.path.basename(argv[0]) if argv else ""
    if program not in UNHOOKED_AGENTS:
        return None
    words = list(argv[1:])
    if words and words[0] in AGENT_QUERIES:
        return None
    if words and all(word in AGENT_QUERIES for word in words):
        return None
    return f"{program} {' '.join(words[:2])}".rstrip() + " (an agent this gateway has no hooks in)"


def unhooks(argv: Sequence[str]) -> str | None:
    """Why this harness start would run without its hooks, or ``None``."""
    unguarded = unguarded_start(argv)
    if unguarded is not None:
        return unguarded
    harness = harness_of(argv)
    if harness is None:
        return _sdk_start(argv)
    words = list(argv[1:])
    for index, word in enumerate(words):
        if UNHOOKING.match(word):
            if word.startswith("--permission-mode") and "bypass" not in " ".join(words[index : index + 2]):
                continue
            if word.startswith("--approval-mode") and "yolo" not in " ".join(words[index : index + 2]):
                continue
            if word == "-y" and harness not in ("gemini", "gemini-cli", "qwen", "qwen-code"):
                continue
            return f"{harness} {word}"
        if harness in ("codex", "codex-cli") and (
            word in ("-p", "--profile") or word.startswith("--profile=")
        ):
            return f"{harness} {word}"  # a profile is a second configuration, hooks and features included
        if word in ("-c", "--config") and index + 1 < len(words) and CONFIG_OVERRIDE.search(words[index + 1]):
            return f"{harness} {word} {words[index + 1]}"
        if word.startswith("--config=") and CONFIG_OVERRIDE.search(word):
            return f"{harness} {word}"
        if "disableAllHooks" in word or "allowManagedHooksOnly" in word:
            return f"{harness} {word}"
    if harness == "claude" and words[:1] == ["config"] and words[1:2] in (["set"], ["add"], ["remove"]):
        return "claude config " + words[1]
    return None


def _sdk_start(argv: Sequence[str]) -> str | None:
    """Inline code that drives an agent SDK: the harness it starts reads no hook settings unless
    the code asks for the user's."""
    from dsh_policy.cmdline.interpreters.invocation import split_invocation

    invocation = split_invocation(list(argv)) if argv else None
    if invocation is None:
        return None
    for code in invocation.code:
        found = SDK_NAMES.search(code)
        if found and (not _SDK_WITH_USER_SETTINGS.search(code) or "bypassPermissions" in code):
            return f"an agent through {found.group(0)} (it loads no hook settings unless told to)"
    return None


_CONTAINER_RUNS: Final[frozenset[str]] = frozenset({"run", "exec", "create", "shell", "enter"})


def started_by(commands: Sequence[Sequence[str]]) -> str | None:
    """A harness in ``commands`` started through a user switch or a container (see
    :data:`USER_SWITCHES`, :data:`CONTAINERS`): the wrapper's name, else ``None``. A user switch
    to this very user (``sudo -u $USER``) changes nothing."""
    wrapper: str | None = None
    for argv in commands:
        if not argv:
            continue
        program = os.path.basename(argv[0])
        switches = program in USER_SWITCHES and not _to_self(argv)
        contains = program in CONTAINERS and bool(set(argv[1:3]) & _CONTAINER_RUNS)
        if switches or contains:
            wrapper = program
        elif wrapper is not None and harness_of(argv) is not None:
            return f"{harness_of(argv)} through {wrapper}"
    return None


def _to_self(argv: Sequence[str]) -> bool:
    words = list(argv[1:])
    for index, word in enumerate(words):
        if word in ("-u", "--user") and index + 1 < len(words):
            return words[index + 1] in (
                "$USER",
                "${USER}",
                "$(whoami)",
                "$(id -un)",
                os.environ.get("USER", "\0"),
            )
    return False


def user_hooked(harness: str, home: str) -> bool:
    """Whether user or managed settings of this harness run ``dsh-policy hook`` (then its hooks
    apply in every folder). Read only when a harness is started elsewhere, which is rare."""
    if harness in ("claude", "claude-code"):
        paths = [
            os.path.join(
                os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "settings.json"
            ),
            "/etc/claude-code/managed-settings.json",
        ]
    elif harness in ("codex", "codex-cli"):
        codex = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
        paths = [
            os.path.join(codex, "config.toml"),
            os.path.join(codex, "hooks.json"),
            "/etc/codex/requirements.toml",
        ]
    else:
        return False
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                if "dsh-policy hook" in handle.read(1 << 20):
                    return True
        except OSError:
            continue
    return False


def folder_of(argv: Sequence[str]) -> str | None:
    """The folder a harness start names for its work (``opencode run --dir D``, ``codex -C D``)."""
    words = list(argv[1:])
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name in FOLDER_OPTIONS:
            if equals:
                return value
            if index + 1 < len(words):
                return words[index + 1]
    return None


# Harness options that load MCP servers from a JSON text or a file for one run (Claude Code's
# ``--mcp-config`` takes several, Copilot CLI's ``--additional-mcp-config`` one, ``@FILE`` too).
MCP_CONFIG_OPTIONS: Final[frozenset[str]] = frozenset({"--mcp-config", "--additional-mcp-config"})


def mcp_config_values(argv: Sequence[str]) -> list[str]:
    """The JSON texts and files a harness start loads MCP servers from (:data:`MCP_CONFIG_OPTIONS`):
    a file's servers start as surely as those of the settings it was given beside."""
    if harness_of(argv) is None:
        return []
    words = list(argv[1:])
    values: list[str] = []
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name not in MCP_CONFIG_OPTIONS:
            continue
        if equals:
            values.append(value)
            continue
        for following in words[index + 1 :]:  # ``--mcp-config A B``: values up to the next option
            if following.startswith("-") or (values and name != "--mcp-config"):
                break
            values.append(following)
            if name != "--mcp-config":
                break
    return [value.removeprefix("@") for value in values]


def server_commands(argv: Sequence[str]) -> Iterator[list[str]]:
    """The commands an ``mcp add`` of a harness registers (``claude mcp add NAME -- CMD ...``,
    ``claude mcp add-json NAME JSON``, ``codex mcp add NAME -- CMD``, ``gemini mcp add NAME CMD``)."""
    if harness_of(argv) is None:
        return
    for text in mcp_config_values(argv):  # ``--mcp-config JSON``; files are read by the caller
        yield from file_commands(text) if text.lstrip().startswith("{") else ()
    if len(argv) < 3 or argv[1] != "mcp":
        return
    verb, rest = argv[2], list(argv[3:])
    if verb == "add-json":
        operands = operands_of(rest, _VALUED, dash_is_operand=True)
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
    named: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word.startswith("-") and not named[1:]:
            skip = word in _VALUED
            continue
        named.append(word)
    if len(named) >= 2:
        yield named[1:]


_VALUED: Final[frozenset[str]] = frozenset(
    {"-s", "--scope", "-t", "--transport", "-e", "--env", "-H", "--header", "--url", "--bearer-token-env-var"}
)


# The sections MCP clients read their servers from: ``mcpServers`` (Claude, Cursor, Cline, Roo,
# Kilo, Windsurf...), ``servers`` (VS Code's ``mcp.json``, or under ``mcp`` in its settings),
# ``mcp_servers`` (Codex), ``context_servers`` (Zed), ``mcp`` (OpenCode). A configuration that
# declares one at its top is a client's, whatever its name.
_SERVER_SECTIONS: Final[frozenset[str]] = frozenset(
    {"mcpServers", "mcp_servers", "context_servers", "servers", "mcp"}
)


def is_mcp_file(path: str, content: str = "") -> bool:
    """Whether ``path`` is an MCP client's configuration: one of :data:`MCP_FILES`, a JSON file
    named for MCP (``.roo/mcp.json``, ``cline_mcp_settings.json``), or a JSON, YAML or TOML
    document whose top declares a server section (:data:`_SERVER_SECTIONS`; Zed's
    ``settings.json``). Read as a document, so a section named inside a string (a corpus, a
    test) does not count."""
    parts = path.replace("\\", "/").split("/")
    if any(tuple(parts[-len(suffix) :]) == suffix for suffix in MCP_FILES):
        return True
    name = parts[-1].lower()
    if "mcp" in name and name.endswith((".json", ".jsonc", ".json5")):
        return True
    document = _document(name, content) if content else None
    return isinstance(document, dict) and any(
        key in _SERVER_SECTIONS and isinstance(value, dict | list) for key, value in document.items()
    )


def _document(name: str, content: str) -> Any:
    """``content`` parsed as the configuration language its name or text says (``None`` when it
    is none of JSON, JSON with comment lines, YAML or TOML)."""
    try:
        if name.endswith((".yaml", ".yml")):
            return yaml.safe_load(content)
        if name.endswith(".toml"):
            return tomllib.loads(content)
        return json.loads(re.sub(r"(?m)^\s*//.*$", "", content))
    except (ValueError, yaml.YAMLError):
        return None


# A ``command`` value and the ``args`` list after it, in text that is not JSON (a jq filter's
# object, JSON with comments, a fragment): keys quoted or not.
_LOOSE_COMMAND: Final[re.Pattern[str]] = lazy_compile(
    r"""["']?\bcommand["']?\s*:\s*"((?:[^"\\]|\\.)*)"(?:[^\[\]{}]*?["']?\bargs["']?\s*:\s*\[([^\]]*)\])?"""
)


def file_commands(content: str) -> Iterator[list[str]]:
    """The commands MCP server entries in a client's configuration text run (JSON or YAML; a text
    that parses as neither is searched for ``command`` values and the ``args`` after them)."""
    try:
        document = json.loads(content)
    except ValueError:
        document = _document(".yaml", content)  # YAML configurations, and JSON's flow form
    if isinstance(document, dict | list):
        yield from _entry_commands(document)
    else:
        for match in _LOOSE_COMMAND.finditer(content):
            args = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2) or "")
            yield [match.group(1), *args]


_MAX_NODES: Final[int] = 10_000


def _entry_commands(document: Any) -> Iterator[list[str]]:
    """Every ``{"command": ..., "args": [...]}`` inside a JSON or YAML value (each node once:
    YAML aliases share nodes; at most :data:`_MAX_NODES`)."""
    stack = [document]
    seen: set[int] = set()
    while stack and len(seen) < _MAX_NODES:
        item = stack.pop()
        if isinstance(item, dict | list) and id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            command = item.get("command")
            if isinstance(command, dict) and isinstance(command.get("path"), str):
                item = {**item, **command}  # Zed: ``"command": {"path": ..., "args": [...]}``
                command = item["path"]
            if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
                yield [str(c) for c in command]  # OpenCode: ``"command": ["prog", "arg", ...]``
            elif isinstance(command, str):
                args = item.get("args")
                yield (
                    [command, *(str(a) for a in args if isinstance(a, str | int | float))]
                    if isinstance(args, list)
                    else [command]
                )
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
