"""A condition ``vars.X.exists(...)`` (alone, or in a conjunction whose only earlier terms are
``has()`` tests) over a pack variable that evaluated to an empty list is false without being
evaluated (policy/decide/stage_run.py, EventScope.empty_list). It is evaluated as before when the
variable failed (fails closed), when its value is not a list, when the stage's time budget is
spent, and in coverage runs (the comprehension's false side must be recorded). The python engine
answers a comprehension over an empty range without building its evaluator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.exists_over import exists_over
from dsh_policy.policy.cel.fast_parser import parse_collapsed
from dsh_policy.policy.cel.python_evaluator import BudgetedEvaluator
from dsh_policy.policy.cli import main
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.decide.scope import EventScope
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

ENGINES = ["auto", *available_engines()]

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: t, version: 1.0.0}
spec:
  defaults: {mode: enforce, on_error: deny, decision: allow}
  variables:
    - {name: items, expression: 'args.items'}
    - {name: words, expression: 'has(args.line) ? shell.commands(args.line).map(c, c[0]) : []'}
  rules:
    - {id: bad-item, stage: pre-execute, match: {tools: [t]}, decision: deny,
       when: 'vars.items.exists(i, i == "bad")'}
    - {id: bad-word, stage: pre-execute, match: {tools: [t]}, decision: ask,
       when: '!has(args.quiet) && (vars.words.exists(w, w == "rm"))'}
    - {id: all-good, stage: guard, match: {tools: [t]},
       when: 'vars.items.exists(i, i == "worse") && has(args.items)'}
"""

CASES = """\
cases:
  - {name: empty, stage: pre-execute, tool: t, args: {items: []}, expect: {decision: allow}}
"""

EVENTS: list[dict[str, Any]] = [
    {"items": []},
    {"items": [], "quiet": True},
    {"items": [], "line": ""},
    {"items": [], "line": "rm -rf build"},
    {"items": ["ok"], "line": "ls -la"},
    {"items": ["bad"]},
    {"items": ["worse"], "line": "rm x"},
    {"items": {}},  # a map: not a list, evaluated
    {"items": {"bad": 1}},
    {"items": ""},  # a string: not a list, evaluated (an error: fails closed)
    {"items": 3},
    {},  # vars.items fails: fails closed
]


def _load(tmp_path: Path, engine: str, **options: Any) -> Policy:
    path = tmp_path / "t.yaml"
    path.write_text(PACK, encoding="utf-8")
    loaded = Policy.load([path], engine=engine, **options)
    assert not isinstance(loaded, LoadFailure), str(loaded)
    return loaded


