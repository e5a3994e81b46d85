"""The load-time type checker: what it rejects, what it accepts, and that every rejection is a
real failure on every installed engine (an expression it calls ill-typed errors, or can never
hold, whatever the values of the declared types)."""

from __future__ import annotations

import datetime
from functools import cache
from typing import Any

import lark
import pytest
from dsh_policy.policy.cel import CelCompileIssue, CelEvalError, available_engines, make_engine
from dsh_policy.policy.cel.celpy_ast import parse_checked
from dsh_policy.policy.cel.checker import CheckEnvironment, CheckResult, VariableInfo, check
from dsh_policy.policy.cel.declarations import FUNCTIONS
from dsh_policy.policy.cel.functions import CEL_FUNCTIONS, CEL_SIGNATURES
from dsh_policy.policy.cel.python_engine import PythonCelEngine
from dsh_policy.policy.cel.types import (
    DOUBLE,
    DYN,
    INT,
    NEVER,
    STRING,
    TypeNotationError,
    join,
    list_of,
    map_of,
    parse_signature,
    parse_type,
    type_of_value,
    unify,
)
from dsh_policy.policy.compile import STAGE_NAME_TYPES, params_type
from dsh_policy.policy.stages import EVENT_NAMES

PARAMS = {
    "max_len": 100,
    "max_turns": 50,
    "hosts": ["a.com", "b.com"],
    "ratio": 0.5,
    "name": "x",
    "flag": True,
}
VARIABLES = {
    "count": VariableInfo(INT, frozenset({"args"})),
    "words": VariableInfo(list_of(STRING), frozenset({"args"})),
    "output": VariableInfo(STRING, frozenset({"result"})),
}
ENGINES = available_engines()


@cache
def _python() -> PythonCelEngine:
    """Made on first use, not while every worker collects (it builds cel-python's parser)."""
    return PythonCelEngine()


def environment(stage: str | None) -> CheckEnvironment:
    names = {**STAGE_NAME_TYPES, "params": params_type(PARAMS)}
    return CheckEnvironment(names, EVENT_NAMES, stage, VARIABLES.get)


def trees(source: str) -> list[lark.Tree]:
    """The tree as cel-python parses it and as the python engine keeps it (collapsed)."""
    raw = parse_checked(source)
    assert raw is not None, source
    program = _python().compile(source)
    assert not isinstance(program, CelCompileIssue), program
    return [raw, program.take_parse_tree()]


def checked(source: str, stage: str | None = "pre-execute") -> CheckResult:
    results = [check(tree, source, environment(stage)) for tree in trees(source)]
    assert results[0] == results[1], "the collapsed tree must check exactly like the parsed one"
    return results[0]


def errors(source: str, stage: str | None = "pre-execute") -> list[str]:
    return [issue.message for issue in checked(source, stage).errors]


# -- notation ------------------------------------------------------------------------------------


def test_type_notation_round_trips() -> None:
    for text in ("int", "list(string)", "map(string, list(map(string, dyn)))", "timestamp", "A"):
        assert str(parse_type(text)) == text
    with pytest.raises(TypeNotationError):
        parse_type("list(strin)")
    with pytest.raises(TypeNotationError):
        parse_type("map(string)")


def test_signatures_tell_methods_from_namespaced_functions() -> None:
    function = parse_signature("path.within", "path.within(string, string) -> bool")
    method = parse_signature("matches", "string.matches(string) -> bool")
    assert (function.member, [str(p) for p in function.params]) == (False, ["string", "string"])
    assert (method.member, [str(p) for p in method.params]) == (True, ["string", "string"])
    with pytest.raises(TypeNotationError):
        parse_signature("glob", "glob(string, string)")


def test_every_helper_is_declared_once_with_signatures_that_parse() -> None:
    assert set(CEL_SIGNATURES) == set(CEL_FUNCTIONS), "a helper without a signature is not type-checked"
    for name, texts in CEL_SIGNATURES.items():
        assert texts, name
        assert all(overload.name == name for overload in FUNCTIONS[name])


def test_values_are_typed_as_written() -> None:
    assert str(type_of_value({"a": [1, 2], "b": [3]})) == "map(string, list(int))"
    assert str(type_of_value([1, "a"])) == "list(dyn)"
    assert type_of_value([]) == list_of(NEVER)
    assert type_of_value(None) == DYN
    assert join(list_of(NEVER), list_of(list_of(STRING))) == list_of(list_of(STRING))
    assert unify(map_of(STRING, DYN), type_of_value({"k": 1}), {})
    assert not unify(list_of(STRING), type_of_value([1]), {})
    assert not unify(DOUBLE, INT, {})


# -- what it rejects -----------------------------------------------------------------------------

