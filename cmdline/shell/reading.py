"""The line reader: a shell line's commands, redirections, interpreter effects and database
statements, read once per line (parses are cached) and handed out as the functions of the package
(``shell.commands``, ``shell.redirects``, ``shell.effects``, ``shell.sql`` ...).
"""

from __future__ import annotations

import shlex
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

from dsh_policy.cmdline import interpreters, sql
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.cmdline.shell.budget import (
    MAX_COMMANDS,
    MAX_INPUT_CHARS,
    MAX_LEXED_CHARS,
    MAX_NESTING,
    MAX_TOKENS,
    Budget,
    DatabaseClient,
    DatabaseText,
    DeadlineInParse,
    NestedReader,
    ScriptReader,
    ShellLineTooComplexError,
    check_time,
)
from dsh_policy.cmdline.shell.databases import database_invocation, is_sql_client
from dsh_policy.cmdline.shell.expansion import basename, expand, resolved_word
from dsh_policy.cmdline.shell.lexer import ASSIGNMENT, NAME, Lexer, Token, find_closing
from dsh_policy.cmdline.shell.unwrap import RESERVED_WORDS, unwrap

_ARRAY_ASSIGNMENT = lazy_compile(r"(?:^|[;&|\n\s])([A-Za-z_]\w*)\+?=\(([^()`$]*)\)")
MAX_ARRAY_WORDS = 64
"""Most words of an array assignment the reader keeps."""
_FUNCTION_DEFINITION = lazy_compile(
    r"(?:^|[;&|\n(){}]|\bthen|\bdo|\belse)\s*(?:function\s+([A-Za-z_][\w.:-]*)\s*(?:\(\s*\))?"
        r"|([A-Za-z_][\w.:-]*)\s*\(\s*\))\s*\{"
)


def _parse(text: str, depth: int, budget: Budget, variables: dict[str, str]) -> list[list[str]]:
    if depth > MAX_NESTING:
        raise ShellLineTooComplexError(f"shell line nests deeper than {MAX_NESTING} levels")
    if depth:
        budget.scripts.append(text)
    lexer = Lexer(text, depth, budget, variables)
    if "{" in text:
        for match in _FUNCTION_DEFINITION.finditer(text):
            end = find_closing(text, match.end(), "{", "}")
            budget.functions.setdefault(match.group(1) or match.group(2), text[match.end() : end])
    if "=(" in text:
        # `args=(-rf ~); rm "${args[@]}"`: an array's words stand where it is spread (probe25)
        for match in _ARRAY_ASSIGNMENT.finditer(text):
            try:
                words = shlex.split(match.group(2))
            except ValueError:
                words = match.group(2).split()
            budget.arrays[match.group(1)] = words[:MAX_ARRAY_WORDS]
    commands: list[list[str]] = []
    argv: list[str] = []
    stdin: list[str] = []  # texts the current command reads as stdin: here-strings, here-documents
    # stdin of programs that read their script from it: None for a shell, a language for an
    # interpreter, a DatabaseClient for a database client
    script_readers: list[ScriptReader] = []
    # stdin lists holding text piped from echo/printf that is only approximated (a plain literal,
    # `echo "ls -la" | sh`, is the script exactly and is not listed)
    printed: list[list[str]] = []

    def finish(separator: str) -> None:
        nonlocal stdin
        commands.extend(lexer.nested)
        lexer.nested.clear()
        piped = separator in ("|", "|&")
        printer = _printed_text(argv) if piped else None
        piped_text = printer[0] if printer is not None else _generated_text(argv) if piped else None
        # `cat <<EOF | python3`: cat passes its here-document on (the same list: bodies come later)
        passes_stdin = separator in ("|", "|&") and _passes_stdin(argv)
        if argv:
            commands.extend(unwrap(list(argv), depth, budget, variables, stdin, script_readers))
            argv.clear()
        if len(commands) > MAX_COMMANDS:
            raise ShellLineTooComplexError(f"shell line runs more than {MAX_COMMANDS} commands")
        if passes_stdin:
            return
        stdin = [] if piped_text is None else [piped_text]  # `echo 'rm -rf /' | sh`
        if piped_text is not None and not (printer is not None and printer[1]):
            printed.append(stdin)

    while (token := lexer.next_token()) is not None:
        budget.tokens += 1
        if not budget.tokens & 255:
            check_time()
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
            if not argv and token.value in RESERVED_WORDS and not token.word.quoted[0]:
                # `{ f=~/.aws; cat $f/x; }`, `if true; then echo X | sh; fi`: a reserved word opens
                # no command, so what follows is read as the command it is (its assignments, its
                # pipe into a shell); unwrap would skip the word anyway
                continue
            in_prefix = all(ASSIGNMENT.match(word) for word in argv)
            if in_prefix and ASSIGNMENT.match(token.value) and not token.word.quoted[0]:
                name, _, value = token.value.partition("=")
                if NAME.fullmatch(name.rstrip("+")):
                    # `d=$(pwd)` keeps the substitution's text: an operand `$d` is then resolved
                    # like `$(pwd)` itself, and a program name `$d` stays unresolvable
                    variables[name.rstrip("+")] = value
            argv.extend(expand(token.word, budget))
    finish(";")
    for language, texts, listed in script_readers:  # here-document bodies are read after their command ends
        known = texts and not any(texts is text for text in printed)  # printf formats are approximated
        if listed is not None and known and "-c" not in listed:
            listed.append("-c")  # `bash <<EOF`, `sh <<< 'ls'`: a known script, read like `bash -c SCRIPT`
        for script in texts:
            if language is None:
                commands.extend(_parse(script, depth + 1, budget, variables))
            elif isinstance(language, DatabaseClient):
                commands.extend(_database_text(language, script, depth, budget, variables))
            else:
                commands.extend(_code_commands(language, script, depth, budget, variables))
    return commands


