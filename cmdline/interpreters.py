"""What code handed to a script interpreter would do: the commands it runs, the files it deletes,
the hosts it connects to, the directories it serves.

``python -c '...'``, ``node -e '...'``, ``perl -e '...'``, an awk program or a here-document fed to
``python3 -`` is opaque to a shell parser, and it is the usual way to smuggle ``rm -rf ~`` or a
reverse shell past one. This module reads such code lexically (never runs it) in the languages
agents reach for: Python, JavaScript (node, deno, bun), Ruby, Perl, PHP, Lua, R, awk, sed,
AppleScript and Tcl/expect. It finds:

- **shell-outs**: ``os.system("...")``, ``subprocess.run([...])``, ``execSync("...")``,
  ``system "..."``, backticks, ``%x{...}``, ``qx(...)``, ``os.execute``, awk ``system()`` and
  ``"cmd" | getline``, sed's ``e`` command, ``do shell script``; a string argument is a shell line,
  a list argument an argv. :mod:`~dsh_policy.cmdline.shell` lists their commands like those of
  ``bash -c``, so every shell rule applies to them;
- **effects** done through the language's own API, as ``{"kind", "lang", "target"}`` maps:
  ``delete`` (``os.remove``, ``fs.unlinkSync``, ``unlink``...), ``delete-tree`` (``shutil.rmtree``,
  ``fs.rmSync(.., {recursive: true})``, ``FileUtils.rm_rf``, ``remove_tree``...), ``connect``
  (sockets, HTTP clients: the target is the host or URL when the code names it), ``shell`` (an
  interactive shell: ``pty.spawn("/bin/sh")``, ``exec "/bin/sh"``), ``reverse-shell`` (a
  connection and a shell or descriptor duplication in the same code) and ``serve`` (``python -m
  http.server``, ``php -S``, ``ruby -run -e httpd``: the target is the directory served, ``bind``
  the address), ``read``/``write`` (``open()``, ``fs.readFileSync``, ``File.read``,
  ``file_get_contents``...) and ``sql`` (SQL handed to a driver, ``cursor.execute("DROP ...")``,
  and ORM bulk deletes such as ``User.objects.all().delete()`` as the ``DELETE FROM`` they are).

Targets are spelled like shell words so the shell rules' patterns apply: a string literal is its
text, ``os.path.expanduser("~")``/``Path.home()``/``os.homedir()``/``Dir.home`` is ``~``,
``os.environ["HOME"]``/``process.env.HOME``/``$ENV{HOME}`` is ``$HOME``, ``os.getcwd()``/
``process.cwd()``/``__dirname`` is ``.``, concatenation (``+``, ``.``, ``os.path.join``) joins the
parts, names assigned earlier in the same code take their value, and anything else is ``$__``
(an unresolved value, like an unset shell variable). Work is linear in the code and bounded by the
shell module's limits; nothing here raises for odd input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dsh_policy.cmdline.programs import PYTHON

__all__ = ["CodeAnalysis", "analyze", "interpreter_of", "split_invocation"]

UNKNOWN = "$__"
"""The value of an expression the analysis cannot resolve (reads like an unset shell variable)."""

MAX_CODE_CHARS = 64 * 1024
"""Longest code analysed; longer code is cut (the shell module bounds the whole line anyway)."""

_SHELL_NAMES = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "csh", "tcsh", "cmd",
                          "cmd.exe",
                          "powershell", "pwsh"})  # fmt: skip


@dataclass(slots=True)
class CodeAnalysis:
    """What one piece of code does: shell lines and argvs it runs, and its other effects."""

    shell_lines: list[str] = field(default_factory=list)
    argvs: list[list[str]] = field(default_factory=list)
    effects: list[dict[str, str]] = field(default_factory=list)


# -- which program reads code, and where ----------------------------------------------------------

_LANGUAGES = {
    "node": "javascript", "nodejs": "javascript", "deno": "javascript", "bun": "javascript",
    "ruby": "ruby", "perl": "perl", "php": "php", "lua": "lua", "luajit": "lua", "Rscript": "r",
    "R": "r", "awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk", "sed": "sed", "gsed": "sed",
    "osascript": "applescript", "expect": "tcl", "tclsh": "tcl", "wish": "tcl",
}  # fmt: skip


def interpreter_of(program: str) -> str | None:
    """The language ``program`` reads code in, or ``None`` when it is no interpreter we read."""
    if PYTHON.fullmatch(program):
        return "python"
    return _LANGUAGES.get(program)


@dataclass(frozen=True, slots=True)
class Invocation:
    """How an interpreter invocation hands over its code."""

    language: str
    code: list[str]  # inline code (-c, -e, the awk program, ...)
    reads_stdin: bool  # no script file: code comes from stdin (a here-document, a pipe)
    effects: list[dict[str, str]]  # servers started by the invocation itself


# Short options that take a value, per language (the value is the next word or attached).
_VALUE_SHORTS = {
    "python": "WXQm", "javascript": "rC", "ruby": "rICTFxEK", "perl": "IMmxCdDV", "php": "dcfzt",
    "lua": "l", "r": "", "awk": "Ffv", "sed": "f", "applescript": "l", "tcl": "",
}  # fmt: skip
_CODE_SHORTS = {
    "python": "c", "javascript": "ep", "ruby": "e", "perl": "eE", "php": "r", "lua": "e", "r": "e",
    "awk": "e", "sed": "e", "applescript": "e", "tcl": "c",
}  # fmt: skip
_CODE_LONGS = frozenset({"eval", "print", "execute", "expression", "source", "command"})
_VALUE_LONGS = frozenset({"require", "import", "input-type", "loader", "directory", "bind", "file", "include",
                          "field-separator", "assign", "config", "cwd", "conditions"})  # fmt: skip


def split_invocation(argv: list[str]) -> Invocation | None:
    """Read an interpreter's argv: its inline code, whether it reads code from stdin, and the
    servers it starts (``python -m http.server``, ``php -S``). ``None`` for other programs."""
    language = interpreter_of(argv[0]) if argv else None
    if language is None:
        return None
    if language == "javascript" and argv[0] == "deno":
        return _deno(argv)
    code: list[str] = []
    effects: list[dict[str, str]] = []
    operands: list[str] = []
    module: str | None = None
    script_file = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            operands.extend(argv[i + 1 :])
            break
        if arg == "-" or not arg.startswith("-") or (module is not None and language == "python"):
            operands.extend(argv[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in _CODE_LONGS and language != "sed":
                code.append(value if eq else (argv[i + 1] if i + 1 < len(argv) else ""))
                i += 1 if eq else 2
                continue
            if name == "expression" and language == "sed":
                code.append(value if eq else (argv[i + 1] if i + 1 < len(argv) else ""))
                i += 1 if eq else 2
                continue
            i += 1 if eq or name not in _VALUE_LONGS else 2
            continue
        i = _short_options(argv, i, language, code, effects) + 1
        if language == "python" and code and code[-1].startswith("\0module:"):
            module = code.pop()[len("\0module:") :]
        elif language == "ruby" and code and code[-1] == "\0module:un":
            code.pop()
            module = "un"
    if language == "python" and module is not None:
        effects.extend(_python_module_server(module, operands))
        return Invocation(language, code, False, effects)
    if language == "ruby" and module == "un" and code[:1] == ["httpd"]:
        effects.append({"kind": "serve", "lang": language, "target": _first_operand(operands, "."),
                        "bind": _option(operands, "b", "bind-address") or ""})  # fmt: skip
        return Invocation(language, [], False, effects)
    if language in ("awk", "sed") and not code:
        if any(a == "-f" or (a.startswith("-f") and language == "sed") for a in argv[1:]):
            return Invocation(language, [], False, effects)
        if operands:
            code.append(operands[0] if operands[0] != "--" else (operands[1] if len(operands) > 1 else ""))
        return Invocation(language, code, False, effects)
    if language == "applescript" or (language == "tcl" and argv[0] == "expect"):
        return Invocation(language, code, not code and not operands, effects)
    script_file = bool(operands) and operands[0] != "-"
    reads_stdin = not code and not script_file and not effects
    return Invocation(language, code, reads_stdin, effects)


def _short_options(
    argv: list[str], i: int, language: str, code: list[str], effects: list[dict[str, str]]
) -> int:
    """Read one cluster of short options at ``argv[i]``; returns the index of its last word.
    Inline code is appended to ``code``; ``python -m MOD`` and ``ruby -run`` are appended as
    ``"\\0module:NAME"`` markers the caller takes back."""
    letters = argv[i][1:]
    for j, letter in enumerate(letters):
        rest = letters[j + 1 :]
        follows = argv[i + 1] if i + 1 < len(argv) else ""
        if letter in _CODE_SHORTS[language]:
            code.append(rest or follows)
            return i if rest else i + 1
        if language == "python" and letter == "m":
            code.append("\0module:" + (rest or follows))
            return i if rest else i + 1
        if language == "php" and letter == "S":
            effects.append(
                {"kind": "serve", "lang": language, "target": _php_docroot(argv), "bind": rest or follows}
            )
            return i if rest else i + 1
        if letter in _VALUE_SHORTS[language]:
            if language == "ruby" and letter == "r" and (rest or follows) == "un":
                code.append("\0module:un")
            return i if rest else i + 1
    return i


def _deno(argv: list[str]) -> Invocation:
    if argv[1:2] == ["eval"]:
        rest = [a for a in argv[2:] if not a.startswith("-")]
        return Invocation("javascript", rest[:1], False, [])
    if argv[1:2] == ["run"] and argv[-1:] == ["-"]:
        return Invocation("javascript", [], True, [])
    return Invocation("javascript", [], False, [])


def _php_docroot(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "-t" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("-t") and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return "."


def _option(words: list[str], short: str, long: str) -> str | None:
    for i, word in enumerate(words):
        if word in (f"-{short}", f"--{long}") and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(f"--{long}="):
            return word.partition("=")[2]
    return None


def _first_operand(words: list[str], default: str) -> str:
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = "=" not in word and word not in ("-q", "--quiet")
            continue
        return word
    return default


def _python_module_server(module: str, operands: list[str]) -> list[dict[str, str]]:
    """``python -m http.server [PORT] [-d DIR] [-b ADDR]`` and friends serve a directory."""
    if module in ("http.server", "SimpleHTTPServer", "RangeHTTPServer", "uploadserver", "twisted"):
        directory = _option(operands, "d", "directory") or "."
        bind = _option(operands, "b", "bind") or ""
        return [{"kind": "serve", "lang": "python", "target": directory, "bind": bind}]
    if module == "pyftpdlib":
        return [{"kind": "serve", "lang": "python", "target": _option(operands, "d", "directory") or ".",
                 "bind": _option(operands, "i", "interface") or ""}]  # fmt: skip
    return []


# -- reading code ---------------------------------------------------------------------------------

_STRING_START = re.compile(r"""(?:[rRbBuUfF]{0,2})(['"`])""")
_KNOWN_VALUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), value)
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
# Calls whose value is their first argument, as far as which file is meant goes.
_PASSTHROUGH = re.compile(
    r"(?:os\.path\.(?:expanduser|abspath|realpath"
    r"|normpath|expandvars)|File\.(?:expand_path|absolute_path|realpath)"
    r"|path\.normalize|realpath|String|str|Pathname|URI|sprintf|format)\s*\("
)
_JOINERS = re.compile(
    r"(?:os\.path\.join|path\.join|path\.resolve|File\.join|(?:pathlib\.)?(?:Pure)?(?:Posix)?Path)\("
)
_IDENT = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*")
_KEYWORD_ARGUMENT = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)\s*")
_ASSIGNMENT = re.compile(
    r"(?:^|[;\n{(]|\b(?:const|let|var|my|local|our)\b)\s*(\$?[A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*\w+\s*)?=(?![=~>])\s*"
)


