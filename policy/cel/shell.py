"""``shell.commands``: the argv of every simple command a shell line would run.

Rules such as "never ``rm -rf /``" must hold however the agent spells the command, so this module
reads a line the way a POSIX shell (bash flavoured) would, lexically and without executing
anything:

- quoting: ``'...'``, ``"..."``, ``$'...'`` (ANSI-C escapes such as ``\\x72``), ``$"..."``,
  backslash escapes and line continuations, so ``\\rm``, ``r''m`` and ``$'\\x72m'`` are all ``rm``;
- command lists: ``;``, ``&&``, ``||``, ``|``, ``|&``, ``&``, newlines, ``( ... )`` subshells,
  ``{ ...; }`` groups and the keywords of compound commands (``if``/``then``/``do``/...);
- substitutions: ``$(...)``, backticks, ``<(...)``/``>(...)`` and those inside ``${...}``,
  ``$((...))``, double quotes and unquoted here-documents; their commands are listed before the
  command that contains them (they run first). The containing word keeps its raw text;
- word expansions that hide a command name: brace expansion (``{rm,-rf,/}``), ``$IFS``
  splitting (``rm${IFS}-rf``) and variables assigned earlier on the same line (``a=rm; $a``);
- redirections (``> f``, ``2>&1``, ``<<EOF`` with its body) are removed from argv;
- leading ``NAME=value`` assignments are removed; argv[0] becomes its basename (``/bin/rm`` and
  ``./rm`` are ``rm``: a rule names programs, not where they live);
- wrappers are unwrapped: the wrapper is listed with only its own options (``["sudo", "-u",
  "root"]``) and the wrapped command follows as its own argv. Wrappers: ``sudo``, ``doas``,
  ``env`` (incl. ``-S``), ``nohup``, ``time``, ``nice``, ``timeout``, ``exec``, ``command``,
  ``builtin``, ``stdbuf``, ``ionice``, ``chroot``, ``setsid``, ``taskset``, ``busybox``,
  ``xargs``; ``bash|sh|zsh|dash|ksh|mksh|ash -c STRING``, ``su|runuser -c STRING`` and ``eval``
  parse their string as a shell line; ``find -exec|-execdir|-ok|-okdir ... ;`` lists the command
  it runs;
- a shell given neither ``-c`` nor a script file reads its script from stdin: its here-strings,
  here-document bodies and ``echo``/``printf`` text piped into it are parsed as shell lines.

Listing the wrapper as well as the wrapped command means a rule can forbid ``sudo`` itself, and an
allow-list rule (``all(c, c[0] in [...])``) must name the wrappers it accepts.

Bounded work: the input is limited to :data:`MAX_INPUT_CHARS` and nesting (substitutions inside
``bash -c`` inside ...) to :data:`MAX_NESTING`; beyond either, :class:`ShellLineTooComplexError`
is raised so a policy fails closed instead of guessing. Everything else, including unbalanced
quotes or parentheses, is split best-effort and never raises.
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache

MAX_INPUT_CHARS = 256 * 1024
"""Longest shell line accepted (characters)."""

MAX_NESTING = 16
"""Deepest nesting of substitutions and ``-c`` strings accepted."""

MAX_WORDS = 100_000
"""Most words produced for one line; brace expansion stops growing beyond it (words stay raw)."""

MAX_BRACE_WORDS = 256
"""Most words one brace expansion may produce; larger expansions keep the word unexpanded."""


class ShellLineTooComplexError(ValueError):
    """The line exceeds :data:`MAX_INPUT_CHARS` or :data:`MAX_NESTING`; callers fail closed."""


_IFS = ""  # a marker in a word's character list: unquoted $IFS, split here
_METACHARS = frozenset(" \t\n;&|()<>")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_SEPARATORS = ("|&", "&&", "||", ";;&", ";;", ";&", ";", "&", "|", "(", ")")
_REDIRECTIONS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">")
_SKIPPED_KEYWORDS = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "coproc"}
)
_DROPPED_KEYWORDS = frozenset({"for", "select", "case", "function", "in"})


@dataclass(slots=True)
class _Word:
    """A word as lexed: characters with a parallel "was quoted" flag (for brace and IFS rules)."""

    chars: list[str] = field(default_factory=list)
    quoted: list[bool] = field(default_factory=list)

    def add(self, text: str, quoted: bool) -> None:
        for ch in text:
            self.chars.append(ch)
            self.quoted.append(quoted)

    def text(self) -> str:
        return "".join(self.chars)

    def any_quoted(self) -> bool:
        return any(self.quoted)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "word" | "sep" | "redir"
    value: str
    word: _Word | None = None


class _Budget:
    """Work limits shared by every nested parse of one line."""

    __slots__ = ("variable_chars", "words")

    def __init__(self) -> None:
        self.words = 0
        self.variable_chars = 0


class _Lexer:
    """Turns a shell line into words, separators and redirections; collects substitution commands."""

    def __init__(self, text: str, depth: int, budget: _Budget, variables: dict[str, str]) -> None:
        self.text = text
        self.pos = 0
        self.depth = depth
        self.budget = budget
        self.variables = variables
        self.nested: list[list[str]] = []
        self.heredocs: list[tuple[str, bool, bool, list[str]]] = []  # ..., the owner's stdin

    # -- tokens -------------------------------------------------------------------------------

    def next_token(self) -> _Token | None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r":
                self.pos += 1
            elif ch == "\\" and text.startswith("\\\n", self.pos):
                self.pos += 2
            elif ch == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif ch == "\n":
                self.pos += 1
                self._read_heredoc_bodies()
                return _Token("sep", "\n")
            elif ch in "<>" and text.startswith("(", self.pos + 1):
                return self._word()
            elif ch in ";&|()<>":
                for op in _REDIRECTIONS if ch in "<>&" else ():
                    if text.startswith(op, self.pos):
                        self.pos += len(op)
                        return _Token("redir", op)
                for op in _SEPARATORS:
                    if text.startswith(op, self.pos):
                        self.pos += len(op)
                        return _Token("sep", op)
                self.pos += 1  # unreachable for the characters above; keeps the loop total
            else:
                return self._word()
        return None

    def _word(self) -> _Token:
        text = self.text
        word = _Word()
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in "<>" and text.startswith("(", self.pos + 1):
                self._substitution(word, self.pos + 2, "(", ")", quoted=True)
                continue
            if ch in _METACHARS:
                if ch in "<>" and word.chars and all(c.isdigit() for c in word.chars):
                    word = _Word()  # "2>" : the digits were a file descriptor, not a word
                    token = self.next_token()
                    return token if token is not None else _Token("sep", ";")
                break
            if ch == "\\":
                if text.startswith("\\\n", self.pos):
                    self.pos += 2
                else:
                    word.add(text[self.pos + 1 : self.pos + 2], True)
                    self.pos += 2
            elif ch == "'":
                end = text.find("'", self.pos + 1)
                end = len(text) if end < 0 else end
                word.add(text[self.pos + 1 : end], True)
                self.pos = end + 1
            elif ch == '"':
                self.pos += 1
                self._double_quoted(word)
            elif ch == "$":
                self._dollar(word, quoted=False)
            elif ch == "`":
                self._backticks(word, quoted=False)
            else:
                word.add(ch, False)
                self.pos += 1
        return _Token("word", word.text(), word)

    # -- quoting and expansions ---------------------------------------------------------------

    def _double_quoted(self, word: _Word) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == '"':
                self.pos += 1
                return
            if ch == "\\" and self.pos + 1 < len(text) and text[self.pos + 1] in '$`"\\\n':
                if text[self.pos + 1] != "\n":
                    word.add(text[self.pos + 1], True)
                self.pos += 2
            elif ch == "$":
                self._dollar(word, quoted=True)
            elif ch == "`":
                self._backticks(word, quoted=True)
            else:
                word.add(ch, True)
                self.pos += 1

    def _dollar(self, word: _Word, quoted: bool) -> None:
        text = self.text
        nxt = text[self.pos + 1 : self.pos + 2]
        if nxt == "'" and not quoted:
            self.pos += 2
            word.add(self._ansi_c(), True)
        elif nxt == '"' and not quoted:
            self.pos += 2
            self._double_quoted(word)
        elif text.startswith("$((", self.pos):
            end = _find_closing(text, self.pos + 3, "(", ")", depth=2)
            inner = text[self.pos + 3 : max(end - 1, self.pos + 3)]
            self._scan_for_substitutions(inner)
            word.add(text[self.pos : end + 1], True)
            self.pos = end + 1
        elif nxt == "(":
            self._substitution(word, self.pos + 2, "(", ")", quoted=True)
        elif nxt == "{":
            end = _find_closing(text, self.pos + 2, "{", "}")
            inner = text[self.pos + 2 : end]
            if inner == "IFS" and not quoted:
                word.chars.append(_IFS)
                word.quoted.append(False)
            elif inner in self.variables:
                self._add_variable(word, inner, quoted)
            else:
                self._scan_for_substitutions(inner)
                word.add(text[self.pos : end + 1], True)
            self.pos = end + 1
        else:
            match = _NAME.match(text, self.pos + 1)
            if match is None:
                word.add("$", quoted)
                self.pos += 1
                return
            name = match.group()
            self.pos = match.end()
            if name == "IFS" and not quoted:
                word.chars.append(_IFS)
                word.quoted.append(False)
            elif name in self.variables:
                self._add_variable(word, name, quoted)
            else:
                word.add("$" + name, True)

    def _add_variable(self, word: _Word, name: str, quoted: bool) -> None:
        value = self.variables[name]
        self.budget.variable_chars += len(value)
        if self.budget.variable_chars > MAX_INPUT_CHARS:
            word.add("$" + name, True)  # exponential self-concatenation: stop substituting
        else:
            word.add(value, quoted)

    def _ansi_c(self) -> str:
        """Decode ``$'...'`` from just after the opening quote; leaves pos after the closing one."""
        text = self.text
        out: list[str] = []
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "'":
                self.pos += 1
                break
            if ch != "\\" or self.pos + 1 >= len(text):
                out.append(ch)
                self.pos += 1
                continue
            esc = text[self.pos + 1]
            self.pos += 2
            if esc in _ANSI_SIMPLE:
                out.append(_ANSI_SIMPLE[esc])
            elif esc in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[esc]
                digits = _take(text, self.pos, width, "0123456789abcdefABCDEF")
                self.pos += len(digits)
                out.append(_chr(int(digits, 16)) if digits else "\\" + esc)
            elif esc in "01234567":
                digits = esc + _take(text, self.pos, 2, "01234567")
                self.pos += len(digits) - 1
                out.append(_chr(int(digits, 8) & 0xFF))
            elif esc == "c" and self.pos < len(text):
                out.append(chr(ord(text[self.pos]) & 0x1F))
                self.pos += 1
            else:
                out.append("\\" + esc)
        return "".join(out)

    def _substitution(self, word: _Word, start: int, opening: str, closing: str, quoted: bool) -> None:
        end = _find_closing(self.text, start, opening, closing)
        self.nested.extend(_parse(self.text[start:end], self.depth + 1, self.budget, self.variables))
        word.add(self.text[self.pos : end + 1], quoted)
        self.pos = end + 1

    def _backticks(self, word: _Word, quoted: bool) -> None:
        text = self.text
        i = self.pos + 1
        inner: list[str] = []
        while i < len(text) and text[i] != "`":
            if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in "`$\\":
                inner.append(text[i + 1])
                i += 2
            else:
                inner.append(text[i])
                i += 1
        self.nested.extend(_parse("".join(inner), self.depth + 1, self.budget, self.variables))
        word.add(text[self.pos : i + 1], quoted)
        self.pos = i + 1

    def _scan_for_substitutions(self, text: str) -> None:
        """Collect the commands of substitutions inside text that is not itself a command line
        (``${x:-$(cmd)}``, ``$(( $(cmd) + 1 ))``, an unquoted here-document body)."""
        if "$" not in text and "`" not in text:
            return
        if self.depth + 1 > MAX_NESTING:
            raise ShellLineTooComplexError(f"shell line nests deeper than {MAX_NESTING} levels")
        lexer = _Lexer(text, self.depth + 1, self.budget, self.variables)
        while lexer.next_token() is not None:
            pass
        self.nested.extend(lexer.nested)

    def _read_heredoc_bodies(self) -> None:
        text = self.text
        for delimiter, literal, strip_tabs, stdin in self.heredocs:
            body: list[str] = []
            while self.pos < len(text):
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[self.pos : end]
                self.pos = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            stdin.append("\n".join(body))
            if not literal:
                self._scan_for_substitutions(stdin[-1])
        self.heredocs.clear()
        self.pos = min(self.pos, len(text))


def _take(text: str, start: int, width: int, alphabet: str) -> str:
    end = start
    while end < len(text) and end - start < width and text[end] in alphabet:
        end += 1
    return text[start:end]


def _chr(code: int) -> str:
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def _find_closing(text: str, start: int, opening: str, closing: str, depth: int = 1) -> int:
    """Index of the bracket closing one opened just before ``start`` (quote-aware); ``len(text)``
    when it is never closed."""
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


# -- words to argv ------------------------------------------------------------------------------


def _expand(word: _Word, budget: _Budget) -> list[str]:
    """IFS splitting then brace expansion, on the unquoted parts only."""
    pieces: list[_Word] = [_Word()]
    for ch, quoted in zip(word.chars, word.quoted, strict=True):
        if ch == _IFS and not quoted:
            pieces.append(_Word())
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


def _brace_expand(word: _Word, budget: _Budget) -> list[str]:
    text = word.text()
    if "{" not in text or budget.words > MAX_WORDS:
        return [text]
    results: list[str] = []
    pending = [(word.chars, word.quoted)]
    while pending:
        chars, quoted = pending.pop()
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
    """Position of the first unquoted ``{a,b}`` group with a top-level comma, if any."""
    for open_at, ch in enumerate(chars):
        if ch != "{" or quoted[open_at]:
            continue
        depth = 0
        commas: list[int] = []
        for i in range(open_at + 1, len(chars)):
            if quoted[i]:
                continue
            if chars[i] == "{":
                depth += 1
            elif chars[i] == "}":
                if depth == 0:
                    if commas:
                        return open_at, i, commas
                    break
                depth -= 1
            elif chars[i] == "," and depth == 0:
                commas.append(i)
    return None


def _parse(text: str, depth: int, budget: _Budget, variables: dict[str, str]) -> list[list[str]]:
    if depth > MAX_NESTING:
        raise ShellLineTooComplexError(f"shell line nests deeper than {MAX_NESTING} levels")
    lexer = _Lexer(text, depth, budget, variables)
    commands: list[list[str]] = []
    argv: list[str] = []
    stdin: list[str] = []  # texts the current command reads as stdin: here-strings, here-documents
    script_readers: list[list[str]] = []  # stdin of shells that read their script from it

    def finish(separator: str) -> None:
        nonlocal stdin
        commands.extend(lexer.nested)
        lexer.nested.clear()
        piped_text = _printed_text(argv) if separator in ("|", "|&") else None
        if argv:
            commands.extend(_unwrap(list(argv), depth, budget, variables, stdin, script_readers))
            argv.clear()
        stdin = [] if piped_text is None else [piped_text]  # `echo 'rm -rf /' | sh`

    while (token := lexer.next_token()) is not None:
        if token.kind == "sep":
            finish(token.value)
        elif token.kind == "redir":
            target = lexer.next_token()
            if target is None:
                break
            if target.kind != "word":
                finish(target.value)
                continue
            if token.value in ("<<", "<<-") and target.word is not None:
                heredoc = (target.value, target.word.any_quoted(), token.value == "<<-", stdin)
                lexer.heredocs.append(heredoc)
            elif token.value == "<<<":
                stdin.append(target.value)
        elif token.word is not None:
            in_prefix = all(_ASSIGNMENT.match(word) for word in argv)
            if in_prefix and _ASSIGNMENT.match(token.value) and not token.word.quoted[0]:
                name, _, value = token.value.partition("=")
                if _NAME.fullmatch(name.rstrip("+")) and "$(" not in value and "`" not in value:
                    variables[name.rstrip("+")] = value
            argv.extend(_expand(token.word, budget))
    finish(";")
    for texts in script_readers:  # here-document bodies are read after their command ends
        for script in texts:
            commands.extend(_parse(script, depth + 1, budget, variables))
    return commands


def _printed_text(argv: list[str]) -> str | None:
    """What ``echo``/``printf`` would write, roughly: enough to read a script piped into a shell."""
    if not argv or _basename(argv[0]) not in ("echo", "printf"):
        return None
    words = [a for a in argv[1:] if not (a.startswith("-") and len(a) <= 3)]
    return " ".join(words).replace("\\n", "\n")


# -- wrappers -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _WrapperOptions:
    """How a wrapper's own options are spelled, so the wrapped command can be found after them."""

    short_with_value: str = ""
    long_with_value: frozenset[str] = frozenset()
    operands: int = 0  # operands before the command: ``timeout DURATION``, ``chroot NEWROOT``
    assignments: bool = False  # ``env NAME=value``
    numeric_flags: bool = False  # ``nice -10``


