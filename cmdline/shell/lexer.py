"""Shell text to words, separators and redirections, the way bash would split it: quoting,
``$'...'`` escapes, ``$(...)``/backtick/process substitutions (their commands are read as nested
lines), ``${...}``, arithmetic and here-documents.

A word keeps which of its characters were quoted, because brace expansion and ``$IFS`` splitting
(:mod:`.expansion`) apply to the unquoted ones only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.budget import (
    MAX_INPUT_CHARS,
    MAX_LEXED_CHARS,
    MAX_NESTING,
    Budget,
    ShellLineTooComplexError,
)

IFS = ""  # a marker in a word's character list: unquoted $IFS, split here
_METACHARS = frozenset(" \t\n;&|()<>")
_PLAIN_RUN = lazy_compile(r"[^ \t\n;&|()<>\\'\"$`]+")
"""Characters a word takes as they are, unquoted (not a metacharacter, quote, ``\\``, ``$``, `` ` ``)."""
_QUOTED_RUN = lazy_compile(r"[^\"\\$`]*")
"""Characters a double-quoted string takes as they are (not its closing quote, ``\\``, ``$``, `` ` ``)."""
NAME = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSITIONAL = lazy_compile(r"[0-9@*#]")
ASSIGNMENT = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_SEPARATORS = ("|&", "&&", "||", ";;&", ";;", ";&", ";", "&", "|", "(", ")")
_REDIRECTIONS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">")
WRITING_REDIRECTIONS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
"""Operators that open their target for writing (``>&`` a file unless the target is a descriptor)."""
READING_REDIRECTIONS = frozenset({"<", "<&"})
"""Operators that open their target for reading (here-documents and here-strings name no file)."""


@dataclass(slots=True)
class Word:
    """A word as lexed: characters with a parallel "was quoted" flag (for brace and IFS rules)."""

    chars: list[str] = field(default_factory=list)
    quoted: list[bool] = field(default_factory=list)

    def add(self, text: str, quoted: bool) -> None:
        self.chars.extend(text)  # one character per item
        self.quoted.extend([quoted] * len(text))

    def text(self) -> str:
        return "".join(self.chars)

    def any_quoted(self) -> bool:
        return any(self.quoted)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "word" | "sep" | "redir"
    value: str
    word: Word | None = None
    fd: str = ""  # a redirection's explicit file descriptor: "2" in ``2>/dev/null``


class Lexer:
    """Turns a shell line into words, separators and redirections; collects substitution commands."""

    def __init__(self, text: str, depth: int, budget: Budget, variables: dict[str, str]) -> None:
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

    def next_token(self) -> Token | None:
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
                return Token("sep", "\n")
            elif ch in "<>" and text.startswith("(", self.pos + 1):
                return self._word()
            elif ch in ";&|()<>":
                for op in _REDIRECTIONS if ch in "<>&" else ():
                    if text.startswith(op, self.pos):
                        self.pos += len(op)
                        return Token("redir", op)
                for op in _SEPARATORS:
                    if text.startswith(op, self.pos):
                        self.pos += len(op)
                        return Token("sep", op)
                self.pos += 1  # unreachable for the characters above; keeps the loop total
            else:
                return self._word()
        return None

    def _word(self) -> Token:
        text = self.text
        word = Word()
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
                        return Token("sep", ";")
                    return Token(token.kind, token.value, token.word, fd) if token.kind == "redir" else token
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
                # A run of characters none of the branches above treats specially, at once.
                end = _PLAIN_RUN.match(text, self.pos).end()  # type: ignore[union-attr]
                word.add(text[self.pos : end], False)
                self.pos = end
        return Token("word", word.text(), word)

    # -- quoting and expansions ---------------------------------------------------------------

    def _double_quoted(self, word: Word) -> None:
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
                # A run of characters the branches above do not treat specially, at once.
                end = _QUOTED_RUN.match(text, self.pos + 1).end()  # type: ignore[union-attr]
                word.add(text[self.pos : end], True)
                self.pos = end

    def _dollar(self, word: Word, quoted: bool) -> None:
        text = self.text
        nxt = text[self.pos + 1 : self.pos + 2]
        if nxt == "'" and not quoted:
            self.pos += 2
            word.add(self._ansi_c(), True)
        elif nxt == '"' and not quoted:
            self.pos += 2
            self._double_quoted(word)
        elif text.startswith("$((", self.pos):
            end = find_closing(text, self.pos + 3, "(", ")", depth=2)
            inner = text[self.pos + 3 : max(end - 1, self.pos + 3)]
            self._scan_for_substitutions(inner)
            word.add(text[self.pos : end + 1], True)
            self.pos = end + 1
        elif nxt == "(":
            self._substitution(word, self.pos + 2, "(", ")", quoted=True)
        elif nxt == "{":
            end = find_closing(text, self.pos + 2, "{", "}")
            inner = text[self.pos + 2 : end]
            if inner == "IFS" and not quoted:
                word.chars.append(IFS)
                word.quoted.append(False)
            elif inner in self.variables:
                self._add_variable(word, inner, quoted)
            else:
                self._scan_for_substitutions(inner)
                word.add(text[self.pos : end + 1], True)
            self.pos = end + 1
        else:
            match = NAME.match(text, self.pos + 1) or _POSITIONAL.match(text, self.pos + 1)
            if match is None:
                word.add("$", quoted)
                self.pos += 1
                return
            name = match.group()
            self.pos = match.end()
            if name == "IFS" and not quoted:
                word.chars.append(IFS)
                word.quoted.append(False)
            elif name in self.variables:
                self._add_variable(word, name, quoted)
            else:
                word.add("$" + name, True)

    def _add_variable(self, word: Word, name: str, quoted: bool) -> None:
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

    def _substitution(self, word: Word, start: int, opening: str, closing: str, quoted: bool) -> None:
        end = find_closing(self.text, start, opening, closing)
        nested = self.budget.nested.line(self.text[start:end], self.depth + 1, self.budget, self.variables)
        self.nested.extend(nested)
        word.add(self.text[self.pos : end + 1], quoted)
        self.pos = end + 1

    def _backticks(self, word: Word, quoted: bool) -> None:
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
        nested = self.budget.nested.line("".join(inner), self.depth + 1, self.budget, self.variables)
        self.nested.extend(nested)
        word.add(text[self.pos : i + 1], quoted)
        self.pos = i + 1

    def _scan_for_substitutions(self, text: str) -> None:
        """Collect the commands of substitutions inside text that is not itself a command line
        (``${x:-$(cmd)}``, ``$(( $(cmd) + 1 ))``, an unquoted here-document body)."""
        if "$" not in text and "`" not in text:
            return
        if self.depth + 1 > MAX_NESTING:
            raise ShellLineTooComplexError(f"shell line nests deeper than {MAX_NESTING} levels")
        lexer = Lexer(text, self.depth + 1, self.budget, self.variables)
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


def find_closing(text: str, start: int, opening: str, closing: str, depth: int = 1) -> int:
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