class _Reader:
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
                    text = re.sub(r"\$?\{[^}]*\}", UNKNOWN, text)
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
                pos = _closing(code, pos + 1, code[pos], "]" if code[pos] == "[" else ")") + 1
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
            end = _closing(code, after, "([{", closing)  # something we do not read: skip it
            return values, end + 1
        return values, len(code)


def _closing(code: str, pos: int, openers: str, closing: str) -> int:
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


# -- what code does -------------------------------------------------------------------------------

# (language set, call head, how its arguments are read): "line" = the first argument is a shell
# line, a list or several strings an argv; "argv" = program then argument list (spawn, execFile);
# "exec" = os.exec*: program path, then argv.
_SHELL_CALLS: tuple[tuple[frozenset[str], re.Pattern[str], str], ...] = tuple(
    (frozenset(langs.split()), re.compile(head), how)
    for langs, head, how in (
        ("python", r"\bos\.(?:system|popen[234]?)\s*\(", "line"),
        ("python", r"\bsubprocess\.(?:run|call|check_call|check_output"
            r"|Popen|getoutput|getstatusoutput)\s*\(", "line"),
        ("python", r"\b(?:commands\.getoutput|pty\.spawn|os\.spawn[lv]p?e?)\s*\(", "line"),
        ("python", r"\bos\.exec[lv]p?e?\s*\(", "exec"),
        ("javascript", r"\b(?:exec|execSync)\s*\(", "line"),
        ("javascript", r"\b(?:spawn|spawnSync|execFile|execFileSync|fork)\s*\(", "argv"),
        ("javascript", r"\b(?:Bun\.spawn|Bun\.spawnSync|Bun\.\$)\s*\(", "line"),
        ("ruby perl php r", r"(?<![.\w])(?:system|exec|spawn)\s*\(", "line"),
        ("ruby", r"\b(?:IO\.popen|Open3\.(?:capture[23]e?|popen[23]e?"
            r"|pipeline\w*)|Process\.spawn|PTY\.spawn)\s*\(", "line"),
        ("perl", r"(?<![.\w$])(?:system|exec)\s+(?=['\"])", "bare"),
        ("ruby", r"(?<![.\w$])(?:system|exec|spawn)\s+(?=['\"])", "bare"),
        ("php", r"\b(?:shell_exec|passthru|popen|proc_open|pcntl_exec)\s*\(", "line"),
        ("lua", r"\b(?:os\.execute|io\.popen)\s*\(?", "line"),
        ("r", r"\bsystem2\s*\(", "argv"),
        ("awk", r"\bsystem\s*\(", "line"),
        ("applescript", r"\bdo\s+shell\s+script\s+(?=\")", "bare"),
        ("tcl", r"(?:^|[\[;\n]\s*)(?:exec|spawn)\s+", "words"),
    )
)  # fmt: skip
_BACKTICK_LANGS = frozenset({"ruby", "perl", "php"})
_QUOTED_COMMAND = re.compile(r"(?:%x|qx)\s*([\[({<|/!])")
_AWK_PIPES = re.compile(r"""("(?:[^"\\]|\\.)*")\s*\|&?\s*getline|\|&?\s*("(?:[^"\\]|\\.)*")""")
_SED_EXEC = re.compile(r"(?:^|[;\n}]|^\s*[0-9$]+|/\s*)\s*e\s+([^;\n}]+)", re.MULTILINE)

