"""The small interface every CEL engine implements (POLICY.md section 3, issue 5).

Staging follows cel-go: an engine ``compile``s an expression once at load time (errors carry the
column inside the expression, so the loader can map them into the rule file) and the compiled
program is ``evaluate``d many times on the hot path against a plain-Python activation.

Values crossing this interface are plain Python: ``dict`` (string keys), ``list``, ``str``, ``int``,
``float``, ``bool``, ``None``, ``bytes`` and ``datetime`` (for ``now``). Evaluation never raises:
an error is returned as a :class:`CelEvalError` value, which the gateway turns into a decision
(fail closed).

Type checking is not the engine's job: the loader checks every expression with
:mod:`~dsh_policy.policy.cel.checker`, the same for every engine, over cel-python's parse tree. A
compiled expression may hand over that tree with a ``take_parse_tree()`` method (namespaced
helper calls rewritten, as :func:`~dsh_policy.policy.cel.celpy_ast.analyze` leaves them;
collapsed precedence levels are fine; the loader calls it once, so an engine that does not
evaluate the tree may forget it then) so loading parses once; without it the loader parses the
expression again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

MAX_EXPRESSION_CHARS: Final = 16_384
"""Longest expression any engine accepts at compile time (the same bound for all, so an
expression one engine refuses for its length every engine refuses)."""

MAX_COMPREHENSION_NESTING: Final = 4
"""Deepest nesting of ``all``/``exists``/``map``/``filter``: work grows as input size to this
power, so deeper nesting is rejected at load (typical rules use 1 or 2)."""


@dataclass(frozen=True, slots=True)
class CelCompileIssue:
    """A syntax or checking error. ``offset`` is the 0-based character offset inside the
    expression text when the engine knows it (mapped to FILE:LINE:COL by the loader).
    ``type_check`` says the engine's own type checker refused a parsed expression: the loader's
    checker (:mod:`.checker`), which every engine shares, reports such problems in its own words,
    so the engine's message is shown only when that checker finds nothing."""

    message: str
    offset: int | None = None
    type_check: bool = False


@dataclass(frozen=True, slots=True)
class CelEvalError:
    """An evaluation error as a value (missing key, wrong type, no such overload, budget...)."""

    message: str


@dataclass(frozen=True, slots=True)
class MemberRead:
    """A constant member selection on a top-level name: ``vars.secret`` or ``vars["secret"]``;
    ``offset`` is where the member's name starts in the expression (None when unknown)."""

    root: str
    member: str
    offset: int | None


@dataclass(frozen=True, slots=True)
class Reads:
    """What an expression reads, found on its parse tree (never by pattern over its text, so a
    string literal such as ``"vars.x"`` reads nothing): constant member selections, and the
    top-level names read in any other way (``vars[k]``, ``size(vars)``), which may read all of it."""

    members: tuple[MemberRead, ...] = ()
    whole: frozenset[str] = frozenset()

    @classmethod
    def opaque(cls, references: frozenset[str]) -> Reads:
        """Reads of an expression whose parse tree is unknown: every name, whole."""
        return cls((), references)

    def members_of(self, root: str) -> tuple[MemberRead, ...]:
        """The constant selections on ``root``, in the order they appear."""
        return tuple(read for read in self.members if read.root == root)


class EventActivation(dict[str, Any]):
    """An activation shared by every expression evaluated for one event (a plain ``dict`` to
    anyone else). Engines keep their own converted form of it in :attr:`converted` (keyed by
    engine), so the values are converted once per event instead of once per expression.

    Callers must not change it after the first evaluation: a converted form would go stale."""

    __slots__ = ("converted",)

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        super().__init__(values or {})
        self.converted: dict[str, Any] = {}


class CompiledExpression(Protocol):
    """A program planned once; cheap to evaluate many times."""

    @property
    def source(self) -> str:
        """The expression text as written."""
        ...

    @property
    def references(self) -> frozenset[str]:
        """Top-level identifiers the expression reads (e.g. ``args``, ``params``, ``vars``), so the
        gateway builds only those names into the activation."""
        ...

    @property
    def reads(self) -> Reads:
        """How it reads them: constant member selections (``vars.x``) and whole reads."""
        ...

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        """Evaluate against ``activation``; never raises for data-dependent failures. Given an
        :class:`EventActivation`, an engine may reuse the conversion earlier evaluations made."""
        ...


class CelEngine(Protocol):
    """A CEL runtime with the gateway's helper functions (``path.*``, ``shell.*``, ``url.*``,
    ``glob``) and linear-time ``matches`` installed."""

    @property
    def name(self) -> str:
        """Engine name as used in configuration: ``python`` or ``native``."""
        ...

    def compile(self, expression: str) -> CompiledExpression | CelCompileIssue:
        """Parse and check ``expression`` once."""
        ...
