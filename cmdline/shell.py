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
- redirections (``> f``, ``2>&1``, ``<<EOF`` with its body) are removed from argv and listed by
  :func:`shell_redirects` instead;
- leading ``NAME=value`` assignments are removed; argv[0] becomes its basename (``/bin/rm`` and
  ``./rm`` are ``rm``: a rule names programs, not where they live), except that a slash inside a
  substitution is no directory: ``$(curl https://x/i.sh)`` stays whole, visibly unresolvable;
- wrappers are unwrapped: the wrapper is listed with only its own options (``["sudo", "-u",
  "root"]``) and the wrapped command follows as its own argv. Wrappers that run their operands
  as a command: ``sudo``, ``doas``, ``env`` (incl. ``-S``), ``nohup``, ``time``, ``nice``,
  ``timeout``, ``exec``, ``command``, ``builtin``, ``stdbuf``, ``ionice``, ``chroot``,
  ``setsid``, ``taskset``, ``busybox``, ``xargs``, ``strace``, ``ltrace``, ``unbuffer``,
  ``fakeroot``, ``systemd-run``, ``firejail``, ``proot``, ``unshare``, ``nsenter``, ``pkexec``,
  ``chrt``, ``flock``, ``screen``, ``entr``, ``runuser -u USER --`` and more (see
  :data:`_WRAPPERS`); package runners run a package's bin (``npx rimraf`` is ``rimraf``; also
  ``npm exec``, ``pnpm dlx|exec``, ``yarn dlx|exec``, ``bunx``, ``uvx``, ``uv run``, ``pipx
  run``, ``poetry run``, ``bundle exec``, ``conda run``). Wrappers whose command is one string
  parse it as a shell line: ``bash|sh|zsh|... -c``, ``su|runuser -c`` (anywhere: they permute
  options), ``eval``, ``watch`` (its words joined, as it runs them through ``sh -c``),
  ``script -c``, ``flock FILE -c``, ``sg GROUP [-c]``, ``npx -c``, ``pnpm --shell-mode``,
  ``hyperfine`` operands, ``entr -s``, tmux's shell commands (``new``, ``neww``, ``splitw``,
  ``run-shell``, ``if-shell``, ``popup``, ``pipe-pane``, ``respawn-*``) and the text ``tmux
  send-keys`` or ``screen -X stuff`` types; ``parallel CMD ::: ARGS`` runs one job per argument
  (without ``CMD`` each argument is a command line); ``find -exec|-execdir|-ok|-okdir ... ;``
  lists the command it runs;
- programs that run a string (issue 13): interpreter code (``python -c``, ``node -e``, ``perl
  -e``, awk programs, sed ``e``, here-documents and pipes fed to ``python3 -``; see
  :mod:`~dsh_policy.cmdline.interpreters`) lists the commands it shells out to; commands run
  in a container (``docker|podman exec|run``, ``docker compose exec|run``, ``kubectl exec|run|
  debug ... --``) are listed like local ones; option values that are command lines are parsed
  (``tar --checkpoint-action=exec=``/``--to-command``/``-I``, ``zip -TT``, ``make --eval``,
  ``vim -c '!...'``/``+'!...'``, ``man -P``, ``gdb -ex '!...'``, ``rsync -e``, ``ssh -o
  ProxyCommand=``, ``socat EXEC:``, ``nc -e``, ``git -c core.pager=...``, ``git rebase --exec``,
  ``git submodule foreach``, ``apt-get -o ...::Pre-Invoke=``), as are variables whose value a
  program runs (``PAGER=``, ``EDITOR=``, ``GIT_SSH_COMMAND=``, ...), database clients' shell
  escapes (``\\! cmd``, ``.shell cmd``) and framework consoles (``rails runner``, ``manage.py shell
  -c``);
- definitions on the line: an alias is expanded where it is used, a function's body is listed
  again where it is called with ``$1``... bound to the call's words, ``sh -c LINE ARGS`` binds
  ``$0``, ``$1``... to ARGS, a ``for`` loop's body is listed once per value, and ``{}`` of
  ``find START -exec`` is a path under START (``/srv/{}``; under ``.`` it stays ``{}``);
- operands (never the program name, which stays visibly unresolvable) whose value the line
  itself determines are resolved: substitutions that only print (``$(echo ~)``, ``$(printf '%s'
  /x)``, ``$(dirname "$HOME")``, and ``$(pwd)``, ``$(git rev-parse --show-toplevel)`` and
  ``$PWD`` as ``.``), variables assigned from them (``d=$(pwd); rm -rf "$d"``), and the default
  of ``${NAME:-default}`` for a variable the line never sets;
- a shell given neither ``-c`` nor a script file reads its script from stdin: its here-strings,
  here-document bodies and ``echo``/``printf`` text piped into it are parsed as shell lines. A
  wrapper that feeds stdin to a shell is listed the same way, followed by ``["sh"]``: ``at`` and
  ``batch`` (``at -f FILE`` is ``["sh", FILE]``), ``parallel`` without command or arguments,
  ``script`` without ``-c``, ``su``/``sg``/``newgrp`` without a command, ``sudo -s|-i`` and
  ``fakeroot``, ``chroot``, ``unshare``, ``nsenter``, ``firejail``, ``proot`` without one.
  ``ssh HOST CMD`` is not unwrapped: CMD runs on another machine.

Listing the wrapper as well as the wrapped command means a rule can forbid ``sudo`` itself, and an
allow-list rule (``all(c, c[0] in [...])``) must name the wrappers it accepts.

Bounded work: the input is limited to :data:`MAX_INPUT_CHARS`, nesting (substitutions inside
``bash -c`` inside ...) to :data:`MAX_NESTING` and the text read in all, counting re-reads of
nested strings, to :data:`MAX_LEXED_CHARS`; beyond any of them, :class:`ShellLineTooComplexError`
is raised so a policy fails closed instead of guessing. Everything else, including unbalanced
quotes or parentheses, is split best-effort and never raises.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from dsh_policy.cmdline import interpreters, sql
from dsh_policy.cmdline.deadline import DeadlineExceededError, check_deadline

MAX_INPUT_CHARS = 256 * 1024
"""Longest shell line accepted (characters)."""

MAX_NESTING = 16
"""Deepest nesting of substitutions and ``-c`` strings accepted."""

MAX_WORDS = 100_000
"""Most words produced for one line; brace expansion stops growing beyond it (words stay raw)."""

MAX_LEXED_CHARS = 2 * MAX_INPUT_CHARS
"""Most characters read for one line, counting each nested string (``bash -c``, substitutions,
``parallel`` jobs) every time it is read; beyond it, :class:`ShellLineTooComplexError`."""

MAX_COMMANDS = 10_000
"""Most simple commands listed for one line (counting those inside ``bash -c`` and substitutions);
beyond it, :class:`ShellLineTooComplexError`. A line of 100,000 ``a|`` is no command anyone types,
and listing it would cost seconds on every rule that reads it."""

MAX_TOKENS = 20_000
"""Most words, operators and separators read for one line (all nesting levels); beyond it,
:class:`ShellLineTooComplexError`. 60,000 ``{`` run nothing, but reading them costs a second."""

MAX_PARALLEL_JOBS = 32
"""Most ``parallel ::: ARGS`` jobs listed one by one; further arguments share one last job."""

MAX_BRACE_WORDS = 256
"""Most words one brace expansion may produce; larger expansions keep the word unexpanded."""


class ShellLineTooComplexError(ValueError):
    """The line exceeds :data:`MAX_INPUT_CHARS` or :data:`MAX_NESTING`; callers fail closed."""


_IFS = ""  # a marker in a word's character list: unquoted $IFS, split here
_METACHARS = frozenset(" \t\n;&|()<>")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSITIONAL = re.compile(r"[0-9@*#]")
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
class DatabaseClient:
    """A database client invocation: its program, the server it talks to and the database."""

    client: str  # psql, mysql, sqlite3, mongosh, redis-cli, ...
    dialect: str  # "sql", "mongo" or "redis"
    host: str  # "" when the client uses its default (a local socket, localhost)
    database: str


@dataclass(frozen=True, slots=True)
class DatabaseText:
    """Text a database client sends: SQL, MongoDB shell code, or one redis command (``argv``)."""

    client: DatabaseClient
    text: str
    argv: tuple[str, ...] = ()


_Reader = str | DatabaseClient | None
"""Who reads a command's stdin as its script: a shell (None), an interpreter (its language) or
a database client."""


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "word" | "sep" | "redir"
    value: str
    word: _Word | None = None
    fd: str = ""  # a redirection's explicit file descriptor: "2" in ``2>/dev/null``


class _Budget:
    """Work limits shared by every nested parse of one line, and what it found besides commands:
    redirections, effects of interpreter code, aliases and functions the line defines."""

    __slots__ = ("aliases", "databases", "effects", "functions", "lexed_chars", "loops", "redirects",
                 "tokens", "variable_chars", "words")  # fmt: skip

    def __init__(self) -> None:
        self.tokens = 0
        self.words = 0
        self.variable_chars = 0
        self.lexed_chars = 0
        self.redirects: list[tuple[str, str, str]] = []  # (fd, op, target)
        self.effects: list[dict[str, str]] = []
        self.aliases: dict[str, str] = {}
        self.functions: dict[str, str] = {}  # name -> body text
        self.databases: list[DatabaseText] = []
        self.loops: dict[str, list[str]] = {}  # for-loop variable -> the words it takes in turn


