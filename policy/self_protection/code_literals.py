"""Inline code judged by its string literals when the interpreter reader cannot follow what it
computes: a protected path assembled from pieces (``Path.home().joinpath('.claude',
'settings.json')``, ``os.path.join(h, '.dsh-policy', 'gateway.yaml')``, ``home / '.codex'``), and
signals sent to processes the code picks by a name or command line that matches the gateway.

Only code that may act (it writes, deletes, signals: the caller decides) is judged here; the
literals are read in order, and each run of two to four of them is taken as the components of a
path, as every path-joining API of the languages puts them. A run whose components are the
trailing components of a protected path names it, whatever joins them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from typing import Final, Protocol

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy.self_protection import processes
from dsh_policy.policy.self_protection.locations import HARNESS_SUFFIXES, Protected

_LITERAL: Final[re.Pattern[str]] = lazy_compile(
    r"'([^'\n]{1,512})'|\"([^\"\n]{1,512})\"|`([^`\n]{1,512})`"
    # Perl's and Ruby's quote-like operators: ``q(...)``, ``qq{...}``, ``qx(...)``, ``%x(...)``.
    r"|(?<![\w$@%])(?:qq|qx|qw|q|%[qQxw]?)\(([^()\n]{1,512})\)"
    r"|(?<![\w$@%])(?:qq|qx|qw|q|%[qQxw]?)\{([^{}\n]{1,512})\}"
)
_COMPONENT: Final[re.Pattern[str]] = lazy_compile(r"^[^\s;|&<>$(){}]+$")
# Calls that send a signal to a process the code names by PID (Python, Node, Ruby, Perl, PHP).
SIGNALS: Final[re.Pattern[str]] = lazy_compile(
    r"\b(?:os\.kill|os\.killpg|killpg|pthread_kill|send_signal|terminate|posix_kill|Process\.kill"
    r"|process\.kill|kill)\s*\("
    # Perl's and Ruby's builtins without parentheses: ``kill 'TERM', @pids``, ``kill q(STOP), ...``,
    # ``kill 9 => $pid``, ``Process.kill :KILL, pid``.
    r"|\b(?:Process\.)?kill\s+(?:q\(|['\"]-?\w|-?[0-9A-Z]|\$|:\w)"
)
# Code that finds processes by what they are (the process table, a finder program or library).
FINDS: Final[re.Pattern[str]] = lazy_compile(
    r"/proc\b|process_iter|psutil|\bpgrep\b|\bpidof\b|\bps\b|ps-list|find-process|ProcessTable"
    r"|Sys::Process|sys-proctable"
)
_MAX_RUN: Final[int] = 4
# Folder names that are paths whenever they appear (dot folders of the gateway and the
# harnesses), unlike program names an argv list holds (``['codex', 'exec']`` is no path).
_OWN_FOLDERS: Final[frozenset[str]] = frozenset({".dsh", ".dsh-policy", ".codex", ".claude"})


class ProtectedSet(Protocol):
    @property
    def entries(self) -> tuple[Protected, ...]: ...
    @property
    def mentions(self) -> re.Pattern[str]: ...
    @property
    def secrets(self) -> tuple[Protected, ...]: ...


class CallScan(Protocol):
    @property
    def protection(self) -> ProtectedSet: ...
    @property
    def local(self) -> list[Protected]: ...
    def hit(self, word: str, *, folders: bool) -> Protected | None: ...


def literals(code: str) -> list[str]:
    """The string literals of ``code``, in order (a bytes literal's text included)."""
    return [next(group for group in match.groups() if group is not None) for match in _LITERAL.finditer(code)]


def joined_runs(texts: Sequence[str]) -> Iterator[str]:
    """Each run of two to :data:`_MAX_RUN` consecutive literals that could be path components,
    joined with ``/``."""
    for start in range(len(texts)):
        for size in range(2, _MAX_RUN + 1):
            run = texts[start : start + size]
            if len(run) < size or not all(_COMPONENT.match(part) for part in run):
                break
            yield posixpath.join(*run)  # an absolute piece starts the path again, as join does


def assembled_secret(scan: CallScan, codes: Sequence[str]) -> Protected | None:
    """A secret (the signing key) or the folder holding it, spelled by a run of the code's
    literals: what even code that only reads may not open."""
    for code in codes:
        for tail in joined_runs(literals(code)):
            parts = [part for part in tail.lower().split("/") if part]
            if len(parts) < 2:
                continue
            for secret in scan.protection.secrets:
                have = secret.path.lower().split("/")
                if have[-len(parts) :] == parts or have[-len(parts) - 1 : -1] == parts:
                    return secret
    return None


def assembled_path(scan: CallScan, codes: Sequence[str]) -> Protected | None:
    """The protected entry a path-like literal names (judged as any word is: links, globs,
    ``~``; a glob of a settings file such as ``~/.claude/settings*.json`` included), or whose
    trailing components a run of the code's literals spells."""
    entries = (*scan.protection.entries, *scan.local)
    for code in codes:
        for text in literals(code):
            if ("/" in text or text.startswith("~")) and _COMPONENT.match(text):
                found = scan.hit(text, folders=False)
                if found is not None:
                    return found
        for tail in joined_runs(literals(code)):
            if tail.startswith("/"):
                found = scan.hit(tail, folders=False)
                if found is not None:
                    return found
                continue
            found = _tail_entry(scan, entries, tail)
            if found is not None:
                return found
        # ``homedir() + '/.claude/settings.json'``, ``$ENV{HOME} . "/.codex/config.toml"``: a
        # literal appended to a computed value is a tail of the path, wherever that value points.
        for match in _APPENDED.finditer(code):
            found = _tail_entry(scan, entries, match.group(2))
            if found is not None:
                return found
    return None


# A literal starting with ``/`` appended to something computed, by each language's concatenation
# (``+``, Perl's and PHP's ``.``, ``<<``, pathlib's ``/``, template ``${...}/``).
_APPENDED: Final[re.Pattern[str]] = lazy_compile(
    r"""(?:[+.]|<<|[\w)\]}]\s*/)\s*(['"`])(/[^'"`\n]{2,512})\1"""
)


def _tail_entry(scan: CallScan, entries: Sequence[Protected], tail: str) -> Protected | None:
    """The protected entry whose trailing components ``tail`` (relative: ``.claude/settings.json``)
    spells, or a file inside a protected folder it starts with."""
    parts = [part for part in tail.lower().split("/") if part]
    if len(parts) < 2:
        return None
    for entry in entries:
        have = entry.path.lower().split("/")
        if have[-len(parts) :] == parts:
            return entry
        # inside a protected folder: the run starts with the folder's trailing components
        # (two of them, or its one name when that name is the gateway's or a harness's
        # own: ``'.codex', 'config.toml'``, not a venv's ``'.venv', 'bin'``)
        least = 1 if have[-1] in _OWN_FOLDERS else 2
        if entry.tree and any(have[-size:] == parts[:size] for size in range(least, len(parts))):
            return entry
    for suffix, _tree in HARNESS_SUFFIXES:
        if len(suffix) > 1 and tuple(parts[-len(suffix) :]) == suffix:
            return Protected(tail, "harness-settings")
    if scan.protection.mentions.search(tail):
        return Protected(tail, "harness-settings")
    return None


def signals_gateway(codes: Sequence[str], gateway: Sequence[processes.GatewayProcess]) -> str | None:
    """Code that sends signals to the gateway's PID, or that finds processes (:data:`FINDS`) and
    holds a literal matching the gateway the way a process finder matches (its name, its command
    line): the PID or the literal it picks them by."""
    pids = {str(process.pid) for process in gateway}
    for code in codes:
        if not SIGNALS.search(code):
            continue
        for number in re.findall(r"\b[0-9]{2,9}\b", code):
            if number in pids:
                return number
        if not FINDS.search(code):
            continue
        for literal in literals(code):
            # A finder's command line in a literal (``qx(pgrep -f NAME)``, ``execSync('pgrep
            # NAME')``) picks by its words: each is matched as the finder would.
            for text in (literal, *literal.split()) if " " in literal else (literal,):
                if len(text) < 3 or text.startswith(("/proc", "-")):
                    continue
                if processes.pattern_hits(text, gateway, True):
                    return text
    return None
