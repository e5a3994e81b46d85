"""What one command of a line hands another when the line runs: names piped into ``xargs`` or an
archiver that reads names on its standard input, text piped into a shell, ``at`` or ``crontab``,
and a script the line writes and then runs.

The shell reader lists a line's commands in order (``ls X | xargs rm`` is ``ls X``, ``xargs``,
``rm``); a command's producers are the ones before it. What a producer emits is known only for the
programs that print their operands (``echo``, ``printf``, ``ls``, ``realpath``...) and for
``find``, whose start folders bound the names it prints. What is not known (``cat list``) is not
guessed at: those lines stay with the other checks.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping, Sequence
from typing import Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.programs import SHELLS
from dsh_policy.cmdline.shell import WRITING_REDIRECTIONS

# Programs that print their operands (as names, one per word).
NAME_PRINTERS: Final[frozenset[str]] = frozenset(
    {"echo", "ls", "realpath", "readlink", "dirname", "basename", "printf"}
)
# Programs that run what arrives on their standard input as commands (with no script operand).
TEXT_RUNNERS: Final[frozenset[str]] = frozenset({*SHELLS, "at", "batch", "crontab", "source", "."})
_CRON_FIELDS: Final[re.Pattern[str]] = lazy_compile(r"^\s*(?:@\w+|(?:\S+\s+){5})")
_PRINTF_ESCAPES: Final[dict[str, str]] = {"\\n": "\n", "\\t": "\t", "\\\\": "\\"}


def printed_text(argv: Sequence[str]) -> str:
    """What ``echo WORDS`` or ``printf FORMAT ARGS`` prints (``%s`` filled in order)."""
    program = os.path.basename(argv[0]) if argv else ""
    words = list(argv[1:])
    if program == "echo":
        return " ".join(w for w in words if w not in ("-n", "-e", "-E")) + "\n"
    if program != "printf" or not words:
        return ""
    text, arguments = words[0], iter(words[1:])
    for escape, value in _PRINTF_ESCAPES.items():
        text = text.replace(escape, value)
    text = re.sub(r"%[-0-9.]*[sdbq]", lambda _m: next(arguments, ""), text)
    return text


def printed_names(producers: Sequence[Sequence[str]]) -> list[str]:
    """The names the producers print (operands of :data:`NAME_PRINTERS`)."""
    out: list[str] = []
    for argv in producers:
        program = os.path.basename(argv[0]) if argv else ""
        if program == "printf":
            out.extend(printed_text(argv).split())
        elif program in NAME_PRINTERS:
            out.extend(w for w in argv[1:] if not w.startswith("-"))
    return out


def find_starts(producers: Sequence[Sequence[str]]) -> list[str]:
    """The folders ``find`` producers start from (everything they print is under these)."""
    out: list[str] = []
    for argv in producers:
        if argv and os.path.basename(argv[0]) == "find":
            words = list(argv[1:])
            stop = next((i for i, w in enumerate(words) if w.startswith(("-", "(", "!"))), len(words))
            out.extend(words[:stop] or ["."])
    return out


def reads_names_from_stdin(argv: Sequence[str]) -> bool:
    """Archivers and copiers that take the names to pack from their standard input: ``cpio -o``/
    ``-p``, ``tar -T -``, ``zip -@``, ``rsync --files-from=-``, ``pax -w``, ``afio -o``."""
    program = os.path.basename(argv[0]) if argv else ""
    words = list(argv[1:])
    shorts = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    if program == "cpio":
        return "o" in shorts or "p" in shorts or "--create" in words or "--pass-through" in words
    if program in ("tar", "bsdtar"):
        return any(
            (w in ("-T", "--files-from") and words[i + 1 : i + 2] == ["-"]) or w == "--files-from=-"
            for i, w in enumerate(words)
        )
    if program == "zip":
        return "@" in shorts or "--names-stdin" in words
    if program == "rsync":
        return "--files-from=-" in words
    if program in ("pax", "afio"):
        return "w" in shorts or "o" in shorts
    return False


def runs_stdin_text(argv: Sequence[str]) -> bool:
    """A command runner that reads the commands it runs from its standard input: a shell with no
    ``-c`` and no script, ``at``/``batch`` (no ``-f``), ``crontab -`` (or with no file)."""
    program = os.path.basename(argv[0]) if argv else ""
    words = list(argv[1:])
    operands = [w for w in words if not w.startswith("-")]
    if program in SHELLS:
        return "-c" not in words and not operands
    if program in ("at", "batch"):
        return "-f" not in words and "-l" not in words and "-r" not in words
    if program == "crontab":
        return words in ([], ["-"]) or (words[-1:] == ["-"] and "-l" not in words)
    return False


def cron_text(text: str) -> str:
    """A crontab's command lines, without their schedule fields."""
    return "\n".join(_CRON_FIELDS.sub("", line) for line in text.splitlines() if line.strip())


