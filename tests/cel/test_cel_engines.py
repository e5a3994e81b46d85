"""Every installed engine: the same compile/evaluate contract and identical results."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dsh_policy.policy.cel import (
    CelCompileIssue,
    CelEvalError,
    EngineUnavailableError,
    available_engines,
    make_engine,
)
from dsh_policy.policy.cel.engine import CelEngine, CompiledExpression
from hypothesis import given, settings
from hypothesis import strategies as st

ENGINES = available_engines()
# Made at import: cel-python raises the recursion limit when an engine is built, which hypothesis
# would otherwise warn about inside a test.
ENGINE_BY_NAME: dict[str, CelEngine] = {name: make_engine(name) for name in ENGINES}


@pytest.fixture(params=ENGINES, scope="module")
def engine(request: pytest.FixtureRequest) -> CelEngine:
    return make_engine(request.param)


def compiled(engine: CelEngine, source: str) -> CompiledExpression:
    program = engine.compile(source)
    assert not isinstance(program, CelCompileIssue), program
    return program


def evaluate(engine: CelEngine, source: str, **activation: Any) -> Any:
    return compiled(engine, source).evaluate(activation)


RM_ROOT_RULE = """shell.commands(args.command).exists(c, c[0] == "rm"
  && c.exists(a, a.matches("^-[a-zA-Z]*[rR]") || a == "--recursive")
  && c.exists(a, a in ["/", "/*", "~", "~/"]))"""

# (expression, activation, expected value) — policy-style expressions and every helper.
CASES: list[tuple[str, dict[str, Any], Any]] = [
    (RM_ROOT_RULE, {"args": {"command": "sudo rm -rf /"}}, True),
    (RM_ROOT_RULE, {"args": {"command": "bash -c 'cd /tmp && /bin/rm -r -f ~'"}}, True),
    (RM_ROOT_RULE, {"args": {"command": "rm -rf ./build"}}, False),
    ("shell.commands(c)", {"c": "sudo ls | grep x"}, [["sudo"], ["ls"], ["grep", "x"]]),
    ("shell.argv0s(c)", {"c": "env X=1 ls"}, ["env", "ls"]),
    ("path.normalize(p)", {"p": "/a/./b/../c"}, "/a/c"),
    (
        "path.within(args.path, params.workspace)",
        {"args": {"path": "/workspace/../etc"}, "params": {"workspace": "/workspace"}},
        False,
    ),
    ("path.within(p, '/workspace')", {"p": "src/x.py"}, True),
    ("path.base(p) + path.ext(p)", {"p": "/x/y.TXT"}, "y.TXT.txt"),
    (
        "!(url.host(args.url) in params.allowed_hosts)",
        {"args": {"url": "http://u@evil.com@good.com"}, "params": {"allowed_hosts": ["good.com"]}},
        False,
    ),
    ("url.host(u)", {"u": "https://[::1]:443/"}, "::1"),
    ('glob(tool.name, "http_*")', {"tool": {"name": "http_get"}}, True),
    ("secrets.scan(result.text)", {"result": {"text": "key AKIAIOSFODNN7EXAMPLE"}}, ["aws-access-key"]),
    ("secrets.scan(args)", {"args": {"a": ["ghp_" + "x" * 36]}}, ["github-token"]),
    ('args.command.matches("^(a+)+$")', {"args": {"command": "a" * 5000 + "b"}}, False),
    ('matches(s, "b+")', {"s": "abbc"}, True),
    ("has(m.z) && m.z == 1", {"m": {"y": 2}}, False),
    ('has(args.path) ? args.path : ""', {"args": {}}, ""),
    ("turn > params.max_turns", {"turn": 51, "params": {"max_turns": 50}}, True),
    (
        "size(messages) == 2 && messages[1].role == 'user'",
        {"messages": [{"role": "system"}, {"role": "user"}]},
        True,
    ),
    ("prompt.contains('ignore previous')", {"prompt": "please IGNORE previous"}, False),
    ("prompt.startsWith('pl') && prompt.endsWith('se')", {"prompt": "please"}, True),
    ("tool.nested || step > 3", {"tool": {"nested": False}, "step": 4}, True),
    ("now > timestamp('2020-01-01T00:00:00Z')", {"now": datetime.datetime(2024, 5, 1)}, True),
    ("[1, 2, 3].map(x, x * 2)", {}, [2, 4, 6]),
    ("{'a': [1, 'b', true, null, 2.5]}", {}, {"a": [1, "b", True, None, 2.5]}),
    ("args.items.filter(i, i > 1)", {"args": {"items": (1, 2, 3)}}, [2, 3]),
    ("[1, 2].exists(path, path == 2)", {}, True),
    ("b'abc'", {}, b"abc"),
]


@pytest.mark.parametrize(("source", "activation", "expected"), CASES, ids=[c[0][:50] for c in CASES])
def test_expressions_evaluate_to_plain_python(
    engine: CelEngine, source: str, activation: dict[str, Any], expected: Any
) -> None:
    value = evaluate(engine, source, **activation)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    "source",
    [
        "m.z == 1",
        "1 / 0",
        "x.y",
        'path.within(x, "/")',
        "s.matches(p)",
        "shell.commands(x)",
        "secrets.scan(deep)",
        "int('x')",
    ],
)
def test_evaluation_errors_are_values(engine: CelEngine, source: str) -> None:
    deep: list[Any] = []
    for _ in range(100):
        deep = [deep]
    value = compiled(engine, source).evaluate({"m": {"y": 1}, "x": 1, "s": "a", "p": "(", "deep": deep})
    assert isinstance(value, CelEvalError), value
    assert value.message


def test_missing_activation_name_is_an_error_value(engine: CelEngine) -> None:
    assert isinstance(compiled(engine, "args.x == 1").evaluate({}), CelEvalError)


@pytest.mark.parametrize(
    ("source", "message", "offset"),
    [
        ("a + (b", "syntax error", 6),
        ("a +\n ) b", "syntax error", 5),
        ("path.normalise(p)", "path.normalise", None),
        ("sze(x)", "sze", None),
        ('x.matches("(")', "invalid regular expression", 10),
        ("[1].exists(a, [1].exists(b, [1].exists(c, [1].exists(d, [1].exists(e, true)))))", "nest", None),
    ],
)
def test_compile_issues_are_values_with_offsets(
    engine: CelEngine, source: str, message: str, offset: int | None
) -> None:
    issue = engine.compile(source)
    assert isinstance(issue, CelCompileIssue), issue
    assert message in issue.message.lower()
    assert issue.offset is not None
    assert 0 <= issue.offset <= len(source)
    if offset is not None:
        assert abs(issue.offset - offset) <= 1  # engines point at the token or just before it


def test_references_are_top_level_identifiers_only(engine: CelEngine) -> None:
    extra = " || path.within(vars.path, params.root) || [1].all(x, x > turn)"
    program = compiled(engine, RM_ROOT_RULE + extra)
    assert program.references == frozenset({"args", "vars", "params", "turn"})
    assert program.source.startswith("shell.commands")


def test_pathological_evaluation_stops_with_an_error(engine: CelEngine) -> None:
    big = list(range(300))
    value = compiled(engine, "xs.map(a, xs.map(b, xs.map(c, a + b + c))).size()").evaluate({"xs": big})
    assert isinstance(value, CelEvalError)
    assert "budget" in value.message or "limit" in value.message


def test_engine_names_and_selection() -> None:
    assert "python" in available_engines()
    assert make_engine("python").name == "python"
    assert available_engines()[0] == "closure"
    expected = "closure+native" if "native" in available_engines() else "closure"
    assert make_engine("auto").name == expected
    with pytest.raises(EngineUnavailableError, match="unknown CEL engine"):
        make_engine("fast")


def test_time_budget_stops_slow_helper_work() -> None:
    from dsh_policy.policy.cel.python_engine import PythonCelEngine

    engines: list[CelEngine] = [PythonCelEngine(time_budget=0.0)]
    if "native" in ENGINES:
        from dsh_policy.policy.cel.native_engine import NativeCelEngine

        engines.append(NativeCelEngine(time_budget=0.0))
    for engine in engines:
        value = compiled(engine, "shell.commands(c).size()").evaluate({"c": "ls"})
        assert isinstance(value, CelEvalError)
        assert "budget" in value.message


def test_helper_errors_keep_their_message_and_the_rule_spelling(engine: CelEngine) -> None:
    value = compiled(engine, "s.matches(p)").evaluate({"s": "a", "p": "("})
    assert isinstance(value, CelEvalError)
    assert "invalid regular expression" in value.message
    assert "matchRE" not in value.message


def test_short_circuit_keeps_cel_error_semantics(engine: CelEngine) -> None:
    assert evaluate(engine, "false && m.missing") is False
    assert evaluate(engine, "m.missing && false", m={}) is False
    assert evaluate(engine, "true || m.missing", m={}) is True
    assert isinstance(compiled(engine, "true && m.missing").evaluate({"m": {}}), CelEvalError)
    assert evaluate(engine, "[1, 2].exists(x, x == 2 || m.missing)", m={}) is True
    assert isinstance(compiled(engine, "[1, 2].all(x, m.missing)").evaluate({"m": {}}), CelEvalError)
    assert evaluate(engine, "[1, 2].all(x, x > 1 && m.missing)", m={}) is False


@pytest.mark.parametrize(
    ("source", "activation", "expected"),
    [
        ("x == 1.0", {"x": 1}, True),
        ("x < 1.5", {"x": 1}, True),
        ("!(m in ['read', 'list'])", {"m": 1}, True),
        ("[1, 'a'].exists(e, e == 'b')", {}, False),
        ("x in {'a': 1}", {"x": 2}, False),
        ("m == {'a': [1.0]}", {"m": {"a": [1]}}, True),
    ],
)
def test_mixed_type_comparisons_follow_the_spec(
    engine: CelEngine, source: str, activation: dict[str, Any], expected: bool
) -> None:
    # cel-python alone would error here; under on_error: ignore that could flip a decision.
    # (Literals of mixed types are rejected at load by the native type checker, so use variables.)
    assert compiled(engine, source).evaluate(activation) is expected


HELPER_EXPRESSIONS = [
    "shell.commands(s)",
    "url.host(s)",
    "path.normalize(s)",
    "path.within(s, r)",
    "glob(s, r)",
    "secrets.scan(s)",
    "s.matches(r)",
    "shell.commands(s).exists(c, c.exists(a, path.within(a, r)))",
]


@pytest.mark.skipif("native" not in ENGINES, reason="needs the native engine")
@settings(max_examples=60, deadline=None)
@given(
    s=st.text(alphabet=st.sampled_from(list("ab/.~$()'\"|;& -*?[]:@\\")), max_size=30),
    r=st.sampled_from(["/", "/workspace", "a*", "[ab]?", "*/**", "a+", "("]),
)
def test_engines_agree_on_every_helper(s: str, r: str) -> None:
    for source in HELPER_EXPRESSIONS:
        results = []
        for name in ("python", "native"):
            value = compiled(ENGINE_BY_NAME[name], source).evaluate({"s": s, "r": r})
            results.append("error" if isinstance(value, CelEvalError) else value)
        assert results[0] == results[1], source


@pytest.mark.skipif("native" not in ENGINES, reason="needs the native engine")
def test_native_accepts_syntax_only_its_grammar_has_and_still_finds_references() -> None:
    program = compiled(ENGINE_BY_NAME["native"], 'args[?"mode"].orValue("read") == "read"')
    assert program.references == frozenset({"args"})
    assert program.evaluate({"args": {}}) is True
    assert isinstance(ENGINE_BY_NAME["python"].compile('args[?"mode"].orValue("read")'), CelCompileIssue)


class SharedActivation(dict[str, Any]):
    """Shaped like the gateway's per-event activation: a dict with a ``converted`` cache."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.converted: dict[str, Any] = {}


