"""The fast CEL parser against cel-python's: on every expression it accepts, its tree must be
cel-python's tree with the single-child precedence chains collapsed, node for node, with the same
tokens and positions; what it declines must be something cel-python refuses or a declared gap.
Run over every shipped expression, every conformance case and random expressions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import celpy
import lark
import pytest
import yaml
from celpy.celparser import CELParseError, CELParser
from dsh_policy.policy.cel import fast_parser
from dsh_policy.policy.cel.fast_parser import collapse, parse_collapsed
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cel_differential import Scope, expression

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "cel" / "conformance"
_ENV = celpy.Environment()
_POSITION = ("start_pos", "line", "column", "end_line", "end_column", "end_pos")


def _shape(node: lark.Tree | lark.Token) -> Any:
    if isinstance(node, lark.Token):
        return ("token", node.type, str(node), *(getattr(node, name, None) for name in _POSITION))
    meta = node.meta
    position = None if meta.empty else tuple(getattr(meta, name, None) for name in _POSITION)
    return (str(node.data), position, [_shape(child) for child in node.children])


def _celpy_tree(source: str) -> lark.Tree | None:
    try:
        return _ENV.compile(source)
    except (CELParseError, RecursionError):
        return None


def _agrees(source: str) -> bool:
    """Asserts agreement; True when the fast parser took the expression."""
    fast = parse_collapsed(source)
    reference = _celpy_tree(source)
    if fast is None:
        return False
    assert reference is not None, f"fast parser accepted what cel-python refuses: {source!r}"
    assert _shape(fast) == _shape(collapse(reference)), source
    return True


def _shipped_expressions() -> list[str]:
    found: list[str] = []
    for path in sorted((ROOT / "rules").glob("*.yaml")):
        if path.name.endswith(".cases.yaml"):
            continue
        spec = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)["spec"]
        found += [variable["expression"] for variable in spec.get("variables") or ()]
        for rule in spec.get("rules") or ():
            found += [rule[key] for key in ("when", "message_expression") if rule.get(key)]
    return found


def _conformance_expressions() -> list[str]:
    found = []
    for path in sorted(CONFORMANCE.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(json.loads(line)["expr"])
    return found


def test_every_shipped_expression_parses_fast_and_identically() -> None:
    expressions = _shipped_expressions()
    assert len(expressions) > 100
    for source in expressions:
        assert _agrees(source), f"declined a shipped expression: {source!r}"


def test_conformance_expressions_parse_identically_or_are_declined() -> None:
    expressions = _conformance_expressions()
    taken = sum(_agrees(source) for source in expressions)
    declined = [s for s in expressions if parse_collapsed(s) is None and _celpy_tree(s) is not None]
    # What cel-python parses and the fast parser leaves to it (a method on an integer literal,
    # ``24.indexOf(x)``, which lark's lexer reads through its float pattern): pinned, so a new
    # gap is seen.
    assert taken > 1650
    assert len(declined) <= 2, declined


@pytest.mark.parametrize(
    "source",
    [
        "-1", "- 1", "--1", "x-1", "x - -1", "-1u", "-0x1F", "1.", ".5", "-.5e3", "1e3", "0x1Fu",
        "!true", "!!x", "-x.y", "[]", "{}", "[1, 2][0]", "{'a': 1}.a", "a{}", "a.b{c: 1, d: 2}",
        ".a.b", ".f(1)", "f()", "x.f()", "x in [1]", "x in{1: 2}", "a ? b : c ? d : e",
        "true && null", "r'raw\\d' + b'\\x00' + '''multi\nline''' + \"\"\"dq\"\"\"",
        "a // comment\n  || b\n", "\n\t x \n", "(((x)))", "x[y][z].w(v)[0]", "size(x) >= 2 % 3",
        "a < b == c != d <= e > f >= g", "a * b / c - d + e % f", "path.normalize(x).startsWith(p)",
        "'é😀' + x", "x.exists(c, c[0] == 'rm' && c.all(a, a != '-f'))",
    ],
)  # fmt: skip
def test_edge_cases_agree(source: str) -> None:
    assert _agrees(source)


@pytest.mark.parametrize(
    "source", ["", "x +", "a ? b ? c : d : e", "x.in", "a.true", "x.(y)", "[1,]", "a b", "x = 1"]
)
def test_refused_and_doubtful_syntax_is_left_to_cel_python(source: str) -> None:
    assert parse_collapsed(source) is None


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["bool", "int", "string", "list_int"]).flatmap(lambda kind: expression(kind, Scope())))
def test_random_expressions_agree(source: str) -> None:
    assert _agrees(source)


def test_terminal_patterns_are_cel_pythons() -> None:
    CELParser()
    assert CELParser.CEL_PARSER is not None
    terminals = {t.name: t for t in CELParser.CEL_PARSER.parser.lexer.root_lexer.terminals}
    for name, pattern in fast_parser.PATTERNS.items():
        assert terminals[name].pattern.to_regexp() == pattern, name
    order = [t.name for t in CELParser.CEL_PARSER.parser.lexer.root_lexer.terminals]
    literal_order = [name for name in order if name in fast_parser.PATTERNS]
    assert literal_order == list(fast_parser.PATTERNS)
