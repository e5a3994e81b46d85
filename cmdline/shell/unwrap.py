"""One simple command to every command it runs: the wrapper itself (with only its own options),
then, behind it, the wrapped command; strings run as shell lines (``bash -c``, ``eval``, ``watch``,
``tmux``, ``parallel``, ...), interpreter code, database clients' shell escapes, aliases and
functions defined on the line. Nested text goes back to the line reader through the
:class:`~.budget.NestedReader` the budget carries.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from dsh_policy.cmdline import interpreters
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import FIND_EXEC, SHELLS
from dsh_policy.cmdline.shell.budget import MAX_PARALLEL_JOBS, Budget, ScriptReader
from dsh_policy.cmdline.shell.databases import database_invocation
from dsh_policy.cmdline.shell.embedded import embedded_lines, found_paths, framework_code
from dsh_policy.cmdline.shell.expansion import basename, loop_bodies, resolved_operands
from dsh_policy.cmdline.shell.lexer import ASSIGNMENT, NAME
from dsh_policy.cmdline.shell.setup_printers import setup_printer
from dsh_policy.cmdline.shell.wrappers import (
    AT_OPTIONS,
    CHRT_OPTIONS,
    COMMAND_VARIABLES,
    COMPOSE_GLOBAL_VALUES,
    CRICTL_EXEC_VALUES,
    CRICTL_GLOBAL_VALUES,
    CTR_GLOBAL_VALUES,
    CTR_RUN_VALUES,
    DOCKER_GLOBAL_VALUES,
    DOCKER_RUN_VALUES,
    FLOCK_OPTIONS,
    HYPERFINE_LONG_SHELL,
    HYPERFINE_LONG_VALUES,
    HYPERFINE_SHELL,
    HYPERFINE_VALUES,
    INFO_OPTIONS,
    PARALLEL_INPUTS,
    PARALLEL_OPTIONS,
    PARALLEL_REPLACEMENT,
    RUNNER_GLOBAL_OPTIONS,
    RUNNERS,
    SCREEN_VALUE_LETTERS,
    SCRIPT_OPTIONS,
    SHELL_OPTIONS,
    SU_OPTIONS,
    TMUX_COMMANDS,
    TMUX_NEWLINE_KEYS,
    TMUX_OPTIONS,
    WATCH_OPTIONS,
    WRAPPERS,
    WrapperOptions,
    has_flag,
    kubectl_verb,
    longs,
    option_at,
    option_value,
    package_bin,
    skip_options,
    split_options,
    without,
)

RESERVED_WORDS = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "coproc"}
)
"""Reserved words that, in a command's first place, only open or close a compound command: the
command is what follows them (the line reader skips them too, so assignments behind them count)."""
_DROPPED_KEYWORDS = frozenset({"for", "select", "case", "function", "in"})


_ALIAS_NAME = lazy_compile(r"[A-Za-z0-9_.:+@%-]+")
MAX_XARGS_WORDS = 256
"""Most words of text printed into xargs that are appended to the command it builds."""
# where installed programs live (a copy of one of them is that program under a new name)
_BINARY_PATH = lazy_compile(r"^/(?:usr/+)?(?:local/+)?s?bin/+[^/\s$`]+$|^/opt/+homebrew/+bin/+[^/\s$`]+$")
# `$(which curl)`, `$(command -v curl)`, backquoted too
_WHICH = lazy_compile(r"(?:\$\(|`)\s*(?:which|command\s+-v|type\s+-P)\s+([A-Za-z0-9_.+-]+)\s*(?:\)|`)")


class Unwrapper:
    """Lists one simple command and, behind its wrappers, every command it runs."""

    __slots__ = ("budget", "depth", "out", "script_readers", "stdin", "variables")

    def __init__(
        self,
        depth: int,
        budget: Budget,
        variables: dict[str, str],
        stdin: list[str],
        script_readers: list[ScriptReader],
    ) -> None:
        self.depth = depth
        self.budget = budget
        self.variables = variables
        self.stdin = stdin
        self.script_readers = script_readers
        self.out: list[list[str]] = []

    def run(self, argv: list[str]) -> list[list[str]]:
        rest: list[str] | None = argv
        while rest:
            rest = self._step(rest)
        return self.out

    def parse(self, script: str, variables: dict[str, str] | None = None) -> None:
        """Commands of a shell line this command runs; ``variables`` replaces the line's own
        (positional parameters of ``sh -c LINE ARGS`` or a function call)."""
        variables = self.variables if variables is None else variables
        self.out.extend(self.budget.nested.line(script, self.depth + 1, self.budget, variables))

    def shell_reading_stdin(self, argv: list[str]) -> None:
        """The wrapper runs a shell that reads its script from stdin: listed like ``... | sh``
        (``["sh"]``), and the text piped or redirected in is parsed as that script."""
        if not any(a in INFO_OPTIONS for a in argv):
            self.out.append(["sh"])  # at/su/parallel: stays a bare shell, whatever its script
            self.script_readers.append((None, self.stdin, None))

    def _step(self, argv: list[str]) -> list[str] | None:
        """List what ``argv`` runs; returns the wrapped command still to unwrap, if any."""
        start = 0  # an index, not repeated slicing: 60,000 leading ``{`` must stay linear
        # Reserved words first, then assignments, as the shell reads them: in `then x=$(cmd)` or
        # `do f="/d/$v"; done` the word after the keyword is an assignment, not a program name
        # (a word after an assignment is never a reserved word, so it stays the program).
        while start < len(argv) and argv[start] in RESERVED_WORDS:
            start += 1
        while start < len(argv) and ASSIGNMENT.match(argv[start]):
            self._command_variable(argv[start])
            start += 1
        if start:
            argv = argv[start:]
        loop = argv[:1] in (["for"], ["select"]) and len(argv) > 3 and argv[2] == "in"
        if loop and NAME.fullmatch(argv[1]):
            # `for d in /etc /usr; do rm -rf "$d"; done`, also over an array (`in "${dirs[@]}"`)
            self.budget.loops[argv[1]] = spread_arrays(["for", *argv[3:]], self.budget.arrays)[1:]
        if not argv or argv[0] in _DROPPED_KEYWORDS:
            return None
        argv[0] = basename(argv[0])
        program = argv[0]
        if program in _DECLARING:
            # `export PAGER='sh -c ...'; git log`: the variable outlives this command, and the next
            # program that reads it runs its value, as for `PAGER=... git log`
            for arg in argv[1:]:
                if ASSIGNMENT.match(arg):
                    self._command_variable(arg)
        if program in self.budget.functions and program not in _SPECIAL_WRAPPERS:
            self._function_call(argv)
            return None
        if program in self.budget.aliases:
            self._alias_call(argv)
            return None
        special = _SPECIAL_WRAPPERS.get(program)
        if special is not None:
            return special(self, argv)
        framework = framework_code(argv)
        if framework is not None:
            self.out.append(argv)
            language, code = framework
            self.out.extend(self.budget.nested.code(language, code, self.depth, self.budget, self.variables))
            return None
        if interpreters.interpreter_of(program) is not None and self._interpreter(argv):
            return None
        if program in RUNNERS:
            return self._runner(argv)
        options = WRAPPERS.get(program)
        if options is None:
            self.out.append(argv)
            return None
        stop = split_options(argv, options)
        self.out.append(argv[:stop])
        if program == "env":
            for arg in argv[1:stop]:
                self._command_variable(arg)
            script = option_value(argv, stop, "S", "split-string")
            if script is not None:
                self.parse(" ".join([script, *map(shlex.quote, argv[stop:])]))
                return None
        if stop >= len(argv) and (
            options.shell_when_bare
            or has_flag(argv, stop, options.shell_flags, options.shell_long_flags, options)
        ):
            self.shell_reading_stdin(argv)
        if program == "xargs" and stop < len(argv) and len(self.stdin) == 1:
            return self._xargs_input(argv[1:stop], argv[stop:], self.stdin[0])
        return argv[stop:]

    @staticmethod
    def _xargs_input(options: list[str], command: list[str], text: str) -> list[str]:
        """The command xargs builds from text printed into it on the line (``echo /w | xargs rm
        -rf`` runs ``rm -rf /w``; probe25): the words appended, or with ``-0`` the whole text as
        one word, or with ``-I R`` the first line put where ``R`` stands."""
        replace = None
        for index, option in enumerate(options):
            if option in ("-I", "--replace") and index + 1 < len(options):
                replace = options[index + 1]
            elif option.startswith("-I") and len(option) > 2:
                replace = option[2:]
            elif option.startswith("--replace="):
                replace = option.partition("=")[2]
            elif option == "-i":
                replace = "{}"
        if replace:
            line = text.strip().split("\n", 1)[0]
            return [word.replace(replace, line) for word in command]
        if any(o == "--null" or (o[:1] == "-" and o[1:2] != "-" and "0" in o) for o in options):
            return [*command, text.rstrip("\n")]
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        return [*command, *words[:MAX_XARGS_WORDS]]

    # -- wrappers with their own grammar ---------------------------------------------------------

    def _shell(self, argv: list[str]) -> None:
        """``bash -c LINE``; a shell with neither ``-c`` nor a script file reads stdin."""
        stop = split_options(argv, SHELL_OPTIONS)
        has_c = any(a.startswith("-") and not a.startswith("--") and "c" in a[1:] for a in argv[1:stop])
        if not has_c or stop >= len(argv):
            self.out.append(argv)
            if not has_c and stop >= len(argv):
                self.script_readers.append((None, self.stdin, argv))
            return
        self.out.append(argv[:stop] + argv[stop + 1 :])
        # `sh -c 'rm -rf "$1"' _ ~`: the words after the line are $0, $1, ... inside it
        positional = {str(n): value for n, value in enumerate(argv[stop + 1 : stop + 11])}
        if len(argv) > stop + 2:
            positional["@"] = positional["*"] = " ".join(argv[stop + 2 :])
        self.parse(argv[stop], {**self.variables, **positional} if positional else None)

    def _interpreter(self, argv: list[str]) -> bool:
        """Script interpreters (``python -c``, ``node -e``, awk, sed, ``python3 -`` reading a
        here-document): the commands their code shells out to, and its effects. False when
        ``argv`` hands over no code we read (a script file): then it is an ordinary command."""
        invocation = interpreters.split_invocation(argv)
        if invocation is not None:
            # Code (or the script, or the module) taken from a substitution cannot be read;
            # a substitution among the program's own arguments is data (`perl -pi -e CODE $(...)`).
            self.budget.effects.extend(
                {"kind": "code-substituted", "lang": invocation.language, "target": word}
                for word in interpreters.code_words(argv)
                if "$(" in word or "`" in word
            )
        if invocation is None or not (invocation.code or invocation.reads_stdin or invocation.effects):
            return False
        self.out.append(argv)
        self.budget.effects.extend(invocation.effects)
        for code in invocation.code:
            nested = self.budget.nested
            self.out.extend(nested.code(invocation.language, code, self.depth, self.budget, self.variables))
        if invocation.reads_stdin and not any(a in INFO_OPTIONS for a in argv):
            self.script_readers.append((invocation.language, self.stdin, None))
        return True

    def _command_variable(self, assignment: str) -> None:
        """``PAGER='sh -c ...' git log``: variables whose value the program runs as a command."""
        name, _, value = assignment.partition("=")
        if name in COMMAND_VARIABLES and value.strip():
            line = value.lstrip("|").replace("%s", "x")
            if basename(line.split()[0]) != "ssh":  # GIT_SSH_COMMAND='ssh -i key': ssh options
                self.parse(line)

    def _database_client(self, argv: list[str]) -> None:
        """Database clients (psql, mysql, sqlite3, mongosh, redis-cli, ...): the statements they
        send, from their options (``-c``, ``-e``, ``--eval``, ``--query``), operands (sqlite3,
        redis-cli) or stdin (a here-document, a pipe), for ``shell.sql``."""
        self.out.append(argv)
        if any(a in ("--help", "--version", "-?") for a in argv[1:]):
            return
        client, texts, reads_stdin = database_invocation(argv)
        for text in texts:
            nested = self.budget.nested
            self.out.extend(nested.database(client, text, self.depth, self.budget, self.variables))
        if reads_stdin:
            self.script_readers.append((client, self.stdin, None))

    def _function_call(self, argv: list[str]) -> None:
        """A function defined earlier on the line: its body runs with ``$1``... bound."""
        self.out.append(argv)
        body = self.budget.functions.pop(argv[0])  # popped: a recursive function parses once
        positional = {str(n): value for n, value in enumerate(argv[1:10], start=1)}
        positional["@"] = positional["*"] = " ".join(argv[1:])
        try:
            self.parse(body, {**self.variables, **positional})
        finally:
            self.budget.functions[argv[0]] = body

    def _alias_call(self, argv: list[str]) -> None:
        """An alias defined earlier on the line runs its text with the arguments appended."""
        value = self.budget.aliases.pop(argv[0])  # popped: `alias ls='ls -la'` expands once
        try:
            self.parse(" ".join([value, *map(shlex.quote, argv[1:])]))
        finally:
            self.budget.aliases[argv[0]] = value

    def _alias(self, argv: list[str]) -> None:
        self.out.append(argv)
        for arg in argv[1:]:
            name, eq, value = arg.partition("=")
            if eq and _ALIAS_NAME.fullmatch(name):
                self.budget.aliases[name] = value

    def _trap(self, argv: list[str]) -> None:
        """``trap 'LINE' EXIT INT``: the line runs when the signal comes (at the shell's exit, at
        the latest), so it is read like ``eval LINE`` (probe25); ``trap - EXIT``, ``trap '' INT``
        and the listing options run nothing."""
        self.out.append(["trap"])
        if len(argv) >= 3 and argv[1] and not argv[1].startswith("-"):
            self.parse(argv[1])

    def _copy(self, argv: list[str]) -> None:
        """``cp /bin/rm /tmp/tidy``, ``ln -s /usr/bin/git g``, ``cp $(which curl) ./fetch``: a
        program copied or linked under another name, which the rest of the line may run by that
        name (``/tmp/tidy -rf ~``). The new name becomes an alias of the program (ATT&CK T1036.003,
        renamed system utilities; probe25)."""
        self.out.append(argv)
        operands = [a for a in argv[1:] if not a.startswith("-")]
        if len(operands) != 2 or operands[1].endswith("/"):
            return
        source, target = operands
        found = _WHICH.fullmatch(source)
        if found is not None:
            program = found.group(1)
        elif _BINARY_PATH.match(source):
            program = basename(source)
        else:
            return
        name = basename(target)
        if name != program and _ALIAS_NAME.fullmatch(name) and _ALIAS_NAME.fullmatch(program):
            self.budget.aliases[name] = program

    def _container_exec(self, argv: list[str]) -> list[str] | None:
        """``docker|podman|nerdctl exec|run [opts] CONTAINER|IMAGE CMD...``, ``docker compose
        exec|run SERVICE CMD``, ``kubectl|oc exec|run|debug ... -- CMD``, ``kubectl create
        job|cronjob|deployment ... -- CMD`` (the workload's container command): the command runs
        inside a container, on the data mounted or living there, so it is listed like a local one."""
        program = argv[0]
        if program in ("kubectl", "oc", "kubecolor"):
            verb = kubectl_verb(argv)
            if verb in ("exec", "run", "debug", "create") and "--" in argv:
                cut = argv.index("--")
                # a created workload keeps its whole line too: the cluster readers judge its payload
                self.out.append(argv if verb == "create" else argv[:cut])
                return argv[cut + 1 :]
            self.out.append(argv)
            return None
        i = 1
        if program in ("docker", "podman", "nerdctl"):
            i = skip_options(argv, i, DOCKER_GLOBAL_VALUES)
        standalone_compose = program in ("docker-compose", "podman-compose")
        if (i < len(argv) and argv[i] in ("compose", "container")) or standalone_compose:
            i += 0 if standalone_compose else 1
            i = skip_options(argv, i, COMPOSE_GLOBAL_VALUES)
        if i >= len(argv) or argv[i] not in ("exec", "run"):
            self.out.append(argv)
            return None
        i = skip_options(argv, i + 1, DOCKER_RUN_VALUES)
        i = min(i + 1, len(argv))  # the container, image or service
        self.out.append(argv[:i])
        return argv[i:] or None

    def _runtime_exec(self, argv: list[str]) -> list[str] | None:
        """The container runtimes' own clients: ``crictl exec [opts] CONTAINER CMD...``, ``ctr run
        [opts] IMAGE ID CMD...`` and ``ctr task exec [opts] CONTAINER CMD...``. As with docker, the
        command runs inside the container and is listed like a local one; the client keeps its whole
        line, since the node-runtime reader judges what it opens (a shell past the cluster's API)."""
        if argv[0] == "crictl":
            i = skip_options(argv, 1, CRICTL_GLOBAL_VALUES)
            if i >= len(argv) or argv[i] != "exec":
                self.out.append(argv)
                return None
            i = skip_options(argv, i + 1, CRICTL_EXEC_VALUES) + 1  # the container
        else:
            i = skip_options(argv, 1, CTR_GLOBAL_VALUES)
            verb = argv[i : i + 2]
            if verb[:1] == ["run"]:
                i = skip_options(argv, i + 1, CTR_RUN_VALUES) + 2  # the image and the container's id
            elif verb in (["task", "exec"], ["t", "exec"], ["tasks", "exec"]):
                i = skip_options(argv, i + 2, CTR_RUN_VALUES) + 1  # the container
            else:
                self.out.append(argv)
                return None
        self.out.append(argv)
        return argv[i:] or None

    def _hosted_ruby(self, argv: list[str]) -> list[str] | None:
        """Tools whose sub-command evaluates Ruby handed on the command line: ``knife exec -E
        CODE`` (Chef; GTFOBins' sudo escape) and ``rails runner CODE``; listed as themselves, and
        the code read as ``ruby -e CODE`` (a script file name is left to the tool)."""
        self.out.append(argv)
        words = [a for a in argv[1:] if not a.startswith("-")]
        if argv[0] == "knife" and words[:1] == ["exec"]:
            for i, arg in enumerate(argv):
                if arg in ("-E", "--exec") and i + 1 < len(argv):
                    return ["ruby", "-e", argv[i + 1]]
                if arg.startswith("--exec="):
                    return ["ruby", "-e", arg.split("=", 1)[1]]
            return None
        if argv[0] == "rails" and words[:1] in (["runner"], ["r"]) and len(words) > 1:
            return None if words[1].endswith(".rb") else ["ruby", "-e", words[1]]
        return None

    def _strings_run(self, argv: list[str]) -> list[str] | None:
        """Programs with an option whose value is a command line they run: ``tar
        --checkpoint-action=exec=CMD``/``--to-command``/``-I``, ``zip -TT CMD``, ``make
        --eval``, ``vim -c '!CMD'``, ``man -P CMD``, ``gdb -ex '!CMD'``, ``rsync -e CMD``, ``ssh
        -o ProxyCommand=CMD``, ``socat ... EXEC:CMD``, ``nc -e CMD``, ``git rebase --exec CMD``,
        ``git submodule foreach CMD``, ``git -c core.pager=CMD``, ``git fetch|clone|ls-remote
        --upload-pack=CMD``, ``git push --receive-pack=CMD``, ``git grep -OCMD``, ``sort
        --compress-program=CMD``, ``man --html=CMD``."""
        self.out.append(argv)
        for line in embedded_lines(argv):
            self.parse(line)
        return None

    def _su(self, argv: list[str]) -> list[str] | None:
        """``su``/``runuser``: ``-c LINE`` anywhere (they permute options), ``runuser -u USER --
        CMD``; otherwise an interactive shell reading stdin."""
        end = argv.index("--") if "--" in argv else len(argv)
        found = option_at(argv, end, "c", "command") or option_at(argv, end, "", "session-command")
        if found is not None:
            self.out.append(without(argv, found))
            self.parse(found[0])
            return None
        stop = split_options(argv, SU_OPTIONS)
        if argv[0] == "runuser" and option_value(argv, stop, "u", "user") is not None:
            self.out.append(argv[:stop])
            if stop >= len(argv):
                self.shell_reading_stdin(argv)
            return argv[stop:]
        self.out.append(argv)
        self.shell_reading_stdin(argv)
        return None

    def _eval(self, argv: list[str]) -> None:
        self.out.append(["eval"])
        text = " ".join(argv[1:])
        printer = setup_printer(text)
        # eval "$(ssh-agent -s)": the tool's own set-up code runs; the tool itself is still listed
        self.parse(printer if printer is not None else text)

    def _find(self, argv: list[str]) -> None:
        """``find`` itself, then each command its ``-exec``-style actions run."""
        self.out.append(argv)
        i = 1
        while i < len(argv):
            if argv[i] in FIND_EXEC:
                end = i + 1
                while end < len(argv) and argv[end] not in (";", "+"):
                    end += 1
                if end > i + 1:  # the command runs without stdin of ours: a fresh unwrapper
                    inner = Unwrapper(self.depth, self.budget, self.variables, [], self.script_readers)
                    self.out.extend(inner.run(found_paths(argv, argv[i + 1 : end])))
                i = end
            i += 1

    def _watch(self, argv: list[str]) -> list[str] | None:
        """``watch [opts] WORDS``: the words joined by spaces run through ``sh -c`` (``-x``:
        executed directly)."""
        stop = split_options(argv, WATCH_OPTIONS)
        self.out.append(argv[:stop])
        if has_flag(argv, stop, "x", longs("exec"), WATCH_OPTIONS):
            return argv[stop:]
        if stop < len(argv):
            self.parse(" ".join(argv[stop:]))
        return None

    def _parallel(self, argv: list[str]) -> None:
        """GNU ``parallel``/``sem``: the command words plus the ``:::`` arguments; without command
        words each argument is a command line, and without those it reads commands from stdin
        (or from the ``::::``/``-a`` files)."""
        stop = split_options(argv, PARALLEL_OPTIONS)
        self.out.append(argv[:stop])
        rest = argv[stop:]
        cut = next((i for i, a in enumerate(rest) if a in PARALLEL_INPUTS), len(rest))
        command = rest[:cut]
        values: list[str] = []
        files: list[str] = []
        group = ""
        for arg in rest[cut:]:
            if arg in PARALLEL_INPUTS:
                group = arg
            else:
                (files if group.startswith("::::") else values).append(arg)
        arg_file = option_value(argv, stop, "a", "arg-file")
        if arg_file is not None:
            files.append(arg_file)
        if command:
            self._parallel_jobs(command, values)
            return
        for value in values:
            self.parse(value)
        self.out.extend(["sh", f] for f in files)
        if not values and not files:
            self.shell_reading_stdin(argv)

    def _parallel_jobs(self, command: list[str], values: list[str]) -> None:
        """One job per argument: ``{}``-style replacement strings take the argument, otherwise it is
        appended. Beyond :data:`MAX_PARALLEL_JOBS` the remaining arguments go to one last job, so
        the work stays linear in the line."""
        line = " ".join(command)
        replaced = PARALLEL_REPLACEMENT.search(line) is not None
        for value in values[:MAX_PARALLEL_JOBS]:
            quoted = shlex.quote(value)
            self.parse(quoted.join(PARALLEL_REPLACEMENT.split(line)) if replaced else f"{line} {quoted}")
        if not values or len(values) > MAX_PARALLEL_JOBS:
            self.parse(" ".join([line, *map(shlex.quote, values[MAX_PARALLEL_JOBS:])]))

    def _flock(self, argv: list[str]) -> list[str] | None:
        """``flock [opts] FILE CMD...`` or ``flock [opts] FILE -c LINE``."""
        stop = split_options(argv, FLOCK_OPTIONS)
        if stop < len(argv) and argv[stop] in ("-c", "--command"):
            self.out.append(argv[: stop + 1])
            if stop + 1 < len(argv):
                self.parse(argv[stop + 1])
            return None
        self.out.append(argv[:stop])
        return argv[stop:]

    def _script(self, argv: list[str]) -> list[str] | None:
        """``script -c LINE [FILE]``; BSD's ``script [opts] FILE CMD ARGS...`` runs CMD (what
        stdin feeds goes to CMD); with neither it runs an interactive shell fed by stdin."""
        found = option_at(argv, len(argv), "c", "command")
        if found is not None:
            self.out.append(without(argv, found))
            self.parse(found[0])
            return None
        file_at = split_options(argv, SCRIPT_OPTIONS)
        if file_at + 1 < len(argv):
            self.out.append(argv[: file_at + 1])
            return argv[file_at + 1 :]
        self.out.append(argv)
        self.shell_reading_stdin(argv)
        return None

    def _chrt(self, argv: list[str]) -> list[str] | None:
        """``chrt [opts] PRIORITY CMD...``; ``-p`` (an existing pid) and ``-m`` run nothing."""
        stop = split_options(argv, CHRT_OPTIONS)
        if has_flag(argv, stop, "pm", longs("pid", "max"), CHRT_OPTIONS):
            self.out.append(argv)
            return None
        stop = min(stop + 1, len(argv))
        self.out.append(argv[:stop])
        return argv[stop:]

    def _at(self, argv: list[str]) -> None:
        """``at``/``batch`` queue a job that ``sh`` runs later: read from stdin, or ``-f FILE``."""
        self.out.append(argv)
        if has_flag(argv, len(argv), "lrdcV", longs(), AT_OPTIONS):
            return
        script = option_value(argv, len(argv), "f", "")
        if script is not None:
            self.out.append(["sh", script])
        else:
            self.shell_reading_stdin(argv)

    def _sg(self, argv: list[str]) -> None:
        """``sg [-] GROUP [-c] LINE``: the line runs through ``sh -c``; without it, a shell."""
        i = 2 if argv[1:2] == ["-"] else 1
        i = min(i + 1, len(argv))  # the group
        if argv[i : i + 1] == ["-c"]:
            i += 1
        self.out.append(argv[:i])
        if i < len(argv):
            self.parse(" ".join(argv[i:]))
        else:
            self.shell_reading_stdin(argv)

    def _newgrp(self, argv: list[str]) -> None:
        self.out.append(argv)
        self.shell_reading_stdin(argv)

    def _screen(self, argv: list[str]) -> list[str] | None:
        """``screen [opts] [CMD...]``; ``-X stuff TEXT`` types TEXT into a session's shell and
        ``-X screen|exec CMD`` runs CMD there."""
        i = 1
        attaches = starts = False  # -r/-x/-d/-ls/-wipe act on existing sessions; -m starts one
        while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
            arg = argv[i]
            if arg.lower() == "-logfile":
                i += 2
                continue
            letters = arg[1:]
            attaches = attaches or arg in ("-ls", "-list", "-wipe") or bool(set(letters) & set("rRxdDQ"))
            starts = starts or "m" in letters
            if "X" in letters:
                self.out.append(argv[: i + 1])
                command = argv[i + 1 :]
                if command[:1] == ["stuff"]:
                    text = " ".join(command[1:])
                    for newline in ("^M", "^J", "\\n", "\\r", "\\015", "\\012"):
                        text = text.replace(newline, "\n")
                    self.parse(text)
                    return None
                return command[1:] if command[:1] in (["screen"], ["exec"]) else None
            value_at = next((j for j, ch in enumerate(letters) if ch in SCREEN_VALUE_LETTERS), -1)
            i += 2 if value_at == len(letters) - 1 else 1
        if attaches and not starts:
            self.out.append(argv)
            return None
        i = min(i, len(argv))
        self.out.append(argv[:i])
        return argv[i:]

    def _tmux(self, argv: list[str]) -> None:
        """``tmux [-c LINE] [opts] CMD [; CMD...]``: the shell command of new-session, new-window,
        split-window, respawn-*, run-shell, display-popup, pipe-pane and if-shell, and the keys
        send-keys types (into a shell, usually)."""
        stop = split_options(argv, TMUX_OPTIONS)
        line = option_value(argv, stop, "c", "")
        if line is not None or stop >= len(argv):
            self.out.append(argv[:stop])
        if line is not None:
            self.parse(line)
        command: list[str] = []
        for arg in [*argv[stop:], ";"]:
            if arg != ";":
                command.append(arg)
                continue
            if command:
                self._tmux_command(argv[:stop], command)
            command = []

    def _tmux_command(self, tmux: list[str], command: list[str]) -> None:
        """One tmux command, listed after ``tmux`` and its global options (``tmux -L x new -d``)."""
        spec = TMUX_COMMANDS.get(command[0])
        if spec is None:
            self.out.append(tmux + command)
            return
        letters, kind = spec
        options = WrapperOptions(letters)
        stop = split_options(command, options)
        self.out.append(tmux + command[:stop])
        rest = command[stop:]
        if not rest:
            return
        if kind == "keys":
            literal = has_flag(command, stop, "l", longs(), options)
            keys = ["\n" if not literal and k in TMUX_NEWLINE_KEYS else
                    " " if not literal and k == "Space" else k for k in rest]  # fmt: skip
            self.parse("".join(keys))
        elif kind == "condition":
            self.parse(rest[0])
            for tmux_command in rest[1:]:
                self.parse("tmux " + tmux_command)
        elif len(rest) == 1:
            self.parse(rest[0])
        else:
            self.out.extend(
                Unwrapper(self.depth, self.budget, self.variables, [], self.script_readers).run(rest)
            )

    def _entr(self, argv: list[str]) -> list[str] | None:
        """``entr [-s] CMD...`` (``-s``: the command is a shell line)."""
        options = WrapperOptions()
        stop = split_options(argv, options)
        self.out.append(argv[:stop])
        if has_flag(argv, stop, "s", longs(), options):
            self.parse(" ".join(argv[stop:]))
            return None
        return argv[stop:]

    def _hyperfine(self, argv: list[str]) -> None:
        """``hyperfine [opts] LINE...``: every operand and ``--prepare/--setup/--cleanup/
        --conclude`` value is a shell line it runs."""
        at = len(self.out)
        listed = [argv[0]]
        i = 1
        while i < len(argv):
            arg = argv[i]
            if arg.startswith("--") and len(arg) > 2:
                name, eq, value = arg[2:].partition("=")
                count = (
                    0 if eq else HYPERFINE_LONG_VALUES.get(name, 1 if name in HYPERFINE_LONG_SHELL else 0)
                )
                if name in HYPERFINE_LONG_SHELL:
                    for line in [value] if eq else argv[i + 1 : i + 2]:
                        self.parse(line)
                    listed.append(arg)
                else:
                    listed.extend(argv[i : i + 1 + count])
                i += 1 + count
            elif arg.startswith("-") and len(arg) > 1:
                letter = arg[1]
                count = 1 if letter in HYPERFINE_SHELL else HYPERFINE_VALUES.get(letter, 0)
                if len(arg) > 2 and count:
                    count -= 1  # -r10: the first value is attached
                if letter in HYPERFINE_SHELL:
                    for line in [arg[2:]] if len(arg) > 2 else argv[i + 1 : i + 2]:
                        self.parse(line)
                    listed.append(arg[:2])
                else:
                    listed.extend(argv[i : i + 1 + count])
                i += 1 + count
            else:
                self.parse(arg)
                i += 1
        self.out.insert(at, listed)  # the wrapper first, as for every other wrapper

    def _runner(self, argv: list[str]) -> list[str] | None:
        """Package runners: ``npx PKG``, ``pnpm dlx PKG``, ``uvx PKG`` run the package's bin (named
        after the package); ``npm exec``, ``uv run``, ``poetry run`` and friends run a program."""
        table = RUNNERS[argv[0]]
        start = split_options(argv, RUNNER_GLOBAL_OPTIONS) if () not in table else 1
        runner = None
        for words, candidate in table.items():
            if argv[start : start + len(words)] == list(words):
                runner, start = candidate, start + len(words)
                break
        if runner is None:
            self.out.append(argv)
            return None
        stop = split_options(argv, runner.options, start)
        listed = argv[:stop]
        self.out.append(listed)
        if runner.shell_string or runner.shell_string_long:
            line = option_value(listed, stop, runner.shell_string, runner.shell_string_long)
            if line is not None:
                self.parse(line)
                return None
        rest = argv[stop:]
        if not rest:
            return None
        if runner.shell_mode and has_flag(listed, stop, "c", longs(runner.shell_mode), runner.options):
            self.parse(" ".join(rest))
            return None
        if (
            runner.package
            and option_value(listed, stop, runner.package_short, runner.package_option) is None
        ):
            rest = [package_bin(rest[0]), *rest[1:]]
        return rest


_SpecialWrapper = Callable[[Unwrapper, list[str]], "list[str] | None"]
_SPECIAL_WRAPPERS: dict[str, _SpecialWrapper] = {
    **dict.fromkeys(SHELLS, Unwrapper._shell),
    "su": Unwrapper._su,
    "runuser": Unwrapper._su,
    "eval": Unwrapper._eval,
    "find": Unwrapper._find,
    "watch": Unwrapper._watch,
    "parallel": Unwrapper._parallel,
    "sem": Unwrapper._parallel,
    "flock": Unwrapper._flock,
    "script": Unwrapper._script,
    "chrt": Unwrapper._chrt,
    "at": Unwrapper._at,
    "batch": Unwrapper._at,
    "sg": Unwrapper._sg,
    "newgrp": Unwrapper._newgrp,
    "screen": Unwrapper._screen,
    "tmux": Unwrapper._tmux,
    "entr": Unwrapper._entr,
    "hyperfine": Unwrapper._hyperfine,
    "alias": Unwrapper._alias,
    "trap": Unwrapper._trap,
    "cp": Unwrapper._copy,
    "ln": Unwrapper._copy,
    "knife": Unwrapper._hosted_ruby,
    "rails": Unwrapper._hosted_ruby,
    **dict.fromkeys(("psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "clickhouse-client",
                     "cockroach",
                     "sqlcmd", "snowsql", "cqlsh", "mongosh", "mongo", "redis-cli", "valkey-cli", "keydb-cli",
                     "pgcli", "mycli", "litecli", "usql"), Unwrapper._database_client),
    **dict.fromkeys(("docker", "podman", "nerdctl", "docker-compose", "podman-compose", "kubectl", "oc",
                     "kubecolor"), Unwrapper._container_exec),
    **dict.fromkeys(("crictl", "ctr"), Unwrapper._runtime_exec),
    **dict.fromkeys(("tar", "bsdtar", "gtar", "zip", "make", "gmake", "vim", "vi", "nvim", "ex", "view",
                     "gvim", "rvim", "man", "gdb", "rsync", "ssh", "socat", "nc", "ncat", "netcat", "git",
                     "less", "more", "nmap", "apt", "apt-get", "aptitude", "go", "rg", "ripgrep", "fd",
                     "fdfind", "sort"), Unwrapper._strings_run),
}  # fmt: skip


_DECLARING = frozenset({"export", "declare", "typeset", "local", "readonly"})
"""Built-ins that assign the variables named in their operands (``export NAME=value``)."""


def unwrap(
    argv: list[str],
    depth: int,
    budget: Budget,
    variables: dict[str, str],
    stdin: list[str],
    script_readers: list[ScriptReader],
) -> list[list[str]]:
    return [
        resolved_operands(expanded, variables)
        for command in Unwrapper(depth, budget, variables, stdin, script_readers).run(argv)
        for expanded in loop_bodies(spread_arrays(command, budget.arrays), budget.loops)
    ]


_ARRAY_SPREAD = lazy_compile(r"\$\{([A-Za-z_]\w*)\[[@*]\]\}")


def spread_arrays(command: list[str], arrays: dict[str, list[str]]) -> list[str]:
    """``command`` with each operand that spreads an array the line assigned (``"${a[@]}"``) replaced
    by the array's words; the program name stays as written (probe25)."""
    if not arrays or len(command) < 2 or not any("[" in word for word in command[1:]):
        return command
    spread = [command[0]]
    for word in command[1:]:
        found = _ARRAY_SPREAD.fullmatch(word)
        if found is not None and found.group(1) in arrays:
            spread.extend(arrays[found.group(1)])
        else:
            spread.append(word)
    return spread
