"""Files written now that run later: the commands a script, a Makefile or justfile recipe, a git
hook, a ``package.json`` script, a systemd unit, a desktop entry or a crontab will run when
something starts it, read out of the text being written.

Writing such a file changes nothing protected; running it later does. So what it will run is
judged now, as the same check judges a shell line (a script that removes the hook settings is
refused when written, as ``rm`` of them would be now). Which text runs is decided by what runs
the file, from each runner's documentation: a ``#!`` line names the interpreter; a name or
extension names the runner (``make`` runs tab-indented recipe lines, ``just`` indented ones,
``npm run`` the ``scripts`` values, systemd the ``Exec*=`` values, cron the command after the
schedule, VS Code a task's ``command`` and ``args``, git the values of its configuration that are
commands, pre-commit a local hook's ``entry``, lefthook its ``run`` values); git and the hook
managers run a hook file as a script, a shell its start-up and logout files, pytest a
``conftest.py`` and the build and task runners their ``setup.py``, ``noxfile.py``, ``tasks.py``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from typing import Final

import yaml
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import SHELLS

# Interpreters by the name a ``#!`` line or an extension gives, with the option that runs code.
_INTERPRETERS: Final[dict[str, str]] = {
    "python": "python3",
    "node": "node",
    "perl": "perl",
    "ruby": "ruby",
    "php": "php",
}
# Shell scripts by extension. A module of another language without a ``#!`` line (``app.py``,
# ``index.js``) is source the project imports, not a script something runs on its own: judging
# every source file that names a harness's settings would refuse ordinary work on tools that
# read them.
_SHELL_EXTENSIONS: Final[frozenset[str]] = frozenset({".sh", ".bash", ".zsh", ".ksh", ".command"})
# Files a shell runs as its own script at login, start-up or logout (``~/.bash_logout``, the
# ``~/.bash_aliases`` Debian's bashrc sources, direnv's ``.envrc``): what they run, not only what
# they export, happens in a later session.
_SHELL_RUN_FILES: Final[frozenset[str]] = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".bash_aliases",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".mkshrc",
        ".xprofile",
        ".xsessionrc",
        ".xinitrc",
        ".envrc",
    }
)
# Python modules a tool imports by name when it runs in their folder: pytest's ``conftest.py``,
# the build backends' ``setup.py``, nox's, invoke's and doit's task files.
_IMPORTED_BY_TOOLS: Final[frozenset[str]] = frozenset(
    {"conftest.py", "setup.py", "noxfile.py", "tasks.py", "dodo.py", "fabfile.py"}
)
# Hook managers whose configuration holds command lines: pre-commit's local hooks
# (``entry`` plus ``args``) and lefthook's ``run`` values.
_PRE_COMMIT: Final[frozenset[str]] = frozenset({".pre-commit-config.yaml", ".pre-commit-config.yml"})
_LEFTHOOK: Final[re.Pattern[str]] = lazy_compile(r"^\.?lefthook(?:-local)?\.ya?ml$")
# pre-commit languages whose ``entry`` is no command (a regular expression, a message); every
# other language runs its ``entry`` with the ``args`` (in the hook's own environment).
_PRE_COMMIT_TEXT: Final[frozenset[str]] = frozenset({"pygrep", "fail"})
_MAKEFILES: Final[frozenset[str]] = frozenset({"makefile", "gnumakefile"})
_JUSTFILES: Final[frozenset[str]] = frozenset({"justfile", ".justfile"})
# Folders whose files a version-control tool or hook manager runs as scripts.
_HOOK_FOLDERS: Final[tuple[tuple[str, ...], ...]] = (
    (".git", "hooks"),
    (".husky",),
    (".githooks",),
    (".hooks",),
)
_SHEBANG: Final[re.Pattern[str]] = lazy_compile(r"\A#!\s*(\S+)(?:\s+(\S+))?")
_UNIT_EXEC: Final[re.Pattern[str]] = lazy_compile(
    r"^\s*(?:ExecStart|ExecStartPre|ExecStartPost|ExecStop|ExecStopPost|ExecReload|ExecCondition)"
    r"\s*=\s*[-@:+!]*(.+)$",
    re.MULTILINE,
)
_DESKTOP_EXEC: Final[re.Pattern[str]] = lazy_compile(r"^\s*(?:Exec|TryExec)\s*=\s*(.+)$", re.MULTILINE)
_CRON_LINE: Final[re.Pattern[str]] = lazy_compile(r"^\s*(?:@\w+\s+|(?:\S+\s+){5})(.+)$")


def runs_later(path: str, content: str) -> Iterator[tuple[str, str]]:
    """``(language, text)`` for each piece of ``content`` that will run when ``path`` is run or
    used by its runner: ``shell`` for command lines, ``paths`` for the files a runner changes
    (``tmpfiles.d``, logrotate), else an interpreter's name (:data:`_INTERPRETERS`) for its code.
    Nothing for a file no runner starts."""
    normal = path.replace("\\", "/")
    parts = [part for part in normal.split("/") if part]
    name = parts[-1] if parts else ""
    lowered = name.lower()
    shebang = _SHEBANG.match(content)
    if shebang is not None:
        yield _language(shebang.group(1), shebang.group(2)), content
        return
    if lowered in _MAKEFILES or lowered.endswith(".mk"):
        yield "shell", "\n".join(_recipe_lines(content, tabs_only=True))
        return
    if lowered in _JUSTFILES or lowered.endswith(".just"):
        yield "shell", "\n".join(_recipe_lines(content, tabs_only=False))
        return
    if lowered == "package.json":
        yield from (("shell", script) for script in _package_scripts(content))
        return
    if lowered.endswith((".service", ".socket", ".path")) or "systemd" in parts:
        yield from (("shell", match.group(1)) for match in _UNIT_EXEC.finditer(content))
        return
    if parts[-2:] == [".vscode", "tasks.json"] or lowered.endswith(".code-workspace"):
        yield from (("shell", command) for command in _task_commands(content))
        return
    if lowered == ".gitconfig" or (lowered == "config" and parts[-2:-1] in ([".git"], ["git"])):
        yield from (("shell", command) for command in _git_config_commands(content))
        return
    if lowered.endswith(".desktop"):
        yield from (("shell", _desktop_command(m.group(1))) for m in _DESKTOP_EXEC.finditer(content))
        return
    if lowered.endswith(".conf") and ({"tmpfiles.d", "user-tmpfiles.d"} & set(parts)):
        yield "paths", "\n".join(_tmpfiles_paths(content))
        return
    if "logrotate.d" in parts or lowered.startswith("logrotate"):
        yield "paths", "\n".join(logrotate_paths(content))
        return
    if _is_crontab(parts):
        yield "shell", "\n".join(_cron_commands(content))
        return
    if os.path.splitext(lowered)[1] in _SHELL_EXTENSIONS or name in _SHELL_RUN_FILES:
        yield "shell", content
        return
    if lowered in _IMPORTED_BY_TOOLS:
        yield "python", content
        return
    if lowered in _PRE_COMMIT or _LEFTHOOK.match(lowered):
        yield from (("shell", command) for command in hook_manager_commands(content))
        return
    if any(_under(parts[:-1], folder) for folder in _HOOK_FOLDERS):
        yield "shell", content  # git runs a hook without ``#!`` through ``sh``


def hook_manager_commands(content: str) -> Iterator[str]:
    """The command lines a hook manager's configuration runs: pre-commit's hooks (``entry`` and
    ``args``; not a ``pygrep`` pattern or a ``fail`` message), lefthook's ``run`` values. A text
    that is no YAML mapping is searched for ``entry:``/``run:`` values."""
    try:
        document = yaml.safe_load(content)
    except yaml.YAMLError:
        document = None
    if not isinstance(document, (dict, list)):
        found = re.finditer(r"(?m)^\s*-?\s*(?:entry|run)\s*:\s*(.+)$", content)
        yield from (match.group(1).strip() for match in found)
        return
    yield from _commands_in(document)


_MAX_NODES: Final[int] = 10_000  # mappings and lists looked at (YAML aliases share nodes)


def _commands_in(document: object) -> Iterator[str]:
    """Every pre-commit hook's ``entry`` with its ``args`` and every ``run`` value, each
    node looked at once (aliases repeat a node without copying it)."""
    stack: list[object] = [document]
    seen: set[int] = set()
    while stack and len(seen) < _MAX_NODES:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, (dict, list)):
            continue
        seen.add(id(node))
        if isinstance(node, list):
            stack.extend(node)
            continue
        entry, run, args = node.get("entry"), node.get("run"), node.get("args")
        if isinstance(entry, str) and str(node.get("language", "system")) not in _PRE_COMMIT_TEXT:
            words = [shlex.quote(str(a)) for a in args] if isinstance(args, list) else []
            yield " ".join([entry, *words])
        if isinstance(run, str):
            yield run
        stack.extend(node.values())


def _tmpfiles_paths(content: str) -> Iterator[str]:
    """The path of each ``tmpfiles.d`` line (its second field): systemd-tmpfiles creates,
    writes, empties, removes or re-permissions it at every boot or login."""
    for line in content.splitlines():
        fields = line.split()
        if len(fields) >= 2 and not fields[0].startswith("#"):
            yield fields[1]


def logrotate_paths(content: str) -> Iterator[str]:
    """The files a logrotate configuration rotates (the words before each ``{``): logrotate
    moves, empties or deletes them when it runs."""
    for block in re.finditer(r"(?m)^([^#{}\n][^{}\n]*)\{", content):
        yield from block.group(1).split()


def interpreter(language: str) -> str | None:
    """The program that runs code of ``language`` (``None`` for ``shell``)."""
    return _INTERPRETERS.get(language)


def _language(program: str, argument: str | None) -> str:
    """The language a ``#!`` line names (``/usr/bin/env python3`` is ``python``)."""
    name = os.path.basename(program)
    if name == "env" and argument:
        name = os.path.basename(argument)
    if name in SHELLS or name in ("sh", "busybox"):
        return "shell"
    for language in _INTERPRETERS:
        if name.startswith(language) or (language == "node" and name in ("nodejs", "bun", "deno")):
            return language
    return "shell"  # an interpreter we do not read: its text judged as commands, the safer reading


# git configuration keys whose value git runs as a command (an alias that starts with ``!``, the
# file-system monitor run by every ``git status``, pagers, editors, ssh, filters, diff drivers,
# credential helpers, the signing program), by their last dotted part.
GIT_COMMAND_KEYS: Final[frozenset[str]] = frozenset(
    {
        "fsmonitor",
        "pager",
        "editor",
        "sshcommand",
        "textconv",
        "clean",
        "smudge",
        "process",
        "helper",
        "program",
        "askpass",
        "command",
    }
)
_GIT_CONFIG_LINE: Final[re.Pattern[str]] = lazy_compile(r"^\s*([A-Za-z][\w.-]*)\s*=\s*(.+?)\s*$")
_GIT_SECTION: Final[re.Pattern[str]] = lazy_compile(r"^\s*\[\s*([A-Za-z][\w.-]*)")


def git_config_command(key: str, value: str) -> str | None:
    """The command line a git configuration value runs (``alias.x = !cmd``, ``core.fsmonitor =
    cmd``), or ``None`` for a value git does not run."""
    section, _, name = key.lower().rpartition(".")
    section = section.split(".", 1)[0]
    text = value.strip().strip('"')
    if section == "alias":
        return text[1:] if text.startswith("!") else None
    if name in GIT_COMMAND_KEYS:
        return text[1:] if text.startswith("!") else text
    return None


def _git_config_commands(content: str) -> Iterator[str]:
    section = ""
    for line in content.splitlines():
        header = _GIT_SECTION.match(line)
        if header is not None:
            section = header.group(1)
            continue
        setting = _GIT_CONFIG_LINE.match(line)
        if setting is not None:
            command = git_config_command(f"{section}.{setting.group(1)}", setting.group(2))
            if command:
                yield command


_MAKE_VARIABLE: Final[re.Pattern[str]] = lazy_compile(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")


def _recipe_lines(content: str, *, tabs_only: bool) -> Iterator[str]:
    """Recipe lines of a Makefile (tab-indented) or justfile (indented), without the prefixes
    that only change echoing or error handling (``@``, ``-``, ``+``). In a Makefile, ``$$`` is
    the shell's ``$`` and ``$(NAME)`` a variable the environment fills (``$(HOME)``): both are
    handed to the shell as it will see them."""
    for line in content.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line.startswith("\t") if tabs_only else line[:1] in ("\t", " ")
        if indented:
            text = line.strip().lstrip("@-+").strip()
            if tabs_only:
                text = _MAKE_VARIABLE.sub(r"${\1}", text.replace("$$", "\0")).replace("\0", "$")
            yield text


def _package_scripts(content: str) -> Iterator[str]:
    try:
        document = json.loads(content)
    except ValueError:
        yield from re.findall(r'"[^"]+"\s*:\s*"((?:[^"\\]|\\.)*)"', content)
        return
    scripts = document.get("scripts") if isinstance(document, dict) else None
    if isinstance(scripts, dict):
        yield from (value for value in scripts.values() if isinstance(value, str))


def _task_commands(content: str) -> Iterator[str]:
    """The command lines of VS Code tasks (``"command"`` and its ``"args"``; a task may run when
    the folder opens), read as MCP server entries are (JSON with comments allowed: a fragment
    that does not parse is searched for ``"command"`` values)."""
    from dsh_policy.policy.self_protection.agents import file_commands

    text = re.sub(r"(?m)^\s*//.*$", "", content)
    for command in file_commands(text):
        yield " ".join(command)


def _desktop_command(value: str) -> str:
    """A desktop entry's ``Exec`` value without its field codes (``%f``, ``%U``...)."""
    return re.sub(r"%[a-zA-Z]", "", value).strip()


def _is_crontab(parts: list[str]) -> bool:
    name = parts[-1] if parts else ""
    joined = "/".join(parts)
    return (
        name in ("crontab", "anacrontab")
        or name.endswith(".cron")
        or "/cron.d/" in f"/{joined}"
        or joined.startswith("var/spool/cron")
    )


def _cron_commands(content: str) -> Iterator[str]:
    """The command of each crontab line without its schedule (five fields or ``@reboot``), read
    both with and without a first word (system crontabs put a user name there); variable lines
    kept as they are."""
    for line in content.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _CRON_LINE.match(stripped)
        if match is None or "=" in stripped.split()[0]:
            yield stripped
            continue
        command = match.group(1)
        yield command
        if " " in command:
            yield command.split(None, 1)[1]


def _under(folders: list[str], suffix: tuple[str, ...]) -> bool:
    return tuple(folders[-len(suffix) :]) == suffix