class _Lexer:
    """Turns a shell line into words, separators and redirections; collects substitution commands."""

    def __init__(self, text: str, depth: int, budget: _Budget, variables: dict[str, str]) -> None:
        budget.lexed_chars += len(text)
        if budget.lexed_chars > MAX_LEXED_CHARS:  # nested strings re-read: parallel in parallel
            raise ShellLineTooComplexError(
                f"shell line unwraps into more than {MAX_LEXED_CHARS} characters of commands"
            )
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
                    fd = word.text()  # "2>" : the digits were a file descriptor, not a word
                    token = self.next_token()
                    if token is None:
                        return _Token("sep", ";")
                    return _Token(token.kind, token.value, token.word, fd) if token.kind == "redir" else token
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
            match = _NAME.match(text, self.pos + 1) or _POSITIONAL.match(text, self.pos + 1)
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


def _parse(text: str, depth: int, budget: _Budget, variables: dict[str, str]) -> list[list[str]]:
    if depth > MAX_NESTING:
        raise ShellLineTooComplexError(f"shell line nests deeper than {MAX_NESTING} levels")
    lexer = _Lexer(text, depth, budget, variables)
    if "{" in text:
        for match in _FUNCTION_DEFINITION.finditer(text):
            end = _find_closing(text, match.end(), "{", "}")
            budget.functions.setdefault(match.group(1) or match.group(2), text[match.end() : end])
    commands: list[list[str]] = []
    argv: list[str] = []
    stdin: list[str] = []  # texts the current command reads as stdin: here-strings, here-documents
    # stdin of programs that read their script from it: None for a shell, a language for an
    # interpreter, a DatabaseClient for a database client
    script_readers: list[tuple[_Reader, list[str]]] = []

    def finish(separator: str) -> None:
        nonlocal stdin
        commands.extend(lexer.nested)
        lexer.nested.clear()
        piped_text = _printed_text(argv) if separator in ("|", "|&") else None
        # `cat <<EOF | python3`: cat passes its here-document on (the same list: bodies come later)
        passes_stdin = separator in ("|", "|&") and _passes_stdin(argv)
        if argv:
            commands.extend(_unwrap(list(argv), depth, budget, variables, stdin, script_readers))
            argv.clear()
        if len(commands) > MAX_COMMANDS:
            raise ShellLineTooComplexError(f"shell line runs more than {MAX_COMMANDS} commands")
        if passes_stdin:
            return
        stdin = [] if piped_text is None else [piped_text]  # `echo 'rm -rf /' | sh`

    while (token := lexer.next_token()) is not None:
        budget.tokens += 1
        if not budget.tokens & 255:
            _check_time()
            if budget.tokens > MAX_TOKENS:
                raise ShellLineTooComplexError(f"shell line has more than {MAX_TOKENS} words and operators")
        if token.kind == "sep":
            finish(token.value)
        elif token.kind == "redir":
            target = lexer.next_token()
            if target is None:
                break
            if target.kind != "word":
                finish(target.value)
                continue
            budget.redirects.append((token.fd, token.value, _redirect_target(target, budget)))
            if token.value in ("<<", "<<-") and target.word is not None:
                heredoc = (target.value, target.word.any_quoted(), token.value == "<<-", stdin)
                lexer.heredocs.append(heredoc)
            elif token.value == "<<<":
                stdin.append(target.value)
        elif token.word is not None:
            in_prefix = all(_ASSIGNMENT.match(word) for word in argv)
            if in_prefix and _ASSIGNMENT.match(token.value) and not token.word.quoted[0]:
                name, _, value = token.value.partition("=")
                if _NAME.fullmatch(name.rstrip("+")):
                    # `d=$(pwd)` keeps the substitution's text: an operand `$d` is then resolved
                    # like `$(pwd)` itself, and a program name `$d` stays unresolvable
                    variables[name.rstrip("+")] = value
            argv.extend(_expand(token.word, budget))
    finish(";")
    for language, texts in script_readers:  # here-document bodies are read after their command ends
        for script in texts:
            if language is None:
                commands.extend(_parse(script, depth + 1, budget, variables))
            elif isinstance(language, DatabaseClient):
                commands.extend(_database_text(language, script, depth, budget, variables))
            else:
                commands.extend(_code_commands(language, script, depth, budget, variables))
    return commands


def _database_text(
    client: DatabaseClient, text: str, depth: int, budget: _Budget, variables: dict[str, str]
) -> list[list[str]]:
    """Record what a database client sends; its shell escapes (``\\! CMD``, ``.shell CMD``,
    ``system CMD``) are commands it runs."""
    if client.dialect == "redis":
        for argv in sql.redis_argvs(text):
            budget.databases.append(DatabaseText(client, " ".join(argv), tuple(argv)))
        return []
    budget.databases.append(DatabaseText(client, text[: sql.MAX_SQL_CHARS]))
    if client.dialect != "sql" or not any(m in text for m in ("\\!", ".shell", ".system", "system")):
        return []
    commands: list[list[str]] = []
    for statement in sql.sql_statements(text):
        if statement["kind"] == "shell" and statement.get("command"):
            commands.extend(_parse(statement["command"], depth + 1, budget, dict(variables)))
    return commands


def _code_commands(
    language: str, code: str, depth: int, budget: _Budget, variables: dict[str, str]
) -> list[list[str]]:
    """The commands interpreter ``code`` runs (its shell-outs), parsed like ``bash -c`` lines;
    its other effects go to the budget (see :mod:`~dsh_policy.cmdline.interpreters`)."""
    if depth + 1 > MAX_NESTING:
        raise ShellLineTooComplexError(f"shell line nests deeper than {MAX_NESTING} levels")
    budget.lexed_chars += len(code)
    if budget.lexed_chars > MAX_LEXED_CHARS:
        raise ShellLineTooComplexError(
            f"shell line unwraps into more than {MAX_LEXED_CHARS} characters of commands"
        )
    analysis = interpreters.analyze(code, language)
    budget.effects.extend(analysis.effects)
    commands: list[list[str]] = []
    for line in analysis.shell_lines:
        commands.extend(_parse(line, depth + 1, budget, dict(variables)))
    for argv in analysis.argvs:
        if argv:
            commands.extend(_unwrap(list(argv), depth + 1, budget, dict(variables), [], []))
    return commands


def _check_time() -> None:
    """The stage's deadline (``cmdline.deadline``) holds inside a parse too."""
    try:
        check_deadline()
    except DeadlineExceededError as error:
        raise _DeadlineInParse(f"reading the shell line took too long: {error}") from None


def _redirect_target(target: _Token, budget: _Budget) -> str:
    """The file a redirection names, as the shell would open it: quotes removed, ``$'..'``
    decoded, known variables and ``$IFS`` substituted. A word that would expand to several words
    (an "ambiguous redirect" to bash) keeps its text."""
    if target.word is None:
        return target.value
    words = _expand(target.word, budget)
    return _resolved_word(words[0], {}) if len(words) == 1 else target.value


def _passes_stdin(argv: list[str]) -> bool:
    """Whether the command copies its stdin to its stdout (``cat`` or ``tee`` without files)."""
    return bool(argv) and _basename(argv[0]) in ("cat", "tee") and all(a.startswith("-") for a in argv[1:])


def _printed_text(argv: list[str]) -> str | None:
    """What ``echo``/``printf`` would write, roughly: enough to read a script piped into a shell."""
    if not argv or _basename(argv[0]) not in ("echo", "printf"):
        return None
    words = argv[1:]
    while words and words[0].startswith("-") and len(words[0]) <= 3:  # echo -n, -e, -ne
        words = words[1:]
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
    shell_when_bare: bool = False  # without a command it runs a shell, which reads stdin
    shell_flags: str = ""  # short options that make a bare call run a shell (``sudo -s``)
    shell_long_flags: frozenset[str] = frozenset()


def _longs(*names: str) -> frozenset[str]:
    return frozenset(names)


