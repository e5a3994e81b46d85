"""The python engine's load-time simplifications (collapsed precedence levels, precomputed
literals) change how much work an evaluation does, never its value."""

from __future__ import annotations

from typing import Any

import celpy
import lark
import pytest
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEvalError
from dsh_policy.policy.cel.python_engine import PythonCelEngine
from dsh_policy.policy.cel.python_tree import PASS_THROUGH, collapse_pass_through
from dsh_policy.policy.cel.python_values import from_celpy, to_celpy

ACTIVATION: dict[str, Any] = {
    "args": {"command": "sudo rm -rf / && echo done", "path": "/workspace/../etc/passwd", "n": 3},
    "xs": [1, 2, 3],
    "m": {"a": {"b": "c"}},
}

CASES: list[tuple[str, Any]] = [
    ("1 + 2 * 3 - -4", 11),
    ("\"a\\tb\" + \"\\x41\" + '''raw'''", "a\tbAraw"),
    ("b'\\x00\\xff'.size()", 2),
    ("true ? 1u : 2u", 1),
    ("!(args.n in xs) || args.n == 3", True),
    ("has(args.path) && !has(args.missing) && has(m.a.b)", True),
    ("xs.map(x, x * 2).filter(y, y > 2) == [4, 6]", True),
    ("xs.exists_one(x, x == 2) && xs.all(x, x > 0)", True),
    ("xs.map(x, xs.filter(y, y > x).size()) == [2, 1, 0]", True),
    ("xs.map(x, xs.map(y, x * y)) == [[1, 2, 3], [2, 4, 6], [3, 6, 9]]", True),
    ("xs.filter(x, [x, x + 1].exists(y, y == 3)) == [2, 3]", True),
    ("xs.all(x, x < 3 || x / 0 == 1)", CelEvalError),
    ("xs.exists(x, x / 0 == 1 || x == 3)", True),
    ("(((args.n)))", 3),
    ('m["a"].b + string(size(xs))', "c3"),
    ("[1, [2, 3], {'k': null}][2].k == null", True),
    ('shell.commands(args.command).exists(c, c[0] == "rm" && c.exists(a, a == "/"))', True),
    ('path.within(args.path, "/workspace")', False),
    ('args.command.matches("^sudo\\\\s")', True),
    ("1.5 < 2 && 2u >= 1 && 'b' > 'a'", True),
    ("1 / 0", CelEvalError),
    ("!1", CelEvalError),
    ('-"a"', CelEvalError),
    ("-(-9223372036854775807 - 1)", CelEvalError),
    ('1 < "a"', CelEvalError),
    ("size(1)", CelEvalError),
    ('int("x")', CelEvalError),
    ("size([1 / 0])", CelEvalError),
    ('size("abc") + int("7")', 10),
    ('"abc".startsWith("a") && "abc".size() == 3 && [1, 2].size() == 2', True),
    ('timestamp("2026-01-01T10:00:00Z").getHours() + duration("90s").getSeconds()', 100),
    ('"abc".startsWith(1)', CelEvalError),
    ("args.missing.size()", CelEvalError),
    ('"abc".startsWith(args.missing)', CelEvalError),
    ("[1, 1 / 0].size()", CelEvalError),
    ("args.missing == 1", CelEvalError),
    ("args.n.field", CelEvalError),
    ("m.a.b == 'c' && has(m.a) && !has(m.b)", True),
]


def _count(tree: lark.Tree) -> int:
    return sum(1 for _ in tree.iter_subtrees())


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_simplified_programs_evaluate_as_written(source: str, expected: Any) -> None:
    program = PythonCelEngine().compile(source)
    assert not isinstance(program, CelCompileIssue), program
    for _ in range(2):  # the second run reads the precomputed literals
        value = program.evaluate(ACTIVATION)
        if expected is CelEvalError:
            assert isinstance(value, CelEvalError)
        else:
            assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("source", "expected"), [case for case in CASES if case[1] is not CelEvalError])
