"""Patches applied to a working tree (``git apply``, ``git am``, ``patch``), judged by the files
each patch names in its headers, read now: from the patch files the command is given, from a file
redirected into it, from a here-document or here-string, or from what ``echo``/``printf`` print
into it.

A patch whose text cannot be read now (a file the same line downloads or writes first, a download
piped in) may change anything under the folder it is applied in: it is refused when that folder
holds a protected file (a client's hook files, a deployment tracked in the project), as the shell
reader refuses a command it cannot resolve. ``git apply`` and ``git am`` are judged by the
repository they change, not by whether they would succeed: a patch file they are given that cannot
be read now (missing here, written or fetched by another call) is refused there too. ``patch``
given a file that does not exist and that the line does not write applies nothing: let through.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import git_subcommand
from dsh_policy.cmdline.programs import operands as operands_of
from dsh_policy.cmdline.writers import written_operands
from dsh_policy.policy.self_protection import streams, vcs
from dsh_policy.policy.self_protection.locations import PROJECT_HOOK_FILES, Protected
from dsh_policy.policy.self_protection.refusals import RULE_PREFIX, Refusal, message, refusal

MAX_PATCH_TEXT: Final[int] = 4 * 1024 * 1024
# Header lines that name a file a patch changes (unified and git diffs, renames and copies).
_HEADERS: Final[re.Pattern[str]] = lazy_compile(
    r"^(?:diff --git (\S+) (\S+)|(?:---|\+\+\+) (\S+)|(?:rename|copy) (?:from|to) (.+)"
    r"|\*\*\* (\S+)|Index: (.+))\s*$",
    re.MULTILINE,
)
# ``git apply`` options that only report (no file written unless ``--apply`` is given too).
_REPORTS: Final[frozenset[str]] = frozenset({"--check", "--stat", "--numstat", "--summary"})
_AM_CONTROLS: Final[frozenset[str]] = frozenset({"--abort", "--skip", "--quit", "--show-current-patch"})
_PATCH_VALUED: Final[frozenset[str]] = frozenset(
    {"-i", "--input", "-p", "-F", "--fuzz", "-D", "-V", "-z", "--suffix", "-Y", "-d", "--directory", "-o"}
)


class ProtectedSet(Protocol):
    def holds_protected(self, folder: str, extra: Sequence[Protected] = ()) -> Protected | None: ...


class CallScan(Protocol):
    @property
    def protection(self) -> ProtectedSet: ...
    @property
    def local(self) -> list[Protected]: ...
    def hit(self, word: str, *, folders: bool) -> Protected | None: ...
    def candidates(self, word: str) -> list[str]: ...


@dataclass(frozen=True)
class Application:
    """One command that applies patches: the patch files it names, whether it reads one on its
    standard input, and the folder the patch's paths are relative to."""

    files: tuple[str, ...]
    stdin: bool
    folder: str


def application(argv: Sequence[str]) -> Application | None:
    """What ``argv`` applies, or ``None`` when it applies no patch (``git apply --stat`` reports)."""
    program = os.path.basename(argv[0]) if argv else ""
    if program == "git":
        sub = git_subcommand(argv)
        if sub not in ("apply", "am"):
            return None
        words = list(argv[list(argv).index(sub) + 1 :])
        if sub == "apply" and _REPORTS & set(words) and "--apply" not in words:
            return None
        if sub == "am" and (_AM_CONTROLS | {"--continue", "--resolved", "-r"}) & set(words):
            return None
        files = tuple(w for w in words if not w.startswith("-"))
        return Application(files, not files, vcs.work_tree(argv))
    if program == "patch":
        words = list(argv[1:])
        folder, named = ".", []
        for index, word in enumerate(words):
            value = words[index + 1] if index + 1 < len(words) else ""
            if word in ("-d", "--directory"):
                folder = value
            elif word.startswith("--directory="):
                folder = word.split("=", 1)[1]
            elif word in ("-i", "--input"):
                named.append(value)
            elif word.startswith("--input="):
                named.append(word.split("=", 1)[1])
        operands = operands_of(words, _PATCH_VALUED)
        named.extend(operands[1:2])  # ``patch ORIGFILE PATCHFILE``
        return Application(tuple(named), not named, folder)
    return None


