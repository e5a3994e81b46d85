"""Pack variables that read nothing of the event (params, and other such variables: the packs'
pattern strings) are evaluated once per pack and reused by later events; those that read the
event, or a variable that does, are evaluated per event; a failing one is not kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: t, version: 1.0.0}
spec:
  defaults: {mode: enforce, on_error: deny, decision: allow}
  params: {bad: rm, limit: 2}
  variables:
    - {name: bad_re, expression: '"^" + params.bad + "$"'}
    - {name: anchored, expression: 'vars.bad_re + ""'}
    - {name: line, expression: 'has(args.command) ? args.command : ""'}
    - {name: line_re, expression: 'vars.bad_re + vars.line'}
    - {name: broken, expression: '[1, 2][params.limit] == 1'}
  rules:
    - {id: bad, stage: pre-execute, match: {tools: [shell]}, decision: deny,
       when: 'vars.line.matches(vars.anchored) || vars.line_re == "x"'}
    - {id: broken, stage: pre-execute, match: {tools: [other]}, decision: ask, when: 'vars.broken'}
"""

ENGINES = ["auto", *available_engines()]


def _load(tmp_path: Path, engine: str) -> Policy:
    path = tmp_path / "t.yaml"
    path.write_text(PACK, encoding="utf-8")
    loaded = Policy.load([path], engine=engine)
    assert not isinstance(loaded, LoadFailure), str(loaded)
    return loaded


@pytest.mark.parametrize("engine", ENGINES)
def test_only_event_free_variables_are_constant(tmp_path: Path, engine: str) -> None:
    (pack,) = _load(tmp_path, engine).compiled.packs
    assert pack.constant_variables == {"bad_re", "anchored", "broken"}
    assert pack.constant_values == {}


@pytest.mark.parametrize("engine", ENGINES)
def test_constants_are_kept_and_decide_as_before(tmp_path: Path, engine: str) -> None:
    policy = _load(tmp_path, engine)
    (pack,) = policy.compiled.packs
    for _ in range(2):
        assert policy.pre_execute(ToolCallEvent(tool="shell", args={"command": "rm"})).decision == "deny"
        assert policy.pre_execute(ToolCallEvent(tool="shell", args={"command": "ls"})).decision == "allow"
    assert set(pack.constant_values) == {"bad_re", "anchored"}
    assert pack.constant_values["anchored"] == "^rm$"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failing_constant_fails_closed_on_every_event(tmp_path: Path, engine: str) -> None:
    policy = _load(tmp_path, engine)
    (pack,) = policy.compiled.packs
    for _ in range(2):
        verdict = policy.pre_execute(ToolCallEvent(tool="other", args={}))
        assert verdict.decision == "deny" and "vars.broken" in (verdict.message or "")
    assert "broken" not in pack.constant_values
