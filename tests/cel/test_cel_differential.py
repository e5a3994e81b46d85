"""Differential tests: the closure compiler, cel-python (the python engine) and cel-expr-python
(the native engine) must give identical results, values or error kinds, on

- random well-typed expressions over random activations (hypothesis), and
- every cel-spec conformance case that all of them compile.

Any difference is a test failure. The random budget is small by default (CI); set
``DSH_CEL_DIFF_EXAMPLES`` (e.g. 20000) for a long run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cel_conformance import load_cases, to_plain
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CelEvalError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ENGINE_NAMES = [name for name in ("closure", "python", "native") if name in available_engines()]
ENGINES: dict[str, CelEngine] = {name: make_engine(name) for name in ENGINE_NAMES}  # type: ignore[arg-type]
EXAMPLES = int(os.environ.get("DSH_CEL_DIFF_EXAMPLES", "150"))

# Each engine words its errors its own way; these are the kinds the generator can provoke.
_ERROR_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("division_by_zero", re.compile(r"divide by zero|modulo by zero|modulus by zero|division by zero", re.I)),
    ("overflow", re.compile(r"overflow|out of range: -?\d{19}", re.I)),
    ("no_such_key", re.compile(r"no such key|no such member in mapping|key not found", re.I)),
    ("index_out_of_range", re.compile(r"index out of range|index error", re.I)),
    (
        "no_such_overload",
        re.compile(r"no such overload|no matching overload|field selection|non-message", re.I),
    ),
    ("budget", re.compile(r"budget|limit", re.I)),
)


def error_kind(message: str) -> str:
    """The class of an engine's error message, the same on every engine."""
    for kind, pattern in _ERROR_KINDS:
        if pattern.search(message):
            return kind
    return f"unclassified: {message}"


