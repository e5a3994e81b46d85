"""Execution hijacked rather than exploited (ATT&CK T1574, found by the blind probe
tests/corpus/probe10 in what an agent would run after linPEAS, linux-smart-enumeration and pspy, and
in Mythic's and Empire's macOS injection), read as classes of what the line arranges:

- a library loaded into a program from a scratch or hidden folder (``DYLD_INSERT_LIBRARIES=``,
  ``LD_PRELOAD=``, ``LD_AUDIT=`` naming ``/tmp``, ``/dev/shm``, ``/Users/Shared`` or a dot-folder):
  the program, often an app the privacy database already trusts, runs the attacker's code with
  its rights; a system library (jemalloc, libfaketime under ``/usr``) or one of the project's own
  stays allowed;
- the command search path led through a world-writable folder (``export PATH=/tmp:$PATH``): every
  later command, and every set-uid helper that calls one by name, runs whatever is planted there;
- a system program replaced without touching its file (``mount --bind X /usr/bin/passwd``; read
  with mount's other options in ``hardening.py``);
- a file whose name is an option that runs a command, planted for a wildcard to expand
  (``--checkpoint-action=exec=...`` for ``tar *``, ``-e sh`` for rsync/zip): the tar and rsync
  wildcard injection that root's cron jobs fall to.

All are ``privilege``: the next program to run, not this command, does the harm.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import WORLD_WRITABLE, Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["hijack_line_acts"]

_ASSIGNMENT = lazy_compile(
    r"(?:^|[\s;&|(])(?:export\s+|env\s+(?:-\S+\s+)*|declare\s+-x\s+)?"
    r"(DYLD_INSERT_LIBRARIES|LD_PRELOAD|LD_AUDIT|PATH)=(\"[^\"]*\"|'[^']*'|[^\s;&|)]*)"
)
_EXEC_OPTION_NAME = lazy_compile(
    r"^(?:.*/)?(?:--checkpoint-action=exec=|--use-compress-program=|--to-command=|--rsh-command=|--rsh="
    r"|--unzip-command=|-e\s+\S|-oProxyCommand=)"
)


def _loader_and_path(line: str) -> Iterator[Effect]:
    for match in _ASSIGNMENT.finditer(line):
        name, raw = match.group(1), match.group(2)
        value = raw[1:-1] if raw[:1] in ("'", '"') else raw
        if name == "PATH":
            first = value.split(":", 1)[0]
            if ":" in value and WORLD_WRITABLE.match(first):
                yield _fx("privilege", "puts a world-writable folder first on the command search path", first)
        elif any(WORLD_WRITABLE.search(part) for part in re.split(r"[:\s]+", value) if part):
            yield _fx("privilege", f"loads a library from a scratch or hidden folder ({name})", value)


def _planted_options(commands: list[list[str]], written: list[str]) -> Iterator[Effect]:
    planted = [t for t in written if _EXEC_OPTION_NAME.match(t)]
    planted += [a for argv in commands if argv[0] == "touch" for a in argv[1:] if _EXEC_OPTION_NAME.match(a)]
    if planted:
        what = "plants a file whose name a wildcard turns into an option that runs a command"
        yield _fx("privilege", what, planted[0])


def hijack_line_acts(line: str, commands: list[list[str]], written: list[str]) -> Iterator[Effect]:
    """The effects above for one line, its commands and the files it writes by redirection."""
    if "=" in line:
        yield from _loader_and_path(line)
    if written or "touch" in line:
        yield from _planted_options(commands, written)