_WRAPPERS: dict[str, _WrapperOptions] = {
    "sudo": _WrapperOptions(
        "CDghpRrtTUu",
        _longs("close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type",
               "command-timeout", "other-user", "user"),
        shell_flags="si", shell_long_flags=_longs("shell", "login"),
    ),
    "doas": _WrapperOptions("uC", shell_flags="s"),
    "env": _WrapperOptions("uCS", _longs("unset", "chdir", "split-string"), assignments=True),
    "nohup": _WrapperOptions(),
    "time": _WrapperOptions("fo", _longs("format", "output")),
    "nice": _WrapperOptions("n", _longs("adjustment"), numeric_flags=True),
    "timeout": _WrapperOptions("sk", _longs("signal", "kill-after"), operands=1),
    "exec": _WrapperOptions("a"),
    "command": _WrapperOptions(),
    "builtin": _WrapperOptions(),
    "stdbuf": _WrapperOptions("ioe", _longs("input", "output", "error")),
    "ionice": _WrapperOptions("cnpPu", _longs("class", "classdata", "pid", "pgid", "uid")),
    "chroot": _WrapperOptions("", _longs("userspec", "groups"), operands=1, shell_when_bare=True),
    "setsid": _WrapperOptions(),
    "taskset": _WrapperOptions("", operands=1),
    "busybox": _WrapperOptions(),
    "xargs": _WrapperOptions(
        "adEILnPs",
        _longs("arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs",
               "max-chars", "process-slot-var"),
    ),
    "strace": _WrapperOptions(
        "abeEIoOpPSsuUX",
        _longs("attach", "columns", "detach-on", "env", "expr", "trace", "signal", "status",
               "output", "string-limit", "user", "summary-columns", "summary-sort-by", "trace-path",
               "const-print-style", "decode-fds", "quiet", "silence", "absolute-timestamps"),
    ),
    "ltrace": _WrapperOptions("aADeFlnopsuwx", _longs("align", "indent", "library", "output")),
    "unbuffer": _WrapperOptions(),
    "fakeroot": _WrapperOptions("lisb", _longs("lib", "faked", "timeout"), shell_when_bare=True),
    "systemd-run": _WrapperOptions(
        "uEpHMC",
        _longs("unit", "property", "description", "slice", "uid", "gid", "nice", "setenv", "host",
               "machine", "working-directory", "service-type", "on-active", "on-boot", "on-startup",
               "on-unit-active", "on-unit-inactive", "on-calendar", "timer-property",
               "path-property", "socket-property", "capsule", "json", "background"),
        shell_flags="S", shell_long_flags=_longs("shell"),
    ),
    "firejail": _WrapperOptions(shell_when_bare=True),  # its options are all --name[=value]
    "proot": _WrapperOptions(
        "rbmqwkivRS",
        _longs("rootfs", "bind", "mount", "qemu", "pwd", "cwd", "kernel-release", "verbose"),
        shell_when_bare=True,
    ),
    "unshare": _WrapperOptions(
        "SGRw", _longs("setuid", "setgid", "root", "wd", "propagation", "setgroups"),
        shell_when_bare=True,
    ),
    "nsenter": _WrapperOptions(
        "tSG", _longs("target", "setuid", "setgid", "env"), shell_when_bare=True
    ),
    "pkexec": _WrapperOptions("", _longs("user"), shell_when_bare=True),
    "prlimit": _WrapperOptions("p", _longs("pid")),
    "setpriv": _WrapperOptions(
        "",
        _longs("reuid", "regid", "ruid", "euid", "rgid", "egid", "groups", "inh-caps",
               "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label",
               "apparmor-profile", "landlock-access", "landlock-rule"),
    ),
    "numactl": _WrapperOptions(
        "CNmipP",
        _longs("physcpubind", "cpunodebind", "membind", "interleave", "preferred", "preferred-many"),
    ),
    "caffeinate": _WrapperOptions("tw"),
    "torsocks": _WrapperOptions("uapP", _longs("user", "pass", "address", "port")),
    "proxychains": _WrapperOptions("f"),
    "proxychains4": _WrapperOptions("f"),
    "trickle": _WrapperOptions("udwtLn"),
    "xvfb-run": _WrapperOptions(
        "nsfpe", _longs("server-num", "server-args", "auth-file", "xauth-protocol", "error-file")
    ),
    "dbus-run-session": _WrapperOptions("", _longs("config-file", "dbus-daemon")),
    "eatmydata": _WrapperOptions(),
    "nocache": _WrapperOptions(),
    "chronic": _WrapperOptions(),
    "ifne": _WrapperOptions(),
    "catchsegv": _WrapperOptions(),
    "valgrind": _WrapperOptions(),  # its options are all --name=value
    "setarch": _WrapperOptions("", operands=1),
    "linux32": _WrapperOptions(),
    "linux64": _WrapperOptions(),
    "faketime": _WrapperOptions("", operands=1),
    "ssh-agent": _WrapperOptions("aEPt"),
    "tsp": _WrapperOptions("LDNE"),
    "setuidgid": _WrapperOptions("", operands=1),
    "envdir": _WrapperOptions("", operands=1),
    "daemonize": _WrapperOptions("ceEoplu"),
    "run-one": _WrapperOptions(),
}  # fmt: skip
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash"})
_SHELL_OPTIONS = _WrapperOptions("oO", _longs("rcfile", "init-file"))
_SU_OPTIONS = _WrapperOptions("cgGsuw", _longs("command", "session-command", "group", "supp-group",
                                               "shell", "user", "whitelist-environment"))  # fmt: skip
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_INFO_OPTIONS = frozenset({"-h", "--help", "-V", "--version", "--list"})
_WATCH_OPTIONS = _WrapperOptions("nq", _longs("interval", "equexit"))
_PARALLEL_OPTIONS = _WrapperOptions(
    "adEIjPLlnNSsCJ",
    _longs("arg-file", "delimiter", "eof", "replace", "jobs", "max-procs", "max-lines", "max-args",
           "sshlogin", "sshloginfile", "slf", "max-chars", "colsep", "profile", "tmpdir", "joblog",
           "results", "res", "basefile", "bf", "return", "transferfile", "tf", "workdir", "wd",
           "env", "timeout", "delay", "retries", "load", "memfree", "nice", "tagstring",
           "tag-string", "termseq", "halt", "halt-on-error", "header", "limit", "block",
           "block-size", "recend", "recstart", "ssh", "rpl", "semaphorename", "id",
           "semaphoretimeout", "st", "arg-sep", "arg-file-sep", "shebang-wrap"),
)  # fmt: skip
_PARALLEL_INPUTS = frozenset({":::", "::::", ":::+", "::::+"})
_PARALLEL_REPLACEMENT = re.compile(r"\{[0-9]*(?:\.|/|//|/\.|#|%|\+/|\+\.|\+\.\.)?\}")
_FLOCK_OPTIONS = _WrapperOptions("wE", _longs("timeout", "wait", "conflict-exit-code"), operands=1)
_CHRT_OPTIONS = _WrapperOptions("TPD", _longs("sched-runtime", "sched-period", "sched-deadline"))
_AT_OPTIONS = _WrapperOptions("qft")
_SCREEN_VALUE_LETTERS = "cehpsStT"
_TMUX_OPTIONS = _WrapperOptions("cfLST")
_TMUX_COMMANDS: dict[str, tuple[str, str]] = {  # command: (its options taking a value, what follows)
    "new-session": ("cefFnstxy", "command"), "new": ("cefFnstxy", "command"),
    "new-window": ("ceFnt", "command"), "neww": ("ceFnt", "command"),
    "split-window": ("celtFp", "command"), "splitw": ("celtFp", "command"),
    "respawn-pane": ("cet", "command"), "respawnp": ("cet", "command"),
    "respawn-window": ("cet", "command"), "respawnw": ("cet", "command"),
    "run-shell": ("cdt", "command"), "run": ("cdt", "command"),
    "display-popup": ("bcdehsStTwxy", "command"), "popup": ("bcdehsStTwxy", "command"),
    "pipe-pane": ("t", "command"), "pipep": ("t", "command"),
    "if-shell": ("t", "condition"), "if": ("t", "condition"),
    "send-keys": ("cNt", "keys"), "send": ("cNt", "keys"),
}  # fmt: skip
_TMUX_NEWLINE_KEYS = frozenset({"Enter", "C-m", "C-j", "KPEnter", "^M", "^J"})
_HYPERFINE_VALUES = {"w": 1, "m": 1, "M": 1, "r": 1, "S": 1, "u": 1, "n": 1, "P": 3, "L": 2,
                     "D": 1, "N": 0, "i": 0}  # fmt: skip