# Deletions through the language's API: (languages, head, recursive).
_DELETES: tuple[tuple[frozenset[str], re.Pattern[str], bool], ...] = tuple(
    (frozenset(langs.split()), re.compile(head), recursive)
    for langs, head, recursive in (
        ("python", r"\bshutil\.rmtree\s*\(|\brmtree\s*\(", True),
        ("python", r"\bos\.(?:remove|unlink|rmdir|removedirs)\s*\(", False),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:unlink|rmdir)\s*\()", False),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:rmSync|rm|rmdirSync"
            r"|rmdir)\s*\((?=[^;\n]*recursive\s*:\s*true)", True),
        ("javascript", r"\b(?:rimraf(?:\.sync)?|(?:fse|fsExtra|fs)\.(?:remove"
            r"|removeSync|emptyDir|emptyDirSync)|Deno\.remove(?:Sync)?(?=\s*\([^)]*recursive\s*:\s*true))"
            r"\s*\(",
            True,
        ),
        ("javascript", r"\bfs\.(?:promises\.)?(?:unlinkSync|unlink"
            r"|rmSync|rm|rmdirSync|rmdir)\s*\(|\bDeno\.remove(?:Sync)?\s*\(", False),
        ("ruby", r"\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rmtree)\s*\(?", True),
        ("ruby", r"\b(?:FileUtils\.(?:rm|rm_f|remove)|File\.(?:delete"
            r"|unlink)|Dir\.(?:rmdir|delete|unlink))\s*\(?", False),
        ("perl", r"\b(?:rmtree|remove_tree|File::Path::rmtree|File::Path::remove_tree)\s*\(?", True),
        ("perl php lua", r"(?<![.\w$>])(?:unlink|rmdir)\s*\(?", False),
        ("lua", r"\bos\.remove\s*\(", False),
        ("r", r"\bunlink\s*\((?=[^)]*recursive\s*=\s*T)", True),
        ("r", r"\b(?:unlink|file\.remove)\s*\(", False),
    )
)  # fmt: skip

