"""The shape of an effect and the argv helpers every effect table uses."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = [
    "WORLD_WRITABLE",
    "CommandReader",
    "Effect",
    "Handler",
    "Programs",
    "fx",
    "option_value",
    "runs",
    "words",
]

Effect = dict[str, str]
Handler = Callable[[list[str]], Iterator[Effect]]
Programs = frozenset[str] | Callable[[str], bool] | None
"""The programs (argv[0] basenames) in whose commands a per-command reader can find an effect: a
set of names, a test on the name, or ``None`` for a reader that reads every command's arguments
(``/proc/1/mem``, a miner's pool address). ``shell.acts`` calls a reader only for the commands of
its programs, so a declaration leaving out a program the reader acts on drops that effect."""
CommandReader = tuple[Programs, Callable[[list[str]], Iterable[Effect]]]
"""A per-command reader and the programs it reads (see :data:`Programs`)."""


def runs(programs: Programs, program: str) -> bool:
    """Whether a reader declared for ``programs`` reads a command of ``program``."""
    if programs is None:
        return True
    if isinstance(programs, frozenset):
        return program in programs
    return programs(program)


WORLD_WRITABLE: Final[re.Pattern[str]] = lazy_compile(
    r"^(?:/+private)?/+(?:tmp|var/+tmp|dev/+shm|run/+shm|Users/+Shared)(?:/|$)"
)
"""A path in a folder any local user may write (Linux's and macOS's shared scratch folders): what
runs from there, or is found there first, may be another user's."""


def fx(kind: str, what: str, target: str = "") -> Effect:
    return {"kind": kind, "what": what, "target": target}


def option_value(argv: list[str], *names: str) -> str | None:
    """The value of the first option in ``names`` (``--x v``, ``--x=v``, ``-xv`` for one-letter)."""
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg[len(name) + 1 :]
            if (
                len(name) == 2
                and not name.startswith("--")
                and arg.startswith(name)
                and len(arg) > 2
                and arg[1] != "-"
            ):
                return arg[2:]
    return None


def words(argv: list[str]) -> list[str]:
    return [a for a in argv[1:] if not a.startswith("-")]