# (expression, stage, what the message says). Each is also run on every engine below.
REJECTED: list[tuple[str, str, str]] = [
    (
        'params.max_len + "x" == "100x"',
        "pre-execute",
        "no matching overload for '+' applied to (int, string)",
    ),
    (
        "params.hostz.exists(h, h == tool.name)",
        "pre-execute",
        "undeclared param 'hostz' (did you mean 'hosts'?)",
    ),
    ('params["hostz"].size() > 0', "pre-execute", "undeclared param 'hostz'"),
    ('result.text.contains("x")', "pre-execute", "'result' is not available at stage pre-execute"),
    ("result.is_error", "guard", "'result' is not available at stage guard"),
    ('messages.exists(m, m.text == "x")', "post-execute", "'messages' is not available"),
    ('prompt.contains("x")', "pre-execute", "'prompt' is not available"),
    ('args.command == "x"', "pre-step", "'args' is not available at stage pre-step"),
    ('params.max_turns.startsWith("5")', "pre-step", "no matching overload for int.startsWith(string)"),
    (
        'params.hosts.startsWith("a")',
        "pre-execute",
        "no matching overload for list(string).startsWith(string)",
    ),
    ("size(params.max_turns) > 1", "pre-execute", "no matching overload for size(int)"),
    ('params.max_turns == "50"', "pre-execute", "'==' compares int with string"),
    ("tool.name != 1", "pre-execute", "'!=' compares string with int"),
    ('turn > "5"', "pre-step", "no matching overload for '>' applied to (int, string)"),
    ("params.max_len in params.hosts", "pre-execute", "'in' looks for an int among string values"),
    ('"rm" in tool.name', "pre-execute", "'in' needs a list or a map on its right"),
    ("params.max_len.exists(x, x > 1)", "pre-execute", "exists() needs a list or a map"),
    ("params.hosts.all(h, h)", "pre-execute", "the predicate of all() must give a bool"),
    ("params.hosts[0] + 1 > 2", "pre-execute", "no matching overload for '+' applied to (string, int)"),
    ('params.hosts["a"] == "x"', "pre-execute", "a list index must be an int, not a string"),
    ('tool.nmae == "x"', "pre-execute", "tool has no field 'nmae' (did you mean 'name'?)"),
    ('result.error.msg == "x"', "post-execute", "result.error has no field 'msg'"),
    ("params.max_turns.value == 1", "pre-execute", "params.max_turns is an int, which has no field 'value'"),
    ("!params.max_len", "pre-execute", "no matching overload for '!' applied to (int)"),
    ("params.flag && params.name", "pre-execute", "'&&' needs bool operands; params.name is a string"),
    ("params.max_len ? true : false", "pre-execute", "the condition of '? :' must be a bool"),
    ("params.ratio * params.max_len > 1.0", "pre-execute", "numbers of different kinds"),
    ('url.host(params.max_len) == "a"', "pre-execute", "no matching overload for url.host(int)"),
    ("path.within(tool.name)", "pre-execute", "no matching overload for path.within(string)"),
    ('tool.name.glob("*")', "pre-execute", "glob() is a function, not a method"),
    ("tool.name.matches(5)", "pre-execute", "no matching overload for string.matches(int)"),
    ("args.command.contains(params.max_len)", "pre-execute", "no matching overload for dyn.contains(int)"),
    ('string(params.hosts) == "x"', "pre-execute", "no matching overload for string(list(string))"),
    ('duration(params.max_len) > duration("1s")', "pre-execute", "no matching overload for duration(int)"),
    ("now > 5", "pre-execute", "no matching overload for '>' applied to (timestamp, int)"),
    ('vars.count.startsWith("1")', "pre-execute", "no matching overload for int.startsWith(string)"),
    ("vars.words.exists(w, w > 1)", "pre-execute", "no matching overload for '>' applied to (string, int)"),
    (
        'vars.output == "x"',
        "pre-execute",
        "vars.output reads 'result', which is not available at stage pre-execute",
    ),
    ("has(params.hostz)", "pre-execute", "undeclared param 'hostz'"),
    ("has(tool.name.x)", "pre-execute", "has() tests a field of a map; tool.name is a string"),
    ('path.x == "a"', "pre-execute", "'path' is a namespace of helper functions"),
    ('agrs.command == "x"', "pre-execute", "unknown name 'agrs' (did you mean 'args'?)"),
    ('messages.exists(m, m.txt == "x")', "pre-step", "messages has no field 'txt' (did you mean 'text'?)"),
]


@pytest.mark.parametrize(("source", "stage", "message"), REJECTED, ids=[row[0] for row in REJECTED])
def test_rejected_with_a_clear_message(source: str, stage: str, message: str) -> None:
    found = errors(source, stage)
    assert found, f"{source!r} should not type-check"
    assert any(message in text for text in found), found


