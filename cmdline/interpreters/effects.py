"""What code does, read lexically by the generic reader: its shell-outs and its effects
(see the package docstring for the effect shapes)."""

from __future__ import annotations

import re

from dsh_policy.cmdline.interpreters.calls import (
    AWK_INET,
    AWK_PIPES,
    AWK_READS,
    AWK_RUNS_READ_LINE,
    BACKTICK_LANGS,
    CONNECTS,
    DELETES,
    FD_DUPLICATION,
    FILES,
    HOST_LIKE,
    QUOTED_COMMAND,
    SED_EXEC,
    SHELL_CALLS,
    SHELL_LITERAL,
    WRITE_MODE,
)
from dsh_policy.cmdline.interpreters.decoded import decoded_runs
from dsh_policy.cmdline.interpreters.library import library_effects
from dsh_policy.cmdline.interpreters.model import MAX_CODE_CHARS, SHELL_NAMES, UNKNOWN, CodeAnalysis
from dsh_policy.cmdline.interpreters.python_ast import canonical_python
from dsh_policy.cmdline.interpreters.reader import CodeReader
from dsh_policy.cmdline.lazy_regex import lazy_compile


def analyze(code: str, language: str) -> CodeAnalysis:
    """Shell-outs and effects of ``code`` written in ``language`` (see the module doc)."""
    code = code[:MAX_CODE_CHARS]
    out = CodeAnalysis()
    if not code.strip():
        return out
    if language == "sed":
        for match in SED_EXEC.finditer(code):
            out.shell_lines.append(match.group(1).strip())
        return out
    decoded = decoded_runs(_without_comments(code, language), language)  # before constants are folded
    if language == "python":
        canonical = canonical_python(code)
        if canonical is not None:  # parsed: aliases spelled out, constants folded (else: as written)
            code = canonical.code
            out.nested.extend(("python", nested) for nested in canonical.nested)
    code = _without_comments(code, language)
    out.effects.extend(decoded or decoded_runs(code, language))
    reader = CodeReader(code, language)
    _shell_outs(reader, language, out)
    if language in BACKTICK_LANGS:
        _backticks(code, out)
    for match in QUOTED_COMMAND.finditer(code) if language in ("ruby", "perl") else ():
        opening = match.group(1)
        closing = {"[": "]", "(": ")", "{": "}", "<": ">"}.get(opening, opening)
        end = code.find(closing, match.end())
        out.shell_lines.append(code[match.end() : len(code) if end < 0 else end])
    if language == "awk":
        for match in AWK_PIPES.finditer(code):
            literal = reader.string(match.start(1) if match.group(1) else match.start(2))
            if literal is not None:
                out.shell_lines.append(literal[0])
    for langs, head, recursive in DELETES:
        if language in langs:
            for match in head.finditer(code):
                value = _first_argument(reader, match.end())
                target = value if isinstance(value, str) else UNKNOWN
                out.effects.append(
                    {"kind": "delete-tree" if recursive else "delete", "lang": language, "target": target}
                )
    _file_access(reader, language, code, out)
    library_effects(reader, language, out)
    _database_calls(reader, code, out, language)
    connects = _connections(reader, language, code)
    out.effects.extend(connects)
    shells = _spawns_shell(reader, code, out) or (language == "awk" and bool(AWK_RUNS_READ_LINE.search(code)))
    if shells:
        out.effects.append({"kind": "shell", "lang": language, "target": ""})
    if connects and (shells or FD_DUPLICATION.search(code)):
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


def _file_access(reader: CodeReader, language: str, code: str, out: CodeAnalysis) -> None:
    """``read``/``write`` effects of file API calls whose file the code names."""
    for langs, head, kind, which in FILES:
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
                effect = "write" if WRITE_MODE.search(mode) else "read"
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
        for match in AWK_READS.finditer(code):
            literal = reader.string(match.start(1))
            if literal is not None:
                out.effects.append({"kind": "read", "lang": language, "target": literal[0]})


_SQL_CALL = lazy_compile(
    r"\.(?:execute|executemany|executescript|exec|query|raw|run|prepare|sql|unsafe)\s*\(|\bsql\s*`"
)
_SQL_TEXT = lazy_compile(r"(?is)^\s*(?:drop|truncate|delete|update|alter|grant|with|insert|select|create)\b")
_ORM_BULK = lazy_compile(
    r"\b([A-Z][A-Za-z0-9_]*)\.(?:objects\.all\(\)\.delete\(\)|objects\.filter\(\s*\)\.delete\(\)|delete_all\b|destroy_all\b"
    r"|truncate\b|query\.delete\(\))|\bsession\.query\(\s*([A-Z][A-Za-z0-9_]*)\s*\)\.delete\(\s*\)"
    r"|\bprisma\.([a-z][A-Za-z0-9_]*)\.deleteMany\(\s*\)|\bprisma\.([a-z][A-Za-z0-9_]*)\.deleteMany\(\s*\{\s*\}\s*\)"
)


def _database_calls(reader: CodeReader, code: str, out: CodeAnalysis, language: str) -> None:
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


def _first_argument(reader: CodeReader, pos: int) -> str | list[str] | None:
    code = reader.code
    pos = reader.skip_blanks(pos)
    if pos < len(code) and code[pos] == "(":  # a head matched without its parenthesis
        pos += 1
    value, _ = reader.expression(pos)
    return value


def _shell_outs(reader: CodeReader, language: str, out: CodeAnalysis) -> None:
    code = reader.code
    for langs, head, how in SHELL_CALLS:
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


def _bare_arguments(reader: CodeReader, pos: int) -> list[str | list[str] | None]:
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


def _connections(reader: CodeReader, language: str, code: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    for langs, head in CONNECTS:
        if language not in langs:
            continue
        for match in head.finditer(code):
            values, _ = (
                reader.arguments(match.end()) if code[match.end() - 1 : match.end()] in "(" else ([], 0)
            )
            target = ""
            for value in _flatten(values) if values else _strings_after(reader, match.end()):
                if HOST_LIKE.match(value):
                    target = value
                    break
            found.append({"kind": "connect", "lang": language, "target": target})
    if language == "awk":
        found.extend(
            {"kind": "connect", "lang": language, "target": m.group(1)} for m in AWK_INET.finditer(code)
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


def _strings_after(reader: CodeReader, pos: int) -> list[str]:
    """String literals on the rest of the line (``socket $host $port``, ``PeerAddr => "h:1"``)."""
    end = reader.code.find("\n", pos)
    segment = reader.code[pos : len(reader.code) if end < 0 else end]
    return [m.group(2) for m in re.finditer(r"(['\"])([^'\"]*)\1", segment)] + segment.split()


def _spawns_shell(reader: CodeReader, code: str, out: CodeAnalysis) -> bool:
    """Whether the code starts an interactive shell (a shell with no command to run)."""
    for argv in out.argvs:
        if argv and argv[0].rsplit("/", 1)[-1] in SHELL_NAMES and "-c" not in argv[1:]:
            return True
    for line in out.shell_lines:
        words = line.split()
        if words and words[0].rsplit("/", 1)[-1] in SHELL_NAMES and "-c" not in words[1:]:
            return True
    return bool(re.search(r"\bpty\.spawn\s*\(|\bPTY\.spawn\b", code)) and bool(SHELL_LITERAL.search(code))