def _database_text(
    client: DatabaseClient, text: str, depth: int, budget: Budget, variables: dict[str, str]
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
    language: str, code: str, depth: int, budget: Budget, variables: dict[str, str]
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
            commands.extend(unwrap(list(argv), depth + 1, budget, dict(variables), [], []))
    for nested_language, nested_code in analysis.nested:  # exec("..."): the same budget, one level down
        commands.extend(_code_commands(nested_language, nested_code, depth + 1, budget, variables))
    return commands


_NESTED = NestedReader(_parse, _code_commands, _database_text)
"""Where every part of a line's reading hands nested text back: this module's own readers."""


def _redirect_target(target: Token, budget: Budget) -> str:
    """The file a redirection names, as the shell would open it: quotes removed, ``$'..'``
    decoded, known variables and ``$IFS`` substituted. A word that would expand to several words
    (an "ambiguous redirect" to bash) keeps its text."""
    if target.word is None:
        return target.value
    words = expand(target.word, budget)
    return resolved_word(words[0], {}) if len(words) == 1 else target.value


def _passes_stdin(argv: list[str]) -> bool:
    """Whether the command copies its stdin to its stdout (``cat`` or ``tee`` without files)."""
    return bool(argv) and basename(argv[0]) in ("cat", "tee") and all(a.startswith("-") for a in argv[1:])


_INEXACT = lazy_compile(r"[$`\\%]")


def _printed_text(argv: list[str]) -> tuple[str, bool] | None:
    """What ``echo``/``printf`` would write, roughly: enough to read a script piped into a shell;
    with whether that is exactly what it prints (no option but echo's ``-n``, no expansion left,
    no escape or format to interpret)."""
    program = basename(argv[0]) if argv else ""
    if program not in ("echo", "printf"):
        return None
    words = argv[1:]
    exact = bool(words) and not (words[0].startswith("-") and not (program == "echo" and words[0] == "-n"))
    while words and words[0].startswith("-") and len(words[0]) <= 3:  # echo -n, -e, -ne
        words = words[1:]
    exact = exact and bool(words) and not any(w.startswith("-") or _INEXACT.search(w) for w in words)
    return " ".join(words).replace("\\n", "\n"), exact


_SQL_LITERAL = lazy_compile(r"'((?:[^']|'')*)'")
_GENERATING = lazy_compile(r"(?is)^\s*select\b")


def _generated_text(argv: list[str]) -> str | None:
    """What a database client's query prints when it builds statements or commands from a
    catalogue (``psql -Atc "SELECT 'DROP TABLE ' || tablename || ';' FROM pg_tables" | psql``,
    ``mysql -N -e "SELECT CONCAT('TRUNCATE ', table_name, ';') ..." | mysql``): its string
    literals, each row's value standing as ``x``. Piped into a client or a shell, that text is
    what runs, so it is read as that reader's script."""
    if not argv or not is_sql_client(basename(argv[0])):
        return None
    _, texts, _ = database_invocation([basename(argv[0]), *argv[1:]])
    for text in texts:
        if _GENERATING.match(text):
            literals = [m.group(1).replace("''", "'") for m in _SQL_LITERAL.finditer(text)]
            if any(sum(c.isalpha() for c in lit) >= 4 for lit in literals):
                return " x ".join(literals)
    return None


@dataclass(frozen=True, slots=True)
class _ParsedLine:
    commands: tuple[tuple[str, ...], ...]
    redirects: tuple[tuple[str, str, str], ...]  # (fd, op, target)
    effects: tuple[dict[str, str], ...] = ()
    databases: tuple[DatabaseText, ...] = ()
    scripts: tuple[str, ...] = ()


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
    except DeadlineInParse:
        raise
    except ShellLineTooComplexError as error:
        result = str(error)
    with _cache_lock:
        _cache[line] = result
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


_PERMUTING: dict[str, frozenset[str]] = {
    "cp": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "mv": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "ln": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "install": frozenset(
        {"-t", "-S", "-m", "-o", "-g", "--target-directory", "--suffix", "--mode", "--owner", "--group"}
    ),
    "rm": frozenset(),
}
"""GNU tools that take options after their operands (getopt permutes them), with the options that
take their value as the next word."""


def _options_first(argv: list[str]) -> list[str]:
    """``argv`` with options written after operands moved before them, as GNU getopt reads them
    (``ln SRC DEST -sf`` is ``ln -sf SRC DEST``), so "the last operand" is the destination the tool
    uses. Words after ``--`` are operands; a command without trailing options is returned as is."""
    valued = _PERMUTING.get(argv[0]) if argv else None
    if valued is None or len(argv) < 3:
        return argv
    options: list[str] = []
    operands: list[str] = []
    at = 1
    while at < len(argv):
        word = argv[at]
        if word == "--":
            operands.extend(argv[at:])
            break
        if word.startswith("-") and word != "-":
            options.append(word)
            if word in valued and at + 1 < len(argv):
                at += 1
                options.append(argv[at])
        else:
            operands.append(word)
        at += 1
    if argv[1 : 1 + len(options)] == options:
        return argv
    return [argv[0], *options, *operands]


def _parse_uncached(line: str) -> _ParsedLine:
    budget = Budget(_NESTED)
    commands = _parse(line, 0, budget, {})
    return _ParsedLine(
        tuple(tuple(_options_first(argv)) for argv in commands),
        tuple(budget.redirects),
        tuple(budget.effects),
        tuple(budget.databases),
        tuple(budget.scripts),
    )


def shell_commands(line: str) -> list[list[str]]:
    """The argv of every simple command ``line`` would run, in execution order (see module doc).

    Raises :class:`ShellLineTooComplexError` only beyond the documented size and nesting limits;
    raises ``TypeError`` when ``line`` is not a string.
    """
    return [list(argv) for argv in _checked(line, "shell.commands").commands]


def shell_scripts(line: str) -> list[str]:
    """``line`` and every shell text it carries that the reader read as commands, in reading
    order: ``bash -c``/``sh -c``/``eval``/``su -c`` strings, substitutions, here-documents and
    printed text fed to a shell, interpreter code's shell-outs. Readers that search a line's words
    (package runners, exported variables) search each of these, so a command means the same
    inside a wrapper as outside it. Same limits and errors as :func:`shell_commands`."""
    return [line, *_checked(line, "shell.scripts").scripts]


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
    ``delete-tree``, ``connect``, ``shell``, ``reverse-shell``, ``serve``, ``code-substituted`` (the
    interpreter's code, module or script is a substitution; see
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
