"""The shape of an effect and the argv helpers every effect table uses."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["WORLD_WRITABLE", "Effect", "Handler", "fx", "option_value", "words"]

Effect = dict[str, str]
Handler = Callable[[list[str]], Iterator[Effect]]

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
