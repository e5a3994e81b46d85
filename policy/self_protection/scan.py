"""Reading one tool call for tampering: its shell line (through the shell reader, so wrappers,
quoting and variables are seen through), its file paths, globs, copies, ``find`` runs and the
programs that uninstall or shadow the gateway.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, Final, Protocol

from dsh_policy.cmdline.interpreters.invocation import split_invocation
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import (
    COPIERS,
    FOLDER_ACTORS,
    NAME_READERS,
    SCRIPTED_READERS,
    copy_destinations,
    git_subcommand,
    only_reads,
)
from dsh_policy.cmdline.shell import (
    READING_REDIRECTIONS,
    WRITING_REDIRECTIONS,
    ShellLineTooComplexError,
    shell_commands,
    shell_redirects,
)
from dsh_policy.cmdline.writers import tar_mode
from dsh_policy.policy.self_protection import (
    agents,
    gateway_commands,
    inline,
    later,
    patches,
    processes,
    streams,
    tactics,
    vcs,
)
from dsh_policy.policy.self_protection.locations import (
    HARNESS_FOLDERS,
    HARNESS_SUFFIXES,
    SHADOW_SUFFIXES,
    Protected,
)
from dsh_policy.policy.self_protection.refusals import (
    KIND_TEXT,
    MAX_CHECKED_WORDS,
    RULE_PREFIX,
    Refusal,
    limit_message,
    message,
    refusal,
)

_GLOB_CHARS: Final[frozenset[str]] = frozenset("*?[")
_PROC_CWD: Final[re.Pattern[str]] = lazy_compile(r"^/proc/(?:self|thread-self|[0-9]+)/cwd(/|$)")
# Tools that search file contents under a folder (Claude Code's Grep, Gemini CLI's and Qwen Code's
# search_file_content, OpenCode's grep).
_CONTENT_SEARCHES: Final[frozenset[str]] = frozenset({"Grep", "search_file_content", "grep", "search"})


class ProtectedSet(Protocol):
    """What a scan checks a call against: the protected set
    (:class:`~.protection.SelfProtection`, which hands itself to each scan). Declared here so the
    scan receives it rather than importing the module that builds it."""

    @property
    def entries(self) -> tuple[Protected, ...]: ...
    @property
    def home(self) -> str: ...
    @property
    def project_dirs(self) -> tuple[str, ...]: ...
    @property
    def component_names(self) -> frozenset[str]: ...
    @property
    def folded_names(self) -> frozenset[str]: ...
    @property
    def name_prefixes(self) -> tuple[str, ...]: ...
    @property
    def mentions(self) -> re.Pattern[str]: ...
    @property
    def secrets(self) -> tuple[Protected, ...]: ...
    def protected(self, path: str, extra: Sequence[Protected] = ()) -> Protected | None: ...
    def holds_protected(self, folder: str, extra: Sequence[Protected] = ()) -> Protected | None: ...


class CallScan:
    """One call's check: resolves the words it names against its working directory."""

    def __init__(self, protection: ProtectedSet, cwd: str) -> None:
        self.protection = protection
        self.cwd = cwd
        self.bases = [cwd]
        self.moves: list[str] = []  # the folders the line has moved into so far (``cd``/``pushd``)
        self.examined = 0

    @cached_property
    def local(self) -> list[Protected]:
        """The hook files of the working directory's project that exist (every supported
        client's, :data:`HARNESS_SUFFIXES`): a glob or a folder operation there (``rm -rf .``,
        ``mv .c* /tmp``, ``git sparse-checkout set src``) reaches them. Looked up on first use:
        most calls name no word that could be a protected path, and need none of these lstats."""
        cwd = self.cwd
        return [
            Protected(path, "harness-settings", tree=tree)
            for path, tree in ((os.path.join(cwd, *suffix), tree) for suffix, tree in HARNESS_SUFFIXES)
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

    def nested(self) -> CallScan:
        """A fresh scan of the same call's folder (for a command the call hands another program)."""
        return CallScan(self.protection, self.cwd)

    def expand(self, word: str) -> str:
        """``word`` with ``~`` and the variables we know replaced."""
        return self._expand(word)

    def _project(self) -> str:
        dirs = self.protection.project_dirs
        return os.environ.get("CLAUDE_PROJECT_DIR") or (dirs[0] if dirs else self.cwd)

    def candidates(self, word: str) -> list[str]:
        """Absolute, normalised paths ``word`` may name (one per base for a relative word), plus
        where an existing symbolic link leads."""
        word = self._expand(word)
        if not word or "\n" in word or "\0" in word or len(word) > 4096:
            return []
        # The agent's process view, not ours: ``/proc/self/cwd`` is the folder the line runs in.
        word = _PROC_CWD.sub(lambda m: self.cwd + m.group(1), word)
        bases = [""] if word.startswith("/") else self.bases
        out: list[str] = []
        for base in bases:
            path = os.path.normpath(os.path.join(base, word))
            out.append(path)
            # Links anywhere on the way (a linked folder, a linked file) are judged where they
            # lead, as the kernel will open them; a glob under a linked folder (``cfg/*`` with
            # ``cfg`` a link) expands where the link leads.
            real = _real_glob(path) if _GLOB_CHARS.intersection(path) else _real(path)
            if real != path:
                out.append(real)
        return out

    def _plausible(self, word: str) -> bool:
        """Cheap pre-filter: could ``word`` name a protected path or a folder holding one?"""
        if _GLOB_CHARS.intersection(word) or "$" in word or word.startswith("~"):
            return True
        last = word.rstrip("/").rsplit("/", 1)[-1]
        protection = self.protection
        if (
            last in protection.component_names
            or last.lower() in protection.folded_names
            or not HARNESS_FOLDERS.isdisjoint(word.split("/"))
            or last.endswith(SHADOW_SUFFIXES)
            or last.startswith(protection.name_prefixes)
            or word.startswith("/proc/")
        ):
            return True
        # The working folder or a folder above it, by any spelling (``git -C /abs/app clean``):
        # a folder operation there reaches the project's hook files (:attr:`local`).
        here = self.cwd.rstrip("/") + "/"
        for base in self.bases[:2]:
            named = os.path.normpath(os.path.join(base, word)).rstrip("/") + "/"
            if here.startswith(named):
                return True
        # A name we do not know may still lead to a protected path through a link on the way.
        return any(
            _real(os.path.join(base, word)) != os.path.normpath(os.path.join(base, word))
            for base in self.bases[:2]
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
        for suffix, _tree in HARNESS_SUFFIXES:  # ``~/x/.claude/settings.*`` in any project
            tail = wanted[-len(suffix) :]
            if len(tail) == len(suffix) and _glob_matches(tail, suffix):
                return Protected(pattern, "harness-settings")
        return None

    # -- tools ---------------------------------------------------------------------------------

    def path_write(self, path: Any, tool: str, verb: str, content: str = "") -> Refusal | None:
        if not isinstance(path, str):
            return None
        found_later = later.session_write(self, path, content, tool)
        if found_later is not None:
            return found_later
        for candidate in self.candidates(path) if not _GLOB_CHARS.intersection(path) else [path]:
            found = self.protection.protected(candidate, self.local) or self._same_file(candidate)
            if found is not None:
                return refusal(found, f"{tool} would {verb} {path}")
        if not content:
            return None
        return tactics.mcp_file(self, path, content, tool) or later.staged_write(self, path, content, tool)

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
        if not self.protection.secrets:
            return None
        searches = tool in _CONTENT_SEARCHES
        for text in _strings(args):
            for candidate in self.candidates(text):
                folded = candidate.lower()  # a case-insensitive filesystem opens ``KEYS/AUDIT.KEY``
                for secret in self.protection.secrets:
                    if (
                        secret.covers(candidate)
                        or folded == secret.path.lower()
                        or folded.startswith(secret.path.lower().rstrip("/") + "/")
                        or folded == os.path.dirname(secret.path).lower()
                    ):
                        return refusal(secret, f"{tool} would read {text}")
                    if searches and _searched(candidate, secret.path):
                        return refusal(secret, f"{tool} would search {text}, which holds the signing key")
        return None

    def any_tool(self, args: Any, tool: str) -> Refusal | None:
        """A tool we do not know (an MCP server's, say) is taken to write what it names; a
        command line it is given (an MCP shell server's ``command``) is judged as the shell's."""
        for line in agents.command_lines(args):
            judged = self.nested().shell(line, tool)
            if judged is not None:
                return judged
        for count, text in enumerate(_strings(args)):
            if count > MAX_CHECKED_WORDS:
                return Refusal(f"{RULE_PREFIX}/limits", limit_message(tool))
            found = self.hit(text, folders=False)
            if found is not None:
                return refusal(found, f"{tool} names {text}")
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
        refusal = tactics.whole_line(self, commands, line, tool)
        if refusal is not None:
            return refusal
        refusal = later.session_line(self, commands, redirects, line, tool) or patches.line(
            self, commands, redirects, line, tool
        )
        if refusal is not None:
            return refusal
        mentioned = self.protection.mentions.search(self._expand(line)) is not None
        heredoc = any(redirect["op"] in ("<<", "<<-", "<<<") for redirect in redirects)
        for argv in commands:
            if argv and argv[0] in ("cd", "pushd") and len(argv) > 1:
                self.moves.append(argv[-1])  # a harness later on the line runs there
            refusal = self._command(argv, tool, mentioned)
            if refusal is not None:
                return refusal
            if self.examined > MAX_CHECKED_WORDS:
                return Refusal(f"{RULE_PREFIX}/limits", limit_message(tool))
        refusal = (
            self._streams(commands, redirects, tool)
            or self._fills(commands, redirects, tool)
            or self._freezes(commands, redirects, tool)
        )
        if refusal is not None:
            return refusal
        # A here-document feeds a program text we do not parse (``python - <<EOF``): a protected
        # path named in it is refused unless every program only reads.
        if (
            mentioned
            and heredoc
            and any(argv and not only_reads(argv) for argv in commands)
            and not inline.heredoc_reads(self, commands, line)
        ):
            match = self.protection.mentions.search(self._expand(line))
            named = match.group(0) if match else "a protected path"
            return Refusal(
                f"{RULE_PREFIX}/{self._kind_of(match.group(0) if match else '')}",
                message(f"{tool} feeds a script that names {named}", "a protected path"),
            )
        return None

    def _streams(
        self, commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]], tool: str
    ) -> Refusal | None:
        """What commands hand each other (:mod:`.streams`): names into ``xargs`` or an archiver,
        text into a shell, ``at`` or ``crontab``, a shell's script computed by printers, a script
        the line writes and then runs."""
        for index, argv in enumerate(commands):
            if not argv:
                continue
            program, producers = os.path.basename(argv[0]), commands[:index]
            if program == "xargs" and index + 1 < len(commands):
                inner = list(commands[index + 1])
                if inner and not only_reads(inner):
                    for finder in producers:
                        if finder and os.path.basename(finder[0]) == "find":
                            found = self._find([*finder, "-delete"])
                            if found is not None:
                                return found
                    names = streams.printed_names(producers)
                    if names:
                        found = self._command([*inner, *names], tool, False)
                        if found is not None:
                            return found
            if streams.reads_names_from_stdin(argv):
                for name in [*streams.find_starts(producers), *streams.printed_names(producers)]:
                    found = tactics.secret_trees(self, ["cp", "-r", name, "/dev/null"])
                    if found is not None:
                        return found
            if streams.runs_stdin_text(argv):
                text = streams.producers_text(producers)
                if program == "crontab":
                    text = streams.cron_text(text)
                if text.strip():
                    found = self.nested().shell(text, tool)
                    if found is not None:
                        return found
        for text in streams.computed_scripts(commands):
            found = self.nested().shell(text, tool)
            if found is not None:
                return found
        for index, path in streams.script_runs(commands, redirects):
            text = streams.producers_text(commands[:index])
            if text.strip():
                found = self.nested().shell(text, tool)
                if found is not None:
                    return Refusal(
                        found.rule, found.message.replace(tool, f"{tool} writes {path} and runs it:", 1)
                    )
        return None

    def _freezes(
        self, commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]], tool: str
    ) -> Refusal | None:
        """A write into the freeze or kill file of the cgroup that holds the gateway."""
        written = streams.written_files(commands, redirects)
        targets = [t for t in written if os.path.basename(t) in processes.CGROUP_CONTROLS]
        if not targets:
            return None
        runtime = [e.path for e in self.protection.entries if e.kind == "gateway-runtime"]
        gateway = processes.gateway_processes(runtime)
        for target in targets:
            why = processes.freezes_gateway(target, gateway)
            if why is not None:
                return Refusal(
                    f"{RULE_PREFIX}/gateway-runtime", message(f"{tool}: {why}", KIND_TEXT["gateway-runtime"])
                )
        return None

    def _fills(
        self, commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]], tool: str
    ) -> Refusal | None:
        """An endless source (``yes``, ``cat /dev/zero``) written into a file on the audit log's
        filesystem with nothing bounding it: the disk fills and the next audit write fails."""
        if not any(argv and processes.endless(argv) for argv in commands):
            return None
        if any(argv and processes.bounds(argv) for argv in commands):
            return None
        logs = [e.path for e in self.protection.entries if e.kind == "audit-log"]
        if not logs:
            return None
        for target in streams.written_files(commands, redirects):
            for candidate in self.candidates(target)[:1]:
                if processes.same_filesystem(candidate, logs[0]):
                    return Refusal(
                        f"{RULE_PREFIX}/audit-log",
                        message(
                            f"{tool} writes an endless stream into {target}, on the audit log's disk",
                            KIND_TEXT["audit-log"],
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
        if op in WRITING_REDIRECTIONS and not (op == ">&" and (target.isdigit() or target == "-")):
            found = self.hit(target, folders=False)
            if found is None and self.protection.mentions.search(self._expand(target)):
                found = self._mention_entry(target)
            if found is None:
                for candidate in self.candidates(target):
                    found = self._same_file(candidate)
                    if found is not None:
                        break
            if found is not None:
                return refusal(found, f"{tool} redirects output ({op}) into {target}")
        elif op in READING_REDIRECTIONS and self.protection.secrets:
            found = self.hit(target, folders=False)
            if found is not None and found.secret:
                return refusal(found, f"{tool} reads {target}")
        return None

    def _mention_entry(self, text: str) -> Protected:
        match = self.protection.mentions.search(self._expand(text))
        shown = match.group(0) if match else text
        for entry in self.protection.entries:
            if entry.path.endswith(shown.lstrip("~")) or shown.endswith(os.path.basename(entry.path)):
                return entry
        return Protected(shown, "harness-settings")

    def _command(self, argv: list[str], tool: str, mentioned: bool) -> Refusal | None:
        if not argv:
            return None
        program = argv[0]
        special = (
            gateway_commands.gateway_command(argv, tool)
            or tactics.nested_agent(self, argv, tool)
            or tactics.secret_trees(self, argv)
        )
        if special is not None:
            return special
        words = argv[1:]
        if only_reads(argv):
            return self._reader_words(argv, tool, mentioned)
        judged, verdict = inline.inline(self, argv, tool)
        if judged:
            return verdict
        special = tactics.option_writes(self, argv)
        if special is not None:
            return special
        if gateway_commands.package_fetch(argv) or (program in ("tar", "bsdtar") and tar_mode(words) != "x"):
            return None  # package names; an archive made from (or listed): its file is judged above
        written = words
        if program in COPIERS or program == "mv":
            return self._copy(argv, tool, mentioned)
        if program == "find":
            return self._find(argv)
        folders = program in FOLDER_ACTORS
        if program == "git":
            rolled = tactics.git_rollback(self, argv)
            if rolled is not None:
                return rolled
            sub = git_subcommand(argv)
            folders = sub in vcs.GIT_MOVERS
            written = [word for word in vcs.git_words(argv) if word != sub]
            if sub == "clean" and any(
                w in ("-n", "--dry-run") or (w[:1] == "-" and "n" in w[1:] and not w.startswith("--"))
                for w in written
            ):
                return None
            cleans_all = sub == "clean" and not [w for w in written if not w.startswith("-")]
            if cleans_all or vcs.whole_tree(argv):
                # Whatever the operands, these act on the whole working tree.
                folders, written = True, [*written, vcs.work_tree(argv)]
        for word in written:
            if word.startswith("-") and "=" not in word:
                continue
            value = (
                word.split("=", 1)[1] if word.startswith("-") or (program == "dd" and "=" in word) else word
            )
            found = self.hit(value, folders=folders)
            if found is not None:
                return refusal(found, f"{program} would change {value}")
        if mentioned:
            for word in written:
                match = self.protection.mentions.search(self._expand(word))
                if match is not None:
                    return refusal(self._mention_entry(word), f"{program} is given {match.group(0)}")
        return None

    def _copy(self, argv: list[str], tool: str, mentioned: bool) -> Refusal | None:
        """``cp``/``rsync``/``scp``/``install``/``mv``: what each writes is the destination, or the
        destination folder joined with each source's name (``cp a.py .`` writes ``./a.py``, not
        the whole folder); ``mv`` also takes its sources away; copies read their sources."""
        program, words = argv[0], argv[1:]
        destinations = copy_destinations(words)
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
                return refusal(found, f"{program} would {'move' if program == 'mv' else 'copy'} {source}")
            if program != "mv" and self._holds_secret(source):
                return refusal(self.protection.secrets[0], f"{program} would copy the folder of {source}")
        for destination in destinations:
            for target, tree in self._copy_targets(destination, sources, recursive):
                found = self.hit(target, folders=tree)
                if found is not None:
                    return refusal(found, f"{program} would write {target}")
        if mentioned:
            for word in destinations:
                match = self.protection.mentions.search(self._expand(word))
                if match is not None:
                    return refusal(self._mention_entry(word), f"{program} is given {match.group(0)}")
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
        names = [  # ``-iname``/``-ipath`` ignore letter case: matched folded
            words[i + 1].lower() if w in ("-iname", "-ipath") else words[i + 1]
            for i, w in enumerate(words[:-1])
            if w in ("-name", "-iname", "-path", "-ipath", "-wholename", "-regex")
        ]
        folded = any(w in ("-iname", "-ipath") for w in words)
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
            if found.tree and any(found.covers(c) for c in self.candidates(start)):
                return refusal(found, f"find would delete or run commands inside {start}")
            candidates = [e for e in (*self.protection.entries, *self.local) if self._under(e.path, start)]
            if not names or not candidates or tactics.find_selects(candidates, names, folded):
                return refusal(found, f"find would delete or run commands on {start}")
        return None

    def _under(self, path: str, start: str) -> bool:
        return any(path == c or path.startswith(c.rstrip("/") + "/") for c in self.candidates(start))

    def _holds_secret(self, word: str) -> bool:
        for candidate in self.candidates(word):
            for secret in self.protection.secrets:
                folder = os.path.dirname(secret.path)
                if candidate == folder and folder not in (self.cwd, self.protection.home, "/"):
                    return True
        return False

    def _reader_words(self, argv: list[str], tool: str, mentioned: bool) -> Refusal | None:
        program = argv[0]
        secrets = self.protection.secrets
        if program in SCRIPTED_READERS and program != "find":  # ``print > "FILE"`` in an awk program
            invocation = split_invocation(argv)
            for code in invocation.code if invocation is not None else ():
                for target in inline.program_writes(program, code):
                    found = self.hit(target, folders=False)
                    if found is not None:
                        return refusal(found, f"{program} program would write {target}")
        for word in argv[1:]:
            if secrets and program not in NAME_READERS:
                found = self.hit(word, folders=False)
                if found is not None and found.secret:
                    return refusal(found, f"{program} would read {word}")
                if self._holds_secret(word):
                    return refusal(secrets[0], f"{program} would read the folder holding {word}")
                if mentioned and any(
                    s.path in self._expand(word) or ("/" in word and os.path.basename(s.path) in word)
                    for s in secrets
                ):
                    return refusal(secrets[0], f"{program} is given {word}")
        if mentioned and program in SCRIPTED_READERS:
            for word in argv[1:]:
                match = self.protection.mentions.search(self._expand(word))
                if match is not None and self.hit(word, folders=False) is None:
                    return refusal(self._mention_entry(word), f"{program} script names {match.group(0)}")
        return None



def _searched(folder: str, path: str) -> bool:
    """Whether a content search of ``folder`` (ripgrep's rules: dot folders below the one named are
    skipped) reads ``path``."""
    if folder in ("", "/") or not path.startswith(folder.rstrip("/") + "/"):
        return False
    below = path[len(folder.rstrip("/")) + 1 :].split("/")
    return not any(part.startswith(".") for part in below[:-1])


def _real(path: str) -> str:
    """Where ``path`` leads through links (itself, normalised, when it cannot be resolved: a
    name no filesystem can hold cannot lead anywhere)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.normpath(path)


def _real_glob(pattern: str) -> str:
    """A glob with the links of its literal leading folders resolved (the shell expands the
    pattern where those folders lead); the pattern itself when they hold no link."""
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        if _GLOB_CHARS.intersection(part):
            prefix = "/".join(parts[:index]) or "/"
            return "/".join([_real(prefix).rstrip("/"), *parts[index:]])
    return _real(pattern)


def _glob_matches(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    for want, have in zip(pattern, parts, strict=True):
        if have.startswith(".") and not want.startswith(".") and want != have:
            return False
        if not fnmatch.fnmatchcase(have, want):
            return False
    return True


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
