"""Self-protection: the agent a gateway guards may not switch that gateway off.

A deployment knows what keeps it in force: the packs it loaded, its deployment file, its audit log,
its signing key, the hook settings of the harnesses it guards and the installed package itself.
:func:`protection_for` derives that set from the deployment, and :meth:`SelfProtection.check` is a
hard guard-level invariant over every tool call: writes, edits, patches, moves, deletes,
truncations, permission changes and redirections into a protected path are refused, through the
shell (read with ``policy.cel.shell``, so ``sudo``, ``bash -c``, quoting and variables are seen
through), the file tools, ``apply_patch`` and any other tool whose arguments name a protected path;
so are uninstalling or shadowing the gateway (``pip uninstall dsh-policy``, a ``sitecustomize.py``
or ``.pth`` shim, an exported ``PYTHONPATH``) and starting a harness with its hooks disabled.
Reading packs and settings stays allowed; reading the signing key does not.

It is not a rule in a pack, so no pack edit, ``shadow: true`` or mode can weaken it: only the
deployment file (``self_protection: {enabled: false}``, a file the agent's tools are denied) or the
operator's own command line turns it off, and the digest and audit records then say so.

What it cannot see is stated in the README's threat model: code an interpreter runs from a file,
encoded paths, and anything done with the same OS user outside the guarded tools.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from dsh_policy.policy.cel.shell import ShellLineTooComplexError, shell_commands, shell_redirects

Kind = Literal[
    "pack",
    "deployment",
    "audit-log",
    "signing-key",
    "harness-settings",
    "gateway-package",
    "gateway-runtime",
    "operator",
]

RULE_PREFIX: Final[str] = "self-protection"

_KIND_TEXT: Final[Mapping[str, str]] = {
    "pack": "a rule pack this gateway enforces",
    "deployment": "this gateway's deployment file",
    "audit-log": "this gateway's audit log",
    "signing-key": "the audit log's signing key",
    "harness-settings": "the harness hook settings that run this gateway",
    "gateway-package": "the installed gateway itself",
    "gateway-runtime": "the resident gateway's runtime folder (its sockets, locks and token)",
    "operator": "a path the operator protected",
}


@dataclass(frozen=True, slots=True)
class Protected:
    """One protected file or folder. ``tree``: everything inside is protected too; ``prefix``:
    every sibling whose name starts with this one's (an audit log's segments, lock and anchor);
    ``secret``: reading is refused as well."""

    path: str
    kind: Kind
    tree: bool = False
    prefix: bool = False
    secret: bool = False

    def covers(self, path: str) -> bool:
        """Whether ``path`` (absolute, normalised) is this entry or inside it."""
        if path == self.path:
            return True
        if self.tree and path.startswith(self.path.rstrip("/") + "/"):
            return True
        if self.prefix:
            head, name = os.path.split(path)
            return head == os.path.dirname(self.path) and name.startswith(os.path.basename(self.path))
        return False


# Harness files protected wherever they are (any project, any depth): a trailing run of path
# components, and whether everything under it counts. Claude Code: project and local settings and
# hook scripts; Codex: the whole project/user ``.codex`` folder (config.toml, hooks.json,
# requirements). Managed and user-level locations are added as absolute paths.
_HARNESS_SUFFIXES: Final[tuple[tuple[tuple[str, ...], bool], ...]] = (
    ((".claude", "settings.json"), False),
    ((".claude", "settings.local.json"), False),
    ((".claude", "hooks"), True),
    ((".codex",), True),
)

# Names that shadow the gateway wherever they are written: an interpreter start-up hook, a path
# file, a package or program of our name placed earlier on the path.
_SHADOW_NAMES: Final[frozenset[str]] = frozenset(
    {"sitecustomize.py", "usercustomize.py", "dsh_policy", "dsh-policy"}
)
_SHADOW_SUFFIXES: Final[tuple[str, ...]] = (".pth",)
_SHADOW_ENV: Final[re.Pattern[str]] = re.compile(
    r"\b(?:PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PYTHONUSERBASE|PYTHONEXECUTABLE|PYTHONSAFEPATH"
    r"|BASH_ENV|ENV|LD_PRELOAD|CLAUDE_CONFIG_DIR|CODEX_HOME)="
)
_SHELL_STARTUP: Final[frozenset[str]] = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        "config.fish",
        "environment",
        ".envrc",
        ".pam_environment",
    }
)

# Programs that only read the files they name (with the options that would make them write
# excluded below). Everything else that names a protected path is refused.
_READERS: Final[frozenset[str]] = frozenset(
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
    }
)
# Readers that can also write files named in their script or expression (sed ``w``, awk
# ``print > f``, find ``-fprint``): a protected path *mentioned* inside their program is refused.
_SCRIPTED_READERS: Final[frozenset[str]] = frozenset({"sed", "awk", "gawk", "mawk", "nawk", "find"})
_GIT_READERS: Final[frozenset[str]] = frozenset(
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
_DSH_READERS: Final[frozenset[str]] = frozenset(
    {"check", "explain", "verify", "policy-log", "--help", "-h", "--version"}
)
# Programs that act on whole folders: naming a folder that holds a protected path is refused too
# (``rm -rf .dsh``, ``mv .claude x``, ``chmod -R 000 .dsh``, ``find .dsh -delete``).
_FOLDER_ACTORS: Final[frozenset[str]] = frozenset(
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
_COPIERS: Final[frozenset[str]] = frozenset({"cp", "rsync", "scp", "install"})
_SECRET_OK: Final[frozenset[str]] = frozenset(
    {"ls", "ll", "la", "dir", "stat", "test", "[", "[[", "cd", "pushd"}
)
_INTERPRETER_PIP: Final[re.Pattern[str]] = re.compile(r"python[0-9.]*|pypy[0-9.]*")
_GLOB_CHARS: Final[frozenset[str]] = frozenset("*?[")
_WRITE_REDIRECTS: Final[frozenset[str]] = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_READ_REDIRECTS: Final[frozenset[str]] = frozenset({"<", "<&"})
_OUR_NAMES: Final[frozenset[str]] = frozenset({"dsh-policy", "dsh_policy", "dsh.policy"})
#: Most path-like strings examined in one call's arguments (beyond it, the call is refused).
MAX_CHECKED_WORDS: Final[int] = 20_000
_KNOWN_READ_TOOLS: Final[frozenset[str]] = frozenset(
    {
        "read_file",
        "list_dir",
        "Glob",
        "Grep",
        "LS",
        "web_fetch",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "Task",
        "ExitPlanMode",
        "BashOutput",
        "KillShell",
        "SlashCommand",
        "AskUserQuestion",
    }
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call was refused: the pseudo-rule id (``self-protection/<kind>``) and the message."""

    rule: str
    message: str


