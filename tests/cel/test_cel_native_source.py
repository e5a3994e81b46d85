"""The native engine compiles a source in which adjacent string literals of a ``+`` chain are
folded into one: a long concatenation of pattern fragments (a pack variable such as the baseline's
``cred_re``) loads on it as on every other engine, values and error kinds are unchanged, and an
error's position still points at what the author wrote."""

from __future__ import annotations

import pytest
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.celpy_ast import parse_lean
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEvalError
from dsh_policy.policy.cel.native_source import (
    apply_edits,
    cel_string_literal,
    folded_literal_runs,
    original_offset,
)
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif("native" not in available_engines(), reason="the fast extra is not installed")

#: String literal spellings CEL accepts, each with its value.
SPELLINGS = [
    ("r'a\\d+'", "a\\d+"),
    ("'b\\n'", "b\n"),
    ('"q\\"uote"', 'q"uote'),
    ("'''tri'ple'''", "tri'ple"),
    ("r\"(?:^|/)\\.ssh\"", "(?:^|/)\\.ssh"),
    ("'\\u00e9t\\u00e9'", "été"),
    ("''", ""),
]


def folded(expression: str) -> str:
    tree = parse_lean(expression)
    assert not isinstance(tree, CelCompileIssue)
    return apply_edits(expression, folded_literal_runs(tree))


def test_a_concatenation_deeper_than_the_cpp_parser_allows_loads_and_matches_every_engine() -> None:
    fragments = [f"r'(?:^|/)name{i}$'" for i in range(80)]  # 80 levels: the C++ parser stops at 32
    expression = "'/x/name42'.matches(" + " + '|' + ".join(fragments) + ")"
    results = {}
    for name in ("closure", "python", "native"):
        compiled = make_engine(name).compile(expression)
        assert not isinstance(compiled, CelCompileIssue), (name, compiled)
        results[name] = compiled.evaluate({})
    assert results == {"closure": True, "python": True, "native": True}


def test_only_runs_of_literals_are_folded_and_a_minus_ends_a_chain() -> None:
    assert folded("x + 'a' + 'b' + y + 'c' + r'd'") == "x + r'ab' + y + r'cd'"
    assert folded("'a' + ('b' + 'c') + 'd'") == "'a' + (r'bc') + 'd'"
    assert folded("size('a' + 'b') - 1 + 'c'") == "size(r'ab') - 1 + 'c'"
    assert folded("'only one' + x") == "'only one' + x"


@pytest.mark.parametrize(("spelling", "value"), SPELLINGS)
def test_every_spelling_folds_to_its_value(spelling: str, value: str) -> None:
    native = make_engine("native")
    compiled = native.compile(f"{spelling} + {spelling} + x")
    assert not isinstance(compiled, CelCompileIssue)
    assert compiled.evaluate({"x": "!"}) == value + value + "!"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=12))
def test_a_folded_literal_has_exactly_the_value_it_was_made_from(value: str) -> None:
    native = make_engine("native")
    compiled = native.compile(f"{cel_string_literal(value)} + ''")
    assert not isinstance(compiled, CelCompileIssue), (value, compiled)
    assert compiled.evaluate({}) == value


@pytest.mark.parametrize("value", ["\\", "a\\", "C:\\Users\\", "\\\\"])
def test_a_folded_literal_ending_in_a_backslash_is_not_written_raw(value: str) -> None:
    """Found by the property above: ``r'\\'`` is no literal (the backslash takes the quote)."""
    compiled = make_engine("native").compile(f"{cel_string_literal(value)} + 'x'")
    assert not isinstance(compiled, CelCompileIssue), compiled
    assert compiled.evaluate({}) == value + "x"


def test_a_non_string_left_operand_is_the_same_error_folded_or_not() -> None:
    for expression in ("x + 'a' + 'b'", "x + 'a'"):
        result = make_engine("native").compile(expression).evaluate({"x": 1})  # type: ignore[union-attr]
        assert isinstance(result, CelEvalError) and "overload" in result.message.lower()


def test_an_error_after_a_fold_points_at_the_written_expression() -> None:
    expression = "'a' + 'b' + 'c' + 1 == 'x'"
    issue = make_engine("native").compile(expression)
    assert isinstance(issue, CelCompileIssue) and issue.offset is not None
    # the runtime points at the last '+', which the folded source has 9 characters earlier
    assert expression[issue.offset] == "+" and issue.offset == expression.rindex("+")


def test_offsets_inside_an_edit_map_to_its_start_and_after_it_shift_back() -> None:
    expression = "x + 'a' + 'b' + y"
    tree = parse_lean(expression)
    assert not isinstance(tree, CelCompileIssue)
    edits = folded_literal_runs(tree)
    source = apply_edits(expression, edits)
    assert source == "x + r'ab' + y"
    assert original_offset(edits, source.index("r'ab'") + 2) == expression.index("'a'")
    assert original_offset(edits, source.index("y")) == expression.index("y")
    assert original_offset(edits, 0) == 0