EVENT_VALUES: dict[str, Any] = {
    "args": {"command": "sudo rm -rf /"},
    "turn": 3,
    "now": datetime.datetime(2026, 1, 1),
}
SECOND_RULE = "args.command.size() > turn && now > timestamp('2025-01-01T00:00:00Z')"


def test_python_engine_converts_an_event_activation_once_per_name() -> None:
    engine = ENGINE_BY_NAME["python"]
    activation = SharedActivation(EVENT_VALUES)
    assert compiled(engine, RM_ROOT_RULE).evaluate(activation) is True
    cache = activation.converted["python"]
    assert set(cache) == {"args"}
    converted_args = cache["args"]
    assert compiled(engine, SECOND_RULE).evaluate(activation) is True
    assert set(cache) == {"args", "turn", "now"}
    assert cache["args"] is converted_args


def test_shared_event_activations_give_the_same_results(engine: CelEngine) -> None:
    import dsh_policy.policy.cel.engine as engine_module

    make_shared = getattr(engine_module, "EventActivation", SharedActivation)
    activation = make_shared(EVENT_VALUES)
    for source in (RM_ROOT_RULE, SECOND_RULE, RM_ROOT_RULE):
        assert compiled(engine, source).evaluate(activation) is True
        assert compiled(engine, source).evaluate(dict(EVENT_VALUES)) is True
