"""What a call sets up to happen after it is decided: environment for later sessions
(:mod:`.sessions`), files that something runs later (:mod:`.staged`), and text or files handed to
a scheduler (``at``, ``batch``, ``crontab``).

Each is judged now by the change it would make later: the variables a later session starts with,
and the commands a script, recipe, hook, unit or schedule will run, judged by the same check as a
shell line (a nested scan of the same call's folder).
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Final, Protocol

from dsh_policy.cmdline.programs import copy_destinations, only_reads
from dsh_policy.policy.self_protection import agents, code_literals, sessions, staged, streams
from dsh_policy.policy.self_protection.locations import Protected
from dsh_policy.policy.self_protection.refusals import RULE_PREFIX, Refusal, message, refusal

# Most text of one file that runs later judged (beyond it, the write is refused unread, as
# :data:`.refusals.MAX_CHECKED_WORDS` does for a call's arguments).
MAX_STAGED_TEXT: Final[int] = 256 * 1024
_LABEL: Final[str] = "staged-text"
# The option each interpreter runs code from.
_CODE_OPTION: Final[dict[str, str]] = {"python3": "-c", "node": "-e", "perl": "-e", "ruby": "-e", "php": "-r"}


class CallScan(Protocol):
    """What this module uses of one call's scan (:class:`.scan.CallScan`)."""

    def hit(self, word: str, *, folders: bool) -> Protected | None: ...
    def expand(self, word: str) -> str: ...
    def candidates(self, word: str) -> list[str]: ...
    def shell(self, line: str, tool: str) -> Refusal | None: ...
    def nested(self) -> CallScan: ...


def _session_refusal(tool: str, where: str, found: str) -> Refusal:
    return Refusal(
        f"{RULE_PREFIX}/harness-settings",
        message(
            f"{tool} would set {found} for every later session ({where})",
            "the environment the hook command starts in: which dsh-policy runs, which gateway it "
            "reaches, whether it runs at all",
        ),
    )


def session_write(scan: CallScan, path: str, content: str, tool: str) -> Refusal | None:
    """A file tool writing a variable that steers the hook into a file later sessions read."""
    if not content or not sessions.is_session_file(scan.expand(path)):
        return None
    found = sessions.steering(content, os.path.dirname(scan.expand(path)))
    return _session_refusal(tool, path, found) if found is not None else None


def session_line(
    scan: CallScan,
    commands: Sequence[Sequence[str]],
    redirects: Sequence[Mapping[str, str]],
    line: str,
    tool: str,
) -> Refusal | None:
    """A shell line that sets later sessions' environment (a start-up file written, the service
    manager told), writes a file that runs later, or hands a scheduler text or a file."""
    for argv in commands:
        found = sessions.session_setter(argv) if argv else None
        if found is not None:
            return _session_refusal(tool, os.path.basename(argv[0]), found)
    known = _known_text(commands, redirects, line)
    written = streams.written_files(commands, redirects)
    operands = [word for argv in commands if argv and not only_reads(list(argv)) for word in argv[1:]]
    targets = [*written, *operands]
    if any(sessions.is_session_file(scan.expand(target)) for target in targets):
        found = sessions.steering("\n".join([line, known]))
        if found is not None:
            return _session_refusal(tool, "a start-up file this line writes", found)
    for argv in commands:
        refused = _copied_runner(scan, argv, tool) if argv else None
        if refused is not None:
            return refused
    if known.strip():
        for target in written:
            if target.startswith(("/dev/", "/proc/")):
                continue  # a device or a process's file: nothing there runs later
            refused = staged_write(scan, target, known, tool) or _servers_written(scan, target, known, tool)
            if refused is not None:
                return refused
    return scheduled(scan, commands, redirects, tool)


def staged_write(scan: CallScan, path: str, content: str, tool: str) -> Refusal | None:
    """A file whose text something runs later (:func:`.staged.runs_later`), judged now."""
    for language, text in staged.runs_later(scan.expand(path), content):
        found = judge(scan, language, text)
        if found is not None:
            return _relabel(found, f"{tool} writes {path}, which will run")
    return None


def _servers_written(scan: CallScan, path: str, text: str, tool: str) -> Refusal | None:
    """MCP server entries a line writes into a client's configuration (``jq -n '{mcpServers:
    ...}' > .mcp.json``): the client will start each, so each command is judged now."""
    if not agents.is_mcp_file(scan.expand(path), text):
        return None
    for command in itertools.islice(agents.file_commands(text), _MAX_SERVERS):
        line = command[0] if len(command) == 1 else shlex.join(command)
        found = judge(scan, "shell", line)
        if found is not None:
            return _relabel(found, f"{tool} writes an MCP server into {path} that runs `{line[:120]}`")
    return None


