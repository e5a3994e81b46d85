"""Which pack variable, being an empty list, makes a condition false: read from its parse tree.

Many shipped rules are ``vars.acts.exists(e, ...)`` over a per-event variable that is an empty
list on almost every event (the effects read from a command). Such a condition is false over an
empty list on every engine (no element, so no body evaluated), so the decider may answer it
without building the rule's activation or running its program (``policy/decide/stage_run.py``
says when it may not). This module finds that variable at compile time, on the tree the type
checker reads anyway, so nothing is parsed for it.

The shapes recognised, parentheses aside:

- ``vars.X.exists(v, body)``: the whole condition;
- ``T1 && T2 && ... && Tn`` where some ``Ti`` is ``vars.X.exists(v, body)`` and every term before it
  is a ``has(...)`` test, negated or not. An ``&&`` with a false operand is false whatever the
  other operand gives, errors included (CEL's commutative logic); the terms after the ``exists``
  are never reached by an engine that evaluates left to right, and the ones before it are tests
  that can neither fail nor run long, so skipping them changes no outcome, budgets included.
"""

from __future__ import annotations

from typing import Any

import lark

_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
     "member", "primary", "paren_expr"}
)  # fmt: skip
"""Nodes that stand for their only child (cel-python's precedence chains, and parentheses)."""


def _unwrap(node: Any) -> Any:
    while (
        isinstance(node, lark.Tree)
        and node.data in _PASS_THROUGH
        and len(node.children) == 1
        and isinstance(node.children[0], lark.Tree)
    ):
        node = node.children[0]
    return node


def _terms(node: Any) -> list[Any]:
    """The operands of a chain of ``&&`` (one term for anything else), left to right."""
    node = _unwrap(node)
    if isinstance(node, lark.Tree) and node.data == "conditionaland" and len(node.children) == 2:
        return [*_terms(node.children[0]), _unwrap(node.children[1])]
    return [node]


def _exists_variable(node: Any) -> str | None:
    """``X`` when ``node`` is ``vars.X.exists(v, body)``."""
    if not (isinstance(node, lark.Tree) and node.data == "member_dot_arg" and len(node.children) == 3):
        return None
    target, method, arguments = node.children
    if not (isinstance(method, lark.Token) and method.value == "exists"):
        return None
    if not (isinstance(arguments, lark.Tree) and len(arguments.children) == 2):
        return None
    target = _unwrap(target)
    if not (isinstance(target, lark.Tree) and target.data == "member_dot" and len(target.children) == 2):
        return None
    root, name = _unwrap(target.children[0]), target.children[1]
    if not (isinstance(root, lark.Tree) and root.data == "ident" and len(root.children) == 1):
        return None
    if str(root.children[0]) != "vars" or not isinstance(name, lark.Token):
        return None
    return str(name.value)


def _has_test(node: Any) -> bool:
    """``has(...)`` or ``!has(...)``: a test that cannot fail nor run long."""
    node = _unwrap(node)
    if isinstance(node, lark.Tree) and node.data == "unary" and len(node.children) == 2:
        operator = node.children[0]
        if not (isinstance(operator, lark.Tree) and operator.data == "unary_not"):
            return False
        node = _unwrap(node.children[1])
    if not (isinstance(node, lark.Tree) and node.data == "ident_arg" and len(node.children) == 2):
        return False
    function = node.children[0]
    return isinstance(function, lark.Token) and function.value == "has"


def exists_over(tree: Any) -> str | None:
    """The pack variable ``X`` whose being an empty list makes the condition ``tree`` false (the
    shapes in the module's doc), else None."""
    for term in _terms(tree):
        found = _exists_variable(term)
        if found is not None:
            return found
        if not _has_test(term):
            return None
    return None
