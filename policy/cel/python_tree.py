"""The python engine's load-time rewrites of a parse tree: fewer nodes, literals computed once.

Both change how much work an evaluation does, never its value (``tests/perf/
test_perf_python_engine.py`` evaluates every case on the rewritten and the plain tree).
"""

from __future__ import annotations

import lark
from celpy.evaluation import Activation, CELEvalError, Evaluator

PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member"}
)


CONSTANT = "dsh_constant"
NOT_CONSTANT = object()


def precompute_literals(tree: lark.Tree, activation: Activation) -> None:
    """Store each literal's value on its node: cel-python would otherwise re-parse a string
    literal's escapes (with regular expressions) on every evaluation. Values are immutable and
    never changed by evaluation; a literal that fails to convert is left to fail at evaluation."""
    evaluator = Evaluator(tree, activation)
    for node in tree.iter_subtrees():
        if node.data == "literal":
            value = evaluator.literal(node)
            if not isinstance(value, CELEvalError):
                node.__dict__[CONSTANT] = value


def collapse_pass_through(tree: lark.Tree) -> lark.Tree:
    """The parse tree without its single-child precedence levels, evaluated the same way.

    cel-python's grammar wraps every operand in ``expr > conditionalor > conditionaland >
    relation > addition > multiplication > unary > member`` nodes that, with one child, only
    return that child's value; a leaf sits under nine nodes and the interpreter pays a dispatch
    for each. Skipping them at load time cuts the nodes an evaluation visits about threefold.
    ``member_object`` tells a message construction from a plain value by whether its first child
    is ``primary``, so that child keeps its ``member`` node. Node names become plain ``str``
    (lark's ``Token.__eq__`` is a Python-level method, and the interpreter compares them a lot)."""
    node = tree
    while node.data in PASS_THROUGH and len(node.children) == 1 and isinstance(node.children[0], lark.Tree):
        node = node.children[0]
    node.data = str(node.data)  # a plain str: the interpreter compares it often, a Token slowly
    children = node.children
    for index, child in enumerate(children):
        if not isinstance(child, lark.Tree):
            continue
        if index == 0 and node.data == "member_object":
            child.children = [
                collapse_pass_through(grandchild) if isinstance(grandchild, lark.Tree) else grandchild
                for grandchild in child.children
            ]
        else:
            children[index] = collapse_pass_through(child)
    return node