def outcome(value: Any) -> Any:
    """A result with its CEL kind kept apart (``1`` vs ``true`` vs ``1.0``)."""
    if isinstance(value, CelEvalError):
        return ("error", error_kind(value.message))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("double", "nan" if value != value else value)
    if isinstance(value, list):
        return ("list", tuple(outcome(item) for item in value))
    if isinstance(value, dict):
        return ("map", frozenset((outcome(k), outcome(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def all_agree(results: dict[str, Any]) -> bool:
    """Whether every engine's outcome equals the first one's. Compared by equality, not by repr:
    two equal maps are equal frozensets whose repr can list entries in different orders."""
    first, *rest = results.values()
    return all(other == first for other in rest)


def compiled(engine: CelEngine, source: str) -> Any:
    program = engine.compile(source)
    assert not isinstance(program, CelCompileIssue), program
    return program


def run_everywhere(source: str, activation: dict[str, Any]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, engine in ENGINES.items():
        program = engine.compile(source)
        if isinstance(program, CelCompileIssue):
            results[name] = ("compile", program.message)
        else:
            results[name] = outcome(program.evaluate(dict(activation)))
    return results


# -- random well-typed expressions ------------------------------------------------------------

INT_EDGES = [0, 1, 2, 3, -1, 7, 10, 100, 2**31, 2**62, 2**63 - 1]
KEYS = ["a", "b", "c"]
ALPHABET = st.sampled_from(list("abcrm -/é日"))
texts = st.text(ALPHABET, max_size=6)
small_ints = st.one_of(
    st.integers(-20, 20), st.sampled_from(INT_EDGES), st.sampled_from([-(2**63), -(2**62)])
)


@st.composite
def activations(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "x": draw(small_ints),
        "y": draw(small_ints),
        "s": draw(texts),
        "t": draw(texts),
        "b": draw(st.booleans()),
        "li": draw(st.lists(small_ints, max_size=5)),
        "ls": draw(st.lists(texts, max_size=4)),
        "m": draw(st.dictionaries(st.sampled_from(KEYS), small_ints, max_size=3)),
    }


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _int_literal(value: int) -> str:
    if value == -(2**63):
        return "(-9223372036854775807 - 1)"
    return str(value) if value >= 0 else f"({value})"


@dataclass(frozen=True)
class Scope:
    ints: tuple[str, ...] = ("x", "y")
    strings: tuple[str, ...] = ("s", "t")
    depth: int = 0


@cache
def expression(kind: str, scope: Scope) -> st.SearchStrategy[str]:
    """A strategy for CEL text of type ``kind`` (int, bool, string, list_int, list_string)."""
    leaves: dict[str, st.SearchStrategy[str]] = {
        "int": st.one_of(st.sampled_from(scope.ints), small_ints.map(_int_literal)),
        "bool": st.one_of(st.sampled_from(["b", "true", "false"])),
        "string": st.one_of(st.sampled_from(scope.strings), texts.map(_quote)),
        "list_int": st.sampled_from(["li", "[]", "[1, 2, 3]"]),
        "list_string": st.sampled_from(["ls", '["a", "rm"]']),
    }
    if scope.depth >= 2:
        return leaves[kind]
    inner = Scope(scope.ints, scope.strings, scope.depth + 1)

    def sub(kind: str) -> st.SearchStrategy[str]:
        return st.deferred(lambda: expression(kind, inner))

    def binary(template: str, left: str, right: str) -> st.SearchStrategy[str]:
        return st.tuples(sub(left), sub(right)).map(lambda pair: template.format(*pair))

    def comprehension(macro: str, list_kind: str, body_kind: str) -> st.SearchStrategy[str]:
        variable = f"e{scope.depth}"
        bound = (
            Scope((*scope.ints, variable), scope.strings, scope.depth + 1)
            if list_kind == "list_int"
            else Scope(scope.ints, (*scope.strings, variable), scope.depth + 1)
        )
        body = st.deferred(lambda: expression(body_kind, bound))
        return st.tuples(sub(list_kind), body).map(lambda pair: f"{pair[0]}.{macro}({variable}, {pair[1]})")

    composite: dict[str, list[st.SearchStrategy[str]]] = {
        "int": [
            binary("({} + {})", "int", "int"),
            binary("({} - {})", "int", "int"),
            binary("({} * {})", "int", "int"),
            binary("({} / {})", "int", "int"),
            binary("({} % {})", "int", "int"),
            sub("int").map(lambda e: f"-({e})"),
            sub("string").map(lambda e: f"size({e})"),
            sub("list_int").map(lambda e: f"size({e})"),
            st.tuples(sub("list_int"), st.integers(-1, 4)).map(lambda p: f"{p[0]}[{_int_literal(p[1])}]"),
            st.sampled_from(KEYS).map(lambda k: f"m.{k}"),
            st.sampled_from(KEYS).map(lambda k: f'm["{k}"]'),
            st.tuples(sub("bool"), sub("int"), sub("int")).map(lambda p: f"({p[0]} ? {p[1]} : {p[2]})"),
            comprehension("filter", "list_int", "bool").map(lambda e: f"size({e})"),
        ],
        "bool": [
            binary("({} == {})", "int", "int"),
            binary("({} != {})", "string", "string"),
            binary("({} < {})", "int", "int"),
            binary("({} >= {})", "string", "string"),
            binary("({} && {})", "bool", "bool"),
            binary("({} || {})", "bool", "bool"),
            sub("bool").map(lambda e: f"!({e})"),
            binary("{}.contains({})", "string", "string"),
            binary("{}.startsWith({})", "string", "string"),
            binary("{}.endsWith({})", "string", "string"),
            binary("({} in {})", "int", "list_int"),
            binary("({} in {})", "string", "list_string"),
            st.sampled_from(KEYS).map(lambda k: f'("{k}" in m)'),
            st.sampled_from(KEYS).map(lambda k: f"has(m.{k})"),
            binary("({} == {})", "list_int", "list_int"),
            comprehension("exists", "list_int", "bool"),
            comprehension("all", "list_int", "bool"),
            comprehension("exists_one", "list_string", "bool"),
            comprehension("exists", "list_string", "bool"),
        ],
        "string": [
            binary("({} + {})", "string", "string"),
            st.tuples(sub("bool"), sub("string"), sub("string")).map(lambda p: f"({p[0]} ? {p[1]} : {p[2]})"),
            st.tuples(sub("list_string"), st.integers(0, 3)).map(lambda p: f"{p[0]}[{p[1]}]"),
        ],
        "list_int": [
            binary("({} + {})", "list_int", "list_int"),
            binary("[{}, {}]", "int", "int"),
            comprehension("map", "list_int", "int"),
            comprehension("filter", "list_int", "bool"),
        ],
        "list_string": [
            binary("({} + {})", "list_string", "list_string"),
            comprehension("map", "list_string", "string"),
            comprehension("filter", "list_string", "bool"),
        ],
    }
    return st.one_of(leaves[kind], *composite[kind])


programs = st.sampled_from(["int", "bool", "string", "list_int", "list_string"]).flatmap(
    lambda kind: expression(kind, Scope())
)


@pytest.mark.skipif(len(ENGINES) < 2, reason="needs two engines")
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs, activation=activations())
def test_random_well_typed_expressions_agree_on_every_engine(source: str, activation: dict[str, Any]) -> None:
    results = run_everywhere(source, activation)
    compile_issues = {name: r for name, r in results.items() if r[0] == "compile"}
    assert not compile_issues, (source, compile_issues)
    assert all_agree(results), (source, activation, results)


def test_error_kinds_are_recognized_on_every_engine() -> None:
    """The classifier the random test relies on knows every engine's wording."""
    for source, kind in (
        ("x / 0", "division_by_zero"),
        ("x % 0", "division_by_zero"),
        ("9223372036854775807 + x", "overflow"),
        ("m.zz", "no_such_key"),
        ("li[9]", "index_out_of_range"),
        ("li[-1]", "index_out_of_range"),
    ):
        results = run_everywhere(source, {"x": 1, "m": {}, "li": [1]})
        assert set(results.values()) == {("error", kind)}, (source, results)


# -- the conformance cases ----------------------------------------------------------------------

CASES = [case for case in load_cases(Path(__file__).parent / "conformance") if case.skip_reason is None]


# Where one engine is known to be wrong (each also a failure in TABLE.md for that engine, and
# none reachable from a gateway activation): the case, and who is wrong.
_PYTHON_ESCAPES = (
    "python: cel-python keeps the escapes \\?, \\` and \\X41 and drops newlines in triple quotes"
)
KNOWN_DEVIATIONS = {
    **{
        f"parse:{n}": _PYTHON_ESCAPES
        for n in (*range(20, 24), 38, 39, *range(64, 68), *range(76, 80), *range(100, 104), 118, 119)
    },
    **{f"parse:{n}": _PYTHON_ESCAPES for n in range(144, 152)},
    "comparisons:66": "python: cel-python has no timestamp(int)",
    "conversions:109": "python: cel-python has no timestamp(int)",
    "conversions:38": "python: int() of -2^63 as a double is accepted",
    "fields:51": "python: double map keys are accepted",
    "fields:54": "native: {0: 1, 0u: 2} is not rejected as a duplicate key",
    "lists:8": "python: a whole double is not accepted as a list index",
    "timestamps:3": "closure, python: timestamps keep microseconds, not nanoseconds",
    "timestamps:5": "python: google.protobuf.Timestamp is not a type name",
    "timestamps:8": "python: google.protobuf.Duration is not a type name",
    "timestamps:42": "closure: timestamps keep microseconds, not nanoseconds",
    "timestamps:43": "closure: timestamps keep microseconds, not nanoseconds",
    "timestamps:69": "closure, python: a nanosecond past year 9999 is not seen",
    "timestamps:70": "closure, python: a nanosecond before year 1 is not seen",
    "timestamps:71": "python: durations have no range limit",
    "timestamps:72": "python: durations have no range limit",
    "timestamps:77": "python: durations have no range limit",
    "timestamps:78": "python: durations have no range limit",
}


def test_conformance_cases_agree_wherever_every_engine_compiles_them() -> None:
    """On every case all engines compile, the same value (kind included) or all an error; the
    only exceptions are the named deviations above, and each must still be one (so a fixed one
    is noticed and taken off the list)."""
    differences: list[str] = []
    deviations_seen: set[str] = set()
    compared = 0
    for case in CASES:
        activation = {name: to_plain(value) for name, value in case.bindings.items()}
        results: dict[str, Any] = {}
        for name, engine in ENGINES.items():
            program = engine.compile(case.expr)
            if isinstance(program, CelCompileIssue):
                break
            value = program.evaluate(dict(activation))
            results[name] = ("error",) if isinstance(value, CelEvalError) else outcome(value)
        else:
            compared += 1
            if not all_agree(results):
                if case.key in KNOWN_DEVIATIONS:
                    deviations_seen.add(case.key)
                else:
                    differences.append(f"{case.key} {case.expr!r}: {results}")
    assert compared > 900, compared
    assert not differences, "\n".join(differences)
    if set(ENGINES) == {"closure", "python", "native"}:
        assert deviations_seen == set(KNOWN_DEVIATIONS), set(KNOWN_DEVIATIONS) - deviations_seen


@pytest.mark.skipif("native" not in ENGINES, reason="needs the native engine")
@pytest.mark.parametrize(
    ("source", "sizes"),
    [
        ("xs.all(x, true)", (9999, 0)),
        ("xs.all(x, true)", (10000, 0)),
        ("xs.exists(x, x == 0)", (20000, 0)),
        ("xs.all(x, true) && ys.all(y, true)", (5000, 4999)),
        ("xs.all(x, true) && ys.all(y, true)", (5000, 5000)),
        ("xs.exists(x, ys.exists(y, y == x))", (150, 150)),
    ],
)
def test_closure_and_native_stop_at_the_same_comprehension_iteration(
    source: str, sizes: tuple[int, int]
) -> None:
    """The iteration budget is one per evaluation on both, and the 10,000th iteration fails on
    both, so which engine auto picks never changes what a large input decides."""
    activation = {"xs": list(range(sizes[0])), "ys": list(range(-sizes[1], 0))}
    results = {
        name: outcome(compiled(ENGINES[name], source).evaluate(activation)) for name in ("closure", "native")
    }
    assert results["closure"] == results["native"], results
