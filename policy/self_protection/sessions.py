"""Environment for later sessions: a variable that decides whether or where the hook runs, set
where every later shell or login session reads it.

The hook command of every client is ``dsh-policy hook ...`` found on the ``PATH``, talking to the
gateway in a runtime folder the environment names, from a harness whose settings folder the
environment may move. A later session inherits what its start-up files, ``environment.d``,
``~/.pam_environment`` or the service manager's environment say; so setting one of those
variables there switches the next session's hook off or points it elsewhere, without touching a
protected file now. Judged by effect: *which file or manager* later sessions read their
environment from (:func:`is_session_file`, :data:`SESSION_SETTERS`) and *which variables* steer
the hook (:data:`STEERING`, and a ``PATH`` that does not keep the one in force), in every syntax
those files use (sh and its ``export``, csh's ``setenv``, fish's ``set -x``, pam_env's
``NAME DEFAULT=value``, ``environment.d``'s ``NAME=value``).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy.self_protection.locations import SHELL_STARTUP

# Variables that decide whether the hook runs, which gateway it reaches and what that gateway
# loads: the gateway's own settings, the folders its runtime, cache and the harnesses' settings
# are found from, and the interpreter and loader variables that run other code in its place.
_STEERING_NAMES: Final[str] = (
    r"DSH_POLICY_[A-Z0-9_]+|XDG_RUNTIME_DIR|TMPDIR|HOME|XDG_CONFIG_HOME|XDG_CACHE_HOME"
    r"|CLAUDE_CONFIG_DIR|CODEX_HOME|GEMINI_CLI_HOME|COPILOT_HOME|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP"
    r"|PYTHONUSERBASE|PYTHONEXECUTABLE|PYTHONSAFEPATH|BASH_ENV|ENV|LD_PRELOAD|LD_AUDIT|PATH"
)
_VALUE: Final[str] = r"""([^\n;&|]*)"""
# ``export NAME=value``, ``NAME=value`` (sh, environment.d, /etc/environment), ``systemctl --user
# set-environment NAME=value``.
_ASSIGN: Final[re.Pattern[str]] = lazy_compile(
    r"""(?:^|[\s;&|(`'"])(?:export\s+|declare\s+-\w+\s+|typeset\s+-\w+\s+|readonly\s+)?"""
    rf"""\b({_STEERING_NAMES})={_VALUE}""",
    re.MULTILINE,
)
# ``setenv NAME value`` (csh, ``launchctl setenv``), ``set -gx NAME value`` (fish).
_SETENV: Final[re.Pattern[str]] = lazy_compile(
    rf"""(?:^|[\s;&|(`'"])(?:setenv|set(?:\s+-[-\w]+)+)\s+({_STEERING_NAMES})\b{_VALUE}""",
    re.MULTILINE,
)
# ``NAME DEFAULT=value`` / ``NAME OVERRIDE=value`` (pam_env).
_PAM: Final[re.Pattern[str]] = lazy_compile(
    rf"""^\s*({_STEERING_NAMES})\s+(?:DEFAULT|OVERRIDE)={_VALUE}""", re.MULTILINE
)
_KEEPS_PATH: Final[re.Pattern[str]] = lazy_compile(r"\$\{?PATH\b|\$path\b|\$\{?fish_user_paths")

# Programs that set the environment of the sessions the service manager or terminal multiplexer
# starts next (``systemctl --user set-environment``, ``launchctl setenv``, ...), by subcommand.
SESSION_SETTERS: Final[dict[str, frozenset[str]]] = {
    "systemctl": frozenset({"set-environment"}),
    "launchctl": frozenset({"setenv", "putenv"}),
    "dbus-update-activation-environment": frozenset({"*"}),
    "tmux": frozenset({"set-environment", "setenv"}),
    "screen": frozenset({"setenv"}),
}


# Start-up files of the other shells and login managers (csh, tcsh, ksh, mksh, the login and
# logout scripts, the ``~/.bash_aliases`` Debian's and Ubuntu's bashrc sources) beside
# :data:`.locations.SHELL_STARTUP`.
_MORE_STARTUP: Final[frozenset[str]] = frozenset(
    {
        ".cshrc",
        ".tcshrc",
        ".login",
        ".logout",
        ".kshrc",
        ".mkshrc",
        ".bash_logout",
        ".bash_aliases",
        ".zlogout",
        "pam_env.conf",
        "launchd.conf",
        ".xprofile",
        ".xsessionrc",
        ".xinitrc",
    }
)


def is_session_file(path: str) -> bool:
    """Whether later sessions read their environment from ``path``: a shell start-up file,
    ``environment.d``, fish's ``conf.d``, ``/etc/profile.d``, pam_env's files, ``~/.ssh/environment``,
    ``launchd.conf``."""
    normal = os.path.normpath(path.replace("\\", "/"))
    parts = normal.split("/")
    name = parts[-1]
    if name in SHELL_STARTUP or name in _MORE_STARTUP:
        return True
    folders = parts[:-1]
    if "environment.d" in folders and name.endswith(".conf"):
        return True
    if folders[-2:] == ["fish", "conf.d"] or folders[-1:] == ["profile.d"]:
        return True
    return folders[-1:] == [".ssh"] and name == "environment"


# An alias or a shell function of the gateway's name, or of the builtin the hook command checks
# it with (``command -v dsh-policy``): a later shell that reads it runs that in its place.
_SHADOWING: Final[re.Pattern[str]] = lazy_compile(
    r"""(?:^|[\s;&|(`'"])(?:alias\s+(dsh-policy|command)=|function\s+(dsh-policy|command)\b"""
    r"""|(dsh-policy|command)\s*\(\s*\)|abbr\s+(?:-a\s+)?(dsh-policy)\b)""",
    re.MULTILINE,
)


def steering(text: str, base: str = "") -> str | None:
    """The first assignment in ``text`` that steers the hook (``PATH`` only when the new value
    drops the one in force), as ``NAME=value``, or a definition that shadows the gateway's
    command; ``None`` when there is none."""
    shadow = _SHADOWING.search(text)
    if shadow is not None:
        return f"{next(name for name in shadow.groups() if name)} (defined in place of the program)"
    for added in _PATH_ADD.finditer(text):  # direnv's ``PATH_add DIR``: DIR ahead of PATH
        if _shadows_gateway(added.group(1), base):
            return f"PATH={added.group(1)}:$PATH"
    for pattern in (_ASSIGN, _SETENV, _PAM):
        for match in pattern.finditer(text):
            name, value = match.group(1), match.group(2).strip()
            ahead = _KEEPS_PATH.split(value)[0] if name == "PATH" and _KEEPS_PATH.search(value) else ""
            if ahead and _shadows_gateway(ahead, base):
                return f"{name}={value[:60]}"
            if name == "PATH" and (not value or _KEEPS_PATH.search(value) or _finds_gateway(value)):
                continue
            shown = re.split(r"""['"]\s""", value, maxsplit=1)[0].strip("'\"")
            return f"{name}={shown[:60]}"
    return None


# direnv's stdlib functions that put a folder ahead of PATH.
_PATH_ADD: Final[re.Pattern[str]] = lazy_compile(
    r"""(?m)^\s*(?:PATH_add|path_add\s+PATH)\s+["']?([^"'\s;]+)"""
)


def _shadows_gateway(folders: str, base: str) -> bool:
    """Whether a folder put ahead of the ``PATH`` in force holds a ``dsh-policy`` other than the
    gateway's own: later sessions would run it for the hook command. (A folder that holds none
    now gains one only by a write of that name, which is refused wherever it is made.) A relative
    folder is read from ``base``, the folder of the file that sets it (direnv's ``.envrc``)."""
    own = shutil.which("dsh-policy")
    for part in re.split(r"[:\s]", folders):
        folder = os.path.expandvars(os.path.expanduser(part.strip("\"'{}")))
        if folder and not os.path.isabs(folder) and base:
            folder = os.path.join(base, folder)
        if not os.path.isabs(folder):
            continue
        for name in ("dsh-policy", "dsh_policy"):
            candidate = os.path.join(folder, name)
            if os.path.lexists(candidate) and not _same(candidate, own):
                return True
    return False


def _same(path: str, other: str | None) -> bool:
    try:
        return other is not None and os.path.samefile(path, other)
    except OSError:  # a dangling link is not the gateway's (and leaves the hook unrunnable)
        return False


def _finds_gateway(value: str) -> bool:
    """Whether a new ``PATH`` value still names the folder this ``dsh-policy`` is found in."""
    found = shutil.which("dsh-policy")
    if found is None:
        return False
    folder = os.path.dirname(found)
    return any(os.path.normpath(part.strip("\"'")) == folder for part in re.split(r"[:\s]", value) if part)


def session_setter(argv: Sequence[str]) -> str | None:
    """``systemctl --user set-environment NAME=...`` and the like, when a variable they set
    steers the hook: ``program NAME``; else ``None``."""
    program = os.path.basename(argv[0]) if argv else ""
    verbs = SESSION_SETTERS.get(program)
    if verbs is None:
        return None
    words = list(argv[1:])
    if "*" not in verbs and not verbs & set(words):
        return None
    found = steering(" ".join(_setenv_form(words)))
    return f"{program} {found}" if found is not None else None


def _setenv_form(words: Sequence[str]) -> list[str]:
    """Words rewritten so ``launchctl setenv NAME value`` and ``tmux set-environment -g NAME
    value`` read as assignments."""
    out: list[str] = []
    for index, word in enumerate(words):
        if word in ("setenv", "putenv", "set-environment") and index + 2 < len(words):
            rest = [w for w in words[index + 1 :] if not w.startswith("-")]
            if len(rest) >= 2 and "=" not in rest[0]:
                out.append(f"{rest[0]}={rest[1]}")
                continue
        out.append(word)
    return out
