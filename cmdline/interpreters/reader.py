"""The generic code reader: evaluates argument expressions of code in any of the languages
lexically (string literals, concatenation, path joins, well-known values such as the home
directory, names assigned earlier) to shell-word-like strings or string lists. It never runs
the code and never raises for odd input."""

from __future__ import annotations

import re

from dsh_policy.cmdline.interpreters.model import UNKNOWN
from dsh_policy.cmdline.lazy_regex import lazy_compile

_STRING_START = lazy_compile(r"""(?:[rRbBuUfF]{0,2})(['"`])""")
_KNOWN_VALUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (lazy_compile(pattern), value)
    for pattern, value in (
        (r"os\.path\.expanduser\(\s*(['\"])~\1\s*\)", "~"),
        (r"(?:pathlib\.)?Path\.home\(\s*\)", "~"),
        (r"(?:os\.)?homedir\(\s*\)|require\(\s*['\"](?:node:)?os['\"]\s*\)\.homedir\(\s*\)", "~"),
        (r"Dir\.home\b|File\.expand_path\(\s*(['\"])~\1\s*\)|ENV\.fetch\(\s*['\"]HOME['\"]\s*\)", "~"),
        (r"os\.environ\s*\[\s*(['\"])HOME\1\s*\]|os\.environ\.get\(\s*(['\"])HOME\2\s*\)"
            r"|os\.getenv\(\s*(['\"])HOME\3\s*\)", "$HOME"),
        (r"process\.env\.HOME\b|process\.env\[\s*(['\"])HOME\1\s*\]"
            r"|Deno\.env\.get\(\s*['\"]HOME['\"]\s*\)", "$HOME"),
        (r"ENV\s*\[\s*(['\"])HOME\1\s*\]|\$ENV\{\s*['\"]?HOME['\"]?\s*\}"
            r"|getenv\(\s*(['\"])HOME\2\s*\)|\$_SERVER\[\s*['\"]HOME['\"]\s*\]", "$HOME"),
        (r"os\.getcwd\(\s*\)|process\.cwd\(\s*\)|Dir\.pwd\b"
            r"|getcwd\(\s*\)|__dirname\b|Deno\.cwd\(\s*\)|(?:pathlib\.)?Path\.cwd\(\s*\)", "."),
        (r"os\.sep\b|path\.sep\b|File::SEPARATOR\b|DIRECTORY_SEPARATOR\b", "/"),
    )
)  # fmt: skip
# Interpolation inside strings: Python f-strings and JavaScript template literals (``{x}``,
# ``${x}``), and the double-quoted strings of Perl and PHP (``$ENV{HOME}``, ``{$x}``) and Ruby
# (``#{x}``). A well-known value (the home directory above all) keeps its meaning, so
# ``rmtree("$ENV{HOME}")`` deletes the home folder as ``rmtree($ENV{HOME})`` does; anything else
# is unknown.
_INTERPOLATION = lazy_compile(r"\$?\{([^}]*)\}")
_INTERPOLATING: dict[str, re.Pattern[str]] = {
    "perl": lazy_compile(r"(\$ENV\{\s*['\"]?HOME['\"]?\s*\})"),
    "php": lazy_compile(r"\{?(\$_SERVER\[\s*['\"]?HOME['\"]?\s*\]|getenv\(\s*['\"]HOME['\"]\s*\))\}?"),
    "ruby": lazy_compile(r"#\{([^}]*)\}"),
}


def _interpolated_value(match: re.Match[str]) -> str:
    """A well-known value for an interpolated expression, else :data:`UNKNOWN`."""
    inner = match.group(1).strip()
    for pattern, value in _KNOWN_VALUES:
        if pattern.fullmatch(inner):
            return value
    return UNKNOWN


