"""Words to argv: ``$IFS`` splitting and brace expansion (``{rm,-rf,/}``), a program's name
without its directory, and the operands the line itself determines (``$(pwd)``, ``$(echo ~)``,
``${NAME:-default}``, ``for`` loop values), so a rule sees the path a command really names.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import posixpath
import re
import shlex

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.budget import (
    MAX_BRACE_WORDS,
    MAX_LEXED_CHARS,
    MAX_WORDS,
    Budget,
    ShellLineTooComplexError,
)
from dsh_policy.cmdline.shell.lexer import IFS, Word, find_closing

# -- words to argv ------------------------------------------------------------------------------


def expand(word: Word, budget: Budget) -> list[str]:
    """IFS splitting then brace expansion, on the unquoted parts only."""
    if IFS not in word.chars:
        # The usual word: no $IFS to split at, and no brace to expand (the same one word the
        # loops below give, without copying it character by character).
        text = "".join(word.chars)
        if "{" not in text:
            budget.words += 1
            return [text]
    pieces: list[Word] = [Word()]
    for ch, quoted in zip(word.chars, word.quoted, strict=True):
        if ch == IFS and not quoted:
            pieces.append(Word())
        else:
            pieces[-1].chars.append(ch)
            pieces[-1].quoted.append(quoted)
    if len(pieces) > 1:
        pieces = [p for p in pieces if p.chars]
    out: list[str] = []
    for piece in pieces:
        expanded = _brace_expand(piece, budget)
        budget.words += len(expanded)
        out.extend(expanded)
    return out


def _brace_expand(word: Word, budget: Budget) -> list[str]:
    text = word.text()
    if "{" not in text or budget.words > MAX_WORDS:
        return [text]
    results: list[str] = []
    pending = [(word.chars, word.quoted)]
    while pending:
        chars, quoted = pending.pop()
        budget.lexed_chars += len(chars)
        if budget.lexed_chars > MAX_LEXED_CHARS:
            raise ShellLineTooComplexError(
                f"shell line expands into more than {MAX_LEXED_CHARS} characters of words"
            )
        split = _first_brace_alternatives(chars, quoted)
        if split is None:
            results.append("".join(chars))
        else:
            (open_at, close_at, commas) = split
            bounds = [open_at, *commas, close_at]
            for left, right in reversed(list(itertools.pairwise(bounds))):
                pending.append(
                    (
                        chars[:open_at] + chars[left + 1 : right] + chars[close_at + 1 :],
                        quoted[:open_at] + quoted[left + 1 : right] + quoted[close_at + 1 :],
                    )
                )
        if len(results) + len(pending) > MAX_BRACE_WORDS:
            return [text]
    return results


def _first_brace_alternatives(chars: list[str], quoted: list[bool]) -> tuple[int, int, list[int]] | None:
    """Position of the first unquoted ``{a,b}`` group with a top-level comma, if any: the closed
    group with a comma that opens leftmost. One pass with a stack (60,000 unmatched ``{`` once
    took minutes rescanning the rest of the word from each)."""
    stack: list[tuple[int, list[int]]] = []
    best: tuple[int, int, list[int]] | None = None
    for i, ch in enumerate(chars):
        if quoted[i] or ch not in "{},":
            continue
        if ch == "{":
            stack.append((i, []))
        elif ch == ",":
            if stack:
                stack[-1][1].append(i)
        elif stack:
            open_at, commas = stack.pop()
            if commas and (best is None or open_at < best[0]):
                best = (open_at, i, commas)
    return best


def basename(program: str) -> str:
    """The program name without its directory. Slashes inside a substitution or parameter
    expansion are not directories: ``$(curl https://x/i.sh)`` stays whole, so a rule still sees a
    substituted (unresolvable) program name."""
    text = program.rstrip("/") or program
    last = -1
    i = 0
    while i < len(text):
        if text.startswith("$(", i):
            i = find_closing(text, i + 2, "(", ")") + 1
        elif text.startswith("${", i):
            i = find_closing(text, i + 2, "{", "}") + 1
        elif text[i] == "`":
            end = text.find("`", i + 1)
            i = len(text) if end < 0 else end + 1
        else:
            if text[i] == "/":
                last = i
            i += 1
    return text[last + 1 :] or text


_PRINTERS = lazy_compile(r"^\s*(echo|printf)(\s.*)?$", re.DOTALL)
_CURRENT_DIRECTORY = lazy_compile(
    r"^\s*(?:pwd(?:\s+-[LP])?|git\s+rev-parse\s+--show-toplevel|realpath\s+\.|readlink\s+-[fem]\s+\.)\s*$"
)
_PATH_COMMAND = lazy_compile(r"^\s*(dirname|basename|realpath|readlink\s+-[fem]|readlink)\s+(.*)$", re.DOTALL)
_SUBSTITUTION = lazy_compile(r"\$\(([^()`]*)\)|`([^`]*)`")
_DEFAULT_EXPANSION = lazy_compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=])([^}]*)\}")
_ALWAYS_SET = frozenset({"HOME", "PWD", "USER", "LOGNAME", "PATH", "SHELL"})


def _static_output(command: str) -> str | None:
    """What a substitution's command prints, when it only prints words given on the line
    (``echo``, ``printf``) or the current directory (``pwd``, ``git rev-parse --show-toplevel``:
    ``.``); ``None`` otherwise."""
    if _CURRENT_DIRECTORY.match(command):
        return "."
    path_command = _PATH_COMMAND.match(command)
    if path_command is not None:
        try:
            words = shlex.split(path_command.group(2))
        except ValueError:
            return None
        operands = [w for w in words if not w.startswith("-")]
        if len(operands) != 1:
            return None
        operand = operands[0]
        if path_command.group(1) == "dirname":
            if operand.startswith(("$", "~")):
                return operand.rstrip("/") + "/.."
            return posixpath.dirname(operand) or "."
        if path_command.group(1) == "basename":
            return posixpath.basename(operand.rstrip("/"))
        return operand
    if "base64" in command or "xxd" in command or "rev" in command:
        decoded = _decoded_output(command)
        if decoded is not None:
            return decoded
    match = _PRINTERS.match(command)
    if match is None or any(ch in command for ch in ";|&<>`") or "$(" in command:
        return None
    try:
        words = shlex.split(match.group(2) or "")
    except ValueError:
        return None
    if match.group(1) == "echo":
        while words and words[0] in ("-n", "-e", "-E", "-ne", "-en"):
            words = words[1:]
        return " ".join(words).replace("\\n", "").strip()
    if not words:
        return ""
    template, values = words[0], words[1:]
    if "%" not in template:
        return template.replace("\\n", "").strip()
    pieces = re.split(r"%[-0-9.]*[sbd]", template)
    out = pieces[0]
    for index, piece in enumerate(pieces[1:]):
        out += (values[index] if index < len(values) else "") + piece
    return out.replace("\\n", "").replace("%%", "%").strip()


_DECODER = (
    r"(?P<d>base64\s+(?:-d|-di|-id|-D|--decode)|xxd\s+(?:-r\s+-p|-p\s+-r|-rp|-pr|-r\s+-ps|-ps\s+-r)|rev)"
)
_LITERAL = r"(?P<q>['\"]?)(?P<t>[A-Za-z0-9+/=._~ -]{1,4096})(?P=q)"
_PIPED_LITERAL = lazy_compile(
    r"^\s*(?:echo(?:\s+-n)?|printf(?:\s+%s)?)\s+" + _LITERAL + r"\s*\|\s*" + _DECODER + r"\s*$"
)
_HERE_LITERAL = lazy_compile(r"^\s*" + _DECODER + r"\s*<<<\s*" + _LITERAL + r"\s*$")


def _decoded_output(command: str) -> str | None:
    """What a decoder prints for a literal the line gives it (``echo TEXT | base64 -d``, ``base64
    -d <<< TEXT``, ``xxd -r -p``, ``rev``): the text a substitution hides behind an encoding
    (ATT&CK T1140), when it is printable; ``None`` otherwise."""
    found = _PIPED_LITERAL.match(command) or _HERE_LITERAL.match(command)
    if found is None:
        return None
    decoder, literal = found.group("d"), found.group("t").strip()
    try:
        if decoder.startswith("base64"):
            out = base64.b64decode(literal + "=" * (-len(literal) % 4), validate=False).decode()
        elif decoder.startswith("xxd"):
            out = bytes.fromhex(literal.replace(" ", "")).decode()
        else:
            out = literal[::-1]
    except (ValueError, binascii.Error):  # UnicodeDecodeError is a ValueError too
        return None
    out = out.rstrip("\n")
    return out if out and out.isprintable() else None


def resolved_word(word: str, variables: dict[str, str]) -> str:
    """An operand with what the line itself determines filled in: substitutions that only print
    (``$(echo ~)``, `` `pwd` ``), ``$PWD`` (the current directory, ``.``), and the default of
    ``${NAME:-default}`` for a variable the line never sets."""
    if "$" not in word and "`" not in word:
        return word

    def substitution(match: re.Match[str]) -> str:
        output = _static_output(match.group(1) if match.group(1) is not None else match.group(2))
        return match.group(0) if output is None else output

    def default(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables or name in _ALWAYS_SET:
            return match.group(0)
        return match.group(3)

    resolved = _SUBSTITUTION.sub(substitution, word)
    resolved = _DEFAULT_EXPANSION.sub(default, resolved)
    if "PWD" not in variables:
        resolved = re.sub(r"\$(?:PWD\b|\{PWD\})", ".", resolved)
    return resolved


MAX_LOOP_VALUES = 16
"""Most values of a ``for`` loop a body command is listed with; the rest share the last one."""


def loop_bodies(command: list[str], loops: dict[str, list[str]]) -> list[list[str]]:
    """A command using a ``for`` variable of the line, once per value the loop gives it (the first
    :data:`MAX_LOOP_VALUES`); other commands as they are."""
    if not loops or not any("$" in word for word in command[1:]):
        return [command]
    for name, values in loops.items():
        use = re.compile(r"\$(?:\{" + re.escape(name) + r"\}|" + re.escape(name) + r"(?![A-Za-z0-9_]))")
        if any(use.search(word) for word in command[1:]):
            return [
                [command[0], *(use.sub(value.replace("\\", "\\\\"), word) for word in command[1:])]
                for value in values[:MAX_LOOP_VALUES]
            ]
    return [command]


def resolved_operands(command: list[str], variables: dict[str, str]) -> list[str]:
    """``command`` with its operands (never the program name, which stays visibly unresolvable)
    resolved by :func:`resolved_word`."""
    if len(command) < 2 or not any("$" in a or "`" in a for a in command[1:]):
        return command
    return [command[0], *(resolved_word(arg, variables) for arg in command[1:])]