_WRAPPERS: dict[str, _WrapperOptions] = {
    "sudo": _WrapperOptions(
        "CDghpRrtTUu",
        frozenset({"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type",
                   "command-timeout", "other-user", "user"}),
    ),
    "doas": _WrapperOptions("uC"),
    "env": _WrapperOptions("uCS", frozenset({"unset", "chdir", "split-string"}), assignments=True),
    "nohup": _WrapperOptions(),
    "time": _WrapperOptions("fo", frozenset({"format", "output"})),
    "nice": _WrapperOptions("n", frozenset({"adjustment"}), numeric_flags=True),
    "timeout": _WrapperOptions("sk", frozenset({"signal", "kill-after"}), operands=1),
    "exec": _WrapperOptions("a"),
    "command": _WrapperOptions(),
    "builtin": _WrapperOptions(),
    "stdbuf": _WrapperOptions("ioe", frozenset({"input", "output", "error"})),
    "ionice": _WrapperOptions("cnpPu", frozenset({"class", "classdata", "pid", "pgid", "uid"})),
    "chroot": _WrapperOptions("", frozenset({"userspec", "groups"}), operands=1),
    "setsid": _WrapperOptions(),
    "taskset": _WrapperOptions("", operands=1),
    "busybox": _WrapperOptions(),
    "xargs": _WrapperOptions(
        "adEILnPs",
        frozenset({"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs",
                   "max-chars", "process-slot-var"}),
    ),
}  # fmt: skip
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash"})
_SHELL_OPTIONS = _WrapperOptions("oO", frozenset({"rcfile", "init-file"}))
_SU_OPTIONS = _WrapperOptions("cgGsw", frozenset({"command", "group", "supp-group", "shell",
                                                  "whitelist-environment"}))  # fmt: skip
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _split_options(argv: list[str], options: _WrapperOptions) -> int:
    """Index of the first argv element after the wrapper's options and operands."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if arg.startswith("--") and len(arg) > 2:
            name = arg[2:]
            i += 2 if "=" not in name and name in options.long_with_value else 1
        elif arg[:1] in "-+" and len(arg) > 1:
            if options.numeric_flags and arg[1:].isdigit():
                i += 1
                continue
            takes_next = False
            for j, letter in enumerate(arg[1:], start=1):
                if letter in options.short_with_value:
                    takes_next = j == len(arg) - 1
                    break
            i += 2 if takes_next else 1
        elif options.assignments and _ASSIGNMENT.match(arg):
            i += 1
        else:
            break
    return min(i + options.operands, len(argv))


def _option_value(argv: list[str], stop: int, short: str, long: str) -> str | None:
    """The value of ``-X VALUE`` / ``-XVALUE`` / ``--long=VALUE`` / ``--long VALUE`` before ``stop``."""
    for i in range(1, stop):
        arg = argv[i]
        if arg.startswith("--" + long):
            if arg.startswith(f"--{long}="):
                return arg.partition("=")[2]
            if arg == "--" + long and i + 1 < len(argv):
                return argv[i + 1]
        elif arg.startswith("-") and not arg.startswith("--") and short in arg[1:]:
            at = arg.index(short, 1)
            rest = arg[at + 1 :]
            if rest:
                return rest
            return argv[i + 1] if i + 1 < len(argv) else ""
    return None


def _basename(program: str) -> str:
    base = program.rstrip("/").rsplit("/", 1)[-1]
    return base or program


def _unwrap(
    argv: list[str],
    depth: int,
    budget: _Budget,
    variables: dict[str, str],
    stdin: list[str],
    script_readers: list[list[str]],
) -> list[list[str]]:
    out: list[list[str]] = []

    def parse(script: str) -> list[list[str]]:
        return _parse(script, depth + 1, budget, variables)

    while argv:
        while argv and _ASSIGNMENT.match(argv[0]):
            argv = argv[1:]
        while argv and argv[0] in _SKIPPED_KEYWORDS:
            argv = argv[1:]
        if not argv or argv[0] in _DROPPED_KEYWORDS:
            break
        argv[0] = _basename(argv[0])
        program = argv[0]
        if program in _SHELLS:
            stop = _split_options(argv, _SHELL_OPTIONS)
            has_c = any(a.startswith("-") and not a.startswith("--") and "c" in a[1:] for a in argv[1:stop])
            if not has_c or stop >= len(argv):
                out.append(argv)
                if not has_c and stop >= len(argv):  # no -c and no script file: reads stdin
                    script_readers.append(stdin)
                break
            out.append(argv[:stop] + argv[stop + 1 :])
            out.extend(parse(argv[stop]))
            break
        if program in ("su", "runuser"):
            stop = _split_options(argv, _SU_OPTIONS)
            out.append(argv)
            script = _option_value(argv, stop, "c", "command")
            if script:
                out.extend(parse(script))
            break
        if program == "eval":
            out.append(["eval"])
            out.extend(parse(" ".join(argv[1:])))
            break
        if program == "find":
            out.extend(_find_exec(argv))
            break
        options = _WRAPPERS.get(program)
        if options is None:
            out.append(argv)
            break
        stop = _split_options(argv, options)
        out.append(argv[:stop])
        if program == "env":
            script = _option_value(argv, stop, "S", "split-string")
            if script is not None:
                out.extend(parse(" ".join([script, *map(shlex.quote, argv[stop:])])))
                break
        argv = argv[stop:]
    return out


def _find_exec(argv: list[str]) -> list[list[str]]:
    """``find`` itself, then each command its ``-exec``-style actions run."""
    out = [argv]
    i = 1
    while i < len(argv):
        if argv[i] in _FIND_EXEC:
            end = i + 1
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                inner = argv[i + 1 : end]
                inner[0] = _basename(inner[0])
                out.append(inner)
            i = end
        i += 1
    return out


def shell_commands(line: str) -> list[list[str]]:
    """The argv of every simple command ``line`` would run, in execution order (see module doc).

    Raises :class:`ShellLineTooComplexError` only beyond the documented size and nesting limits;
    raises ``TypeError`` when ``line`` is not a string.
    """
    if not isinstance(line, str):
        raise TypeError(f"shell.commands expects a string, got {type(line).__name__}")
    if len(line) > MAX_INPUT_CHARS:
        raise ShellLineTooComplexError(f"shell line longer than {MAX_INPUT_CHARS} characters")
    return [list(argv) for argv in _parse_cached(line)]


@lru_cache(maxsize=256)
def _parse_cached(line: str) -> tuple[tuple[str, ...], ...]:
    """Rules of one event usually parse the same line many times (and a comprehension may do it
    per element), so parses are cached; callers get fresh lists."""
    return tuple(tuple(argv) for argv in _parse(line, 0, _Budget(), {}))


def shell_argv0s(line: str) -> list[str]:
    """The program names (argv[0]) of :func:`shell_commands`, in order; handy for allow-lists."""
    return [argv[0] for argv in shell_commands(line) if argv]