# Calls whose value is their first argument, as far as which file is meant goes.
_PASSTHROUGH = lazy_compile(
    r"(?:os\.path\.(?:expanduser|abspath|realpath"
    r"|normpath|expandvars)|File\.(?:expand_path|absolute_path|realpath)"
    r"|path\.normalize|realpath|String|str|Pathname|URI|sprintf|format)\s*\("
    # a glob names what it expands to: rmtree(glob("~/src")) deletes ~/src
    r"|(?<![\w.])(?:glob\.i?glob|Dir\.glob|(?:File::Glob::)?bsd_glob|glob)\s*\("
)
_JOINERS = lazy_compile(
    r"(?:os\.path\.join|path\.join|path\.resolve|File\.join|(?:pathlib\.)?(?:Pure)?(?:Posix)?Path)\("
)
_IDENT = lazy_compile(r"\$?[A-Za-z_][A-Za-z0-9_]*")
_KEYWORD_ARGUMENT = lazy_compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)\s*")
_ASSIGNMENT = lazy_compile(
    r"(?:^|[;\n{(]|\b(?:const|let|var|my|local|our)\b)\s*(\$?[A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*\w+\s*)?=(?![=~>])\s*"
)


class CodeReader:
    """Evaluates argument expressions of one piece of code to strings or string lists."""

    def __init__(self, code: str, language: str) -> None:
        self.code = code
        self.language = language
        self.names: dict[str, str | list[str]] = {}
        self._collect_assignments()

    def _collect_assignments(self) -> None:
        for match in _ASSIGNMENT.finditer(self.code):
            value, _ = self.expression(match.end())
            if value is not None and value != UNKNOWN:
                self.names[match.group(1).lstrip("$")] = value

    # -- literals -----------------------------------------------------------------------------

    def string(self, pos: int) -> tuple[str, int] | None:
        """A string literal at ``pos`` (after blanks): its text and the position after it."""
        code = self.code
        pos = self.skip_blanks(pos)
        match = _STRING_START.match(code, pos)
        if match is None:
            return None
        quote = match.group(1)
        prefix = code[pos : match.start(1)].lower()
        if quote == "`" and self.language not in ("javascript",):
            return None
        triple = code.startswith(quote * 3, match.start(1))
        start = match.start(1) + (3 if triple else 1)
        i = start
        out: list[str] = []
        raw = "r" in prefix or (quote == "'" and self.language in ("perl", "php", "ruby", "awk"))
        while i < len(code):
            ch = code[i]
            if (triple and code.startswith(quote * 3, i)) or (not triple and ch == quote):
                end = i + (3 if triple else 1)
                text = "".join(out)
                if "f" in prefix or quote == "`":
                    text = _INTERPOLATION.sub(_interpolated_value, text)
                elif quote == '"' and not raw and self.language in _INTERPOLATING:
                    text = _INTERPOLATING[self.language].sub(_interpolated_value, text)
                return text, end
            if ch == "\\" and i + 1 < len(code):
                nxt = code[i + 1]
                if raw:
                    out.append(nxt if nxt in (quote, "\\") else ch + nxt)
                else:
                    out.append({"n": "\n", "t": "\t", "r": "", "0": ""}.get(nxt, nxt))
                i += 2
                continue
            if ch == "\n" and not triple and quote != "`" and self.language == "python":
                return None
            out.append(ch)
            i += 1
        return None

    def skip_blanks(self, pos: int) -> int:
        code = self.code
        while pos < len(code) and code[pos] in " \t\r\n":
            pos += 1
        return pos

    # -- expressions ---------------------------------------------------------------------------

    def expression(self, pos: int) -> tuple[str | list[str] | None, int]:
        """Evaluate the expression at ``pos`` up to a ``,``, ``)``, ``;`` or line end at depth 0:
        a string (concatenations joined, unknown parts ``$__``), a list of strings (an array
        literal), or ``None`` when nothing is there."""
        parts: list[str] = []
        listed: list[str] | None = None
        pos = self.skip_blanks(pos)
        code = self.code
        while pos < len(code):
            term, pos = self._term(pos)
            if isinstance(term, list):
                listed = term
            elif term is not None:
                parts.append(term)
            pos = self.skip_blanks(pos)
            if pos < len(code) and (code[pos] in "+." and not code.startswith("..", pos)):
                pos += 1
                continue
            if pos < len(code) and code[pos] in "'\"" and parts:  # Python implicit concatenation
                continue
            break
        if listed is not None and not parts:
            return listed, pos
        if not parts:
            return None, pos
        return "".join(parts), pos

    def _term(self, pos: int) -> tuple[str | list[str] | None, int]:
        code = self.code
        pos = self.skip_blanks(pos)
        literal = self.string(pos)
        if literal is not None:
            return literal
        for pattern, value in _KNOWN_VALUES:
            match = pattern.match(code, pos)
            if match is not None:
                return value, match.end()
        passthrough = _PASSTHROUGH.match(code, pos)
        if passthrough is not None:
            values, end = self.arguments(passthrough.end())
            first = values[0] if values else None
            return (first if isinstance(first, str) else UNKNOWN), self._skip_member_chain(end)
        joiner = _JOINERS.match(code, pos)
        if joiner is not None:
            values, end = self.arguments(joiner.end())
            pieces = [v if isinstance(v, str) else UNKNOWN for v in values]
            return "/".join(p.rstrip("/") for p in pieces[:-1]) + ("/" if len(pieces) > 1 else "") + (
                pieces[-1].lstrip("/") if pieces else ""
            ), end  # fmt: skip
        if pos < len(code) and code[pos] == "[":
            items, end = self.arguments(pos + 1, closing="]")
            return [v if isinstance(v, str) else UNKNOWN for v in items], end
        if code.startswith("%w", pos) and pos + 2 < len(code):
            closing = {"[": "]", "(": ")", "{": "}"}.get(code[pos + 2], code[pos + 2])
            end = code.find(closing, pos + 3)
            end = len(code) if end < 0 else end
            return code[pos + 3 : end].split(), end + 1
        if code.startswith("qw", pos) and pos + 2 < len(code) and code[pos + 2] in "([{/":
            closing = {"[": "]", "(": ")", "{": "}"}.get(code[pos + 2], code[pos + 2])
            end = code.find(closing, pos + 3)
            end = len(code) if end < 0 else end
            return code[pos + 3 : end].split(), end + 1
        ident = _IDENT.match(code, pos)
        if ident is not None:
            end = ident.end()
            name = ident.group().lstrip("$")
            after = self.skip_blanks(end)
            if after < len(code) and code[after] == "(":
                _, end = self.arguments(after + 1)
                return UNKNOWN, end
            if name in self.names and not (after < len(code) and code[after] in ".["):
                return self.names[name], end
            return UNKNOWN, self._skip_member_chain(end)
        return None, pos

    def _skip_member_chain(self, pos: int) -> int:
        code = self.code
        while pos < len(code):
            if code[pos] == "." and pos + 1 < len(code) and (code[pos + 1].isalpha() or code[pos + 1] == "_"):
                match = _IDENT.match(code, pos + 1)
                pos = match.end() if match else pos + 1
            elif code[pos] in "[(":
                pos = closing_index(code, pos + 1, code[pos], "]" if code[pos] == "[" else ")") + 1
            else:
                break
        return pos

    def arguments(self, pos: int, closing: str = ")") -> tuple[list[str | list[str] | None], int]:
        """The comma-separated arguments of a call opened just before ``pos``."""
        code = self.code
        values: list[str | list[str] | None] = []
        while pos < len(code):
            pos = self.skip_blanks(pos)
            if pos < len(code) and code[pos] == closing:
                return values, pos + 1
            keyword = _KEYWORD_ARGUMENT.match(code, pos)  # shell=True, check=True: not an operand
            value, after = self.expression(keyword.end() if keyword else pos)
            if keyword is None:
                values.append(value)
            after = self.skip_blanks(after)
            if after < len(code) and code[after] == ",":
                pos = after + 1
                continue
            if after < len(code) and code[after] == closing:
                return values, after + 1
            end = closing_index(code, after, "([{", closing)  # something we do not read: skip it
            return values, end + 1
        return values, len(code)


def closing_index(code: str, pos: int, openers: str, closing: str) -> int:
    """Index of ``closing`` at depth 0 from ``pos`` (quote-aware), or ``len(code)``."""
    depth = 0
    pairs = {"(": ")", "[": "]", "{": "}"}
    i = pos
    while i < len(code):
        ch = code[i]
        if ch in "'\"":
            end = code.find(ch, i + 1)
            while end > 0 and code[end - 1] == "\\":
                end = code.find(ch, end + 1)
            i = len(code) if end < 0 else end + 1
            continue
        if ch in pairs:
            depth += 1
        elif ch in ")]}":
            if depth == 0 and ch == closing:
                return i
            depth = max(depth - 1, 0)
        i += 1
    return len(code)