@dataclass(frozen=True)
class SelfProtection:
    """The protected set of one deployment and the check every tool call passes (guard level)."""

    enabled: bool
    entries: tuple[Protected, ...]
    home: str = field(default_factory=lambda: os.path.expanduser("~"))
    project_dirs: tuple[str, ...] = ()

    # -- what is protected --------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """What the audit log and the policy digest record: on/off and every protected path."""
        return {
            "enabled": self.enabled,
            "paths": sorted(
                {
                    f"{entry.kind}:{entry.path}{'/' if entry.tree else ''}{'*' if entry.prefix else ''}"
                    for entry in self.entries
                }
            ),
        }

    def protected(self, path: str, extra: Sequence[Protected] = ()) -> Protected | None:
        """The entry covering absolute, normalised ``path``: a deployment path, a harness file at
        any depth, or a name that would shadow the gateway."""
        for entry in (*self.entries, *extra):
            if entry.covers(path):
                return entry
        parts = path.split("/")
        for suffix, tree in _HARNESS_SUFFIXES:
            if _has_suffix(parts, suffix, tree):
                return Protected(path, "harness-settings")
        name = parts[-1]
        if name in _SHADOW_NAMES or name.endswith(_SHADOW_SUFFIXES) or "dsh_policy" in parts[:-1]:
            return Protected(path, "gateway-package")
        return None

    def holds_protected(self, folder: str, extra: Sequence[Protected] = ()) -> Protected | None:
        """An entry inside ``folder`` (so acting on the whole folder acts on it)."""
        root = "/" if folder == "/" else folder.rstrip("/") + "/"
        for entry in (*self.entries, *extra):
            if entry.path.startswith(root):
                return entry
        if os.path.basename(folder.rstrip("/")) in (".claude", ".codex"):
            return Protected(folder, "harness-settings", tree=True)
        return None

    @cached_property
    def _names(self) -> frozenset[str]:
        """Every path component of every entry: a word whose last component is not one of these
        (nor a glob, ``.``, ``..`` or ``~``) cannot name a protected path or a folder holding one."""
        names: set[str] = {
            ".",
            "..",
            "~",
            "",
            ".claude",
            ".codex",
            "settings.json",
            "settings.local.json",
            "hooks",
            *_SHADOW_NAMES,
        }
        for entry in self.entries:
            names.update(entry.path.split("/"))
        return frozenset(names)

    @cached_property
    def _prefixes(self) -> tuple[str, ...]:
        return tuple(os.path.basename(entry.path) for entry in self.entries if entry.prefix)

    @cached_property
    def _mentions(self) -> re.Pattern[str]:
        """Text that names a protected path inside a longer string (``python -c "open('.dsh/x')"``)."""
        forms: set[str] = {
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/hooks",
            ".codex/",
            "sitecustomize",
            "usercustomize",
            "claude-code/managed-settings",
            "dsh_policy/",
            "dsh_policy.__file__",
            "which dsh-policy",
            "command -v dsh-policy",
            "type -p dsh-policy",
            "whereis dsh-policy",
        }
        for entry in self.entries:
            forms.add(entry.path)
            parts = entry.path.split("/")
            if len(parts) >= 3 and parts[-2].startswith("."):
                forms.add("/".join(parts[-2:]))
            if entry.path.startswith(self.home + "/"):
                forms.add("~/" + entry.path[len(self.home) + 1 :])
            for project in self.project_dirs:
                if entry.path.startswith(project.rstrip("/") + "/"):
                    forms.add(entry.path[len(project.rstrip("/")) + 1 :])
            if entry.secret:
                forms.add(parts[-1])
        forms.discard("")
        return re.compile("|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True)))

    @cached_property
    def _secrets(self) -> tuple[Protected, ...]:
        return tuple(entry for entry in self.entries if entry.secret)

    # -- the check ----------------------------------------------------------------------------

    def check(self, tool: str, args: Any, cwd: str | None = None) -> Refusal | None:
        """The refusal for one call, or ``None``. Never raises for any input: the caller still
        treats an exception as a refusal (guards fail closed)."""
        if not self.enabled:
            return None
        base = os.path.normpath(cwd) if cwd and os.path.isabs(cwd) else os.getcwd()
        scan = _CallScan(self, base)
        if tool == "shell" and isinstance(args, Mapping) and isinstance(args.get("command"), str):
            return scan.shell(args["command"], tool)
        if tool in ("write_file", "edit_file") and isinstance(args, Mapping):
            written = args.get("content") if tool == "write_file" else args.get("new_string")
            return scan.path_write(
                args.get("path"), tool, "write", written if isinstance(written, str) else ""
            )
        if tool == "apply_patch" and isinstance(args, Mapping):
            paths = args.get("paths")
            for path in paths if isinstance(paths, list | tuple) else ():
                refusal = scan.path_write(path, tool, "patch")
                if refusal is not None:
                    return refusal
            return None
        if tool in _KNOWN_READ_TOOLS:
            return scan.reads(args, tool)
        return scan.any_tool(args, tool)


def _has_suffix(parts: list[str], suffix: tuple[str, ...], tree: bool) -> bool:
    if not tree:
        return tuple(parts[-len(suffix) :]) == suffix
    for index in range(len(parts) - len(suffix) + 1):
        if tuple(parts[index : index + len(suffix)]) == suffix:
            return True
    return False


class _CallScan:
    """One call's check: resolves the words it names against its working directory."""

    def __init__(self, protection: SelfProtection, cwd: str) -> None:
        self.protection = protection
        self.cwd = cwd
        self.bases = [cwd]
        self.examined = 0
        # The harness files of the working directory's project that exist: a glob or a folder
        # operation there (``rm -rf .``, ``mv .c* /tmp``) reaches them.
        self.local: list[Protected] = [
            Protected(path, "harness-settings", tree=tree)
            for path, tree in (
                (os.path.join(cwd, ".claude", "settings.json"), False),
                (os.path.join(cwd, ".claude", "settings.local.json"), False),
                (os.path.join(cwd, ".claude", "hooks"), True),
                (os.path.join(cwd, ".codex"), True),
            )
            if os.path.lexists(path)
        ]

    # -- paths ---------------------------------------------------------------------------------

    def _expand(self, word: str) -> str:
        home = self.protection.home
        if word == "~" or word.startswith("~/"):
            word = home + word[1:]
        if "$" not in word:
            return word
        known = (
            ("CLAUDE_PROJECT_DIR", self._project()),
            ("CLAUDE_CONFIG_DIR", os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")),
            ("CODEX_HOME", os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")),
            ("OLDPWD", self.cwd),
            ("HOME", home),
            ("PWD", self.cwd),
            *(
                (name, os.environ[name])
                for name in ("DSH_POLICY_RUNTIME_DIR", "XDG_RUNTIME_DIR", "TMPDIR")
                if os.environ.get(name)
            ),
        )
        for name, value in known:
            word = word.replace("${" + name + "}", value).replace("$" + name, value)
        return word

    def _project(self) -> str:
        dirs = self.protection.project_dirs
        return os.environ.get("CLAUDE_PROJECT_DIR") or (dirs[0] if dirs else self.cwd)

    def candidates(self, word: str) -> list[str]:
        """Absolute, normalised paths ``word`` may name (one per base for a relative word), plus
        where an existing symbolic link leads."""
        word = self._expand(word)
        if not word or "\n" in word or "\0" in word or len(word) > 4096:
            return []
        bases = [""] if word.startswith("/") else self.bases
        out: list[str] = []
        for base in bases:
            path = os.path.normpath(os.path.join(base, word))
            out.append(path)
            if not _GLOB_CHARS.intersection(path) and os.path.islink(path):
                out.append(os.path.realpath(path))
        return out

    def _plausible(self, word: str) -> bool:
        """Cheap pre-filter: could ``word`` name a protected path or a folder holding one?"""
        if _GLOB_CHARS.intersection(word) or "$" in word or word.startswith("~"):
            return True
        last = word.rstrip("/").rsplit("/", 1)[-1]
        protection = self.protection
        return (
            last in protection._names
            or last.endswith(_SHADOW_SUFFIXES)
            or last.startswith(protection._prefixes)
        )

    def hit(self, word: str, *, folders: bool) -> Protected | None:
        """The protected entry ``word`` names (or, with ``folders``, a folder holding one)."""
        self.examined += 1
        if not self._plausible(word):
            return None
        for path in self.candidates(word):
            if _GLOB_CHARS.intersection(path):
                found = self._glob_hit(path, folders=folders)
            else:
                found = self.protection.protected(path, self.local)
                if found is None and folders:
                    found = self.protection.holds_protected(path, self.local)
            if found is not None:
                return found
        return None

    def _glob_hit(self, pattern: str, *, folders: bool) -> Protected | None:
        """A glob matches an entry (or a folder holding one) component by component, with the
        shell's rule that ``*`` does not match a leading dot."""
        wanted = pattern.split("/")
        for entry in (*self.protection.entries, *self.local):
            parts = entry.path.split("/")
            if len(parts) < len(wanted) or (len(parts) > len(wanted) and not folders and not entry.tree):
                continue
            if _glob_matches(wanted, parts[: len(wanted)]):
                return entry
        for suffix, _tree in _HARNESS_SUFFIXES:  # ``~/x/.claude/settings.*`` in any project
            tail = wanted[-len(suffix) :]
            if len(tail) == len(suffix) and _glob_matches(tail, suffix):
                return Protected(pattern, "harness-settings")
        return None

    # -- tools ---------------------------------------------------------------------------------

    def path_write(self, path: Any, tool: str, verb: str, content: str = "") -> Refusal | None:
        if not isinstance(path, str):
            return None
        if os.path.basename(path) in _SHELL_STARTUP and _SHADOW_ENV.search(content):
            return Refusal(
                f"{RULE_PREFIX}/gateway-package",
                _message(
                    f"{tool} would set an interpreter variable in the start-up file {path}",
                    _KIND_TEXT["gateway-package"],
                ),
            )
        for candidate in self.candidates(path) if not _GLOB_CHARS.intersection(path) else [path]:
            found = self.protection.protected(candidate, self.local) or self._same_file(candidate)
            if found is not None:
                return _refusal(found, f"{tool} would {verb} {path}")
        return None

    def _same_file(self, path: str) -> Protected | None:
        """A hard link to a protected file is the file: compare device and inode."""
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return None
        for entry in self.protection.entries:
            try:
                other = os.stat(entry.path)
            except (OSError, ValueError):
                continue
            if (info.st_dev, info.st_ino) == (other.st_dev, other.st_ino):
                return entry
        return None

    def reads(self, args: Any, tool: str) -> Refusal | None:
        """Reading tools may read everything but a secret (and a secret's own folder)."""
        if not self.protection._secrets:
            return None
        for text in _strings(args):
            for candidate in self.candidates(text):
                for secret in self.protection._secrets:
                    if secret.covers(candidate) or candidate == os.path.dirname(secret.path):
                        return _refusal(secret, f"{tool} would read {text}")
        return None

    def any_tool(self, args: Any, tool: str) -> Refusal | None:
        """A tool we do not know (an MCP server's, say) is taken to write what it names."""
        for count, text in enumerate(_strings(args)):
            if count > MAX_CHECKED_WORDS:
                return Refusal(f"{RULE_PREFIX}/limits", _limit_message(tool))
            found = self.hit(text, folders=False)
            if found is not None:
                return _refusal(found, f"{tool} names {text}")
        return None

    # -- the shell -----------------------------------------------------------------------------

    def shell(self, line: str, tool: str) -> Refusal | None:
        try:
            commands = shell_commands(line)
            redirects = shell_redirects(line)
        except ShellLineTooComplexError as error:
            return Refusal(
                f"{RULE_PREFIX}/limits",
                f"dsh-policy self-protection could not read this line ({error}); refusing",
            )
        except (TypeError, RecursionError, MemoryError) as error:
            return Refusal(
                f"{RULE_PREFIX}/limits",
                f"dsh-policy self-protection could not read this line ({type(error).__name__}); refusing",
            )
        for argv in commands:
            if argv and argv[0] in ("cd", "pushd") and len(argv) > 1:
                self.bases.extend(self.candidates(argv[-1])[:1])
        for redirect in redirects:
            refusal = self._redirect(redirect, tool)
            if refusal is not None:
                return refusal
        if _SHADOW_ENV.search(line):
            refusal = self._startup_write(commands, redirects, tool)
            if refusal is not None:
                return refusal
        mentioned = self.protection._mentions.search(self._expand(line)) is not None
        heredoc = any(redirect["op"] in ("<<", "<<-", "<<<") for redirect in redirects)
        for argv in commands:
            refusal = self._command(argv, tool, mentioned)
            if refusal is not None:
                return refusal
            if self.examined > MAX_CHECKED_WORDS:
                return Refusal(f"{RULE_PREFIX}/limits", _limit_message(tool))
        # A here-document feeds a program text we do not parse (``python - <<EOF``): a protected
        # path named in it is refused unless every program only reads.
        if mentioned and heredoc and any(argv and not self._reader(argv) for argv in commands):
            match = self.protection._mentions.search(self._expand(line))
            named = match.group(0) if match else "a protected path"
            return Refusal(
                f"{RULE_PREFIX}/{self._kind_of(match.group(0) if match else '')}",
                _message(f"{tool} feeds a script that names {named}", "a protected path"),
            )
        return None

    def _startup_write(
        self, commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]], tool: str
    ) -> Refusal | None:
        """A line that sets ``PYTHONPATH`` (or a like variable) and writes a shell start-up file:
        the next harness started from that shell would run a shadowed gateway."""
        targets = [r["target"] for r in redirects if r["op"] in _WRITE_REDIRECTS]
        targets += [word for argv in commands if argv and not self._reader(argv) for word in argv[1:]]
        for target in targets:
            if os.path.basename(self._expand(target)) in _SHELL_STARTUP:
                return Refusal(
                    f"{RULE_PREFIX}/gateway-package",
                    _message(
                        f"{tool} would set an interpreter variable in the start-up file {target}",
                        _KIND_TEXT["gateway-package"],
                    ),
                )
        return None

    def _kind_of(self, text: str) -> str:
        for entry in self.protection.entries:
            if text and (entry.path.endswith(text) or text.endswith(os.path.basename(entry.path))):
                return entry.kind
        return "harness-settings"

    def _redirect(self, redirect: Mapping[str, str], tool: str) -> Refusal | None:
        op, target = redirect["op"], redirect["target"]
        if op in _WRITE_REDIRECTS and not (op == ">&" and (target.isdigit() or target == "-")):
            found = self.hit(target, folders=False)
            if found is None and self.protection._mentions.search(self._expand(target)):
                found = self._mention_entry(target)
            if found is None:
                for candidate in self.candidates(target):
                    found = self._same_file(candidate)
                    if found is not None:
                        break
            if found is not None:
                return _refusal(found, f"{tool} redirects output ({op}) into {target}")
        elif op in _READ_REDIRECTS and self.protection._secrets:
            found = self.hit(target, folders=False)
            if found is not None and found.secret:
                return _refusal(found, f"{tool} reads {target}")
        return None

    def _mention_entry(self, text: str) -> Protected:
        match = self.protection._mentions.search(self._expand(text))
        shown = match.group(0) if match else text
        for entry in self.protection.entries:
            if entry.path.endswith(shown.lstrip("~")) or shown.endswith(os.path.basename(entry.path)):
                return entry
        return Protected(shown, "harness-settings")

    def _reader(self, argv: Sequence[str]) -> bool:
        """Whether a command only reads the files it names."""
        program = argv[0]
        if program not in _READERS:
            return False
        options = [word for word in argv[1:] if word.startswith("-")]
        if program == "sed":
            return not any(
                o.startswith("--in-place") or (o.startswith("-") and not o.startswith("--") and "i" in o)
                for o in options
            )
        if program == "sort":
            return not any(o.startswith(("-o", "--output")) for o in options)
        if program == "yq":
            return not any(o in ("-i", "--inplace") or o.startswith("--inplace") for o in options)
        if program == "find":
            return not any(
                word
                in (
                    "-delete",
                    "-fprint",
                    "-fprint0",
                    "-fprintf",
                    "-fls",
                    "-exec",
                    "-execdir",
                    "-ok",
                    "-okdir",
                )
                for word in argv[1:]
            )
        if program == "git":
            sub = _git_subcommand(argv)
            return (
                sub in _GIT_READERS
                or (sub == "branch" and len(argv) <= 3)
                or (sub == "remote" and "-v" in argv)
            )
        if program == "dsh-policy":
            return len(argv) > 1 and argv[1] in _DSH_READERS
        if program in ("env", "command", "printenv"):
            return True  # wrappers: the wrapped command follows as its own argv
        return True

    def _command(self, argv: list[str], tool: str, mentioned: bool) -> Refusal | None:
        if not argv:
            return None
        program = argv[0]
        special = self._special(argv, tool)
        if special is not None:
            return special
        words = argv[1:]
        if self._reader(argv):
            return self._reader_words(argv, tool, mentioned)
        written = words
        if program in _COPIERS or program == "mv":
            return self._copy(argv, tool, mentioned)
        if program == "find":
            return self._find(argv)
        folders = program in _FOLDER_ACTORS
        if program == "git":
            folders = _git_subcommand(argv) in ("clean", "rm", "mv")
            written = [word for word in words if word != _git_subcommand(argv)]
            if _git_subcommand(argv) == "clean" and not [w for w in written if not w.startswith("-")]:
                written = [*written, "."]
        for word in written:
            if word.startswith("-") and "=" not in word:
                continue
            value = (
                word.split("=", 1)[1] if word.startswith("-") or (program == "dd" and "=" in word) else word
            )
            found = self.hit(value, folders=folders)
            if found is not None:
                return _refusal(found, f"{program} would change {value}")
        if mentioned:
            for word in written:
                match = self.protection._mentions.search(self._expand(word))
                if match is not None:
                    return _refusal(self._mention_entry(word), f"{program} is given {match.group(0)}")
        return None

    def _copy(self, argv: list[str], tool: str, mentioned: bool) -> Refusal | None:
        """``cp``/``rsync``/``scp``/``install``/``mv``: what each writes is the destination, or the
        destination folder joined with each source's name (``cp a.py .`` writes ``./a.py``, not
        the whole folder); ``mv`` also takes its sources away; copies read their sources."""
        program, words = argv[0], argv[1:]
        destinations = _copy_destinations(words)
        sources = [w for w in words if not w.startswith("-") and w not in destinations]
        recursive = (
            any(
                w.startswith("-") and not w.startswith("--") and ("r" in w or "R" in w or "a" in w)
                for w in words
            )
            or any(w in ("--recursive", "--archive") for w in words)
            or program in ("mv", "rsync")
        )
        for source in sources:
            found = self.hit(source, folders=program == "mv")
            if found is not None and (program == "mv" or found.secret):
                return _refusal(found, f"{program} would {'move' if program == 'mv' else 'copy'} {source}")
            if program != "mv" and self._holds_secret(source):
                return _refusal(self.protection._secrets[0], f"{program} would copy the folder of {source}")
        for destination in destinations:
            for target, tree in self._copy_targets(destination, sources, recursive):
                found = self.hit(target, folders=tree)
                if found is not None:
                    return _refusal(found, f"{program} would write {target}")
        if mentioned:
            for word in destinations:
                match = self.protection._mentions.search(self._expand(word))
                if match is not None:
                    return _refusal(self._mention_entry(word), f"{program} is given {match.group(0)}")
        return None

    def _copy_targets(
        self, destination: str, sources: Sequence[str], recursive: bool
    ) -> Iterator[tuple[str, bool]]:
        """What a copy into ``destination`` writes, and whether as a whole tree."""
        into_folder = destination.endswith("/") or any(
            os.path.isdir(c) for c in self.candidates(destination)[:1]
        )
        if not into_folder or not sources:
            yield destination, recursive
            return
        for source in sources:
            if source.endswith(("/", "/.")):  # rsync ``src/``, ``cp -r src/.``: the contents
                yield destination, True
            else:
                yield os.path.join(destination, os.path.basename(source.rstrip("/"))), recursive

    def _find(self, argv: list[str]) -> Refusal | None:
        """``find`` that deletes or runs commands: refused when one of its start folders holds a
        protected path its ``-name``/``-path`` tests could select (``find . -name '*.pyc'
        -delete`` stays allowed)."""
        words = argv[1:]
        names = [
            words[i + 1]
            for i, w in enumerate(words[:-1])
            if w in ("-name", "-iname", "-path", "-ipath", "-wholename", "-regex")
        ]
        starts = [
            w
            for w in words[
                : next((i for i, w in enumerate(words) if w.startswith(("-", "(", "!"))), len(words))
            ]
        ] or ["."]
        for start in starts:
            found = self.hit(start, folders=True)
            if found is None:
                continue
            candidates = [e for e in (*self.protection.entries, *self.local) if self._under(e.path, start)]
            if (
                not names
                or not candidates
                or any(
                    fnmatch.fnmatch(os.path.basename(e.path), n)
                    or fnmatch.fnmatch(e.path, n)
                    or n.startswith("-regex")
                    for e in candidates
                    for n in names
                )
            ):
                return _refusal(found, f"find would delete or run commands on {start}")
        return None

    def _under(self, path: str, start: str) -> bool:
        return any(path == c or path.startswith(c.rstrip("/") + "/") for c in self.candidates(start))

    def _holds_secret(self, word: str) -> bool:
        for candidate in self.candidates(word):
            for secret in self.protection._secrets:
                folder = os.path.dirname(secret.path)
                if candidate == folder and folder not in (self.cwd, self.protection.home, "/"):
                    return True
        return False

    def _reader_words(self, argv: list[str], tool: str, mentioned: bool) -> Refusal | None:
        program = argv[0]
        secrets = self.protection._secrets
        for word in argv[1:]:
            if secrets and program not in _SECRET_OK:
                found = self.hit(word, folders=False)
                if found is not None and found.secret:
                    return _refusal(found, f"{program} would read {word}")
                if self._holds_secret(word):
                    return _refusal(secrets[0], f"{program} would read the folder holding {word}")
                if mentioned and any(
                    s.path in self._expand(word) or os.path.basename(s.path) in word for s in secrets
                ):
                    return _refusal(secrets[0], f"{program} is given {word}")
        if mentioned and program in _SCRIPTED_READERS:
            for word in argv[1:]:
                match = self.protection._mentions.search(self._expand(word))
                if match is not None and self.hit(word, folders=False) is None:
                    return _refusal(self._mention_entry(word), f"{program} script names {match.group(0)}")
        return None

    def _special(self, argv: list[str], tool: str) -> Refusal | None:
        """Uninstalling or shadowing the gateway, and harnesses started with their hooks off."""
        program = argv[0]
        words = argv[1:]
        if _INTERPRETER_PIP.fullmatch(program) and words[:2] == ["-m", "pip"]:
            program, words = "pip", words[2:]
        if program in ("uv", "pipx", "pdm", "poetry", "conda", "mamba", "micromamba", "pipenv", "rye") or (
            program == "pip" or re.fullmatch(r"pip[0-9.]*", program)
        ):
            names = {_normal_name(word) for word in words}
            acts = {"uninstall", "remove", "install", "reinstall", "rm", "upgrade", "sync", "update", "add"}
            if names & _OUR_NAMES and acts & set(words):
                return Refusal(
                    f"{RULE_PREFIX}/gateway-package",
                    _message(
                        f"{tool} would change the installed dsh-policy ({' '.join(argv[:4])})",
                        _KIND_TEXT["gateway-package"],
                    ),
                )
        if program in ("export", "declare", "typeset", "setenv", "set", "alias", "function", "unalias"):
            for word in words:
                if _SHADOW_ENV.match(word) or word.split("=", 1)[0] in ("dsh-policy", "dsh_policy"):
                    return Refusal(
                        f"{RULE_PREFIX}/gateway-package",
                        _message(
                            f"{tool} would shadow the gateway ({program} {word.split('=', 1)[0]})",
                            _KIND_TEXT["gateway-package"],
                        ),
                    )
        if program == "unset" and {"PATH"} & set(words):
            return Refusal(
                f"{RULE_PREFIX}/gateway-package",
                _message(f"{tool} would unset PATH", _KIND_TEXT["gateway-package"]),
            )
        if program in ("claude", "codex"):
            joined = " ".join(words)
            if (
                "disableAllHooks" in joined
                or "--setting-sources" in joined
                or "--settings" in joined
                or (
                    program == "claude"
                    and words[:1] == ["config"]
                    and words[1:2] in (["set"], ["add"], ["remove"])
                )
                or "--dangerously" in joined
                or re.search(r"(?:^|\s)(?:-c|--config)\s+\S*hooks", joined)
                or re.search(r"--disable\s+\S*hooks", joined)
            ):
                return Refusal(
                    f"{RULE_PREFIX}/harness-settings",
                    _message(
                        f"{tool} would start {program} without its hooks", _KIND_TEXT["harness-settings"]
                    ),
                )
        if program == "dsh-policy" and words[:1] == ["keygen"]:
            return Refusal(
                f"{RULE_PREFIX}/signing-key",
                _message(f"{tool} would make audit signing keys", _KIND_TEXT["signing-key"]),
            )
        if program == "dsh-policy" and words[:1] == ["hook"]:
            return Refusal(
                f"{RULE_PREFIX}/audit-log",
                _message(
                    f"{tool} would run the gateway's own hook (it writes the audit log)",
                    _KIND_TEXT["audit-log"],
                ),
            )
        return None


def _glob_matches(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    for want, have in zip(pattern, parts, strict=True):
        if have.startswith(".") and not want.startswith(".") and want != have:
            return False
        if not fnmatch.fnmatchcase(have, want):
            return False
    return True


def _git_subcommand(argv: Sequence[str]) -> str:
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    return argv[index] if index < len(argv) else ""


def _copy_destinations(words: Sequence[str]) -> list[str]:
    """The operands ``cp``/``rsync``/``install`` write: ``-t DIR`` or the last operand."""
    for index, word in enumerate(words):
        if word in ("-t", "--target-directory") and index + 1 < len(words):
            return [words[index + 1]]
        if word.startswith("--target-directory="):
            return [word.split("=", 1)[1]]
    operands = [word for word in words if not word.startswith("-")]
    return operands[-1:]


def _normal_name(word: str) -> str:
    """A package requirement's name, PEP 503-normalised (``DSH_Policy==0.1`` is ``dsh-policy``)."""
    name = re.split(r"[\[=<>!~;@ ]", word.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (iteratively: arguments may nest deeply)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def _message(action: str, what: str) -> str:
    return (
        f"dsh-policy self-protection: {action} ({what}). The agent may not change the gateway "
        "that guards it; an operator can, from outside the agent's session."
    )


def _refusal(entry: Protected, action: str) -> Refusal:
    return Refusal(f"{RULE_PREFIX}/{entry.kind}", _message(action, f"{entry.path}: {_KIND_TEXT[entry.kind]}"))


def _limit_message(tool: str) -> str:
    return (
        f"dsh-policy self-protection: {tool} names more than {MAX_CHECKED_WORDS} paths, "
        "too many to check; refusing"
    )


# --- deriving the protected set -------------------------------------------------------------------


def _absolute(path: str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def _harness_locations(home: str) -> Iterator[Protected]:
    """User-level and managed settings of Claude Code and Codex (project-level ones are matched by
    name at any depth, see :data:`_HARNESS_SUFFIXES`)."""
    claude_home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    for name in ("settings.json", "settings.local.json"):
        yield Protected(_absolute(os.path.join(claude_home, name)), "harness-settings")
    yield Protected(_absolute(os.path.join(claude_home, "hooks")), "harness-settings", tree=True)
    yield Protected(_absolute(os.path.join(home, ".claude.json")), "harness-settings")
    yield Protected(
        _absolute(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")), "harness-settings", tree=True
    )
    for managed in (
        "/etc/claude-code",
        "/Library/Application Support/ClaudeCode",
        "/etc/codex",
        "C:/ProgramData/ClaudeCode",
        "C:/Program Files/ClaudeCode",
    ):
        yield Protected(managed, "harness-settings", tree=True)


def _gateway_runtime_locations() -> Iterator[Protected]:
    """Every folder the resident gateway may use here (reading too: the HTTP token is there).
    Whoever can write in it can stand in for the gateway: remove its socket, bind another that
    answers "allow" to every hook (the hook trusts a socket of its own user)."""
    from dsh_policy.policy.runtime.gateway_folders import runtime_dir_candidates  # stdlib only

    for folder in runtime_dir_candidates():
        yield Protected(_absolute(folder), "gateway-runtime", tree=True, secret=True)


def _package_locations() -> Iterator[Protected]:
    """The gateway's own code, its install records and its command (``pip uninstall`` is refused
    separately): whoever rewrites these rewrites the gateway."""
    import dsh_policy

    package = os.path.dirname(os.path.abspath(dsh_policy.__file__))
    yield Protected(package, "gateway-package", tree=True)
    sites = {sysconfig.get_paths().get(key) for key in ("purelib", "platlib")}
    for site in filter(None, sites):
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for name in names:
            lowered = name.lower().replace("-", "_")
            if lowered.startswith(("dsh_policy", "__editable__.dsh_policy", "__editable___dsh_policy")):
                yield Protected(os.path.join(site, name), "gateway-package", tree=True)
    scripts = sysconfig.get_paths().get("scripts")
    for folder in filter(None, {scripts, os.path.dirname(sys.executable)}):
        yield Protected(os.path.join(folder, "dsh-policy"), "gateway-package")
    yield Protected(os.path.realpath(sys.executable), "gateway-package")


def protection_for(
    *,
    packs: Iterable[str] = (),
    deployment: str | None = None,
    audit_log: str | None = None,
    signing_key: str | None = None,
    extra: Iterable[str] = (),
    extra_secret: Iterable[str] = (),
    enabled: bool = True,
    home: str | None = None,
    include_package: bool = True,
) -> SelfProtection:
    """The protected set of a deployment: its packs, deployment file, audit log (every file of
    it: segments, lock, anchor, torn tails), signing key (secret), the harness settings and the
    installed package, plus what the operator listed."""
    home = _absolute(home or "~")
    entries: list[Protected] = [Protected(_absolute(pack), "pack") for pack in packs]
    project_dirs: list[str] = []
    if deployment is not None:
        path = _absolute(deployment)
        entries.append(Protected(path, "deployment"))
        folder = os.path.dirname(path)
        if os.path.basename(folder) in (".dsh", ".codex", ".claude", ".dsh-policy"):
            project_dirs.append(os.path.dirname(folder))
    if audit_log is not None:
        entries.append(Protected(_absolute(audit_log), "audit-log", prefix=True))
    if signing_key is not None:
        key = _absolute(signing_key)
        entries.append(Protected(key, "signing-key", secret=True))
        entries.append(Protected(os.path.splitext(key)[0] + ".pub", "signing-key"))
    entries.extend(Protected(_absolute(path), "operator", tree=True) for path in extra)
    entries.extend(Protected(_absolute(path), "operator", tree=True, secret=True) for path in extra_secret)
    entries.extend(_harness_locations(home))
    if include_package:
        entries.extend(_package_locations())
        entries.extend(_gateway_runtime_locations())
    unique = tuple(dict.fromkeys(entries))
    return SelfProtection(enabled=enabled, entries=unique, home=home, project_dirs=tuple(project_dirs))