_HYPERFINE_SHELL = frozenset("pcs")
_HYPERFINE_LONG_SHELL = _longs("prepare", "conclude", "cleanup", "setup")
_HYPERFINE_LONG_VALUES = {
    "warmup": 1, "min-runs": 1, "max-runs": 1, "runs": 1, "shell": 1, "time-unit": 1,
    "command-name": 1, "parameter-scan": 3, "parameter-list": 2, "parameter-step-size": 1,
    "style": 1, "export-asciidoc": 1, "export-csv": 1, "export-json": 1, "export-markdown": 1,
    "export-orgmode": 1, "output": 1, "input": 1, "sort": 1, "reference": 1,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Runner:
    """A package runner's run subcommand: ``npx PKG``, ``pnpm dlx PKG``, ``uv run CMD``."""

    options: _WrapperOptions
    package: bool = False  # the first operand names a package, whose bin runs (``npx rimraf``)
    package_option: str = ""  # long option naming the package instead (``npx -p typescript tsc``)
    package_short: str = ""
    shell_string: str = ""  # short option whose value is a shell line (``npx -c 'cmd'``)
    shell_string_long: str = ""
    shell_mode: str = ""  # long flag that runs the command words as one shell line


_NPM_EXEC = _Runner(
    _WrapperOptions("pcw", _longs("package", "call", "registry", "cache", "prefix", "userconfig",
                                  "workspace")),
    package=True, package_option="package", package_short="p", shell_string="c",
    shell_string_long="call",
)  # fmt: skip
_PNPM_EXEC = _Runner(_WrapperOptions("F", _longs("filter", "package")), shell_mode="shell-mode")
_PNPM_DLX = _Runner(
    _WrapperOptions("", _longs("package", "allow-build")),
    package=True,
    package_option="package",
    shell_mode="shell-mode",
)
_UV_RUN = _Runner(
    _WrapperOptions(
        "wp",
        _longs("with", "with-editable", "with-requirements", "python", "directory", "project",
               "package", "env-file", "group", "only-group", "extra", "index", "index-url",
               "extra-index-url", "default-index", "find-links", "from", "script", "config-file",
               "cache-dir", "python-platform"),
    )
)  # fmt: skip
_UV_TOOL_RUN = _Runner(_UV_RUN.options, package=True, package_option="from")
_RUNNERS: dict[str, dict[tuple[str, ...], _Runner]] = {
    "npx": {(): _NPM_EXEC},
    "pnpx": {(): _PNPM_DLX},
    "bunx": {(): _Runner(_WrapperOptions("p", _longs("package")), package=True,
                         package_option="package", package_short="p")},
    "uvx": {(): _UV_TOOL_RUN},
    "npm": {("exec",): _NPM_EXEC, ("x",): _NPM_EXEC},
    "pnpm": {("exec",): _PNPM_EXEC, ("dlx",): _PNPM_DLX},
    "yarn": {("exec",): _Runner(_WrapperOptions()),
             ("dlx",): _Runner(_WrapperOptions("p", _longs("package")), package=True,
                               package_option="package", package_short="p")},
    "bun": {("x",): _Runner(_WrapperOptions("p", _longs("package")), package=True,
                            package_option="package", package_short="p")},
    "uv": {("run",): _UV_RUN, ("tool", "run"): _UV_TOOL_RUN},
    "pipx": {("run",): _Runner(_WrapperOptions("", _longs("spec", "python", "pip-args", "index-url")),
                               package=True, package_option="spec")},
    "poetry": {("run",): _Runner(_WrapperOptions("CP", _longs("directory", "project")))},
    "pipenv": {("run",): _Runner(_WrapperOptions())},
    "pdm": {("run",): _Runner(_WrapperOptions("gp", _longs("project", "venv")))},
    "bundle": {("exec",): _Runner(_WrapperOptions("", _longs("gemfile")))},
    "conda": {("run",): _Runner(_WrapperOptions("np", _longs("name", "prefix", "cwd")))},
    "mamba": {("run",): _Runner(_WrapperOptions("np", _longs("name", "prefix", "cwd")))},
    "micromamba": {("run",): _Runner(_WrapperOptions("np", _longs("name", "prefix", "cwd")))},
}  # fmt: skip
_RUNNER_GLOBAL_OPTIONS = _WrapperOptions(
    "CFPpw", _longs("dir", "filter", "directory", "project", "cache-dir", "config-file", "prefix")
)
_PACKAGE_VERSION = re.compile(r"[@=<>!~\[;, ]")


def _split_options(argv: list[str], options: _WrapperOptions, start: int = 1) -> int:
    """Index of the first argv element after the wrapper's options and operands."""
    i = start
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


def _option_at(argv: list[str], stop: int, short: str, long: str) -> tuple[str, int] | None:
    """The value of ``-X VALUE`` / ``-XVALUE`` / ``--long=VALUE`` / ``--long VALUE`` before
    ``stop``, with the index of the element holding it; an empty ``short`` or ``long`` is not
    looked for."""
    for i in range(1, min(stop, len(argv))):
        arg = argv[i]
        if arg == "--":
            break
        if arg.startswith("--"):
            if not long:
                continue
            if arg.startswith(f"--{long}="):
                return arg.partition("=")[2], i
            if arg == "--" + long:
                return (argv[i + 1], i + 1) if i + 1 < len(argv) else ("", i)
        elif short and arg.startswith("-") and short in arg[1:]:
            rest = arg[arg.index(short, 1) + 1 :]
            if rest:
                return rest, i
            return (argv[i + 1], i + 1) if i + 1 < len(argv) else ("", i)
    return None


def _option_value(argv: list[str], stop: int, short: str, long: str) -> str | None:
    found = _option_at(argv, stop, short, long)
    return None if found is None else found[0]


def _has_flag(
    argv: list[str], stop: int, letters: str, longs: frozenset[str], options: _WrapperOptions
) -> bool:
    """Whether a flag among ``letters``/``longs`` is set before ``stop`` (a short option taking a
    value ends its cluster, so ``-uS`` is ``-u S``, not ``-S``)."""
    for arg in argv[1 : min(stop, len(argv))]:
        if arg == "--":
            break
        if arg.startswith("--"):
            if arg[2:].partition("=")[0] in longs:
                return True
        elif arg.startswith("-"):
            for letter in arg[1:]:
                if letter in letters:
                    return True
                if letter in options.short_with_value:
                    break
    return False


def _without(argv: list[str], found: tuple[str, int]) -> list[str]:
    """argv without the shell line an option carried (``script -c LINE`` lists as ``script -c``)."""
    value, index = found
    arg = argv[index]
    if value and arg.endswith(value) and arg != value:
        return [*argv[:index], arg[: len(arg) - len(value)].rstrip("="), *argv[index + 1 :]]
    return argv[:index] + argv[index + 1 :]


def _basename(program: str) -> str:
    """The program name without its directory. Slashes inside a substitution or parameter
    expansion are not directories: ``$(curl https://x/i.sh)`` stays whole, so a rule still sees a
    substituted (unresolvable) program name."""
    text = program.rstrip("/") or program
    last = -1
    i = 0
    while i < len(text):
        if text.startswith("$(", i):
            i = _find_closing(text, i + 2, "(", ")") + 1
        elif text.startswith("${", i):
            i = _find_closing(text, i + 2, "{", "}") + 1
        elif text[i] == "`":
            end = text.find("`", i + 1)
            i = len(text) if end < 0 else end + 1
        else:
            if text[i] == "/":
                last = i
            i += 1
    return text[last + 1 :] or text


def _package_bin(spec: str) -> str:
    """The program a package runner starts for a package spec: ``rimraf@5`` and ``@scope/rimraf``
    are ``rimraf``, ``black[jupyter]==24.1`` is ``black`` (the package's usual bin name)."""
    name = spec.split("/", 1)[1] if spec.startswith("@") and "/" in spec else spec
    return _PACKAGE_VERSION.split(name, maxsplit=1)[0] or spec


_ALIAS_NAME = re.compile(r"[A-Za-z0-9_.:+@%-]+")
_FUNCTION_DEFINITION = re.compile(
    r"(?:^|[;&|\n(){}]|\bthen|\bdo|\belse)\s*(?:function\s+([A-Za-z_][\w.:-]*)\s*(?:\(\s*\))?"
        r"|([A-Za-z_][\w.:-]*)\s*\(\s*\))\s*\{"
)
_COMMAND_VARIABLES = frozenset({
    "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL",
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "SUDO_EDITOR", "SVN_EDITOR", "BROWSER", "PROMPT_COMMAND",
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_SSH_COMMAND", "GIT_SSH", "RSYNC_RSH",
    "GIT_EXTERNAL_DIFF",
})  # fmt: skip
_DOCKER_GLOBAL_VALUES = frozenset({"-c", "--context", "-H", "--host", "-l", "--log-level", "--config",
                                   "--tlscacert", "--tlscert", "--tlskey"})  # fmt: skip
_COMPOSE_GLOBAL_VALUES = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file",
                                    "--project-directory", "--ansi", "--parallel"})  # fmt: skip
_DOCKER_RUN_VALUES = frozenset({
    "-a", "--attach", "-c", "--cpu-shares", "--cidfile", "--cpus", "--cpuset-cpus", "--device", "--dns",
    "-e", "--env", "--env-file", "--entrypoint", "--expose", "--gpus", "-h", "--hostname", "--ip", "-l",
    "--label", "--label-file", "--link", "--log-driver", "--log-opt", "-m", "--memory", "--mount",
    "--name", "--network", "--net", "--network-alias", "-p", "--publish", "--platform", "--pull",
    "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout",
    "--tmpfs", "--ulimit", "-u", "--user", "--userns", "-v", "--volume", "--volumes-from", "-w",
    "--workdir", "--detach-keys", "--cap-add", "--cap-drop", "--group-add", "--health-cmd", "--pid",
    "--ipc", "--uts", "--cgroupns", "--add-host", "--annotation", "--index", "-T", "--service-ports",
})  # fmt: skip
_VIM_SHELL = re.compile(r"^[:\s]*(?:(?:silent!?\s*)?!|(?:r(?:ead)?|w(?:rite)?)\s*!"
    r"|(?:call\s+)?system(?:list)?\s*\(\s*(['\"]))(.*)$", re.DOTALL)
_VIM_CODE = re.compile(r"^[:\s]*(py(?:thon)?3?|pyx|lua|perl|ruby|rub)\s+(.*)$", re.DOTALL)
_VIM_LANGS = {"py": "python", "python": "python", "py3": "python", "python3": "python", "pyx": "python",
              "lua": "lua", "perl": "perl", "ruby": "ruby", "rub": "ruby"}  # fmt: skip
_MAKE_RULE = re.compile(r"^[^:=#\t]+::?(?!=)[^;]*;(.*)$")
_MAKE_SHELL = re.compile(r"\$[({]shell\s+([^)}]*)[)}]")
_GIT_COMMAND_KEYS = re.compile(
    r"(?i)^(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass)|diff\.external|credential\.helper|"
    r"gpg\.program|sequence\.editor|alias\.[^=]+"
        r"|(?:filter|merge|diff)\.[^=]+\.(?:clean|smudge"
        r"|process|driver|command|textconv))=(.*)$"
)


def _skip_options(argv: list[str], i: int, with_values: frozenset[str]) -> int:
    """Index of the first operand at or after ``i``, skipping options (``with_values`` take the
    next word unless given as ``--name=value``)."""
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        if argv[i] == "--":
            return i + 1
        i += 2 if argv[i] in with_values else 1
    return i