def changed_paths(text: str) -> list[str]:
    """The paths a patch's headers name, each as written and without git's ``a/``/``b/``
    prefix (``/dev/null`` left out)."""
    out: list[str] = []
    for match in _HEADERS.finditer(text):
        for name in match.groups():
            if not name or name == "/dev/null":
                continue
            name = name.strip().strip('"').split("\t", 1)[0]
            out.append(name)
            if name[:2] in ("a/", "b/"):
                out.append(name[2:])
    return out


def line(
    scan: CallScan,
    commands: Sequence[Sequence[str]],
    redirects: Sequence[Mapping[str, str]],
    text: str,
    tool: str,
) -> Refusal | None:
    """Each patch a line applies, judged by the files it changes."""
    for index, argv in enumerate(commands):
        applied = application(argv) if argv else None
        if applied is None:
            continue
        texts, unknown = [], []
        made = _made_by_line(commands, redirects)
        for name in applied.files:
            read = _read(scan, name)
            if read is not None:
                texts.append(read)
            elif name in made or os.path.basename(name) in made:
                unknown.append(name)  # written by the line before it is applied: unknown now
            elif os.path.basename(argv[0]) == "git":
                unknown.append(name)  # a change to the repository judged by where it lands
            # else: ``patch`` given a file that does not exist applies nothing and fails
        if applied.stdin:
            given = _stdin_text(scan, commands[:index], redirects, text, made)
            (texts.append(given) if given is not None else unknown.append("its standard input"))
        program = os.path.basename(argv[0])
        for patch in texts:
            for path in changed_paths(patch):
                joined = path if os.path.isabs(path) else os.path.join(applied.folder, path)
                found = scan.hit(joined, folders=False)
                if found is not None:
                    return refusal(found, f"{tool}: {program} would apply a patch that changes {path}")
        if unknown:
            held = _holds_protected(scan, applied.folder)
            if held is not None:
                return Refusal(
                    f"{RULE_PREFIX}/{held.kind}",
                    message(
                        f"{tool}: {program} would apply a patch not readable now ({unknown[0]}) in "
                        f"{applied.folder}, which holds {held.path}",
                        "a patch may change any file of the tree it is applied in",
                    ),
                )
    return None


def _made_by_line(commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]]) -> set[str]:
    """The files the line writes (redirections, ``tee``, the options that write such as ``curl
    -o``, copy destinations), by path and by base name."""
    made = list(streams.written_files(commands, redirects))
    for argv in commands:
        if not argv:
            continue
        made.extend(written_operands(argv).files)
        if os.path.basename(argv[0]) in ("cp", "mv", "install", "wget", "curl", "scp", "rsync"):
            made.extend(w for w in argv[1:] if not w.startswith("-"))
    return {*made, *(os.path.basename(name) for name in made)}


def _holds_protected(scan: CallScan, folder: str) -> Protected | None:
    """A protected entry or a client's hook file inside ``folder``."""
    for candidate in scan.candidates(folder)[:2]:
        found = scan.protection.holds_protected(candidate, scan.local) or next(
            (Protected(os.path.join(candidate, name), "harness-settings") for name in PROJECT_HOOK_FILES
             if os.path.lexists(os.path.join(candidate, name))),
            None,
        )
        if found is not None:
            return found
    return None


def _stdin_text(
    scan: CallScan,
    producers: Sequence[Sequence[str]],
    redirects: Sequence[Mapping[str, str]],
    text: str,
    made: set[str],
) -> str | None:
    """The patch a command reads on its standard input, when the line says what it is: a file
    redirected in (one that does not exist and that the line does not write: nothing, the shell
    does not run the command), a here-document or here-string, ``echo``/``printf`` output; else
    ``None``."""
    pieces: list[str] = []
    for redirect in redirects:
        if redirect.get("op") == "<":
            name = redirect["target"]
            read = _read(scan, name)
            if read is None and (name in made or os.path.basename(name) in made):
                return None
            pieces.append(read or "")
        elif redirect.get("op") == "<<<":
            pieces.append(redirect["target"])
    pieces.extend(streams.heredoc_bodies(text))
    if producers:
        if not all(argv and os.path.basename(argv[0]) in streams.NAME_PRINTERS for argv in producers):
            return None if not pieces else "\n".join(pieces)
        pieces.append(streams.producers_text(producers))
    return "\n".join(pieces)  # no producer: the tool's own (empty) standard input


def _read(scan: CallScan, name: str) -> str | None:
    """A patch file's text, or ``None`` when it cannot be read now."""
    for candidate in scan.candidates(name)[:1]:
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                return handle.read(MAX_PATCH_TEXT)
        except (OSError, ValueError):
            return None
    return None
