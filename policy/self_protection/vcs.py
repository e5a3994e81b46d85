"""git commands that move the whole working tree to another commit or apply another commit's
change, whether that touches the hook files in force (asked of git itself, read-only), and how a
git argv's words read (which name paths, which rewrite the whole tree).

``git reset --hard REV``, ``git checkout REV``, ``git switch BRANCH`` rewrite every tracked file,
so they may give the project an older version of its hook files without naming them; ``git
revert``, ``cherry-pick``, ``merge``, ``rebase`` and ``stash pop`` apply a change that may remove
them. Which commit or change is read from the argv; whether the hook files (and the deployment's
files tracked in the project) differ is ``git diff --quiet REVS -- FILES`` in the working tree,
bounded by a short timeout (a git that does not answer in time is taken to differ: the call is
refused, never waved through).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import git_subcommand
from dsh_policy.policy.self_protection.locations import HARNESS_SUFFIXES

GIT_TIMEOUT: Final[float] = 3.0
# Every client's hook files at any depth, as git pathspecs.
PATHSPECS: Final[tuple[str, ...]] = tuple(
    f":(glob)**/{'/'.join(suffix)}{'/**' if tree else ''}" for suffix, tree in HARNESS_SUFFIXES
)
# git subcommands that move, delete or roll back what they are given (a folder: all in it).
GIT_MOVERS: Final[frozenset[str]] = frozenset({"clean", "rm", "mv", "checkout", "restore", "stash", "reset"})
# git options whose value is text (a message, a search), never a path.
GIT_TEXT_OPTIONS: Final[frozenset[str]] = frozenset(
    {"-m", "--message", "--grep", "-S", "-G", "--author", "--committer", "--format", "--pretty", "--trailer"}
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


# Options of revert, cherry-pick, merge and rebase that take the next word as their value.
_VALUED: Final[frozenset[str]] = frozenset(
    {"-m", "--mainline", "-s", "--strategy", "-X", "--strategy-option", "--onto", "-x", "--exec"}
    | {"-F", "--file"}
)
_SEQUENCER: Final[frozenset[str]] = frozenset(
    {"--continue", "--abort", "--quit", "--skip", "--show-current-patch"}
)


def applied_changes(argv: Sequence[str]) -> list[list[str]]:
    """The differences a git command applies to the working tree, each as the revisions of a
    ``git diff`` that shows it: ``revert``/``cherry-pick REV`` apply REV's own change
    (``REV^!``, a root commit's included; a range ``A..B`` as a whole), ``merge REV`` and
    ``rebase UPSTREAM`` what REV changed since it parted from ``HEAD`` (``HEAD...REV``), an
    interactive rebase also what it may drop (``UPSTREAM HEAD``), ``stash apply|pop [STASH]`` the
    stash's change. Empty for anything else (``pull`` fetches what is unknown now)."""
    sub = git_subcommand(argv)
    if sub not in ("revert", "cherry-pick", "merge", "rebase", "stash"):
        return []
    words = list(argv[list(argv).index(sub) + 1 :])
    if _SEQUENCER & set(words):
        return []
    operands: list[str] = []
    onto: str | None = None
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in _VALUED:
            skip = True
            if word == "--onto" and index + 1 < len(words):
                onto = words[index + 1]
            continue
        if word.startswith("--onto="):
            onto = word.split("=", 1)[1]
        elif not word.startswith("-"):
            operands.append(word)
    if sub == "stash":
        if operands[:1] not in (["apply"], ["pop"]):
            return []
        stash = operands[1] if len(operands) > 1 else "stash@{0}"
        return [[f"{stash}^1", stash]]
    if sub in ("revert", "cherry-pick"):
        return [op.split("..", 1) if ".." in op and "..." not in op else [f"{op}^!"] for op in operands]
    if sub == "merge":
        return [[f"HEAD...{op}"] for op in operands]
    upstream = onto or (operands[0] if operands else "@{upstream}")
    changes = [[f"HEAD...{upstream}"]]
    if {"-i", "--interactive", "--root"} & set(words):
        changes.append([operands[0] if operands else upstream, "HEAD"])
    return changes


# ``git pull`` options that take the next word as their value (besides :data:`_VALUED`).
_PULL_VALUED: Final[frozenset[str]] = _VALUED | frozenset(
    {"--depth", "--deepen", "--shallow-since", "--shallow-exclude", "-o", "--server-option",
     "--upload-pack", "-j", "--jobs", "--negotiation-tip"}
)


def pulled_revisions(argv: Sequence[str]) -> list[str]:
    """The revisions ``git pull REMOTE REFSPEC...`` merges or rebases onto, as this repository
    names them once fetched (``REMOTE/BRANCH``; a refspec's source side, ``refs/heads/`` left
    out). Empty for a pull that names no refspec (it merges the upstream, judged as
    ``@{upstream}``) and for anything else."""
    if git_subcommand(argv) != "pull":
        return []
    words = list(argv[list(argv).index("pull") + 1 :])
    operands: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _PULL_VALUED:
            skip = True
        elif not word.startswith("-"):
            operands.append(word)
    if len(operands) < 2:
        return []
    remote = operands[0]
    branches = [spec.lstrip("+").split(":", 1)[0].removeprefix("refs/heads/") for spec in operands[1:]]
    return [f"{remote}/{branch}" for branch in branches if branch]


# Revisions of the branch in hand (``HEAD~3``, ``@^``, ``@{-1}``): this repository's own history,
# never a change from elsewhere (one that does not exist is no content at all).
_OWN_HISTORY: Final[re.Pattern[str]] = lazy_compile(r"(?:HEAD|ORIG_HEAD|@)(?:$|[~^@{])")


def named_revisions(argv: Sequence[str]) -> list[str]:
    """The revisions a command that applies another commit's change names on its line
    (``merge``, ``cherry-pick``, ``revert``, ``rebase UPSTREAM``/``--onto``, ``pull REMOTE
    REFSPEC``), each as ``git rev-parse`` would be asked about it. A stash and a rebase's implicit
    upstream are not named (a ``git stash`` earlier on the line makes the one ``pop`` applies), nor
    are revisions of the branch in hand (``HEAD~3``)."""
    if git_subcommand(argv) == "pull":
        return pulled_revisions(argv)
    if git_subcommand(argv) not in ("revert", "cherry-pick", "merge", "rebase"):
        return []
    names: list[str] = []
    for revisions in applied_changes(argv):
        for revision in revisions:
            for part in re.split(r"\.\.\.?", revision):
                part = part.removesuffix("^!")
                if part and not _OWN_HISTORY.match(part):
                    names.append(part)
    return names


# ``git bisect`` verbs that check out another commit of the range being bisected.
_BISECT_MOVES: Final[frozenset[str]] = frozenset(
    {"good", "bad", "new", "old", "skip", "next", "run", "replay"}
)


def bisect_targets(argv: Sequence[str]) -> list[list[str]]:
    """The commits a ``git bisect`` may check out, each as ``git diff`` revisions against the
    working tree: ``start BAD GOOD...`` goes between the ones it names (each end compared),
    ``good``/``bad``/``skip``/``run``... to commits of the range (its ends: ``refs/bisect/bad``
    and the revisions named), ``reset COMMIT`` to that commit. A commit between two ends whose
    hook files both match the working tree's is not looked at."""
    if git_subcommand(argv) != "bisect":
        return []
    words = list(argv[list(argv).index("bisect") + 1 :])
    verb, rest = (words[0], words[1:]) if words else ("", [])
    if "--" in rest:
        rest = rest[: rest.index("--")]
    revisions = [w for w in rest if not w.startswith("-")]
    if verb == "start":
        return [[revision] for revision in revisions if revision != "HEAD"]
    if verb == "reset":
        return [[revision] for revision in revisions[:1]]
    if verb in _BISECT_MOVES:
        named = [] if verb in ("run", "replay") else revisions
        return [["refs/bisect/bad"], *([revision] for revision in named if revision != "HEAD")]
    return []


# jj verbs that move the working copy to another revision, with the options naming it.
_JJ_MOVES: Final[dict[str, frozenset[str]]] = {
    "new": frozenset(
        {"-A", "--insert-after", "--after", "-B", "--insert-before", "--before", "-o", "--onto"}
    ),
    "checkout": frozenset(),
    "co": frozenset(),
    "edit": frozenset({"-r"}),
    "restore": frozenset({"--from", "-f"}),
    "rebase": frozenset(
        {"-d", "--destination", "-o", "--onto", "-A", "--insert-after", "-B", "--insert-before"}
    ),
}
# jj verbs whose new working copy is a revision read from the operation log or history: no
# revision to name (``undo``, ``op restore``, ``next``, ``prev``, ``abandon`` of ``@``).
_JJ_UNNAMED: Final[frozenset[str]] = frozenset({"undo", "next", "prev", "abandon", "op", "operation"})
# jj options whose value is text or a place, never the revision moved to.
_JJ_TEXT: Final[frozenset[str]] = frozenset(
    {"-m", "--message", "-R", "--repository", "--at-op", "--at-operation", "--config", "--color"}
)
# The revision of the empty tree jj's ``root()`` stands for, as git spells it.
EMPTY_TREE: Final[str] = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def jj_targets(argv: Sequence[str]) -> list[str] | None:
    """The revisions a jj command gives the working copy (``root()`` as git's empty tree, ``@-``
    as ``HEAD`` of a colocated repository), ``["?"]`` when it moves to one that cannot be named
    now, ``None`` when it does not move the working copy (``jj new`` on ``@``, ``jj log``;
    ``restore`` of named paths, which are judged as paths)."""
    if not argv or os.path.basename(argv[0]) != "jj":
        return None
    words = [w for w in argv[1:] if not w.startswith("--config") and not w.startswith("-R")]
    verb = next((w for w in words if not w.startswith("-")), "")
    if verb in _JJ_UNNAMED:
        if verb in ("op", "operation") and not {"restore", "revert", "undo"} & set(words):
            return None
        return ["?"]
    valued = _JJ_MOVES.get(verb)
    if valued is None:
        return None
    rest = words[words.index(verb) + 1 :]
    named: list[str] = []
    operands: list[str] = []
    for index, word in enumerate(rest):
        name, equals, value = word.partition("=")
        if name in valued:
            named.append(value if equals else (rest[index + 1] if index + 1 < len(rest) else ""))
        elif not word.startswith("-") and (index == 0 or rest[index - 1] not in valued | _JJ_TEXT):
            operands.append(word)
    if verb == "restore":
        return None if operands else [_git_revision(r) for r in named or ["@-"]]
    revisions = named + (operands if verb != "rebase" else [])
    moved = [_git_revision(r) for r in revisions if r not in ("@", "")]
    return moved or None


def _git_revision(revision: str) -> str:
    """A jj revision as git names it in a colocated repository; ``?`` for a revset git cannot
    read (change ids, expressions)."""
    if revision.replace(" ", "") == "root()":
        return EMPTY_TREE
    if revision == "@-":
        return "HEAD"
    return revision if _PLAIN_REVISION.fullmatch(revision) else "?"


_PLAIN_REVISION: Final[re.Pattern[str]] = lazy_compile(r"[A-Za-z0-9][\w./-]*")


def git_knows(folder: str, revision: str) -> bool:
    """Whether git in ``folder`` names ``revision`` (a commit or a tree), read-only."""
    try:
        done = subprocess.run(
            ["git", "-C", folder, "rev-parse", "--verify", "--quiet", f"{revision}^{{tree}}"],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
        )
    except (subprocess.TimeoutExpired, OSError):
        return False
    return done.returncode == 0


def protected_pathspecs(folder: str, paths: Sequence[str]) -> list[str]:
    """Every client's hook files (:data:`PATHSPECS`) and the protected ``paths`` inside
    ``folder`` (a deployment tracked in the project), as pathspecs relative to ``folder``."""
    root = os.path.realpath(folder).rstrip("/") + "/"
    inside = [
        os.path.relpath(path, root)
        for path in paths
        if os.path.realpath(path).startswith(root) or path.startswith(root)
    ]
    return [*PATHSPECS, *(f":(literal){relative}" for relative in sorted(set(inside)))]


def hook_files_differ(folder: str, commit: str, paths: Sequence[str] = ()) -> bool:
    """Whether ``commit`` holds other hook files than the working tree in ``folder`` (``False``
    when git does not know the commit or the folder is no repository: the move would fail)."""
    return differs(folder, [commit], paths)


def differs(folder: str, revisions: Sequence[str], paths: Sequence[str] = ()) -> bool:
    """Whether ``git diff REVISIONS`` touches a hook file or one of the protected ``paths`` in
    ``folder`` (``False`` when git does not know a revision: the command would fail)."""
    if not os.path.isdir(folder) or any(r.startswith("-") for r in revisions):
        return False
    if len(revisions) == 1 and revisions[0].endswith("^!"):  # one commit's own change
        command = ["diff-tree", "--quiet", "-r", "--root", revisions[0][:-2]]
    else:
        command = ["diff", "--quiet", *revisions]
    try:
        done = subprocess.run(
            ["git", "-C", folder, *command, "--", *protected_pathspecs(folder, paths)],
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


def git_words(argv: Sequence[str]) -> list[str]:
    """A git argv's words past the program, without the values of options that take text (a
    commit message or a search names paths without touching them)."""
    out: list[str] = []
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if word in GIT_TEXT_OPTIONS:
            skip = True
            continue
        if name in GIT_TEXT_OPTIONS or (word.startswith("-m") and not word.startswith("--")):
            continue
        if len(word) > 2 and word[0] == "-" and word[1] != "-" and word.endswith("m"):
            skip = True  # ``-qm MESSAGE``: a bundle whose last letter takes the message
            continue
        out.append(word)
    return out


_STASH_UNTRACKED: Final[frozenset[str]] = frozenset({"-u", "--include-untracked", "-a", "--all"})


def stash_saves(argv: Sequence[str]) -> tuple[bool, bool] | None:
    """``git stash`` / ``stash push|save`` of the whole tree (no pathspec): ``(True, untracked)``,
    where ``untracked`` says it also takes untracked (``-u``) or ignored (``-a``) files away;
    ``None`` for any other command (a stash of named paths is judged as those paths)."""
    if git_subcommand(argv) != "stash":
        return None
    words = git_words(argv)
    rest = words[words.index("stash") + 1 :]
    operands = [w for w in rest if not w.startswith("-")]
    if operands[:1] and operands[0] not in ("push", "save"):
        return None
    pathspec = operands[1:] if operands[:1] == ["push"] else []  # ``save``'s words: a message
    if pathspec or "--pathspec-from-file" in {w.split("=", 1)[0] for w in rest}:
        return None
    untracked = any(
        w in _STASH_UNTRACKED or (w[:1] == "-" and w[1:2] != "-" and bool(set(w[1:]) & {"u", "a"}))
        for w in rest
    )
    return True, untracked


def whole_tree(argv: Sequence[str]) -> bool:
    """git commands that rewrite the whole working tree whatever they name: a sparse checkout
    that narrows it, an orphan branch (no tracked file stays), ``read-tree -u``, history
    rewrites that end in a reset, a stash that also takes untracked or ignored files away."""
    sub = git_subcommand(argv)
    words = set(argv[1:])
    if sub == "stash":
        saved = stash_saves(argv)
        return saved is not None and saved[1]
    if sub == "sparse-checkout":
        return bool(words & {"set", "add", "init", "reapply"})
    if sub in ("switch", "checkout"):
        return "--orphan" in words
    if sub == "read-tree":
        return bool(words & {"-u", "--reset"}) or any(
            w.startswith("-") and "u" in w[1:] and not w.startswith("--") for w in words
        )
    return sub in ("filter-branch", "filter-repo")

