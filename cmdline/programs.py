"""What programs do, as far as the readers need to know: one table shared by the shell reader and
self-protection, so a fact about a program is written down once.

A program missing here is read as its argv says; these tables only add what its name alone tells
(that ``sh`` runs its ``-c`` string, that ``find -exec`` runs a command).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile

SHELLS: Final[frozenset[str]] = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash"})
"""POSIX-style shells: ``-c LINE`` is a shell line, and without ``-c`` or a script they read one
from stdin."""

FIND_EXEC: Final[frozenset[str]] = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
"""``find`` actions that run a command (up to ``;`` or ``+``)."""

FIND_WRITES: Final[frozenset[str]] = FIND_EXEC | {"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
"""``find`` actions that change files: deleting, printing into a file, or running a command."""

SCRIPT_INTERPRETERS: Final[frozenset[str]] = frozenset({"perl", "ruby", "node", "nodejs", "php", "lua"})
"""Interpreters besides the shells and Python that run a script file named as their first operand."""

PYTHON: Final[re.Pattern[str]] = lazy_compile(r"(?:python|pypy)(?:[0-9]+(?:\.[0-9]+)*)?[mwt]?(?:\.exe)?")
"""Names of Python interpreters (``python3.12``, ``pypy3``, ``python3.13t``, ``pythonw``)."""

PYTHON_INSTALLERS: Final[frozenset[str]] = frozenset(
    {"uv", "pipx", "pdm", "poetry", "conda", "mamba", "micromamba", "pipenv", "rye"}
)
"""Programs that install or remove Python packages besides ``pip`` (see :data:`PIP`)."""

PIP: Final[re.Pattern[str]] = lazy_compile(r"pip[0-9.]*")
"""Names of pip (``pip``, ``pip3``, ``pip3.12``); ``python -m pip`` is pip as well."""

# Programs that only read the files they name (with the options that would make them write
# excluded below). Everything else that names a protected path is refused.
READERS: Final[frozenset[str]] = frozenset(
    {
        "cat",
        "tac",
        "less",
        "more",
        "most",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "ls",
        "ll",
        "la",
        "dir",
        "vdir",
        "tree",
        "exa",
        "eza",
        "lsd",
        "stat",
        "lsattr",
        "getfacl",
        "getfattr",
        "file",
        "wc",
        "diff",
        "cmp",
        "comm",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "du",
        "df",
        "realpath",
        "readlink",
        "dirname",
        "basename",
        "test",
        "[",
        "[[",
        "cd",
        "pushd",
        "popd",
        "pwd",
        "echo",
        "printf",
        "true",
        "false",
        "jq",
        "bat",
        "batcat",
        "nl",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "uniq",
        "cut",
        "tr",
        "column",
        "fold",
        "fmt",
        "expand",
        "unexpand",
        "paste",
        "join",
        "sort",
        "yq",
        "sed",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "find",
        "git",
        "dsh-policy",
        "type",
        "which",
        "whereis",
        "command",
        "id",
        "whoami",
        "date",
        "env",
        "printenv",
        "sleep",
        "zcat",
        "zless",
        "view",
        "pgrep",
        "pidof",
        "ps",
        "pstree",
    }
)
# Readers that can also write files named in their script or expression (sed ``w``, awk
# ``print > f``, find ``-fprint``): a protected path *mentioned* inside their program is refused.
SCRIPTED_READERS: Final[frozenset[str]] = frozenset({"sed", "awk", "gawk", "mawk", "nawk", "find"})
# git subcommands that only read (``git branch`` with at most one word, ``git remote -v`` too).
GIT_READERS: Final[frozenset[str]] = frozenset(
    {
        "status",
        "diff",
        "log",
        "show",
        "blame",
        "ls-files",
        "ls-tree",
        "grep",
        "rev-parse",
        "describe",
        "shortlog",
        "cat-file",
        "whatchanged",
        "reflog",
        "annotate",
        "help",
        "version",
    }
)
# Package-manager subcommands that only ask about installed packages (``pip show dsh-policy``,
# ``uv pip list``): naming a package there changes nothing.
PACKAGE_QUERIES: Final[frozenset[str]] = frozenset(
    {"show", "list", "freeze", "check", "inspect", "index", "help", "search", "debug", "tree"}
    | {"--version", "-V"}
)
# Our own command's subcommands that only read.
DSH_READERS: Final[frozenset[str]] = frozenset(
    {"check", "explain", "verify", "policy-log", "log", "doctor", "diff", "--help", "-h", "--version"}
)
# Programs that act on whole folders: naming a folder that holds a protected path is refused too
# (``rm -rf .dsh``, ``mv .claude x``, ``chmod -R 000 .dsh``, ``find .dsh -delete``).
FOLDER_ACTORS: Final[frozenset[str]] = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "rsync",
        "chmod",
        "chown",
        "chgrp",
        "chattr",
        "setfacl",
        "ln",
        "shred",
        "unlink",
        "trash",
        "trash-put",
        "gio",
        "mount",
        "umount",
        "tar",
        "unzip",
        "install",
        "srm",
        "wipe",
        "bsdtar",
        "7z",
        "rclone",
        "git",
        "find",
    }
)
# Programs whose only written operand is the last one (or ``-t DIR``): the others are read.
COPIERS: Final[frozenset[str]] = frozenset({"cp", "rsync", "scp", "install"})
# Readers that look at a file's name, type or metadata, never its contents (a secret may be
# listed, not read).
NAME_READERS: Final[frozenset[str]] = frozenset(
    {"ls", "ll", "la", "dir", "stat", "test", "[", "[[", "cd", "pushd", "lsattr", "getfacl", "getfattr"}
)


# sed's own writes, named in its script: ``s/a/b/w FILE`` and the ``w FILE`` command (``W``: the
# first line of the pattern space), each up to the end of its line (GNU sed manual, "Commands").
_SED_S_WRITE = lazy_compile(r"s([^\w\s\\])(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImMe0-9]*w[ \t]*([^\n]+)")
_SED_W_COMMAND = lazy_compile(
    r"(?:^|[;{}\n])[ \t]*(?:(?:[0-9]+|\$|/(?:\\.|[^/\n])*/)(?:,(?:[0-9]+|\$|/(?:\\.|[^/\n])*/))?"
    r"[ \t]*!?[ \t]*)?[wW][ \t]+([^\n]+)"
)
_SED_SCRIPT_OPTIONS = frozenset({"-e", "--expression"})


def sed_written(words: Sequence[str]) -> list[str]:
    """Files a sed script writes with ``w``: the scripts of ``-e``/``--expression``, else the
    first operand (``-f`` scripts are files nobody has read here)."""
    scripts = [
        words[i + 1] for i, w in enumerate(words[:-1]) if w in _SED_SCRIPT_OPTIONS
    ] + [w.split("=", 1)[1] for w in words if w.startswith("--expression=")]
    if not scripts:
        operands = [w for w in words if not w.startswith("-")]
        scripts = operands[:1]
    found: list[str] = []
    for script in scripts:
        for pattern in (_SED_S_WRITE, _SED_W_COMMAND):
            for match in pattern.finditer(script):
                target = match.group(match.lastindex or 1).strip()
                if target and target not in ("/dev/stdout", "/dev/stderr"):
                    found.append(target)
    return found


def git_subcommand_and_rest(argv: Sequence[str]) -> tuple[str, list[str]]:
    """The subcommand of a ``git`` argv, past git's own options (``-C DIR``, ``-c KEY=VALUE``,
    ``--namespace NAME``), and the words after it (``("", [])`` when there is none)."""
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    return (argv[index], list(argv[index + 1 :])) if index < len(argv) else ("", [])


def git_subcommand(argv: Sequence[str]) -> str:
    """The subcommand of a ``git`` argv (see :func:`git_subcommand_and_rest`)."""
    return git_subcommand_and_rest(argv)[0]


def only_reads(argv: Sequence[str]) -> bool:
    """Whether a command only reads the files it names: a :data:`READERS` program without the
    options that make it write (``sed -i``, ``sort -o``, ``yq -i``, ``find -delete``/``-exec``, a
    git subcommand that is not in :data:`GIT_READERS`, ...)."""
    program = argv[0]
    if PYTHON.fullmatch(program) and list(argv[1:3]) == ["-m", "pip"]:
        return only_reads(["pip", *argv[3:]])
    if PYTHON.fullmatch(program) and list(argv[1:3]) == ["-m", "json.tool"]:
        # ``python -m json.tool [INFILE [OUTFILE]]``: it writes only its second operand.
        return len([word for word in argv[3:] if not word.startswith("-")]) < 2
    if PIP.fullmatch(program) or (program == "uv" and argv[1:2] == ["pip"]):
        words = [w for w in argv[1:] if not w.startswith("-") and w != "pip"]
        return bool(words) and words[0] in PACKAGE_QUERIES
    if program not in READERS:
        return False
    options = [word for word in argv[1:] if word.startswith("-")]
    if program == "sed":
        return not any(
            o.startswith("--in-place") or (o.startswith("-") and not o.startswith("--") and "i" in o)
            for o in options
        ) and not sed_written(argv[1:])
    if program == "sort":
        return not any(o.startswith(("-o", "--output")) for o in options)
    if program in ("awk", "gawk"):  # gawk's ``-i inplace`` extension rewrites every file operand
        words = list(argv[1:])
        return not any(
            w in ("-iinplace", "--include=inplace")
            or (w in ("-i", "--include") and words[i + 1 : i + 2] == ["inplace"])
            for i, w in enumerate(words)
        )
    if program == "yq":
        return not any(o in ("-i", "--inplace") or o.startswith("--inplace") for o in options)
    if program == "find":
        return not any(word in FIND_WRITES for word in argv[1:])
    if program in ("xxd", "uniq"):  # ``xxd -r IN OUT`` and ``uniq IN OUT`` write their second operand
        operands = [word for word in argv[1:] if not word.startswith("-")]
        return len(operands) < 2
    if program == "git":
        sub = git_subcommand(argv)
        return (
            sub in GIT_READERS or (sub == "branch" and len(argv) <= 3) or (sub == "remote" and "-v" in argv)
        )
    if program == "dsh-policy":
        # ``serve --status`` asks the running gateway for its health; ``--stop`` is no read.
        status = argv[1:2] == ["serve"] and "--status" in argv and "--stop" not in argv
        return len(argv) > 1 and (argv[1] in DSH_READERS or status)
    return True  # env, command, printenv: wrappers, the wrapped command follows as its own argv


def copy_destinations(words: Sequence[str]) -> list[str]:
    """The operands ``cp``/``rsync``/``install`` write (their arguments after the program name):
    ``-t DIR`` or the last operand."""
    for index, word in enumerate(words):
        if word in ("-t", "--target-directory") and index + 1 < len(words):
            return [words[index + 1]]
        if word.startswith("--target-directory="):
            return [word.split("=", 1)[1]]
    operands = [word for word in words if not word.startswith("-")]
    return operands[-1:]


def operands(
    words: Sequence[str], value_options: frozenset[str] = frozenset(), *, dash_is_operand: bool = False
) -> list[str]:
    """The words that are neither options nor an option's value (``value_options`` take the word
    after them); a lone ``-`` (stdin or stdout) counts as an operand when ``dash_is_operand``."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-") and not (dash_is_operand and word == "-"):
            skip = word in value_options
        else:
            out.append(word)
    return out