_MAX_SERVERS: Final[int] = 8


def _copied_runner(scan: CallScan, argv: Sequence[str], tool: str) -> Refusal | None:
    """A file copied, moved or linked to where something runs it later (``cp x.sh
    .git/hooks/pre-commit``, ``ln -s ~/x .husky/pre-push``) or where later sessions read their
    environment (``cp prepared ~/.profile``): the source's text, read now, judged as what the
    destination will run or set."""
    program = os.path.basename(argv[0])
    if program not in ("cp", "install", "mv", "ln", "rsync"):
        return None
    words = list(argv[1:])
    destinations = copy_destinations(words)
    sources = [w for w in words if not w.startswith("-") and w not in destinations]
    for destination in destinations:
        into = destination.endswith("/") or any(os.path.isdir(c) for c in scan.candidates(destination)[:1])
        for source in sources:
            target = os.path.join(destination, os.path.basename(source)) if into else destination
            session = sessions.is_session_file(scan.expand(target))
            if not session and not list(staged.runs_later(scan.expand(target), "#!/bin/sh\n")):
                continue  # nothing runs or reads the destination later: the text does not matter
            text = _read_text(scan, source)
            if text:
                found = session_write(scan, target, text, tool) or staged_write(scan, target, text, tool)
                if found is not None:
                    return found
    return None


class Expands(Protocol):
    def expand(self, word: str) -> str: ...


def code_session_write(scan: Expands, program: str, codes: Sequence[str]) -> Refusal | None:
    """Inline code that names a file later sessions read (a literal ending in one) and holds an
    assignment that steers the hook (``open(HOME + '/.zshenv', 'a').write('export ...')``)."""
    for code in codes:
        found = sessions.steering(code)
        if found is None:
            continue
        for text in code_literals.literals(code):
            if sessions.is_session_file(scan.expand(text.split("\n", 1)[0])):
                return _session_refusal(f"{program} code", text, found)
    return None


def scheduled(
    scan: CallScan, commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]], tool: str
) -> Refusal | None:
    """Text a scheduler or shell reads on its standard input from a here-string or
    here-document (``at now + 5 min <<< '...'``), the file ``at -f FILE`` or ``crontab FILE``
    will run, read now when it exists, and a git configuration value git will run as a command
    (``git config alias.x '!...'``, ``core.fsmonitor``)."""
    for index, argv in enumerate(commands):
        if argv and _makefile_on_stdin(argv):  # ``printf 'x:\n\tCMD' | make -f -``
            text = "\n".join([streams.producers_text(commands[:index]), *_bodies(redirects)])
            found = staged_write(scan, "Makefile", text, tool)
            if found is not None:
                return found
    runners = [argv for argv in commands if argv and streams.runs_stdin_text(argv)]
    if runners:
        texts = [r["target"] for r in redirects if r.get("op") == "<<<"]
        texts += [body for body in _bodies(redirects) if body]
        for text in texts:
            cron = any(os.path.basename(argv[0]) == "crontab" for argv in runners)
            found = judge(scan, "shell", streams.cron_text(text) if cron else text)
            if found is not None:
                return _relabel(found, f"{tool} schedules text that")
    for argv in commands:
        command = _git_config_set(argv)
        if command is not None:
            found = judge(scan, "shell", command)
            if found is not None:
                return _relabel(found, f"{tool} sets a git command that")
        if argv and os.path.basename(argv[0]) == "logrotate":
            for config in [w for w in argv[1:] if not w.startswith("-")]:
                found = judge(scan, "paths", "\n".join(staged.logrotate_paths(_read_text(scan, config))))
                if found is not None:
                    return _relabel(found, f"{tool} runs logrotate with {config}, which")
        for path in _scheduled_files(argv):
            text = _read_text(scan, path)
            if text:
                cron = os.path.basename(argv[0]) == "crontab"
                found = judge(scan, "shell", streams.cron_text(text) if cron else text)
                if found is not None:
                    return _relabel(found, f"{tool} schedules {path}, which")
    return None