def written_files(commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]]) -> list[str]:
    """The files a line writes through its redirections (every writing operator; ``>&`` only onto
    a file, not a descriptor) and through ``tee``'s operands."""
    targets = [
        r["target"]
        for r in redirects
        if r.get("op") in WRITING_REDIRECTIONS
        and not (r.get("op") == ">&" and (r["target"].isdigit() or r["target"] == "-"))
    ]
    targets += [
        w for argv in commands if argv and argv[0] == "tee" for w in argv[1:] if not w.startswith("-")
    ]
    return targets


def script_runs(
    commands: Sequence[Sequence[str]], redirects: Sequence[Mapping[str, str]]
) -> list[tuple[int, str]]:
    """``(index, path)`` for each command that runs a file the same line wrote by a redirection
    (``printf ... > /tmp/x.sh && sh /tmp/x.sh``, ``... > f && chmod +x f && ./f``)."""
    written = set(written_files((), redirects))
    out: list[tuple[int, str]] = []
    for index, argv in enumerate(commands):
        if not argv:
            continue
        program = os.path.basename(argv[0])
        if argv[0] in written:
            out.append((index, argv[0]))
        elif program in (*SHELLS, "source", ".", "at", "batch", "crontab"):
            for word in argv[1:]:
                if word in written:
                    out.append((index, word))
    return out


def producers_text(producers: Sequence[Sequence[str]]) -> str:
    """Everything the ``echo``/``printf`` producers print, in order, passed through the decoders
    after them (``base64 -d``, ``xxd -r -p``, ``rev``): what a shell at the end would run."""
    text = ""
    for argv in producers:
        if not argv:
            continue
        printed = printed_text(argv)
        if printed:
            text += printed
        else:
            text = decoded(argv, text)
    return text


def decoded(argv: Sequence[str], text: str) -> str:
    """What a decoder makes of ``text`` (unchanged for other programs or undecodable text)."""
    program = os.path.basename(argv[0])
    words = set(argv[1:])
    try:
        if program in ("base64", "basenc") and words & {"-d", "--decode", "-D"}:
            return base64.b64decode("".join(text.split()), validate=False).decode("utf-8", "replace")
        if program == "openssl" and "base64" in words and "-d" in words:
            return base64.b64decode("".join(text.split())).decode("utf-8", "replace")
        if program == "xxd" and "-r" in words and ("-p" in words or "-ps" in words):
            return binascii.unhexlify("".join(text.split())).decode("utf-8", "replace")
    except (ValueError, binascii.Error):
        return text
    if program == "rev":
        return "\n".join(line[::-1] for line in text.split("\n"))
    return text


def computed_scripts(commands: Sequence[Sequence[str]]) -> list[str]:
    """The text a shell (``bash -c "$(...)"``), ``eval`` or a computed command word runs when it
    is computed by a command substitution of printers only (``$(printf 'rm %s' FILE)``, through
    the decoders): what the substitution prints. Substitutions of other programs are not guessed
    at."""
    from dsh_policy.cmdline.shell import ShellLineTooComplexError, shell_commands

    out: list[str] = []
    for argv in commands:
        program = os.path.basename(argv[0]) if argv else ""
        words = list(argv[1:])
        if program in SHELLS and "-c" in words[:-1]:
            script = words[words.index("-c") + 1]
        elif program == "eval" and words:
            script = " ".join(words)
        elif argv and argv[0].startswith(("$(", "`")):
            script = argv[0]  # a command word computed when the line runs
        else:
            continue
        script = script.strip()
        if script.startswith("$(") and script.endswith(")"):
            inner = script[2:-1]
        elif script.startswith("`") and script.endswith("`"):
            inner = script[1:-1]
        else:
            continue
        try:
            produced = shell_commands(inner)
        except (ShellLineTooComplexError, TypeError, RecursionError, MemoryError):
            continue
        printers = [p for p in produced if p and os.path.basename(p[0]) in NAME_PRINTERS]
        if printers:
            out.append(producers_text(produced))
    return out


def heredoc_bodies(line: str) -> list[str]:
    """The text of each here-document in ``line`` (``<<WORD`` ... a line that is ``WORD``)."""
    bodies: list[str] = []
    lines = line.split("\n")
    index = 0
    while index < len(lines):
        for match in re.finditer(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1", lines[index]):
            word, body = match.group(2), []
            index += 1
            while index < len(lines) and lines[index].strip() != word:
                body.append(lines[index])
                index += 1
            bodies.append("\n".join(body))
        index += 1
    return bodies