def _embedded_lines(argv: list[str]) -> list[str]:
    """Shell lines carried in option values of the programs :meth:`_Unwrapper._strings_run`
    knows."""
    program = argv[0]
    lines: list[str] = []

    def value_of(i: int, name: str) -> str:
        arg = argv[i]
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
        if arg == name:
            return argv[i + 1] if i + 1 < len(argv) else ""
        return arg[len(name) :]  # an attached short option: -ICMD

    for i, arg in enumerate(argv[1:], start=1):
        if program in ("tar", "bsdtar", "gtar"):
            if arg.startswith("--checkpoint-action"):
                action = value_of(i, "--checkpoint-action")
                if action.startswith("exec="):
                    lines.append(action[5:])
            for name in ("--to-command", "--use-compress-program", "--rsh-command", "--info-script",
                         "--new-volume-script"):  # fmt: skip
                if arg == name or arg.startswith(name + "="):
                    lines.append(value_of(i, name))
            if arg == "-I" or arg == "-F" or (arg.startswith("-I") and len(arg) > 2):
                lines.append(value_of(i, arg[:2]))
        elif program == "zip" and arg in ("-TT", "--unzip-command"):
            lines.append(value_of(i, arg))
        elif program in ("make", "gmake") and (arg in ("--eval", "-E") or arg.startswith("--eval=")):
            lines.extend(_makefile_recipes(value_of(i, "--eval" if arg.startswith("--eval") else "-E")))
        elif program in ("vim", "vi", "nvim", "ex", "view", "gvim", "rvim") and (
            arg in ("-c", "--cmd") or (arg.startswith("+") and len(arg) > 1)
        ):
            lines.extend(_vim_lines(arg[1:] if arg.startswith("+") else value_of(i, arg)))
        elif program == "man" and (arg == "-P" or arg.startswith("--pager=") or arg == "--pager"):
            lines.append(value_of(i, "--pager" if arg.startswith("--") else "-P"))
        elif program == "gdb" and arg in ("-ex", "--ex", "-eval-command", "--eval-command", "-iex"):
            command = value_of(i, arg).lstrip()
            for prefix in ("!", "shell ", "pipe "):
                if command.startswith(prefix):
                    lines.append(command[len(prefix) :])
        elif program == "rsync" and (arg == "-e" or arg.startswith("--rsh")):
            command = value_of(i, "--rsh" if arg.startswith("--rsh") else "-e")
            if command.split()[:1] != ["ssh"]:
                lines.append(command)
        elif program == "ssh" and arg.startswith("-o") and i + (arg == "-o") < len(argv):
            option = argv[i + 1] if arg == "-o" else arg[2:]
            key, _, value = option.partition("=")
            if key.strip().lower() in ("proxycommand", "localcommand", "knownhostscommand"):
                lines.append(value.strip())
        elif program == "socat":
            for address in arg.split("!!"):
                kind, colon, command = address.partition(":")
                if colon and kind.lower() in ("exec", "system"):
                    lines.append(command.split(",", 1)[0] if kind.lower() == "exec" else command)
        elif program in ("nc", "ncat", "netcat") and arg in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec"):
            lines.append(value_of(i, arg))
        elif program == "git":
            if arg in ("--exec", "-x") and "rebase" in argv:
                lines.append(value_of(i, arg))
            elif arg.startswith("--exec=") and "rebase" in argv:
                lines.append(arg[7:])
            elif argv[i - 1] == "-c":
                match = _GIT_COMMAND_KEYS.match(arg)
                if match is not None and match.group(1).strip():
                    lines.append(match.group(1).strip().lstrip("!"))
            elif arg == "foreach" and "submodule" in argv[:i]:
                rest = [a for a in argv[i + 1 :] if a not in ("--recursive", "-q", "--quiet")]
                if rest:  # $toplevel is the superproject's root: the current directory, read as "."
                    lines.append(" ".join(rest).replace("${toplevel}", ".").replace("$toplevel", "."))
                break
        elif program in ("apt", "apt-get", "aptitude") and arg == "-o" and i + 1 < len(argv):
            key, eq, value = argv[i + 1].partition("=")
            if eq and re.search(r"(?i)(?:Pre|Post)-Invoke|::Post-Invoke-Success|DPkg::Pre-Install-Pkgs", key):
                lines.append(value)
        elif program in ("less", "more") and arg.startswith("+!"):
            lines.append(arg[2:])
        elif program == "nmap" and arg.startswith("--script") and argv[i:i + 1]:
            continue
    return [line for line in lines if line.strip()]


def _framework_code(argv: list[str]) -> tuple[str, str] | None:
    """Code a framework console runs from its command line: ``rails runner CODE`` (Ruby),
    ``python manage.py shell -c CODE`` and ``django-admin shell -c CODE`` (Python), ``php artisan
    tinker --execute=CODE`` (PHP)."""
    words = [w for w in argv if not w.startswith("-")]
    if argv[0] == "rails" and len(words) > 2 and words[1] in ("runner", "r"):
        return "ruby", words[2]
    django = any(w == "manage.py" or w.endswith("/manage.py") for w in argv[:3]) or argv[0] == "django-admin"
    if django and "shell" in argv:
        found = _option_value(argv, len(argv), "c", "command")
        return ("python", found) if found else None
    if "artisan" in argv[:2] and "tinker" in argv:
        found = _option_value(argv, len(argv), "", "execute")
        return ("php", found) if found else None
    return None


def _found_paths(find: list[str], command: list[str]) -> list[str]:
    """``-exec`` words with ``{}`` read as a path under find's first starting point
    (``find /srv -exec sh -c '...' _ {} ;`` hands the shell ``/srv/{}``); under ``.`` it stays
    ``{}``, a relative name."""
    root = next((a for a in find[1:] if not a.startswith(("-", "(", "!"))), ".")
    if root in (".", "./") or "{}" not in command:
        return command
    return [root.rstrip("/") + "/{}" if word == "{}" else word for word in command]


def _makefile_recipes(text: str) -> list[str]:
    """Recipe lines of a makefile fragment (``x:;CMD``, tab-indented lines) and ``$(shell CMD)``."""
    lines: list[str] = [m.group(1) for m in _MAKE_SHELL.finditer(text)]
    for line in text.replace("\\n", "\n").splitlines():
        rule = _MAKE_RULE.match(line)
        if rule is not None:
            lines.append(rule.group(1))
        elif line.startswith("\t"):
            lines.append(line[1:])
    return [line.lstrip("@-+") for line in lines]


def _vim_lines(command: str) -> list[str]:
    """The shell line of a vim command (``:!CMD``, ``:r !CMD``, ``:call system('CMD')``) or the
    shell-outs of its embedded Python/Lua/Perl/Ruby."""
    shell = _VIM_SHELL.match(command)
    if shell is not None:
        text = shell.group(2)
        if shell.group(1):  # system('CMD'): cut the closing quote and parenthesis
            text = text.split(shell.group(1), 1)[0]
        return [text]
    code = _VIM_CODE.match(command)
    if code is not None:
        analysis = interpreters.analyze(code.group(2), _VIM_LANGS.get(code.group(1), "python"))
        return analysis.shell_lines + [" ".join(map(shlex.quote, argv)) for argv in analysis.argvs]
    return []


_PRINTERS = re.compile(r"^\s*(echo|printf)(\s.*)?$", re.DOTALL)
_CURRENT_DIRECTORY = re.compile(
    r"^\s*(?:pwd(?:\s+-[LP])?|git\s+rev-parse\s+--show-toplevel|realpath\s+\.|readlink\s+-[fem]\s+\.)\s*$"
)
_PATH_COMMAND = re.compile(r"^\s*(dirname|basename|realpath|readlink\s+-[fem]|readlink)\s+(.*)$", re.DOTALL)
_SUBSTITUTION = re.compile(r"\$\(([^()`]*)\)|`([^`]*)`")
_DEFAULT_EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=])([^}]*)\}")
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


def _resolved_word(word: str, variables: dict[str, str]) -> str:
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


def _loop_bodies(command: list[str], loops: dict[str, list[str]]) -> list[list[str]]:
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


def _resolved_operands(command: list[str], variables: dict[str, str]) -> list[str]:
    """``command`` with its operands (never the program name, which stays visibly unresolvable)
    resolved by :func:`_resolved_word`."""
    if len(command) < 2 or not any("$" in a or "`" in a for a in command[1:]):
        return command
    return [command[0], *(_resolved_word(arg, variables) for arg in command[1:])]