ACTIVATION: dict[str, Any] = {
    "params": PARAMS,
    "args": {"command": "ls -la", "mode": 1},
    "tool": {"name": "shell", "call_id": "c", "root_call_id": "c", "nested": False, "original_name": "shell"},
    "turn": 3,
    "step": 1,
    "now": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
    "vars": {"count": 3, "words": ["a", "b"]},
    "session": {"id": "s"},
    "agent": {"id": "a"},
}


# Where cel-python goes beyond the spec (and the native engine): it gives these a value. The
# checker follows the spec, so a rule never depends on one engine's leniency.
PYTHON_LENIENT = {
    "params.flag && params.name",  # && returns its second operand
    "params.ratio * params.max_len > 1.0",  # double * int
    'tool.name.glob("*")',  # any function as a method
    'string(params.hosts) == "x"',  # a Python repr
    'duration(params.max_len) > duration("1s")',  # seconds
    "has(tool.name.x)",  # false rather than an error
}
ALWAYS = {"'==' compares": False, "'in' looks for": False, "'!=' compares": True, "undeclared param": False}


def _run(engine_name: str, source: str, stage: str) -> Any:
    program = make_engine(engine_name).compile(source)  # type: ignore[arg-type]
    if isinstance(program, CelCompileIssue):
        return program
    provided = {name for name, stages in EVENT_NAMES.items() if stage in stages}
    return program.evaluate({name: value for name, value in ACTIVATION.items() if name in provided})


@pytest.mark.parametrize("engine_name", ENGINES)
@pytest.mark.parametrize(("source", "stage", "message"), REJECTED, ids=[row[0] for row in REJECTED])
def test_every_rejection_fails_at_run_time_too(
    engine_name: str, source: str, stage: str, message: str
) -> None:
    """Soundness: what the checker refuses fails on the engine (at compile or evaluation) or is
    constant (``==`` across types is always false), with values of the declared types; only the
    names the stage provides are bound, as the gateway binds them."""
    value = _run(engine_name, source, stage)
    constant = next((outcome for prefix, outcome in ALWAYS.items() if prefix in message), None)
    if isinstance(value, CelCompileIssue | CelEvalError):
        return
    if constant is not None:
        assert value is constant, f"{source!r} gave {value!r} on {engine_name}"
    else:
        assert engine_name == "python" and source in PYTHON_LENIENT, (
            f"{source!r} gave {value!r} on {engine_name}"
        )


def test_every_issue_of_an_expression_is_reported_in_order() -> None:
    source = 'params.max_len + "x" == "1" && tool.nmae == 1 && params.hostz.size() > 0'
    result = checked(source)
    assert [issue.offset for issue in result.issues] == sorted(issue.offset for issue in result.issues)
    assert [source[issue.offset :].split("(")[0][:10] for issue in result.issues] == [
        '+ "x" == "',
        "nmae == 1 ",
        "hostz.size",
    ]


def test_a_wrong_operand_is_reported_once() -> None:
    assert (
        errors("(params.max_len + 'x').size() > 1 && (params.max_len + 'x') == 'y'")
        == ["no matching overload for '+' applied to (int, string) (convert with string(...) first)"] * 2
    )


# -- what it accepts -----------------------------------------------------------------------------

ACCEPTED: list[tuple[str, str | None]] = [
    ("params.max_len + 1 > size(tool.name)", "pre-execute"),
    ("params.ratio < params.max_len && params.max_len == 100.0 && 1u < 2", "pre-execute"),  # numbers compare
    ("(has(args.path) ? [args.path] : []) + (has(args.paths) ? args.paths : [])", "pre-execute"),
    ("[1] + ['a'] == [1, 'a']", "pre-execute"),  # both engines concatenate any two lists
    ("params.hosts.exists(h, glob(url.host(args.url), h))", "pre-execute"),
    ("shell.commands(args.command).exists(c, c[0] == 'rm' && c.exists(a, a.matches('^-r')))", "guard"),
    ("shell.redirects(args.command).exists(r, r.op == '>' && r.target.startsWith('/etc'))", "guard"),
    ("args.mode == 1 || args.mode == 2 || args.x.y.z[3]['k'] > 1.5", "pre-execute"),
    ("'a' + args.command + string(turn) + string(params.ratio)", "pre-execute"),
    ("now - timestamp('2024-01-01T00:00:00Z') > duration('1h') && now.getHours('UTC') < 12", "pre-step"),
    ("{'a': 1, 'b': 'x'}.exists(k, k == 'a') && {1: 2}[1] == 2", "pre-execute"),
    ("tool.exists(k, k == 'name') && 'name' in tool && size(tool) == 5", "pre-execute"),
    (
        "result.text.matches(r'x') || matches(result.text, 'y') || size(secrets.scan(result.value)) > 0",
        "post-execute",
    ),
    ("secrets.scan(result) == [] && result.error.code != ''", "post-execute"),
    ("messages.exists(m, m.source.kind != 'user' && m.text.contains('x'))", "pre-step"),
    ("params.hosts.map(h, size(h)).exists(n, n > 3) && params.hosts.filter(h, h != '').size() == 2", None),
    ("type(args.x) == string && dyn(params.max_len) == 'x'", "pre-execute"),
    ("type(now) == google.protobuf.Timestamp && type(args) == map", "pre-execute"),
    ("int(args.n) + 1 > 0 && double(params.max_len) / 2.0 > 1.0 && uint(1) == 1u", "pre-execute"),
    ("args == null || args.x == null", "pre-execute"),
    ("vars.count + 1 > 2 && vars.words.exists(w, w.startsWith('a')) && vars.unknown.x", "pre-execute"),
    ("vars.output.contains('x')", "post-execute"),
    ("vars.output.contains('x')", None),  # a variable may read any stage's names
    ("[].exists(x, x > 1) && {}.size() == 0", "pre-execute"),
    ("args.paths.exists(path, path.startsWith('/'))", "pre-execute"),  # a loop variable shadows a namespace
]


