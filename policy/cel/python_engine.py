"""The pure-Python CEL engine, on cel-python's interpreted runner.

cel-python 0.5.0 ships two runners; the transpiled one mis-evaluates ``has(m.z) && m.z == 1``, so
this engine uses the interpreter, subclassed only to count evaluation steps (see
:data:`DEFAULT_STEP_BUDGET`). At load time :mod:`~dsh_policy.policy.cel.celpy_ast` rewrites
namespaced helper calls and rejects unknown functions; at evaluation time values are converted
from plain Python to cel-python's types and back, and every failure comes back as a
:class:`~dsh_policy.policy.cel.engine.CelEvalError` value.

The engine is in five modules: this one compiles and runs programs; :mod:`.python_evaluator` is
the budgeted interpreter, :mod:`.python_operators` the function table (CEL's operators with the
spec's semantics, the gateway helpers), :mod:`.python_values` the conversions between plain Python
and cel-python's types, :mod:`.python_tree` the load-time rewrites of a parse tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import celpy
import lark
from celpy.evaluation import Activation, CELEvalError
from dsh_policy.policy.cel.celpy_ast import analyze, parse
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEvalError, Reads
from dsh_policy.policy.cel.python_evaluator import (
    BranchRecorder,
    BudgetedEvaluator,
    StepBudgetExceededError,
    StepCounter,
    recording_evaluator,
)
from dsh_policy.policy.cel.python_operators import HOST_FUNCTIONS
from dsh_policy.policy.cel.python_tree import collapse_pass_through, precompute_literals
from dsh_policy.policy.cel.python_values import describe_celpy_error, from_celpy, to_celpy

DEFAULT_STEP_BUDGET = 200_000
"""Parse-tree nodes one evaluation may visit (single-child precedence levels are removed at load
time, see :func:`collapse_pass_through`); beyond it the evaluation stops with an error, so a
pathological rule or input cannot stall the gateway (:data:`DEFAULT_TIME_BUDGET` usually stops it
first). A typical rule needs under 100; the baseline rm rule on a 100-command line about 7,000."""

DEFAULT_TIME_BUDGET = 2.0
"""Seconds one evaluation may run, checked at every node: also bounds slow steps (a helper called
on a large input in a comprehension) that the step count alone does not."""


def _conversion_cache(activation: Mapping[str, Any], engine: str) -> dict[str, Any] | None:
    """The per-engine conversion cache of an activation shared by one event's expressions (an
    ``EventActivation``: a dict with a ``converted`` dict), or None for a plain mapping. Values are
    converted once per event; CEL never mutates them, so sharing is safe."""
    caches = getattr(activation, "converted", None)
    if not isinstance(caches, dict):
        return None
    cache = caches.get(engine)
    if cache is None:
        cache = caches[engine] = {}
    return cache


# -- engine -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PythonCompiledExpression:
    """A parsed, checked expression bound to the helper functions; evaluate many times."""

    source: str
    references: frozenset[str]
    reads: Reads
    _runner: celpy.Runner = field(repr=False)
    _step_budget: int = DEFAULT_STEP_BUDGET
    _time_budget: float = DEFAULT_TIME_BUDGET
    _evaluator: type[BudgetedEvaluator] = field(default=BudgetedEvaluator, repr=False)
    _base_activation: Activation = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_base_activation", self._runner.new_activation())

    def take_parse_tree(self) -> lark.Tree:
        """The parse tree this program evaluates (precedence levels collapsed), which the load-time
        type checker reads instead of parsing the expression again (kept: it is evaluated)."""
        tree: lark.Tree = self._runner.ast
        return tree

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        """Evaluate against plain-Python ``activation``; errors come back as values."""
        runner = self._runner
        try:
            converted = _conversion_cache(activation, "python")
            counter = StepCounter(self._step_budget, self._time_budget)
            if converted is not None:
                shared = self._shared_activation(activation, converted)
                return from_celpy(self._evaluator(runner.ast, shared, counter).evaluate())
            context = {name: to_celpy(activation[name]) for name in self.references if name in activation}
            # The base activation (functions, annotations) is built once; evaluate() clones it.
            evaluator = self._evaluator(runner.ast, self._base_activation, counter)
            result = evaluator.evaluate(context)
            return from_celpy(result)
        except CELEvalError as error:
            return CelEvalError(describe_celpy_error(error))
        except StepBudgetExceededError:
            return CelEvalError(
                f"evaluation exceeded its budget of {self._step_budget} steps or {self._time_budget:g} s"
            )
        except RecursionError:
            return CelEvalError("evaluation nested too deeply")
        except Exception as exc:  # any other failure inside cel-python is data-dependent: a value
            return CelEvalError(f"{type(exc).__name__}: {exc}")

    def _shared_activation(self, activation: Mapping[str, Any], converted: dict[str, Any]) -> Activation:
        """The event's cel-python activation, shared by its expressions: cloning the base
        activation and loading values into it is most of the cost of a small expression, so it
        happens once per event; each name is converted and loaded the first time an expression
        reads it. Every program of every python engine has the same functions and annotations,
        so any program's base activation serves as the template."""
        caches: dict[str, Any] = activation.converted  # type: ignore[attr-defined]
        shared: Activation | None = caches.get(_SHARED_ACTIVATION)
        if shared is None:
            shared = caches[_SHARED_ACTIVATION] = self._base_activation.clone()
        missing = [name for name in self.references if name in activation and name not in converted]
        if missing:
            values = {name: to_celpy(activation[name]) for name in missing}
            shared.identifiers.load_values(values)
            converted.update(values)
        return shared


_SHARED_ACTIVATION = "python-activation"


class PythonCelEngine:
    """CEL on cel-python (pure Python, always available)."""

    def __init__(
        self,
        step_budget: int = DEFAULT_STEP_BUDGET,
        time_budget: float = DEFAULT_TIME_BUDGET,
        branch_recorder: BranchRecorder | None = None,
    ) -> None:
        self._environment = celpy.Environment()
        self._step_budget = step_budget
        self._time_budget = time_budget
        self._evaluator = (
            BudgetedEvaluator if branch_recorder is None else recording_evaluator(branch_recorder)
        )

    @property
    def name(self) -> str:
        """``python``."""
        return "python"

    def compile(self, expression: str) -> PythonCompiledExpression | CelCompileIssue:
        """Parse, rewrite namespaced helper calls and check ``expression``; the first problem
        found comes back as a :class:`CelCompileIssue` with its offset."""
        tree = parse(self._environment, expression)
        if isinstance(tree, CelCompileIssue):
            return tree
        try:
            analysis = analyze(tree, expression)
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        if analysis.issues:
            first = analysis.issues[0]
            return CelCompileIssue(first.message, first.offset)
        try:
            tree = collapse_pass_through(tree)
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        runner = self._environment.program(tree, functions=HOST_FUNCTIONS)
        precompute_literals(tree, runner.new_activation())
        return PythonCompiledExpression(
            expression,
            analysis.references,
            analysis.reads,
            runner,
            self._step_budget,
            self._time_budget,
            self._evaluator,
        )
