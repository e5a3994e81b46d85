"""What a file that runs later will run, read out of the text written to it, so the write can be
judged as the shell command it is.

A git hook, a folder-open editor task, an MCP server entry or an install-time package script is
a command line the project's tools run later, without anyone typing it. Asking for every such
write drowns ordinary work (a lint hook, a watch task, ``patch-package`` after install); allowing
them unread is persistence. So the reader hands the gateway the command lines the file will run
(:func:`later_commands`), which are judged by the same rules as a shell line, and says when that
reading cannot stand for what runs (:func:`later_unread`): a script of another language, a file
the line runs whose text is not shown (``node .vscode/.init.js``, ``./.cache/agent``), a package
fetched and run at whatever version a registry serves then (``npx -y pkg``), a process left
running in the background, or text that is not the runner's format. Unread text keeps today's
decision (deny or ask); read text is as safe as the commands in it.

Lexical and bounded: JSON is parsed with the standard library, a fragment (an edit's new text) is
searched for the runner's keys, nothing touches the disk.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from dsh_policy.cmdline.effects.agent_configs import reference_server_words
from dsh_policy.cmdline.effects.code_sources import dependency_installs
from dsh_policy.cmdline.effects.later import later_class
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["JUDGED_BY_COMMANDS", "hidden_code", "later_commands", "later_unread"]

JUDGED_BY_COMMANDS = frozenset(
    {
        "git-hook",
        "project-hook",
        "editor-task",
        "agent-config",
        "package-manifest",
        "dependency-list",
        "lockfile",
    }
)
"""Classes whose later effect is a command line this module reads (a dependency file's: the
install of each dependency it takes from outside the registry, :func:`dependency_installs`)."""

_MAX_TEXT = 64 * 1024
_MAX_NODES = 5_000
_SHEBANG = lazy_compile(r"\A#!\s*(\S+)(?:[ \t]+(\S+))?")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
# npm's lifecycle scripts that run without being named (on install, pack, publish)
_LIFECYCLE = frozenset(
    {"preinstall", "install", "postinstall", "prepare", "prepublish", "prepublishOnly", "prepack", "postpack"}
)
_JSON_PAIR = lazy_compile(r'"([\w:.-]+)"\s*:\s*"((?:[^"\\\n]|\\.){0,4000})"')
# an agent config entry that is no command (rights, keys, approvals) keeps its signal
_AGENT_CONTROL = lazy_compile(
    r'"(?:permissions|apiKeyHelper|env)"\s*:|dangerously|bypassPermissions|"defaultMode"'
)

_INTERPRETERS = lazy_compile(
    r"^(?:(?:ba|da|z|k|mk|a|fi|c|tc)?sh|python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|lua|Rscript"
    r"|osascript|pwsh|powershell|tsx|ts-node|java|source|\.)$"
)
_RUNNERS = lazy_compile(r"^(?:npx|bunx|pnpx|uvx|pipx)$")
_RUNNER_VERBS = {"pnpm": ("dlx",), "yarn": ("dlx",), "npm": ("exec", "x"), "uv": ("tool",), "pipx": ("run",)}
_DETACH = frozenset({"nohup", "setsid", "disown", "daemonize", "screen", "tmux", "at", "batch"})
_WORD = lazy_compile(r"[^\s;&|()<>]+")
_CODE_RUNNERS = {
    "py": "python3 -c",
    "js": "node -e",
    "cjs": "node -e",
    "mjs": "node -e",
    "rb": "ruby -e",
    "pl": "perl -e",
    "pm": "perl -e",
    "php": "php -r",
}
# code that builds a string out of sight: decoders, character codes, reversed text, a module or a
# function named by a built string (the obfuscators' building blocks, ATT&CK T1027/T1140)
_BUILT_STRINGS = lazy_compile(
    r"b(?:64|32|16|85)decode|fromhex|unhexlify|decode_base64|decode64|base64_decode|Base64\.|atob\s*\("
    r"|Buffer\.from\s*\([^)]*,\s*[\"'](?:base64|hex)[\"']|\bchr\s*[(,]|fromCharCode|\bpack\s*\(?\s*[\"']H"
    r"|strrev|\[::-1\]|\.reverse\b|rot_?13|__import__\s*\(\s*[\"'][^\"']*[\"']\s*\+"
    r"|\[\s*[\"'][\w.]*[\"']\s*\+\s*[\"'][\w.]*[\"']\s*\]\s*\(|require\s*\(\s*[\"'][\w.]*[\"']\s*\+"
    r"|\$\w+\s*=\s*[\"']\w+[\"']\s*\.\s*[\"']\w+[\"']\s*;"
)
_MAKEFILE = lazy_compile(r"(?:^|/)(?:GNU)?[Mm]akefile$|\.mk$")
# make's references, nested one level (``$(shell git describe)``, ``$(subst a,b,$(X))``)
_MAKE_REFERENCE = lazy_compile(r"\$(?:\((?:[^()]|\([^()]*\))*\)|\{[^{}]*\}|[^\s\0$(){}])")
_HANDS_ON = lazy_compile(r"(?m)^[ \t]*(?:exec[ \t]+)?\"?\$(?:@|\{@\})\"?[ \t]*$")


def _bounded(text: str) -> str:
    return text[:_MAX_TEXT]


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    stack, seen = [node], 0
    while stack and seen < _MAX_NODES:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _json(text: str) -> Any:
    try:
        return json.loads(re.sub(r"(?m)^\s*//.*$", "", text))
    except ValueError:
        return None


def _hook_commands(path: str, text: str) -> list[str] | None:
    """A hook file is a script: its body, when a shell runs it (``#!`` naming a shell, or none:
    git runs it through ``sh``); ``None`` for another language."""
    found = _SHEBANG.match(text)
    if found is not None:
        name = found.group(1).rsplit("/", 1)[-1]
        if name == "env" and found.group(2):
            name = found.group(2).rsplit("/", 1)[-1]
        if name not in _SHELLS:
            return None
    return [text]


def _task_commands(text: str) -> list[str] | None:
    """VS Code tasks: a shell or process task's ``command`` with its ``args``; an npm task runs
    ``npm run SCRIPT``. A fragment is searched for ``command`` values."""
    document = _json(text)
    if document is None:
        values = [v for k, v in _JSON_PAIR.findall(text) if k == "command"]
        return values or None
    found: list[str] = []
    for entry in _walk(document):
        command, args = entry.get("command"), entry.get("args")
        if isinstance(command, str):
            words = [shlex.quote(str(a)) for a in args] if isinstance(args, list) else []
            found.append(" ".join([command, *words]))
        elif entry.get("type") == "npm" and isinstance(entry.get("script"), str):
            found.append("npm run " + shlex.quote(entry["script"]))
    return found


def _agent_commands(text: str) -> list[str] | None:
    """MCP server entries (``command`` and ``args``) and agent hooks (``command`` strings). A
    config that also grants rights or sets keys is no command to read (``None``)."""
    if _AGENT_CONTROL.search(text):
        return None
    document = _json(text)
    if document is None:
        return None
    found: list[str] = []
    for entry in _walk(document):
        command, args = entry.get("command"), entry.get("args", [])
        if isinstance(command, list) and all(isinstance(c, str) for c in command):
            found.append(shlex.join(command))
        elif isinstance(command, str) and isinstance(args, list) and all(isinstance(a, str) for a in args):
            found.append(shlex.join([command, *args]) if args else command)
        elif "command" in entry or "cmd" in entry:
            return None
    return found


def _manifest_commands(path: str, text: str) -> list[str] | None:
    """package.json lifecycle scripts (run on install without being named). Other manifests
    (setup.py, build.rs, gemspecs) are code, not a command line: ``None``."""
    if not re.search(r"(?:^|/)package\.json$", path):
        return None
    document = _json(text)
    if isinstance(document, dict):
        scripts = document.get("scripts")
        if not isinstance(scripts, dict):
            return []
        return [v for k, v in scripts.items() if k in _LIFECYCLE and isinstance(v, str)]
    return [json.loads(f'"{v}"') for k, v in _JSON_PAIR.findall(text) if k in _LIFECYCLE]


def _recipe_commands(text: str) -> list[str]:
    """A Makefile's recipe lines (a tab first), as the shell make hands them to: the ``@``, ``-``
    and ``+`` prefixes dropped, ``$$`` made ``$``, and make's own references (``$(VERSION)``,
    ``$(shell ...)``, ``${CC}``, ``$@``) replaced by a plain word, since make expands them before
    the shell runs the line. A line continued with a backslash is joined to the next."""
    found: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if not pending and not raw.startswith("\t"):
            continue
        line = pending + raw.lstrip("\t")
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        line = line.lstrip("@-+ ").replace("$$", "\0")
        line = _MAKE_REFERENCE.sub("make-value", line).replace("\0", "$")
        if line.strip():
            found.append(line)
    # one script of all recipe lines: one decision for the write, whatever the Makefile's size
    return ["\n".join(found)] if found else []


def _code_commands(path: str, text: str) -> list[str] | None:
    """A program file (a script, a test runner's conftest, a setup.py) as its interpreter runs it:
    ``python3 -c TEXT``, ``node -e TEXT``, ... so the interpreter readers judge what its process
    calls run (a command decoded from base64, hex or character codes and handed to the shell, a
    tree deleted, secrets posted) as they do for the same code given inline; ``None`` for a
    language without an inline form here."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    runner = _CODE_RUNNERS.get(suffix)
    if runner is None:
        return None
    if _BUILT_STRINGS.search(text) is None:
        # ordinary program code (process calls with argument lists, paths from settings) is the
        # packs' to judge as written; read as run only when it builds its strings out of sight
        return []
    if suffix == "php":
        text = re.sub(r"^\s*<\?php\b|\?>\s*$", "", text)
    return [f"{runner} {shlex.quote(text)}"]


def later_commands(path: str, text: str) -> list[str]:
    """The command lines writing ``text`` to ``path`` makes run later, for the classes in
    :data:`JUDGED_BY_COMMANDS`, and for shell scripts, Makefile recipes and program files that
    build their strings out of sight (whose writes count only a denied line,
    ``policy.decide.later_calls``); ``[]`` for other files and for text this module cannot read."""
    if not isinstance(path, str) or not isinstance(text, str):
        raise TypeError("path.later_commands expects two strings")
    found = _read(path, _bounded(text))
    return list(found or ())


@lru_cache(maxsize=16)
def _read(path: str, text: str) -> tuple[str, ...] | None:
    """The command lines of ``text`` at ``path`` (``None``: not a runner's format). Kept for the
    few last writes: the packs' ``path.later_unread`` and the decider's implied calls read the same
    write once each."""
    found = _read_uncached(path, text)
    return None if found is None else tuple(found)


def _read_uncached(path: str, text: str) -> list[str] | None:
    kind = later_class(path)
    if kind in ("git-hook", "project-hook") and not re.search(r"(?i)\.ya?ml$", path):
        return _hook_commands(path, text)
    if kind == "editor-task" and path.lower().endswith("tasks.json"):  # any case: see later_class
        return _task_commands(text)
    if kind == "agent-config":
        return _agent_commands(text)
    if kind == "package-manifest":
        scripts = _manifest_commands(path, text)
        installs = dependency_installs(path, text)
        return None if scripts is None and not installs else [*(scripts or ()), *installs]
    if kind in ("dependency-list", "lockfile"):
        return dependency_installs(path, text)
    if kind == "build-file" and _MAKEFILE.search(path):
        return _recipe_commands(text)
    if kind in ("source-code", "test-hook") or (kind == "package-manifest" and path.endswith("setup.py")):
        return _code_commands(path, text)
    if kind == "script" or (not kind and text.startswith("#!")):
        # a shell script written to be run (``scripts/setup.sh``, an extensionless ``bin/cleanup``
        # whose ``#!`` names a shell): judged as the lines it runs, so a payload decoded into a
        # shell, a glued or quoted program name or an argv array is read as on the command line
        # (probe25); another language (``#!/usr/bin/env python3``, a .ps1) is not read here
        if path.lower().endswith(".ps1") or (not kind and _SHEBANG.match(text) is None):
            return None
        body = _hook_commands(path, text)
        # `exec "$@"` (an entrypoint or a wrapper handing on its arguments) runs the caller's
        # command, judged when the caller runs it: no program of the script's own
        return None if body is None else [_HANDS_ON.sub("", line) for line in body]
    return None


def _simple_commands(line: str) -> Iterator[list[str]]:
    """The words of each simple command of a line, split at operators (a lexical reading for
    this module's one question: what each command starts)."""
    line = re.sub(r"(?m)^\s*#.*$|\s#[^\n]*", "", line)  # comments (and the #! line) run nothing
    for part in re.split(r"\|\||&&|[;|\n]|\$\(|`|\(|\)", line):
        words = _WORD.findall(part)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if words:
            yield words


def hidden_code(line: str) -> str:
    """Why ``line`` runs code its text does not show, or ``""``: a program named by a path
    (``./.cache/agent``, ``~/bin/x``); an interpreter or shell given a file (``node x.js``,
    ``sh run.sh``; ``-m module`` and inline code are shown); a package runner fetching a package
    (``npx -y pkg``, ``uvx pkg``, ``pnpm dlx``), unless it is an MCP reference server; a process
    left running (``nohup``, ``setsid``, a trailing ``&``)."""
    if re.search(r"(?<![&>|])&(?![&>])\s*(?:$|[;\n)])|\bdisown\b", line):
        return "leaves a process running"
    for words in _simple_commands(line):
        program = words[0]
        if program in ("exec", "command", "env", "time", "nice"):
            words = words[1:] or [program]
            program = words[0]
        if program.rsplit("/", 1)[-1] in _DETACH:
            return "leaves a process running"
        if "/" in program or program.startswith("~"):
            return f"runs the file {program}"
        base = program
        if _INTERPRETERS.match(base):
            rest = [w for w in words[1:] if not re.match(r"^-[A-Za-z]*$", w) or w in ("-c", "-e", "-m")]
            if rest and rest[0] not in ("-c", "-e", "-m", "--version"):
                return f"{base} runs the file {rest[0]}"
        verbs = _RUNNER_VERBS.get(base, ())
        package_words = [w for w in words[1:] if not w.startswith("-")]
        if verbs and package_words[:1] and package_words[0] in verbs:
            package_words = package_words[1:]
        elif not (_RUNNERS.match(base) and base != "pipx"):
            continue
        if not reference_server_words(base, package_words):
            return f"{base} fetches and runs a package"
    return ""


def later_unread(path: str, text: str) -> bool:
    """Whether what writing ``text`` to ``path`` runs later cannot be judged as its command
    lines: a class this module reads, whose text is not the runner's format, is another
    language, or runs code it does not show (:func:`hidden_code`)."""
    if not isinstance(path, str) or not isinstance(text, str):
        raise TypeError("path.later_unread expects two strings")
    if later_class(path) not in JUDGED_BY_COMMANDS:
        return True
    found = _read(path, _bounded(text))
    if found is None or len(text) > _MAX_TEXT:
        return True
    return any(hidden_code(line) for line in found)