# File access through the language's API: (languages, head, kind, which argument names the file).
# Python's open() and Ruby's File.open() are reads unless their mode argument writes.
_FILES: tuple[tuple[frozenset[str], re.Pattern[str], str, str], ...] = tuple(
    (frozenset(langs.split()), re.compile(head), kind, which)
    for langs, head, kind, which in (
        ("python", r"(?<![.\w])(?:io\.|codecs\.)?open\s*\(", "mode", "first"),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:read_text|read_bytes|open)\s*\()", "read",
         "first"),
        ("python", r"\b(?:pathlib\.)?Path\s*\((?=[^()]*\)\s*\.(?:write_text|write_bytes)\s*\()", "write",
         "first"),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:readFileSync"
            r"|readFile|createReadStream)\s*\(|\bBun\.file\s*\("
            r"|\bDeno\.readTextFile(?:Sync)?\s*\(", "read", "first"),
        ("javascript", r"\b(?:fs\.)?(?:promises\.)?(?:writeFileSync"
            r"|writeFile|appendFileSync|appendFile|createWriteStream)\s*\("
            r"|\bDeno\.writeTextFile(?:Sync)?\s*\(", "write", "first"),
        ("ruby", r"\b(?:File|IO)\.(?:read|readlines|foreach|binread)\s*\(?", "read", "first"),
        ("ruby", r"\bFile\.open\s*\(?", "mode", "first"),
        ("ruby", r"\b(?:File|IO)\.(?:write|binwrite)\s*\(?", "write", "first"),
        ("perl", r"(?<![.\w$])open\s*\(?", "read", "last"),
        ("php", r"\b(?:file_get_contents|readfile|file|fopen"
            r"|highlight_file|show_source|parse_ini_file)\s*\(", "read", "first"),
        ("php", r"\b(?:file_put_contents)\s*\(", "write", "first"),
        ("lua", r"\bio\.(?:open|lines)\s*\(", "mode", "first"),
        ("r", r"\b(?:readLines|readRDS|read\.csv|scan|file)\s*\(", "read", "first"),
    )
)  # fmt: skip
_WRITE_MODE = re.compile(r"[wax+]")
_AWK_READS = re.compile(r"getline\s*(?:[A-Za-z_]\w*\s*)?<\s*(\"(?:[^\"\\]|\\.)*\")")

