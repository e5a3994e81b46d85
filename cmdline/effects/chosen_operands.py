"""Destructive verbs whose operands another command chooses (found by the blind probe
tests/corpus/probe9, read as a class): the operands are not on the line, so no name or path can be
judged, and the producer usually lists *everything* of a kind (``git tag -l``, ``git ls-files``,
``git for-each-ref``). The reader keeps the producer and the consumer as separate commands;
``xargs`` before a command, or a ``$(...)`` operand, is how the operands arrive.

- ``erase-contents``: remote branches or tags deleted by ``git push --delete`` (or ``:ref``
  refspecs) for what a command listed; files emptied by ``truncate -s 0`` for what a command
  listed; files overwritten past recovery by ``shred``/``srm``/``wipe`` for what a command listed
  (``shred -u $(find / -type f)``, ``find ... | xargs shred``: the wipers' way over a whole disk);
- ``outage``: every process started from a temporary folder killed by a path glob
  (``killall /tmp/*``): whatever runs there, the user's own builds and servers included.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dsh_policy.cmdline.effects.model import Effect
from dsh_policy.cmdline.effects.model import fx as _fx
from dsh_policy.cmdline.effects.model import option_value as _value
from dsh_policy.cmdline.lazy_regex import lazy_compile

__all__ = ["chosen_operand_acts"]

_SUBSTITUTED = lazy_compile(r"^\$\(|^`")
_TEMP_GLOB = lazy_compile(r"^/+(?:tmp|var/+tmp|dev/+shm)/+\.?\*")


def _fed(commands: list[list[str]], index: int) -> bool:
    """Whether the command at ``index`` takes operands from another command: it follows xargs in
    the reader's order, or one of its operands is a command substitution."""
    after_xargs = index > 0 and commands[index - 1][:1] == ["xargs"]
    return after_xargs or any(_SUBSTITUTED.match(a) for a in commands[index][1:])


def _git_push_deletes(argv: list[str]) -> bool:
    if argv[:2] != ["git", "push"]:
        return False
    rest = argv[2:]
    return any(a in ("--delete", "-d") for a in rest) or any(re.match(r"^\+?:\S", a) for a in rest)


def chosen_operand_acts(commands: list[list[str]]) -> Iterator[Effect]:
    """The effects above for one line's commands, in the reader's order."""
    for index, argv in enumerate(commands):
        if not argv:
            continue
        if _git_push_deletes(argv) and _fed(commands, index):
            yield _fx(
                "erase-contents",
                "deletes the remote branches or tags another command lists",
                " ".join(argv[2:5]),
            )
        elif argv[0] == "truncate" and _fed(commands, index):
            size = _value(argv, "-s", "--size") or ""
            if re.match(r"^0+[KMGkmg]?$", size):
                yield _fx("erase-contents", "empties the files another command lists", " ".join(argv[1:4]))
        elif argv[0] in ("shred", "srm", "wipe") and _fed(commands, index):
            yield _fx("erase-contents", "overwrites the files another command lists", " ".join(argv[1:4]))
        elif argv[0] in ("killall", "pkill") and any(_TEMP_GLOB.match(a) for a in argv[1:]):
            yield _fx("outage", "kills every process started from a temporary folder", " ".join(argv[1:4]))
