"""Canaries for the upstream internals the CEL engines lean on.

The python engine subclasses cel-python's ``Evaluator`` and overrides its methods, and reads a few
of its private structures; the native engine reads cel-expr-python's error text. pyproject.toml
bounds both libraries above the tested versions, and these tests fail loudly, naming the piece
that moved, when an upgrade changes the shape of anything we rely on, instead of letting a minor
release change decisions silently.
"""

from __future__ import annotations

import inspect

import celpy
import pytest
from celpy.evaluation import Activation, Evaluator, NameContainer
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.cel.python_evaluator import BudgetedEvaluator

# Every upstream Evaluator method the python engine overrides, with the parameters it was
# written against (cel-python 0.5.0). A new override must be recorded here.
OVERRIDDEN: dict[str, tuple[str, ...]] = {
    "__init__": ("self", "ast", "activation"),
    "_visit_tree": ("self", "tree"),
    "build_macro_eval": ("self", "child"),
    "build_ss_macro_eval": ("self", "child"),
    "conditionaland": ("self", "tree"),
    "conditionalor": ("self", "tree"),
    "exprlist": ("self", "tree"),
    "function_eval": ("self", "name_token", "exprlist"),
    "ident_value": ("self", "name", "root_scope"),
    "literal": ("self", "tree"),
    "member_dot": ("self", "tree"),
    "member_dot_arg": ("self", "tree"),
    "method_eval": ("self", "object", "method_ident", "exprlist"),
    "primary": ("self", "tree"),
    "relation": ("self", "tree"),
    "sub_evaluator": ("self", "ast"),
    "unary": ("self", "tree"),
    "visit_children": ("self", "tree"),
}


def test_the_recorded_overrides_are_exactly_the_ones_the_engine_makes() -> None:
    overridden = {
        name
        for name, value in vars(BudgetedEvaluator).items()
        if callable(value) and hasattr(Evaluator, name)
    }
    assert overridden == set(OVERRIDDEN), "record a new override's upstream signature in OVERRIDDEN"


@pytest.mark.parametrize("name", sorted(OVERRIDDEN))
def test_every_overridden_upstream_method_keeps_its_signature(name: str) -> None:
    upstream = getattr(Evaluator, name, None)
    assert upstream is not None, f"cel-python's Evaluator no longer has {name}"
    assert tuple(inspect.signature(upstream).parameters) == OVERRIDDEN[name], (
        f"cel-python changed Evaluator.{name}; review the python engine's override"
    )


def test_the_private_structures_the_python_engine_reads_are_still_there() -> None:
    for owner, attribute in [
        (Activation, "nested_activation"),
        (Activation, "resolve_function"),
        (NameContainer, "resolve_name"),
        (NameContainer, "load_values"),
        (celpy.InterpretedRunner, "new_activation"),
    ]:
        assert callable(getattr(owner, attribute, None)), f"{owner.__name__}.{attribute} is gone"
    runner = celpy.Environment().program(celpy.Environment().compile("a + 1"))
    activation = runner.new_activation()
    # Instance attributes set by Activation.__init__ that the engine reads on its hot path.
    for attribute in ("identifiers", "functions", "package"):
        assert hasattr(activation, attribute), f"Activation instances lost .{attribute}"
    assert isinstance(activation.identifiers, NameContainer)
    assert hasattr(runner, "ast"), "Runner instances lost .ast"
    nested = activation.nested_activation(vars={"x": None})
    assert "x" in nested.identifiers


@pytest.mark.skipif("native" not in available_engines(), reason="cel-expr-python not installed")
def test_the_native_error_texts_the_engine_parses_keep_their_shape() -> None:
    from dsh_policy.policy.cel import native_engine

    engine = native_engine.NativeCelEngine() if hasattr(native_engine, "NativeCelEngine") else None
    assert engine is not None, "native_engine.NativeCelEngine moved"
    env = engine._environments.get(())
    with pytest.raises(Exception) as syntax:
        env.compile("1 +")
    assert native_engine._ERROR_POSITION.search(str(syntax.value)), str(syntax.value)
    with pytest.raises(Exception) as undeclared:
        env.compile("nope + 1")
    assert native_engine._UNDECLARED.search(str(undeclared.value)), str(undeclared.value)
    # The engine's own view: positions and names still come out of those texts.
    issue = engine.compile("args.x == 1 &&")
    assert getattr(issue, "offset", None) is not None, issue