_DATABASE_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]] = {
    # client: (options holding statements, host options, database options, other options with a value)
    "psql": (_longs("-c", "--command"), _longs("-h", "--host"), _longs("-d", "--dbname"),
             _longs("-U", "--username", "-p", "--port", "-f", "--file", "-v", "--set", "--variable", "-o",
                    "--output", "-P", "--pset", "-F", "-R", "-T", "-L", "--log-file")),
    "mysql": (_longs("-e", "--execute"), _longs("-h", "--host"), _longs("-D", "--database"),
              _longs("-u", "--user", "-P", "--port", "-S", "--socket", "--defaults-file", "--login-path",
                     "--default-character-set")),
    "sqlite3": (_longs("-cmd"), _longs(), _longs(), _longs("-separator", "-nullvalue", "-init", "-newline")),
    "clickhouse-client": (_longs("-q", "--query"), _longs("-h", "--host"), _longs("-d", "--database"),
                          _longs("-u", "--user", "--port", "--password", "-f", "--format")),
    "cockroach": (_longs("-e", "--execute"), _longs("--host"), _longs("-d", "--database"),
                  _longs("-u", "--user", "--url", "--certs-dir", "--format")),
    "sqlcmd": (_longs("-Q", "-q"), _longs("-S"), _longs("-d"), _longs("-U", "-P", "-i", "-o")),
    "snowsql": (_longs("-q", "--query"), _longs("-a", "--accountname"), _longs("-d", "--dbname"),
                _longs("-u", "--username", "-r", "--rolename", "-w", "--warehouse", "-s", "--schemaname",
                       "-f")),
    "cqlsh": (_longs("-e", "--execute"), _longs(), _longs("-k", "--keyspace"),
              _longs("-u", "--username", "-p", "--password", "-f", "--file", "--cqlversion")),
    "mongosh": (_longs("--eval"), _longs("--host"), _longs(),
                _longs("-u", "--username", "-p", "--password", "--port", "--authenticationDatabase", "-f",
                       "--file")),
    "redis-cli": (_longs(), _longs("-h"), _longs("-n"),
                  _longs("-p", "-a", "--user", "--pass", "-s", "-u", "-r", "-i", "--tls", "--cacert",
                         "--cert",
                         "--key", "--pattern", "-d")),
}  # fmt: skip
_DATABASE_ALIASES = {
    "mariadb": "mysql", "mycli": "mysql", "pgcli": "psql", "usql": "psql", "sqlite": "sqlite3",
    "duckdb": "sqlite3", "litecli": "sqlite3", "mongo": "mongosh", "valkey-cli": "redis-cli",
    "keydb-cli": "redis-cli",
}  # fmt: skip
_DATABASE_URL = re.compile(r"^(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?"
    r"|redis|rediss|cockroachdb|clickhouse)://(?:[^@/]*@)?([^/:?,]*)[^/]*(?:/([^?]*))?")


def _database_invocation(argv: list[str]) -> tuple[DatabaseClient, list[str], bool]:
    """Read a database client's argv: who it talks to, the statements it was given, and whether
    it reads statements from stdin (none given and no script file)."""
    program = argv[0]
    family = _DATABASE_ALIASES.get(program, program)
    dialect = "redis" if family == "redis-cli" else "mongo" if family == "mongosh" else "sql"
    statement_options, host_options, database_options, value_options = _DATABASE_OPTIONS[family]
    texts: list[str] = []
    host = database = ""
    operands: list[str] = []
    script_file = False
    i = 1
    if family == "cockroach" and argv[1:2] == ["sql"]:
        i = 2
    while i < len(argv):
        arg = argv[i]
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and family != "sqlite3":
            name, attached, eq = arg[:2], arg[2:], "attached"
        value_given = bool(eq) or name in statement_options | host_options | database_options | value_options
        value = attached if eq else (argv[i + 1] if i + 1 < len(argv) else "")
        if arg == "--":
            operands.extend(argv[i + 1 :])
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            i += 1
            if family == "redis-cli":  # the rest is the command
                operands.extend(argv[i:])
                break
            continue
        if name in statement_options:
            texts.append(value)
        elif name in host_options:
            host = value
        elif name in database_options:
            database = value
        elif name in ("-f", "--file", "-i", "-init") and family != "redis-cli":
            script_file = True
        elif name == "--url":
            url = _DATABASE_URL.match(value)
            if url is not None:
                host, database = url.group(1), url.group(2) or database
        i += 2 if value_given and not eq else 1
    for operand in list(operands):
        url = _DATABASE_URL.match(operand)
        if url is not None:
            host, database = host or url.group(1), database or url.group(2) or ""
            operands.remove(operand)
    if family == "redis-cli":
        client = DatabaseClient(program, dialect, host, database)
        if operands:
            texts.append(" ".join(shlex.quote(o) for o in operands))
        return client, texts, not operands and not script_file
    if family == "sqlite3":
        database = operands[0] if operands else ""
        texts.extend(operands[1:])
    elif family in ("psql", "mysql") and operands and not database:
        database = operands[0] if family == "psql" else operands[-1]
    elif family == "mongosh" and operands:
        database = database or operands[0]
    client = DatabaseClient(program, dialect, host, database)
    return client, texts, not texts and not script_file