@pytest.mark.parametrize(("source", "stage"), ACCEPTED, ids=[row[0] for row in ACCEPTED])
def test_accepted(source: str, stage: str | None) -> None:
    assert errors(source, stage) == []


def test_types_of_expressions() -> None:
    assert str(checked("shell.commands(args.command)").type) == "list(list(string))"
    assert str(checked("args.x == '' ? [] : shell.commands(args.x)").type) == "list(list(string))"
    assert str(checked("params.hosts.map(h, size(h))").type) == "list(int)"
    assert str(checked("params.hosts + ['c']").type) == "list(string)"
    assert str(checked("{'a': params.max_len}").type) == "map(string, int)"
    assert checked("args.x").type == DYN


def test_branches_are_listed_for_coverage() -> None:
    source = "args.xs.exists(x, x.matches('a')) && matches(tool.name, 'b') && args.ys.all(y, y)"
    found = [
        (branch.function, source[branch.offset : branch.offset + 7]) for branch in checked(source).branches
    ]
    assert found == [
        ("exists", "exists("),
        ("matches", "matches"),
        ("matches", "matches"),
        ("all", "all(y, "),
    ]


# -- warnings ------------------------------------------------------------------------------------


def test_a_dynamic_value_compared_with_two_kinds_is_a_warning() -> None:
    result = checked('args.mode == 1 || args.mode == "1" || args.x.startsWith("a") && args.x > 2')
    assert result.errors == ()
    assert [issue.message.split(" here")[0] for issue in result.issues] == [
        "args.mode is used as a string",
        "args.x is used as a number",
    ]
    assert all(issue.warning for issue in result.issues)


def test_one_kind_per_value_is_no_warning() -> None:
    assert (
        checked('args.mode == 1 || args.mode == 2.5 || args.kind == "a" || args.kind in ["b"]').issues == ()
    )


# -- against cel-spec's conformance suite --------------------------------------------------------


def test_no_conformance_case_an_engine_evaluates_is_rejected() -> None:
    """cel-spec's own cases (tests/cel/conformance, not ours): none that an engine evaluates to a
    value fails the checker, and those it rejects are all cases cel-spec expects to fail (or
    marks ``disable_check``: a checker must refuse them, a runtime gives a value). Names are the
    case's bindings (as dyn); CEL's extension namespaces (math.*, optional.*, ...) are not names
    here, as in a pack."""
    import json
    from pathlib import Path

    from cel_conformance import expectation_path, load_cases  # tools/, on pytest's pythonpath

    directory = Path(__file__).parent / "conformance"

    unchecked = {
        f"{path.stem}:{number}"
        for path in directory.glob("*.jsonl")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip() and json.loads(line).get("disable_check")
    }
    passing: set[str] = set()
    for engine_name in ("python", "native"):
        passing |= set(json.loads(expectation_path(directory, engine_name).read_text(encoding="utf-8")))
    checked_values = rejected_errors = 0
    for case in load_cases(directory):
        tree = parse_checked(case.expr) if case.key in passing else None
        if tree is None:
            continue
        env = CheckEnvironment(
            {name: DYN for name in case.bindings}, {name: frozenset({"any"}) for name in case.bindings}, None
        )
        found = [
            e.message for e in check(tree, case.expr, env).errors if not e.message.startswith("unknown name")
        ]
        if "value" in case.expect and case.key not in unchecked:
            checked_values += 1
            assert not found, f"{case.key} {case.expr!r}: {found}"
        elif found:
            rejected_errors += 1
    assert checked_values > 1000 and rejected_errors > 30
