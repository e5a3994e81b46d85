"""The limits of one line's reading, shared by every nested parse, and what it records besides
commands (redirections, interpreter effects, database text).

Bounded work is what lets a policy read attacker-sized input: each limit, once passed, raises
:class:`ShellLineTooComplexError` so the rule fails closed instead of guessing, and the caller's
deadline (:mod:`dsh_policy.cmdline.deadline`) is checked as the reading goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


Reader = str | DatabaseClient | None
ScriptReader = tuple[Reader, list[str], list[str] | None]
"""A program that reads its script from stdin: what reads it (``None`` for a shell, a language,
a database client), the texts its stdin carries (filled as here-document bodies are read) and, for
a shell, the command as listed, which becomes ``[sh, -c]`` once its script is known text."""
"""Who reads a command's stdin as its script: a shell (None), an interpreter (its language) or
a database client."""


@dataclass(frozen=True, slots=True)
class NestedReader:
    """How the parts of a line's reading hand nested text back to the line reader (``reading``):
    the lexer its substitutions, the unwrapper ``bash -c`` strings, interpreter code and what a
    database client is sent. Handed down in the :class:`Budget` rather than imported, so the
    reading is recursive without its modules importing each other in a circle."""

    line: Callable[[str, int, Budget, dict[str, str]], list[list[str]]]
    code: Callable[[str, str, int, Budget, dict[str, str]], list[list[str]]]
    database: Callable[[DatabaseClient, str, int, Budget, dict[str, str]], list[list[str]]]


class Budget:
    """Work limits shared by every nested parse of one line, and what it found besides commands:
    redirections, effects of interpreter code, aliases and functions the line defines. It also
    carries the :class:`NestedReader` every nested text goes back to."""

    __slots__ = ("aliases", "arrays", "databases", "effects", "functions", "lexed_chars", "loops",
                 "nested", "redirects", "scripts", "tokens", "variable_chars", "words")  # fmt: skip

    def __init__(self, nested: NestedReader) -> None:
        self.nested = nested
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
        self.arrays: dict[str, list[str]] = {}  # array variable -> its words (``a=(x y)``)
        self.scripts: list[str] = []  # nested shell texts read (``bash -c`` strings, substitutions, ...)


def check_time() -> None:
    """The stage's deadline (``cmdline.deadline``) holds inside a parse too."""
    try:
        check_deadline()
    except DeadlineExceededError as error:
        raise DeadlineInParse(f"reading the shell line took too long: {error}") from None


class DeadlineInParse(ShellLineTooComplexError):
    """The stage deadline stopped a parse (a property of the moment, not of the line)."""