# Network use: (languages, head). The target is the first host- or URL-like string argument.
_CONNECTS: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = tuple(
    (frozenset(langs.split()), re.compile(head))
    for langs, head in (
        ("python", r"\.connect(?:_ex)?\s*\(\s*\(?|\bsocket\.create_connection\s*\(\s*\(?"),
        ("python", r"\b(?:urllib\d?\.(?:request\.)?(?:urlopen|urlretrieve"
            r"|Request)|urlopen|urlretrieve)\s*\("),
        ("python", r"\b(?:requests|httpx|aiohttp|urllib3)\.(?:get"
            r"|post|put|patch|delete|head|request|stream|Client|AsyncClient|PoolManager)\s*\("),
        ("python", r"\bhttp\.client\.HTTPS?Connection\s*\(|\b(?:ftplib\.FTP"
            r"|smtplib\.SMTP|telnetlib\.Telnet|paramiko\.\w+)\s*\("),
        ("javascript", r"\b(?:fetch|axios(?:\.(?:get|post|put|delete|request))?|got|WebSocket)\s*\("),
        ("javascript", r"\bhttps?\.(?:get|request)\s*\(|\bnet\.(?:connect"
            r"|createConnection|Socket)\s*\(|\.connect\s*\("),
        ("javascript", r"\bDeno\.connect\s*\(|\bBun\.connect\s*\("),
        ("ruby", r"\b(?:TCPSocket|UDPSocket|Socket)\.(?:new|open"
            r"|tcp)\s*\(?|\bNet::HTTP\.(?:get|post|start"
            r"|new)\s*\(|\bURI\.open\s*\(|\bURI\s*\(|\bopen\s*\(\s*(?=['\"]https?:)"),
        ("perl", r"\bnew\s+IO::Socket::(?:INET6?|IP|SSL)\s*\("
            r"|\bIO::Socket::(?:INET6?|IP|SSL)\s*->\s*new\s*\("
            r"|\binet_aton\s*\(|\b(?:LWP::Simple::)?get(?:store)?\s*\(\s*(?=['\"]https?:)"
            r"|\bHTTP::Tiny\s*->\s*new\b.*?->\s*(?:get|post|request)\s*\("),
        ("php", r"\b(?:fsockopen|pfsockopen|stream_socket_client"
            r"|socket_connect|curl_init)\s*\(|\b(?:file_get_contents"
            r"|fopen|readfile|copy)\s*\(\s*(?=['\"](?:https?|ftp|tcp):)"),
        ("lua", r"\bsocket\.(?:tcp|connect|udp)\s*\(|:connect\s*\("),
        ("r", r"\b(?:url|download\.file|socketConnection|httr::\w+|curl::\w+)\s*\("),
        ("tcl", r"\bsocket\s+"),
    )
)  # fmt: skip
_AWK_RUNS_READ_LINE = re.compile(r"\(\s*[A-Za-z_]\w*\s*\|&?\s*getline\b")  # `(c |& getline)`: runs the text c
_AWK_INET = re.compile(r"/inet[46]?/(?:tcp|udp)/[0-9]+/([^/\"]+)/")
_HOST_LIKE = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?$"
    r"|localhost\b|\[?[0-9a-fA-F:]+:[0-9a-fA-F:]+\]?$)"
)
_FD_DUPLICATION = re.compile(
    r"\bos\.dup2\s*\(|\bdup2\s*\(|\bopen\s*\(\s*STD(?:IN"
        r"|OUT|ERR)\s*,\s*['\"][<>+]*&|[<>]&\s*(?:[0-9]+|%d)"
        r"|\.pipe\s*\(\s*\w+\s*\)|\bfdopen\b|\bIO\.for_fd\b|\bproc_open\s*\([^)]*\$sock"
)  # fmt: skip
_SHELL_LITERAL = re.compile(
    r"""['"](?:/(?:usr/)?bin/)?(?:ba|z|da|k|c)?sh(?:\s+-i)?['"]|['"]cmd(?:\.exe)?['"]"""
)