def judge(scan: CallScan, language: str, text: str) -> Refusal | None:
    """``text`` judged as what runs it will run: command lines for ``shell``, else the
    interpreter's inline code. A text the shell reader cannot take whole is judged line by line
    (so an intricate script is not refused for its form alone); one beyond
    :data:`MAX_STAGED_TEXT` is refused unread."""
    if len(text) > MAX_STAGED_TEXT:
        return Refusal(
            f"{RULE_PREFIX}/limits",
            f"dsh-policy self-protection: {_LABEL} holds more than {MAX_STAGED_TEXT} characters that "
            "would run later, too many to judge; refusing",
        )
    if language == "paths":  # a runner that changes the files it names
        for path in text.splitlines():
            found_entry = scan.hit(path, folders=True) if path.strip() else None
            if found_entry is not None:
                return refusal(found_entry, f"{_LABEL} changes {path}")
        return None
    program = staged.interpreter(language)
    if program is not None:
        found = scan.nested().shell(shlex.join([program, _CODE_OPTION[program], text]), _LABEL)
        return None if found is not None and found.rule.endswith("/limits") else found
    found = scan.nested().shell(text, _LABEL)
    if found is None or not found.rule.endswith("/limits"):
        return found
    for line in text.splitlines():
        if line.strip():
            found = scan.nested().shell(line, _LABEL)
            if found is not None and not found.rule.endswith("/limits"):
                return found
    return None


def _relabel(found: Refusal, said: str) -> Refusal:
    """The nested refusal said of the file or schedule it came from."""
    if _LABEL in found.message:
        return Refusal(found.rule, found.message.replace(_LABEL, said, 1))
    prefix = "dsh-policy self-protection: "
    text = found.message.removeprefix(prefix)
    return Refusal(found.rule, f"{prefix}{said}: {text}")


def _known_text(
    commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]], line: str
) -> str:
    """The text a line writes that is known now: what ``echo``/``printf`` print (through the
    decoders after them), here-documents and here-strings."""
    pieces = [streams.producers_text(commands)]
    # ``jq -n FILTER`` prints the value its filter builds: an object literal's text is its output.
    pieces += [_jq_filter(argv) for argv in commands if argv and os.path.basename(argv[0]) in _JQ]
    pieces += [r["target"] for r in redirects if r.get("op") == "<<<"]
    pieces += streams.heredoc_bodies(line)
    return "\n".join(piece for piece in pieces if piece)


_JQ: Final[frozenset[str]] = frozenset({"jq", "gojq", "jaq"})


def _jq_filter(argv: Sequence[str]) -> str:
    """The filter of a ``jq`` that reads no input (``-n``/``--null-input``), else nothing."""
    words = list(argv[1:])
    short = [w for w in words if w.startswith("-") and not w.startswith("--")]
    if "--null-input" not in words and not any("n" in w for w in short):
        return ""
    operands = [w for w in words if not w.startswith("-")]
    return operands[0] if operands else ""


def _bodies(redirects: Sequence[Mapping[str, str]]) -> Iterator[str]:
    """Here-document bodies the shell reader hands back as redirect targets (it names a body by
    its delimiter: nothing to judge then)."""
    for redirect in redirects:
        if redirect.get("op") in ("<<", "<<-") and "\n" in redirect.get("target", ""):
            yield redirect["target"]


def _makefile_on_stdin(argv: Sequence[str]) -> bool:
    """``make -f -`` (or ``--file=-``, ``--makefile=-``): make reads its makefile on stdin."""
    if os.path.basename(argv[0]) not in ("make", "gmake"):
        return False
    words = list(argv[1:])
    return any(
        (word in ("-f", "--file", "--makefile") and words[index + 1 : index + 2] == ["-"])
        or word in ("--file=-", "--makefile=-", "-f-")
        for index, word in enumerate(words)
    )


def _git_config_set(argv: Sequence[str]) -> str | None:
    """``git config [--global] KEY VALUE`` (or ``--add``, ``set``) of a key whose value git runs
    as a command (:func:`.staged.git_config_command`): that command."""
    if not argv or os.path.basename(argv[0]) != "git":
        return None
    words = list(argv[1:])
    if "config" not in words:
        return None
    rest = [w for w in words[words.index("config") + 1 :] if not w.startswith("-") and w != "set"]
    if len(rest) < 2:
        return None
    return staged.git_config_command(rest[0], rest[1])


def _scheduled_files(argv: Sequence[str]) -> list[str]:
    """``at -f FILE``/``batch -f FILE`` and ``crontab FILE``: the file they schedule."""
    program = os.path.basename(argv[0])
    words = list(argv[1:])
    if program in ("at", "batch"):
        return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-f"]
    if program == "crontab":
        operands = [w for w in words if not w.startswith("-")]
        return operands[-1:] if "-l" not in words and "-r" not in words else []
    return []


def _read_text(scan: CallScan, path: str) -> str:
    for candidate in scan.candidates(path)[:1]:
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                return handle.read(MAX_STAGED_TEXT + 1)
        except OSError:
            return ""
    return ""