class _Unwrapper:
    """Lists one simple command and, behind its wrappers, every command it runs."""

    __slots__ = ("budget", "depth", "out", "script_readers", "stdin", "variables")

    def __init__(
        self,
        depth: int,
        budget: _Budget,
        variables: dict[str, str],
        stdin: list[str],
        script_readers: list[tuple[_Reader, list[str]]],
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
        self.out.extend(
            _parse(script, self.depth + 1, self.budget, self.variables if variables is None else variables)
        )

    def shell_reading_stdin(self, argv: list[str]) -> None:
        """The wrapper runs a shell that reads its script from stdin: listed like ``... | sh``
        (``["sh"]``), and the text piped or redirected in is parsed as that script."""
        if not any(a in _INFO_OPTIONS for a in argv):
            self.out.append(["sh"])
            self.script_readers.append((None, self.stdin))

    def _step(self, argv: list[str]) -> list[str] | None:
        """List what ``argv`` runs; returns the wrapped command still to unwrap, if any."""
        start = 0  # an index, not repeated slicing: 60,000 leading ``{`` must stay linear
        while start < len(argv) and _ASSIGNMENT.match(argv[start]):
            self._command_variable(argv[start])
            start += 1
        while start < len(argv) and argv[start] in _SKIPPED_KEYWORDS:
            start += 1
        if start:
            argv = argv[start:]
        loop = argv[:1] in (["for"], ["select"]) and len(argv) > 3 and argv[2] == "in"
        if loop and _NAME.fullmatch(argv[1]):
            self.budget.loops[argv[1]] = argv[3:]  # `for d in /etc /usr; do rm -rf "$d"; done`
        if not argv or argv[0] in _DROPPED_KEYWORDS:
            return None
        argv[0] = _basename(argv[0])
        program = argv[0]
        if program in self.budget.functions and program not in _SPECIAL_WRAPPERS:
            self._function_call(argv)
            return None
        if program in self.budget.aliases:
            self._alias_call(argv)
            return None
        special = _SPECIAL_WRAPPERS.get(program)
        if special is not None:
            return special(self, argv)
        framework = _framework_code(argv)
        if framework is not None:
            self.out.append(argv)
            language, code = framework
            self.out.extend(_code_commands(language, code, self.depth, self.budget, self.variables))
            return None
        if interpreters.interpreter_of(program) is not None and self._interpreter(argv):
            return None
        if program in _RUNNERS:
            return self._runner(argv)
        options = _WRAPPERS.get(program)
        if options is None:
            self.out.append(argv)
            return None
        stop = _split_options(argv, options)
        self.out.append(argv[:stop])
        if program == "env":
            for arg in argv[1:stop]:
                self._command_variable(arg)
            script = _option_value(argv, stop, "S", "split-string")
            if script is not None:
                self.parse(" ".join([script, *map(shlex.quote, argv[stop:])]))
                return None
        if stop >= len(argv) and (
            options.shell_when_bare
            or _has_flag(argv, stop, options.shell_flags, options.shell_long_flags, options)
        ):
            self.shell_reading_stdin(argv)
        return argv[stop:]

    # -- wrappers with their own grammar ---------------------------------------------------------

    def _shell(self, argv: list[str]) -> None:
        """``bash -c LINE``; a shell with neither ``-c`` nor a script file reads stdin."""
        stop = _split_options(argv, _SHELL_OPTIONS)
        has_c = any(a.startswith("-") and not a.startswith("--") and "c" in a[1:] for a in argv[1:stop])
        if not has_c or stop >= len(argv):
            self.out.append(argv)
            if not has_c and stop >= len(argv):
                self.script_readers.append((None, self.stdin))
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
        if invocation is None or not (invocation.code or invocation.reads_stdin or invocation.effects):
            return False
        self.out.append(argv)
        self.budget.effects.extend(invocation.effects)
        for code in invocation.code:
            commands = _code_commands(invocation.language, code, self.depth, self.budget, self.variables)
            self.out.extend(commands)
        if invocation.reads_stdin and not any(a in _INFO_OPTIONS for a in argv):
            self.script_readers.append((invocation.language, self.stdin))
        return True

    def _command_variable(self, assignment: str) -> None:
        """``PAGER='sh -c ...' git log``: variables whose value the program runs as a command."""
        name, _, value = assignment.partition("=")
        if name in _COMMAND_VARIABLES and value.strip():
            line = value.lstrip("|").replace("%s", "x")
            if _basename(line.split()[0]) != "ssh":  # GIT_SSH_COMMAND='ssh -i key': ssh options
                self.parse(line)

    def _database_client(self, argv: list[str]) -> None:
        """Database clients (psql, mysql, sqlite3, mongosh, redis-cli, ...): the statements they
        send, from their options (``-c``, ``-e``, ``--eval``, ``--query``), operands (sqlite3,
        redis-cli) or stdin (a here-document, a pipe), for ``shell.sql``."""
        self.out.append(argv)
        if any(a in ("--help", "--version", "-?") for a in argv[1:]):
            return
        client, texts, reads_stdin = _database_invocation(argv)
        for text in texts:
            self.out.extend(_database_text(client, text, self.depth, self.budget, self.variables))
        if reads_stdin:
            self.script_readers.append((client, self.stdin))

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

    def _container_exec(self, argv: list[str]) -> list[str] | None:
        """``docker|podman|nerdctl exec|run [opts] CONTAINER|IMAGE CMD...``, ``docker compose
        exec|run SERVICE CMD``, ``kubectl|oc exec|run|debug ... -- CMD``: the command runs inside
        a container, on the data mounted or living there, so it is listed like a local one."""
        program = argv[0]
        if program in ("kubectl", "oc", "kubecolor"):
            verb = next((a for a in argv[1:] if not a.startswith("-")), "")
            if verb in ("exec", "run", "debug") and "--" in argv:
                cut = argv.index("--")
                self.out.append(argv[:cut])
                return argv[cut + 1 :]
            self.out.append(argv)
            return None
        i = 1
        if program in ("docker", "podman", "nerdctl"):
            i = _skip_options(argv, i, _DOCKER_GLOBAL_VALUES)
        standalone_compose = program in ("docker-compose", "podman-compose")
        if (i < len(argv) and argv[i] in ("compose", "container")) or standalone_compose:
            i += 0 if standalone_compose else 1
            i = _skip_options(argv, i, _COMPOSE_GLOBAL_VALUES)
        if i >= len(argv) or argv[i] not in ("exec", "run"):
            self.out.append(argv)
            return None
        i = _skip_options(argv, i + 1, _DOCKER_RUN_VALUES)
        i = min(i + 1, len(argv))  # the container, image or service
        self.out.append(argv[:i])
        return argv[i:] or None

    def _strings_run(self, argv: list[str]) -> list[str] | None:
        """Programs with an option whose value is a command line they run: ``tar
        --checkpoint-action=exec=CMD``/``--to-command``/``-I``, ``zip -TT CMD``, ``make
        --eval``, ``vim -c '!CMD'``, ``man -P CMD``, ``gdb -ex '!CMD'``, ``rsync -e CMD``, ``ssh
        -o ProxyCommand=CMD``, ``socat ... EXEC:CMD``, ``nc -e CMD``, ``git rebase --exec CMD``,
        ``git submodule foreach CMD``, ``git -c core.pager=CMD``."""
        self.out.append(argv)
        for line in _embedded_lines(argv):
            self.parse(line)
        return None

    def _su(self, argv: list[str]) -> list[str] | None:
        """``su``/``runuser``: ``-c LINE`` anywhere (they permute options), ``runuser -u USER --
        CMD``; otherwise an interactive shell reading stdin."""
        end = argv.index("--") if "--" in argv else len(argv)
        found = _option_at(argv, end, "c", "command") or _option_at(argv, end, "", "session-command")
        if found is not None:
            self.out.append(_without(argv, found))
            self.parse(found[0])
            return None
        stop = _split_options(argv, _SU_OPTIONS)
        if argv[0] == "runuser" and _option_value(argv, stop, "u", "user") is not None:
            self.out.append(argv[:stop])
            if stop >= len(argv):
                self.shell_reading_stdin(argv)
            return argv[stop:]
        self.out.append(argv)
        self.shell_reading_stdin(argv)
        return None

    def _eval(self, argv: list[str]) -> None:
        self.out.append(["eval"])
        self.parse(" ".join(argv[1:]))

    def _find(self, argv: list[str]) -> None:
        """``find`` itself, then each command its ``-exec``-style actions run."""
        self.out.append(argv)
        i = 1
        while i < len(argv):
            if argv[i] in _FIND_EXEC:
                end = i + 1
                while end < len(argv) and argv[end] not in (";", "+"):
                    end += 1
                if end > i + 1:  # the command runs without stdin of ours: a fresh unwrapper
                    inner = _Unwrapper(self.depth, self.budget, self.variables, [], self.script_readers)
                    self.out.extend(inner.run(_found_paths(argv, argv[i + 1 : end])))
                i = end
            i += 1

    def _watch(self, argv: list[str]) -> list[str] | None:
        """``watch [opts] WORDS``: the words joined by spaces run through ``sh -c`` (``-x``:
        executed directly)."""
        stop = _split_options(argv, _WATCH_OPTIONS)
        self.out.append(argv[:stop])
        if _has_flag(argv, stop, "x", _longs("exec"), _WATCH_OPTIONS):
            return argv[stop:]
        if stop < len(argv):
            self.parse(" ".join(argv[stop:]))
        return None

    def _parallel(self, argv: list[str]) -> None:
        """GNU ``parallel``/``sem``: the command words plus the ``:::`` arguments; without command
        words each argument is a command line, and without those it reads commands from stdin
        (or from the ``::::``/``-a`` files)."""
        stop = _split_options(argv, _PARALLEL_OPTIONS)
        self.out.append(argv[:stop])
        rest = argv[stop:]
        cut = next((i for i, a in enumerate(rest) if a in _PARALLEL_INPUTS), len(rest))
        command = rest[:cut]
        values: list[str] = []
        files: list[str] = []
        group = ""
        for arg in rest[cut:]:
            if arg in _PARALLEL_INPUTS:
                group = arg
            else:
                (files if group.startswith("::::") else values).append(arg)
        arg_file = _option_value(argv, stop, "a", "arg-file")
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
        replaced = _PARALLEL_REPLACEMENT.search(line) is not None
        for value in values[:MAX_PARALLEL_JOBS]:
            quoted = shlex.quote(value)
            self.parse(quoted.join(_PARALLEL_REPLACEMENT.split(line)) if replaced else f"{line} {quoted}")
        if not values or len(values) > MAX_PARALLEL_JOBS:
            self.parse(" ".join([line, *map(shlex.quote, values[MAX_PARALLEL_JOBS:])]))

    def _flock(self, argv: list[str]) -> list[str] | None:
        """``flock [opts] FILE CMD...`` or ``flock [opts] FILE -c LINE``."""
        stop = _split_options(argv, _FLOCK_OPTIONS)
        if stop < len(argv) and argv[stop] in ("-c", "--command"):
            self.out.append(argv[: stop + 1])
            if stop + 1 < len(argv):
                self.parse(argv[stop + 1])
            return None
        self.out.append(argv[:stop])
        return argv[stop:]

    def _script(self, argv: list[str]) -> None:
        """``script -c LINE [FILE]``; without ``-c`` it runs an interactive shell fed by stdin."""
        found = _option_at(argv, len(argv), "c", "command")
        if found is None:
            self.out.append(argv)
            self.shell_reading_stdin(argv)
            return
        self.out.append(_without(argv, found))
        self.parse(found[0])

    def _chrt(self, argv: list[str]) -> list[str] | None:
        """``chrt [opts] PRIORITY CMD...``; ``-p`` (an existing pid) and ``-m`` run nothing."""
        stop = _split_options(argv, _CHRT_OPTIONS)
        if _has_flag(argv, stop, "pm", _longs("pid", "max"), _CHRT_OPTIONS):
            self.out.append(argv)
            return None
        stop = min(stop + 1, len(argv))
        self.out.append(argv[:stop])
        return argv[stop:]

    def _at(self, argv: list[str]) -> None:
        """``at``/``batch`` queue a job that ``sh`` runs later: read from stdin, or ``-f FILE``."""
        self.out.append(argv)
        if _has_flag(argv, len(argv), "lrdcV", _longs(), _AT_OPTIONS):
            return
        script = _option_value(argv, len(argv), "f", "")
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
            value_at = next((j for j, ch in enumerate(letters) if ch in _SCREEN_VALUE_LETTERS), -1)
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
        stop = _split_options(argv, _TMUX_OPTIONS)
        line = _option_value(argv, stop, "c", "")
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
        spec = _TMUX_COMMANDS.get(command[0])
        if spec is None:
            self.out.append(tmux + command)
            return
        letters, kind = spec
        options = _WrapperOptions(letters)
        stop = _split_options(command, options)
        self.out.append(tmux + command[:stop])
        rest = command[stop:]
        if not rest:
            return
        if kind == "keys":
            literal = _has_flag(command, stop, "l", _longs(), options)
            keys = ["\n" if not literal and k in _TMUX_NEWLINE_KEYS else
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
                _Unwrapper(self.depth, self.budget, self.variables, [], self.script_readers).run(rest)
            )

    def _entr(self, argv: list[str]) -> list[str] | None:
        """``entr [-s] CMD...`` (``-s``: the command is a shell line)."""
        options = _WrapperOptions()
        stop = _split_options(argv, options)
        self.out.append(argv[:stop])
        if _has_flag(argv, stop, "s", _longs(), options):
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
                    0 if eq else _HYPERFINE_LONG_VALUES.get(name, 1 if name in _HYPERFINE_LONG_SHELL else 0)
                )
                if name in _HYPERFINE_LONG_SHELL:
                    for line in [value] if eq else argv[i + 1 : i + 2]:
                        self.parse(line)
                    listed.append(arg)
                else:
                    listed.extend(argv[i : i + 1 + count])
                i += 1 + count
            elif arg.startswith("-") and len(arg) > 1:
                letter = arg[1]
                count = 1 if letter in _HYPERFINE_SHELL else _HYPERFINE_VALUES.get(letter, 0)
                if len(arg) > 2 and count:
                    count -= 1  # -r10: the first value is attached
                if letter in _HYPERFINE_SHELL:
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
        table = _RUNNERS[argv[0]]
        start = _split_options(argv, _RUNNER_GLOBAL_OPTIONS) if () not in table else 1
        runner = None
        for words, candidate in table.items():
            if argv[start : start + len(words)] == list(words):
                runner, start = candidate, start + len(words)
                break
        if runner is None:
            self.out.append(argv)
            return None
        stop = _split_options(argv, runner.options, start)
        listed = argv[:stop]
        self.out.append(listed)
        if runner.shell_string or runner.shell_string_long:
            line = _option_value(listed, stop, runner.shell_string, runner.shell_string_long)
            if line is not None:
                self.parse(line)
                return None
        rest = argv[stop:]
        if not rest:
            return None
        if runner.shell_mode and _has_flag(listed, stop, "c", _longs(runner.shell_mode), runner.options):
            self.parse(" ".join(rest))
            return None
        if (
            runner.package
            and _option_value(listed, stop, runner.package_short, runner.package_option) is None
        ):
            rest = [_package_bin(rest[0]), *rest[1:]]
        return rest