def analyze(code: str, language: str) -> CodeAnalysis:
    """Shell-outs and effects of ``code`` written in ``language`` (see the module doc)."""
    code = code[:MAX_CODE_CHARS]
    out = CodeAnalysis()
    if not code.strip():
        return out
    if language == "sed":
        for match in _SED_EXEC.finditer(code):
            out.shell_lines.append(match.group(1).strip())
        return out
    code = _without_comments(code, language)
    reader = _Reader(code, language)
    _shell_outs(reader, language, out)
    if language in _BACKTICK_LANGS:
        _backticks(code, out)
    for match in _QUOTED_COMMAND.finditer(code) if language in ("ruby", "perl") else ():
        opening = match.group(1)
        closing = {"[": "]", "(": ")", "{": "}", "<": ">"}.get(opening, opening)
        end = code.find(closing, match.end())
        out.shell_lines.append(code[match.end() : len(code) if end < 0 else end])
    if language == "awk":
        for match in _AWK_PIPES.finditer(code):
            literal = reader.string(match.start(1) if match.group(1) else match.start(2))
            if literal is not None:
                out.shell_lines.append(literal[0])
    for langs, head, recursive in _DELETES:
        if language in langs:
            for match in head.finditer(code):
                value = _first_argument(reader, match.end())
                target = value if isinstance(value, str) else UNKNOWN
                out.effects.append(
                    {"kind": "delete-tree" if recursive else "delete", "lang": language, "target": target}
                )
    _file_access(reader, language, code, out)
    _database_calls(reader, code, out, language)
    connects = _connections(reader, language, code)
    out.effects.extend(connects)
    shells = _spawns_shell(reader, code, out) or (
        language == "awk" and bool(_AWK_RUNS_READ_LINE.search(code))
    )
    if shells:
        out.effects.append({"kind": "shell", "lang": language, "target": ""})
    if connects and (shells or _FD_DUPLICATION.search(code)):
        target = next((e["target"] for e in connects if e["target"]), "")
        out.effects.append({"kind": "reverse-shell", "lang": language, "target": target})
    return out


_HASH_COMMENTS = frozenset({"python", "ruby", "perl", "php", "awk", "r", "tcl"})
_SLASH_COMMENTS = frozenset({"javascript", "php"})


