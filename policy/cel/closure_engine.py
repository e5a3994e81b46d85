"""The closure compiler: CEL compiled at load time into nested Python closures.

The approach of cel-go's planner: cel-python's parse tree (with the shared load-time rewrites of
:mod:`~dsh_policy.policy.cel.celpy_ast`) is walked once, and every node becomes one small
function of ``(activation, locals)``. Work that does not depend on the activation happens in the
walk, not per evaluation: constant subexpressions are folded, a constant ``matches`` pattern is
compiled once with RE2, a helper from :data:`~dsh_policy.policy.cel.functions.CEL_FUNCTIONS`
is bound directly into its call node, and the common shapes (``args.path``, ``x == "lit"``,
``s.startsWith("lit")``) get specialized closures. Activation values are read as they are (plain
dicts, lists, strings): nothing is converted per evaluation.

Semantics are CEL's: errors are values (raised as
:class:`~dsh_policy.policy.cel.closure_values.CelError` and absorbed only where CEL absorbs
them: ``&&`` and ``||`` in either order, ``all``/``exists``); int64 and uint64 overflow are
errors; ``==`` compares numbers across kinds and is false, never an error, across types;
``has()`` tests map keys. Comprehensions share one budget per evaluation
(:data:`DEFAULT_ITERATION_BUDGET` iterations, the native runtime's limit, so both engines stop
the same inputs) and a wall-clock deadline (:data:`DEFAULT_TIME_BUDGET`).

This module compiles and runs programs; the walk is :mod:`.closure_compiler`, the node builders
:mod:`.closure_nodes`, the loops :mod:`.closure_comprehensions`, the functions bound by name
:mod:`.closure_library`, and the runtime values :mod:`.closure_values`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from dsh_policy.policy.cel.closure_compiler import CompileError, Compiler
from dsh_policy.policy.cel.closure_nodes import BUDGET_SLOT, DEADLINE_SLOT, FIRST_VARIABLE_SLOT, Fn, Locals
from dsh_policy.policy.cel.closure_values import CelError, to_output
from dsh_policy.policy.cel.engine import MAX_COMPREHENSION_NESTING, CelCompileIssue, CelEvalError, Reads

DEFAULT_ITERATION_BUDGET: Final = 10_000
"""Comprehension iterations of one evaluation, all comprehensions together, at which it stops
with an error (the 10,000th fails, as in cel-expr-python, so an input one engine refuses the
other refuses too)."""

DEFAULT_TIME_BUDGET: Final = 2.0
"""Seconds one evaluation may spend in comprehensions before it stops with an error."""


# -- the engine --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClosureCompiledExpression:
    """An expression compiled to one closure; evaluate many times, from any thread."""

    source: str
    references: frozenset[str]
    reads: Reads
    _fn: Fn = field(repr=False)
    _slots: int = field(repr=False)
    _loops: bool = field(repr=False)
    _iteration_budget: int = DEFAULT_ITERATION_BUDGET
    _time_budget: float = DEFAULT_TIME_BUDGET
    #: cel-python's parse tree (rewritten by ``analyze``) until the loader's type checker takes it:
    #: the closures never look at it again, so it is not kept.
    _tree: list[Any] = field(default_factory=list, repr=False)
    calls_helpers: bool = True
    """Whether it calls a gateway helper (``shell.commands``...; a constant ``matches`` is RE2,
    linear, and not one): those read the stage deadline, so the decider's shortcut leaves them
    to the full run, which sets it."""
    converts_activation = False
    """Reads activation values as they are (see ``CompiledPolicy.converting``)."""

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        """Evaluate against plain-Python ``activation``; errors come back as values."""
        if self._loops:
            loc: Locals = [None] * self._slots
            loc[BUDGET_SLOT] = self._iteration_budget - 1  # the 10,000th iteration fails, as native's
            loc[DEADLINE_SLOT] = time.monotonic() + self._time_budget
        elif self._slots > FIRST_VARIABLE_SLOT:
            loc = [None] * self._slots
        else:
            loc = _NO_LOCALS
        try:
            result = self._fn(activation, loc)
            if result is True or result is False:
                return result
            return to_output(result)
        except CelError as error:
            return CelEvalError(error.message)
        except RecursionError:
            return CelEvalError("evaluation nested too deeply")
        except Exception as exc:  # a data-dependent failure we did not foresee: still a value
            return CelEvalError(f"{type(exc).__name__}: {exc}")

    def take_parse_tree(self) -> Any:
        """cel-python's parse tree, once, for the loader's type checker; then forgotten."""
        return self._tree.pop() if self._tree else None

    def condition(self) -> Callable[[Mapping[str, Any]], Any]:
        """``evaluate`` for a caller that only tests the result for ``True``/``False`` (the
        decider's shortcut): the bare closure when it needs no locals, whose errors raise
        :class:`CelError` instead of coming back as values."""
        fn = self._fn
        if not self._loops and self._slots <= FIRST_VARIABLE_SLOT:
            return lambda activation: fn(activation, _NO_LOCALS)
        return self.evaluate

    def evaluate_raw(self, activation: Mapping[str, Any]) -> Any:
        """The internal result, raising :class:`CelError` (for the differential tests)."""
        loc: Locals = [None] * max(self._slots, FIRST_VARIABLE_SLOT)
        loc[BUDGET_SLOT] = self._iteration_budget - 1
        loc[DEADLINE_SLOT] = time.monotonic() + self._time_budget
        return self._fn(activation, loc)


_NO_LOCALS: Final[Locals] = []


class ClosureCelEngine:
    """CEL compiled to Python closures (pure Python, always available)."""

    def __init__(
        self, iteration_budget: int = DEFAULT_ITERATION_BUDGET, time_budget: float = DEFAULT_TIME_BUDGET
    ) -> None:
        self._iteration_budget = iteration_budget
        self._time_budget = time_budget

    @property
    def name(self) -> str:
        """``closure``."""
        return "closure"

    def compile(self, expression: str) -> ClosureCompiledExpression | CelCompileIssue:
        """Parse, check and compile ``expression``; the first problem comes back as a
        :class:`CelCompileIssue` with its offset."""
        # Imported here: the parser and its analysis (and lark) are not needed to compile the
        # trees the compiled-policy cache keeps (:meth:`compile_analyzed`).
        from dsh_policy.policy.cel.celpy_ast import analyze, parse_lean

        tree = parse_lean(expression)
        if isinstance(tree, CelCompileIssue):
            return tree
        try:
            analysis = analyze(tree, expression, check_functions=False)
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        if analysis.issues:
            first = analysis.issues[0]
            return CelCompileIssue(first.message, first.offset)
        return self.compile_analyzed(expression, tree, analysis.reads, keep_tree=True)

    def compile_analyzed(
        self,
        expression: str,
        tree: Any,
        reads: Reads,
        *,
        keep_tree: bool = False,
        patterns_checked: bool = False,
    ) -> ClosureCompiledExpression | CelCompileIssue:
        """Compile a tree :func:`analyze` has already rewritten and passed (``reads``: what it
        found): the second half of :meth:`compile`, which the verified compiled-policy cache
        (:mod:`dsh_policy.policy.policy_cache`) calls with a stored tree instead of parsing.
        ``keep_tree``: hand the tree to the loader's type checker (``take_parse_tree``).
        ``patterns_checked``: the tree's constant ``matches`` patterns compiled in the build that
        kept it, so each is compiled on first use (see :class:`.closure_compiler.Compiler`)."""
        compiler = Compiler(expression, patterns_checked=patterns_checked)
        try:
            node = compiler.compile(tree, {})
        except CompileError as error:
            return CelCompileIssue(error.message, compiler.offset(error.at))
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        references = frozenset(compiler.references)
        kept = Reads(
            tuple(read for read in reads.members if read.root in references),
            reads.whole & references,
        )
        return ClosureCompiledExpression(
            expression,
            references,
            kept,
            node.fn,
            compiler.slots,
            compiler.loops,
            self._iteration_budget,
            self._time_budget,
            [tree] if keep_tree else [],
            compiler.helpers,
        )


__all__ = [
    "DEFAULT_ITERATION_BUDGET",
    "DEFAULT_TIME_BUDGET",
    "MAX_COMPREHENSION_NESTING",
    "ClosureCelEngine",
    "ClosureCompiledExpression",
]