_SpecialWrapper = Callable[[_Unwrapper, list[str]], "list[str] | None"]
_SPECIAL_WRAPPERS: dict[str, _SpecialWrapper] = {
    **dict.fromkeys(_SHELLS, _Unwrapper._shell),
    "su": _Unwrapper._su,
    "runuser": _Unwrapper._su,
    "eval": _Unwrapper._eval,
    "find": _Unwrapper._find,
    "watch": _Unwrapper._watch,
    "parallel": _Unwrapper._parallel,
    "sem": _Unwrapper._parallel,
    "flock": _Unwrapper._flock,
    "script": _Unwrapper._script,
    "chrt": _Unwrapper._chrt,
    "at": _Unwrapper._at,
    "batch": _Unwrapper._at,
    "sg": _Unwrapper._sg,
    "newgrp": _Unwrapper._newgrp,
    "screen": _Unwrapper._screen,
    "tmux": _Unwrapper._tmux,
    "entr": _Unwrapper._entr,
    "hyperfine": _Unwrapper._hyperfine,
    "alias": _Unwrapper._alias,
    **dict.fromkeys(("psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "clickhouse-client",
                     "cockroach",
                     "sqlcmd", "snowsql", "cqlsh", "mongosh", "mongo", "redis-cli", "valkey-cli", "keydb-cli",
                     "pgcli", "mycli", "litecli", "usql"), _Unwrapper._database_client),
    **dict.fromkeys(("docker", "podman", "nerdctl", "docker-compose", "podman-compose", "kubectl", "oc",
                     "kubecolor"), _Unwrapper._container_exec),
    **dict.fromkeys(("tar", "bsdtar", "gtar", "zip", "make", "gmake", "vim", "vi", "nvim", "ex", "view",
                     "gvim", "rvim", "man", "gdb", "rsync", "ssh", "socat", "nc", "ncat", "netcat", "git",
                     "less", "more", "nmap", "apt", "apt-get", "aptitude"), _Unwrapper._strings_run),
}  # fmt: skip


def _unwrap(
    argv: list[str],
    depth: int,
    budget: _Budget,
    variables: dict[str, str],
    stdin: list[str],
    script_readers: list[tuple[_Reader, list[str]]],
) -> list[list[str]]:
    return [
        _resolved_operands(expanded, variables)
        for command in _Unwrapper(depth, budget, variables, stdin, script_readers).run(argv)
        for expanded in _loop_bodies(command, budget.loops)
    ]


@dataclass(frozen=True, slots=True)
class _ParsedLine:
    commands: tuple[tuple[str, ...], ...]
    redirects: tuple[tuple[str, str, str], ...]  # (fd, op, target)
    effects: tuple[dict[str, str], ...] = ()
    databases: tuple[DatabaseText, ...] = ()


def _checked(line: object, function: str) -> _ParsedLine:
    if not isinstance(line, str):
        raise TypeError(f"{function} expects a string, got {type(line).__name__}")
    if len(line) > MAX_INPUT_CHARS:
        raise ShellLineTooComplexError(f"shell line longer than {MAX_INPUT_CHARS} characters")
    parsed = _parse_cached(line)
    if isinstance(parsed, str):
        raise ShellLineTooComplexError(parsed)
    return parsed


_CACHE_SIZE = 256
_cache: OrderedDict[str, _ParsedLine | str] = OrderedDict()
_cache_lock = threading.Lock()


def _parse_cached(line: str) -> _ParsedLine | str:
    """Rules of one event usually parse the same line many times (and a comprehension may do it
    per element), so parses are cached, and so is a line's being too complex (every rule that
    reads it then fails at once, not after another bounded but costly parse); callers get fresh
    lists. A parse the stage deadline stopped says nothing about the line and is not cached."""
    with _cache_lock:
        found = _cache.get(line)
        if found is not None:
            _cache.move_to_end(line)
            return found
    result: _ParsedLine | str
    try:
        result = _parse_uncached(line)
    except _DeadlineInParse:
        raise
    except ShellLineTooComplexError as error:
        result = str(error)
    with _cache_lock:
        _cache[line] = result
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


class _DeadlineInParse(ShellLineTooComplexError):
    """The stage deadline stopped a parse (a property of the moment, not of the line)."""


def _parse_uncached(line: str) -> _ParsedLine:
    budget = _Budget()
    commands = _parse(line, 0, budget, {})
    return _ParsedLine(
        tuple(tuple(argv) for argv in commands),
        tuple(budget.redirects),
        tuple(budget.effects),
        tuple(budget.databases),
    )


def shell_commands(line: str) -> list[list[str]]:
    """The argv of every simple command ``line`` would run, in execution order (see module doc).

    Raises :class:`ShellLineTooComplexError` only beyond the documented size and nesting limits;
    raises ``TypeError`` when ``line`` is not a string.
    """
    return [list(argv) for argv in _checked(line, "shell.commands").commands]


def shell_argv0s(line: str) -> list[str]:
    """The program names (argv[0]) of :func:`shell_commands`, in order; handy for allow-lists."""
    return [argv[0] for argv in shell_commands(line) if argv]


def shell_programs(line: str) -> str:
    """The program names of :func:`shell_argv0s` as one string, each between spaces
    (``" cd make tee "``), so one ``matches`` (``' (?:zfs|zpool) '``) tells whether a line runs
    any of many programs: a rule's cheap first test, far cheaper in an interpreted engine than a
    comprehension over the list. Same limits and errors as :func:`shell_commands`."""
    return " " + " ".join(shell_argv0s(line)) + " "


def shell_effects(line: str) -> list[dict[str, str]]:
    """What interpreter code on the line does besides running commands, and the servers it
    starts, as ``{"kind", "lang", "target"}`` maps (``serve`` also has ``bind``): ``delete``,
    ``delete-tree``, ``connect``, ``shell``, ``reverse-shell``, ``serve`` (see
    :mod:`~dsh_policy.cmdline.interpreters`). Same limits and errors as :func:`shell_commands`."""
    return [dict(effect) for effect in _checked(line, "shell.effects").effects]


def shell_sql(line: str) -> list[dict[str, str]]:
    """Every statement the line's database clients would send (psql/mysql/sqlite3/duckdb/
    clickhouse/cockroach/sqlcmd/snowsql/cqlsh ``-c``/``-e``/``--query`` text and stdin, mongosh
    ``--eval``, redis-cli commands), as the maps of ``sql.statements`` plus ``client``, ``host``
    (``""`` for the client's default) and ``database``. Same limits and errors as
    :func:`shell_commands`."""
    return [dict(statement) for statement in _statements_cached(_checked(line, "shell.sql").databases)]


@lru_cache(maxsize=256)
def _statements_cached(texts: tuple[DatabaseText, ...]) -> tuple[dict[str, str], ...]:
    out: list[dict[str, str]] = []
    for item in texts:
        client = {"client": item.client.client, "host": item.client.host, "database": item.client.database}
        if item.client.dialect == "redis":
            statements = sql.redis_statements([list(item.argv) or item.text.split()])
            out.extend({**statement, **client} for statement in statements)
        elif item.client.dialect == "mongo":
            out.extend({**statement, **client} for statement in sql.mongo_statements(item.text))
        else:
            out.extend({**statement, **client} for statement in sql.sql_statements(item.text))
    return tuple(out)


def shell_redirects(line: str) -> list[dict[str, str]]:
    """Every redirection of every command ``line`` would run (also inside ``bash -c``,
    substitutions and scripts read from stdin), as ``{"fd", "op", "target"}`` maps of strings.

    ``op`` is the operator as written (``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<``, ``<>``,
    ``>&``, ``<&``, ``<<``, ``<<-``, ``<<<``); ``fd`` the explicit descriptor (``"2"`` in
    ``2>x``) or ``""``; ``target`` the word after it as the shell would see it: quotes removed,
    ``$'..'`` decoded, variables assigned earlier on the line substituted (``> /e""tc/passwd``
    is ``/etc/passwd``). An unresolved variable or substitution keeps its raw text (``$f``,
    ``$(mktemp)``), a here-document's target is its delimiter, a here-string's its text, and a
    ``>&``/``<&`` target is a descriptor (``1``, ``-``) or, for ``>&``, a file. Same limits and
    errors as :func:`shell_commands`.
    """
    return [
        {"fd": fd, "op": op, "target": target}
        for fd, op, target in _checked(line, "shell.redirects").redirects
    ]