def _without_comments(code: str, language: str) -> str:
    """``code`` with its comments blanked (``# ...``, ``// ...``, ``/* ... */``, Lua's ``--``), so
    commented-out calls do nothing; string literals are kept. A ``#`` counts as a comment only
    at a line start or after a blank or ``;{})``, so Perl's ``$#a`` and ``s#x#y#`` survive."""
    out: list[str] = []
    i = 0
    n = len(code)
    quote = ""
    while i < n:
        ch = code[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(code[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = ""
            i += 1
            continue
        if ch in "'\"" or (ch == "`" and language in ("javascript", "ruby", "perl", "php")):
            quote = ch
            out.append(ch)
            i += 1
            continue
        hash_comment = ch == "#" and language in _HASH_COMMENTS and (i == 0 or code[i - 1] in " \t\n;{})")
        slashes = language in _SLASH_COMMENTS and code.startswith("//", i) and (i == 0 or code[i - 1] != ":")
        line_comment = slashes or (language == "lua" and code.startswith("--", i))
        if hash_comment or line_comment:
            end = code.find("\n", i)
            i = n if end < 0 else end
            continue
        if language in _SLASH_COMMENTS and code.startswith("/*", i):
            end = code.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _file_access(reader: _Reader, language: str, code: str, out: CodeAnalysis) -> None:
    """``read``/``write`` effects of file API calls whose file the code names."""
    for langs, head, kind, which in _FILES:
        if language not in langs:
            continue
        for match in head.finditer(code):
            start = match.end()
            if code[start - 1 : start] != "(":
                start = reader.skip_blanks(start)
                start += 1 if code[start : start + 1] == "(" else 0
            values, _ = reader.arguments(start)
            strings = [v for v in values if isinstance(v, str)]
            if not strings:
                continue
            target = strings[-1] if which == "last" else strings[0]
            effect = kind
            if kind == "mode":
                mode = strings[1] if len(strings) > 1 else "r"
                effect = "write" if _WRITE_MODE.search(mode) else "read"
            if which == "last":  # perl open(FH, "<", $f) / open(FH, ">$f"): the mode may lead the path
                effect = (
                    "write"
                    if target.lstrip().startswith((">", "+>")) or (len(strings) > 1 and ">" in strings[-2])
                    else "read"
                )
                target = target.lstrip("<>+ |")
            if target and target != UNKNOWN:
                out.effects.append({"kind": effect, "lang": language, "target": target})
    if language == "awk":
        for match in _AWK_READS.finditer(code):
            literal = reader.string(match.start(1))
            if literal is not None:
                out.effects.append({"kind": "read", "lang": language, "target": literal[0]})


_SQL_CALL = re.compile(
    r"\.(?:execute|executemany|executescript|exec|query|raw|run|prepare|sql|unsafe)\s*\(|\bsql\s*`"
)
_SQL_TEXT = re.compile(r"(?is)^\s*(?:drop|truncate|delete|update|alter|grant|with|insert|select|create)\b")
_ORM_BULK = re.compile(
    r"\b([A-Z][A-Za-z0-9_]*)\.(?:objects\.all\(\)\.delete\(\)|objects\.filter\(\s*\)\.delete\(\)|delete_all\b|destroy_all\b"
    r"|truncate\b|query\.delete\(\))|\bsession\.query\(\s*([A-Z][A-Za-z0-9_]*)\s*\)\.delete\(\s*\)"
    r"|\bprisma\.([a-z][A-Za-z0-9_]*)\.deleteMany\(\s*\)|\bprisma\.([a-z][A-Za-z0-9_]*)\.deleteMany\(\s*\{\s*\}\s*\)"
)


def _database_calls(reader: _Reader, code: str, out: CodeAnalysis, language: str) -> None:
    """``sql`` effects: SQL text handed to a driver (``cursor.execute("DROP TABLE x")``,
    ``db.exec(...)``, ``sql`...```) and ORM bulk deletes (``User.objects.all().delete()``,
    ``User.delete_all``, ``session.query(User).delete()``, ``prisma.user.deleteMany()``), the
    latter as the ``DELETE FROM`` they amount to."""
    for match in _SQL_CALL.finditer(code):
        if match.group().startswith("sql"):
            end = code.find("`", match.end())
            text = code[match.end() : len(code) if end < 0 else end]
        else:
            value = _first_argument(reader, match.end())
            text = value if isinstance(value, str) else ""
        if _SQL_TEXT.match(text):
            out.effects.append({"kind": "sql", "lang": language, "target": text})
    for match in _ORM_BULK.finditer(code):
        model = next((group for group in match.groups() if group), "")
        out.effects.append({"kind": "sql", "lang": language, "target": f"DELETE FROM {model}"})


def _first_argument(reader: _Reader, pos: int) -> str | list[str] | None:
    code = reader.code
    pos = reader.skip_blanks(pos)
    if pos < len(code) and code[pos] == "(":  # a head matched without its parenthesis
        pos += 1
    value, _ = reader.expression(pos)
    return value


def _shell_outs(reader: _Reader, language: str, out: CodeAnalysis) -> None:
    code = reader.code
    for langs, head, how in _SHELL_CALLS:
        if language not in langs:
            continue
        for match in head.finditer(code):
            if how == "bare":  # perl/ruby `system "cmd"`, `exec "rm", "-rf", "/"` without parentheses
                _add_call(_bare_arguments(reader, match.end()), "line", out)
                continue
            if how == "words":
                end = code.find("\n", match.end())
                line = code[match.end() : len(code) if end < 0 else end].split("]", 1)[0]
                out.shell_lines.append(line.replace("{", "").replace("}", ""))
                continue
            start = match.end()
            if code[start - 1 : start] != "(":
                start = reader.skip_blanks(start)
                if start < len(code) and code[start] == "(":
                    start += 1
            values, _ = reader.arguments(start)
            _add_call(values, how, out)


def _add_call(values: list[str | list[str] | None], how: str, out: CodeAnalysis) -> None:
    if not values or values[0] is None:
        return
    first = values[0]
    if how == "exec":
        rest = values[1:]
        if len(rest) == 1 and isinstance(rest[0], list):
            out.argvs.append([str(a) for a in rest[0]] or [str(first)])
        else:
            argv = [v for v in rest if isinstance(v, str)]
            out.argvs.append(argv or [first if isinstance(first, str) else UNKNOWN])
        return
    if isinstance(first, list):
        out.argvs.append(first)
        return
    strings = [v for v in values if isinstance(v, str)]
    lists = [v for v in values[1:] if isinstance(v, list)]
    if how == "argv" or lists:
        out.argvs.append([first, *(lists[0] if lists else [])])
    elif len(strings) > 1 and len(strings) == len(values):
        out.argvs.append(strings)  # system("rm", "-rf", "/"): an argv, no shell
    else:
        out.shell_lines.append(first)


def _bare_arguments(reader: _Reader, pos: int) -> list[str | list[str] | None]:
    """Comma-separated arguments of a call written without parentheses, up to ``;`` or a line end."""
    values: list[str | list[str] | None] = []
    code = reader.code
    while pos < len(code):
        value, pos = reader.expression(pos)
        values.append(value)
        pos = reader.skip_blanks(pos)
        if pos < len(code) and code[pos] == ",":
            pos += 1
            continue
        break
    return values


def _backticks(code: str, out: CodeAnalysis) -> None:
    i = 0
    while (start := code.find("`", i)) >= 0:
        end = code.find("`", start + 1)
        if end < 0:
            break
        out.shell_lines.append(code[start + 1 : end])
        i = end + 1


def _connections(reader: _Reader, language: str, code: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    for langs, head in _CONNECTS:
        if language not in langs:
            continue
        for match in head.finditer(code):
            values, _ = (
                reader.arguments(match.end()) if code[match.end() - 1 : match.end()] in "(" else ([], 0)
            )
            target = ""
            for value in _flatten(values) if values else _strings_after(reader, match.end()):
                if _HOST_LIKE.match(value):
                    target = value
                    break
            found.append({"kind": "connect", "lang": language, "target": target})
    if language == "awk":
        found.extend(
            {"kind": "connect", "lang": language, "target": m.group(1)} for m in _AWK_INET.finditer(code)
        )
    return found


def _flatten(values: list[str | list[str] | None]) -> list[str]:
    flat: list[str] = []
    for value in values:
        if isinstance(value, list):
            flat.extend(value)
        elif value is not None:
            flat.extend(part for part in re.split(r"[\s,]+|=>", value) if part)
    return flat


def _strings_after(reader: _Reader, pos: int) -> list[str]:
    """String literals on the rest of the line (``socket $host $port``, ``PeerAddr => "h:1"``)."""
    end = reader.code.find("\n", pos)
    segment = reader.code[pos : len(reader.code) if end < 0 else end]
    return [m.group(2) for m in re.finditer(r"(['\"])([^'\"]*)\1", segment)] + segment.split()


def _spawns_shell(reader: _Reader, code: str, out: CodeAnalysis) -> bool:
    """Whether the code starts an interactive shell (a shell with no command to run)."""
    for argv in out.argvs:
        if argv and argv[0].rsplit("/", 1)[-1] in _SHELL_NAMES and "-c" not in argv[1:]:
            return True
    for line in out.shell_lines:
        words = line.split()
        if words and words[0].rsplit("/", 1)[-1] in _SHELL_NAMES and "-c" not in words[1:]:
            return True
    return bool(re.search(r"\bpty\.spawn\s*\(|\bPTY\.spawn\b", code)) and bool(_SHELL_LITERAL.search(code))
