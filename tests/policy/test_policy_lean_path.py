"""The lean decision path (policy/decide/fast_path.py over policy/plans.py) decides exactly as the full run:
same verdicts, fresh ones where an outcome is not a plain true/false, warn logs every time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import structlog
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure
from full_run import without_shortcuts

PACK = """
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: lean, version: 1.0.0}
spec:
  defaults: {mode: enforce, on_error: deny, decision: allow}
  params: {root: /workspace}
  variables:
    - {name: cmd, expression: 'has(args.command) ? args.command : ""'}
  rules:
    - {id: no-rm, stage: pre-execute, match: {tools: [shell]}, decision: deny,
       when: 'args.command.contains("rm")'}
    - {id: ask-sudo, stage: pre-execute, match: {tools: [shell]}, decision: ask,
       when: 'args.command.startsWith("sudo ")', message: sudo needs a person}
    - {id: outside, stage: pre-execute, match: {tools: [write]}, decision: deny,
       when: '!path.within(args.path, params.root)'}
    - {id: warned, stage: pre-execute, match: {tools: [shell]}, mode: warn, decision: deny,
       when: 'args.command.contains("curl")'}
    - {id: var-rule, stage: pre-execute, match: {tools: [vars]}, decision: deny,
       when: 'vars.cmd == "x"'}
    - {id: guard-root, stage: guard, match: {tools: [shell]},
       when: 'args.command.endsWith(" /")'}
"""

EVENTS: list[dict[str, Any]] = [
    {"tool": "shell", "args": {"command": "ls -la"}},
    {"tool": "shell", "args": {"command": "rm -rf build"}},
    {"tool": "shell", "args": {"command": "sudo ls"}},
    {"tool": "shell", "args": {"command": "sudo rm -rf /"}},
    {"tool": "shell", "args": {"command": "curl x | sh"}},
    {"tool": "shell", "args": {"command": 42}},
    {"tool": "shell", "args": {}},
    {"tool": "write", "args": {"path": "/workspace/a"}},
    {"tool": "write", "args": {"path": "/etc/passwd"}},
    {"tool": "vars", "args": {"command": "x"}},
    {"tool": "vars", "args": {}},
    {"tool": "other", "args": {"command": "rm"}},
    {"tool": "other", "args": None},
    {"tool": "shell", "args": {"command": "rm -rf é"}},
    {"tool": "shell", "args": {"command": ["rm"], "n": 1}},
    {"tool": "shell", "args": None},
]


@pytest.fixture
def policy(tmp_path: Path) -> Policy:
    path = tmp_path / "lean.yaml"
    path.write_text(PACK, encoding="utf-8")
    loaded = Policy.load([path], engine="closure")
    assert not isinstance(loaded, LoadFailure), loaded
    return loaded


def test_every_verdict_equals_the_full_runs(policy: Policy) -> None:
    fast = policy.current()
    full = without_shortcuts(fast)
    for _ in range(3):  # the first round builds the memoized verdicts, later ones use them
        for raw in EVENTS:
            event = ToolCallEvent(tool=raw["tool"], args=raw["args"])
            assert fast.pre_execute(event) == full.pre_execute(event), raw
            assert fast.guard(event) == full.guard(event), raw
            assert fast.check_tool_call(event) == full.check_tool_call(event), raw


def test_plain_outcomes_share_one_verdict_and_errors_get_their_own(policy: Policy) -> None:
    first = policy.pre_execute(ToolCallEvent(tool="shell", args={"command": "rm -rf a"}))
    second = policy.pre_execute(ToolCallEvent(tool="shell", args={"command": "rm -rf b"}))
    assert first.decision == "deny" and first is second
    broken = [policy.pre_execute(ToolCallEvent(tool="shell", args={"command": 42})) for _ in range(2)]
    assert broken[0].decision == "deny" and broken[0] is not broken[1]
    assert "could not be evaluated" in (broken[0].message or "")


def test_a_warn_rule_logs_on_every_match(policy: Policy) -> None:
    with structlog.testing.capture_logs() as logs:
        for _ in range(3):
            verdict = policy.pre_execute(ToolCallEvent(tool="shell", args={"command": "curl x | sh"}))
            assert verdict.decision == "allow" and verdict.shadow_rules == ("lean/warned",)
    assert sum(entry.get("rule") == "lean/warned" for entry in logs) == 3


def test_a_spent_time_budget_still_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "lean.yaml"
    path.write_text(PACK, encoding="utf-8")
    loaded = Policy.load([path], engine="closure", event_seconds=0.0)
    assert not isinstance(loaded, LoadFailure)
    for _ in range(2):
        verdict = loaded.pre_execute(ToolCallEvent(tool="shell", args={"command": "ls"}))
        assert verdict.decision == "deny" and "budget" in (verdict.message or "")
