"""git commands that move the whole working tree to another commit, and whether that commit's
hook files differ from the ones in force (asked of git itself, read-only).

``git reset --hard REV``, ``git checkout REV``, ``git switch BRANCH`` rewrite every tracked file,
so they may give the project an older version of its hook files without naming them. Which commit
they move to is read from the argv; whether the hook files differ there is ``git diff --quiet REV
-- FILES`` in the working tree, bounded by a short timeout (a git that does not answer in time is
taken to differ: the call is refused, never waved through).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import Final

from dsh_policy.cmdline.programs import git_subcommand
from dsh_policy.policy.self_protection.locations import HARNESS_SUFFIXES

GIT_TIMEOUT: Final[float] = 3.0
# Every client's hook files at any depth, as git pathspecs.
PATHSPECS: Final[tuple[str, ...]] = tuple(
    f":(glob)**/{'/'.join(suffix)}{'/**' if tree else ''}" for suffix, tree in HARNESS_SUFFIXES
)
_RESET_MOVES: Final[frozenset[str]] = frozenset({"--hard", "--keep", "--merge"})
_NEW_BRANCH: Final[frozenset[str]] = frozenset({"-b", "-B", "-c", "-C", "--create", "--force-create"})


def work_tree(argv: Sequence[str]) -> str:
    """The working tree a git argv acts on: ``-C DIR``, ``--work-tree=DIR``, else ``.``."""
    words = list(argv[1:])
    for index, word in enumerate(words):
        if word in ("-C", "--work-tree") and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--work-tree="):
            return word.split("=", 1)[1]
    return "."


def target_commit(argv: Sequence[str]) -> str | None:
    """The commit a whole-tree move goes to, or ``None`` when the argv moves no whole tree (a
    path restore, ``reset`` without ``--hard``, a new branch at ``HEAD``)."""
    sub = git_subcommand(argv)
    if sub not in ("reset", "checkout", "switch"):
        return None
    words = list(argv[list(argv).index(sub) + 1 :])
    if "--" in words and sub != "switch":
        return None  # paths after ``--``: judged as the paths they name
    operands = [w for w in words if not w.startswith("-")]
    if sub == "reset":
        if not _RESET_MOVES & set(words):
            return None
        return operands[0] if operands and operands[0] != "HEAD" else None
    if _NEW_BRANCH & set(words):
        start = operands[1:2]  # ``-b NAME [START]``
        return start[0] if start and start[0] != "HEAD" else None
    if sub == "checkout" and len(operands) > 1:
        return None  # ``checkout REV PATH...``: a path restore
    return operands[0] if operands and operands[0] != "HEAD" else None


def hook_files_differ(folder: str, commit: str) -> bool:
    """Whether ``commit`` holds other hook files than the working tree in ``folder`` (``False``
    when git does not know the commit or the folder is no repository: the move would fail)."""
    if not os.path.isdir(folder):
        return False
    try:
        done = subprocess.run(
            ["git", "-C", folder, "diff", "--quiet", commit, "--", *PATHSPECS],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
        )
    except subprocess.TimeoutExpired:
        return True
    except OSError:
        return False
    return done.returncode == 1
