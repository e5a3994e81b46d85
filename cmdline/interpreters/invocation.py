"""Which program reads code, and how its argv hands the code over: ``python -c``, ``node -e``,
an awk program, ``python3 -`` reading stdin, and the servers an invocation starts by itself
(``python -m http.server``, ``php -S``, ``ruby -run -e httpd``)."""

from __future__ import annotations

from dataclasses import dataclass

from dsh_policy.cmdline.programs import PYTHON

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


def inline_code_option(program: str) -> str:
    """The option that hands ``program`` its code on the command line (``python3 -c``, ``node -e``,
    ``php -r``); ``-c`` for a shell or a program this module does not read."""
    language = interpreter_of(program)
    return "-" + _CODE_SHORTS[language][0] if language in _CODE_SHORTS else "-c"


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


def code_words(argv: list[str]) -> list[str]:
    """The words of an interpreter's argv that hold or choose its code: options and their values,
    inline code, ``-m MODULE``, or the script file when there is no inline code. The words after
    them are the program's own arguments (``perl -pi -e CODE FILES...``, ``python -m pytest
    TESTS...``), data the code receives, not code."""
    language = interpreter_of(argv[0]) if argv else None
    if language is None:
        return []
    code: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return argv[1 : i + (1 if code else 2)]
        if arg == "-" or not arg.startswith("-"):
            return argv[1 : i if code else i + 1]
        if arg.startswith("--"):
            name, eq, _value = arg[2:].partition("=")
            if name in _CODE_LONGS:
                code.append(name)
            i += 1 if eq or (name not in _CODE_LONGS and name not in _VALUE_LONGS) else 2
            continue
        i = _short_options(argv, i, language, code, []) + 1
        if language == "python" and code and code[-1].startswith("\0module:"):
            return argv[1:i]  # everything after `-m MODULE` is the module's own
    return argv[1:]


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