@pytest.fixture
def evaluated(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The sources of the conditions the stage runs evaluate (EventScope.evaluate)."""
    seen: list[str] = []
    real = EventScope.evaluate

    def spy(self: EventScope, expr: Any, pack_index: int) -> Any:
        seen.append(expr.source)
        return real(self, expr, pack_index)

    monkeypatch.setattr(EventScope, "evaluate", spy)
    yield seen


def _verdicts(policy: Policy, args: dict[str, Any]) -> tuple[Any, Any, Any]:
    event = ToolCallEvent(tool="t", args=args)
    return policy.pre_execute(event), policy.guard(event), policy.check_tool_call(event)


def test_the_shapes_recognised() -> None:
    def over(source: str) -> str | None:
        return exists_over(parse_collapsed(source))

    assert over('vars.a.exists(x, x == "y")') == "a"
    assert over('((vars.a.exists(x, x == "y")))') == "a"
    assert over('vars.a.exists(x, x == "y") && args.z == 1') == "a"
    assert over('!has(args.z) && has(args.w) && vars.a.exists(x, x == "y") && vars.b') == "a"
    assert over('args.z == 1 && vars.a.exists(x, x == "y")') is None  # could fail or run long
    assert over('vars.a.exists(x, x == "y") || args.z == 1') is None
    assert over('!vars.a.exists(x, x == "y")') is None
    assert over('vars.a.all(x, x == "y")') is None
    assert over('args.a.exists(x, x == "y")') is None
    assert over('vars.a.b.exists(x, x == "y")') is None
    assert over('size(vars.a) > 0 ? vars.a.exists(x, x == "y") : false') is None


@pytest.mark.parametrize("engine", ENGINES)
def test_compiled_rules_name_their_variable(tmp_path: Path, engine: str) -> None:
    rules = {rule.id: rule for rule in _load(tmp_path, engine).compiled.rules}
    assert rules["t/bad-item"].when.exists_over == "items"
    assert rules["t/bad-word"].when.exists_over == "words"
    assert rules["t/all-good"].when.exists_over == "items"


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_list_answers_false_without_evaluating(
    tmp_path: Path, engine: str, evaluated: list[str]
) -> None:
    policy = _load(tmp_path, engine)
    pre, guard, gate = _verdicts(policy, {"items": [], "quiet": True})
    assert (pre.decision, guard.denied, gate.decision) == ("allow", False, "allow")
    assert not evaluated  # every condition answered from its empty list (or has(args.quiet))
    assert [(entry.rule, entry.value, entry.outcome) for entry in pre.trace] == [
        ("t/bad-item", False, "no-match"),
        ("t/bad-word", False, "no-match"),
    ]
    assert [(entry.rule, entry.value) for entry in guard.trace] == [("t/all-good", False)]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_verdict_equals_the_evaluated_ones(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = _load(tmp_path, engine)
    short = [_verdicts(policy, dict(args)) for args in EVENTS for _ in range(2)]
    monkeypatch.setattr(EventScope, "empty_list", lambda self, name, pack_index: False)
    full = [_verdicts(_load(tmp_path, engine), dict(args)) for args in EVENTS for _ in range(2)]
    assert short == full


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failing_variable_still_fails_closed(tmp_path: Path, engine: str, evaluated: list[str]) -> None:
    pre, guard, _ = _verdicts(_load(tmp_path, engine), {})
    assert pre.decision == "deny" and pre.rules == ("t/bad-item",)
    assert "could not be evaluated" in (pre.message or "") and "vars.items" in (pre.message or "")
    assert not guard.denied  # evaluated: its error && has(args.items), false, is false in CEL
    assert 'vars.items.exists(i, i == "worse") && has(args.items)' in evaluated
    assert 'vars.items.exists(i, i == "bad")' in evaluated


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("value", [{}, {"bad": 1}, "", 3])
def test_a_value_that_is_not_a_list_is_evaluated(
    tmp_path: Path, engine: str, value: Any, evaluated: list[str]
) -> None:
    _verdicts(_load(tmp_path, engine), {"items": value, "quiet": True})
    assert 'vars.items.exists(i, i == "bad")' in evaluated


@pytest.mark.parametrize("engine", ENGINES)
def test_a_spent_budget_still_fails_closed(tmp_path: Path, engine: str, evaluated: list[str]) -> None:
    pre, guard, _ = _verdicts(_load(tmp_path, engine, event_seconds=0.0), {"items": []})
    assert pre.decision == "deny" and "budget" in (pre.message or "")
    assert guard.denied and "budget" in (guard.message or "")
    assert 'vars.items.exists(i, i == "bad")' in evaluated


def test_coverage_still_records_the_false_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "t.yaml"
    pack.write_text(PACK, encoding="utf-8")
    cases = tmp_path / "t.cases.yaml"
    cases.write_text(CASES, encoding="utf-8")
    main(["check", str(pack), "--cases", str(cases), "--coverage", "--format", "json"])
    coverage = json.loads(capsys.readouterr().out)["coverage"]
    sides = {(b["owner"], b["function"]): b["missing"] for b in coverage["partial_branches"]}
    # The case's items are empty: the comprehension gave false (only true is missing), as it
    # does when the decision's short-cut is off; "both" would mean it was never evaluated.
    assert sides[("t/bad-item", "exists")] == "true"
    assert sides[("t/all-good", "exists")] == "true"


@pytest.mark.parametrize(
    ("source", "empty_value", "value"),
    [
        ('x.exists(v, v == "a")', False, True),
        ('x.all(v, v == "a")', True, False),
        ('x.exists_one(v, v == "a")', False, True),
        ('x.map(v, v + "a")', [], ["aa", "ba"]),
        ('x.filter(v, v == "a")', [], ["a"]),
    ],
)
@pytest.mark.parametrize("empty", [[], {}])
def test_the_python_engine_answers_an_empty_range_without_an_evaluator(
    source: str, empty_value: Any, value: Any, empty: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = make_engine("python").compile(source)

    def refuse(self: BudgetedEvaluator, tree: Any) -> Any:
        raise AssertionError("built a comprehension evaluator for an empty range")

    monkeypatch.setattr(BudgetedEvaluator, "build_macro_eval", refuse)
    monkeypatch.setattr(BudgetedEvaluator, "build_ss_macro_eval", refuse)
    assert program.evaluate({"x": empty}) == empty_value
    monkeypatch.undo()
    assert program.evaluate({"x": ["a", "b"]}) == value