def test_collapsing_agrees_with_cel_pythons_own_interpreter(source: str, expected: Any) -> None:
    """Where plain cel-python can evaluate the expression (no gateway helpers), it agrees."""
    if any(name in source for name in ("shell.", "path.", "matches")):
        pytest.skip("uses gateway helpers cel-python does not have")
    environment = celpy.Environment()
    plain = environment.program(environment.compile(source))
    activation = {name: to_celpy(value) for name, value in ACTIVATION.items()}
    assert from_celpy(plain.evaluate(activation)) == expected


def test_collapsing_removes_every_single_child_precedence_level() -> None:
    tree = celpy.Environment().compile('has(args.path) && path.within(args.path, "/p") ? 1 : 2')
    before = _count(tree)
    collapsed = collapse_pass_through(tree)
    assert _count(collapsed) * 3 <= before
    for node in collapsed.iter_subtrees():
        if node.data in PASS_THROUGH:
            assert len(node.children) != 1, node.pretty()


def test_an_object_construction_keeps_its_member_node() -> None:
    """``member_object`` tells a message from a plain value by its first child's node type."""
    tree = celpy.Environment().compile("google.protobuf.Int32Value{value: 1}")
    collapsed = collapse_pass_through(tree)
    objects = list(collapsed.find_data("member_object"))
    assert objects and all(isinstance(o.children[0], lark.Tree) for o in objects)
    assert all(o.children[0].data == "member" for o in objects)


def test_an_event_shares_one_cel_python_activation_and_loops_shadow_its_names() -> None:
    from dsh_policy.policy.cel.engine import EventActivation

    engine = PythonCelEngine()
    event = EventActivation({"args": {"command": "ls"}, "xs": [1, 2]})
    sources = [
        'args.command == "ls"',
        "xs.exists(args, args == 2) && args.command.size() == 2",  # loop variable shadows args
        "xs.map(x, [x].exists(x, x > 1)).exists(b, b)",  # nested loops reuse the name
        'has(args.command) && !has(args.other) && xs.all(args, args > 0) && args.command == "ls"',
    ]
    for _ in range(2):
        for source in sources:
            program = engine.compile(source)
            assert not isinstance(program, CelCompileIssue)
            assert program.evaluate(event) is True, source
            assert program.evaluate(dict(event)) is True, source
    shared = event.converted["python-activation"]
    size = engine.compile("xs.size()")
    assert not isinstance(size, CelCompileIssue)
    assert size.evaluate(event) == 2
    assert event.converted["python-activation"] is shared


def test_helper_results_are_cached_but_errors_are_not() -> None:
    engine = PythonCelEngine()
    commands = engine.compile("shell.commands(c)")
    within = engine.compile("path.within(p, r)")
    assert not isinstance(commands, CelCompileIssue) and not isinstance(within, CelCompileIssue)
    first = commands.evaluate({"c": "a; b"})
    assert first == [["a"], ["b"]]
    first.append(["mutated by the caller"])  # the caller gets its own copy
    assert commands.evaluate({"c": "a; b"}) == [["a"], ["b"]]
    assert isinstance(within.evaluate({"p": "/a", "r": 1}), CelEvalError)
    assert within.evaluate({"p": "/a/b", "r": "/a"}) is True
    assert isinstance(within.evaluate({"p": "/a", "r": 1}), CelEvalError)


def test_names_resolve_to_the_nearest_binding_and_missing_ones_are_errors() -> None:
    engine = PythonCelEngine()
    program = engine.compile("[[1, 2], [3]].exists(x, x.exists(x, x == 3)) && x == 7 && int(x) == 7")
    assert not isinstance(program, CelCompileIssue)
    assert program.evaluate({"x": 7}) is True
    assert isinstance(program.evaluate({}), CelEvalError)  # x is not bound outside the loops
    typed = engine.compile("type(x) == int && type(int) == type")
    assert not isinstance(typed, CelCompileIssue)
    assert typed.evaluate({"x": 7}) is True  # type names resolve as before
