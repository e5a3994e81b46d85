"""One-time set-up (a reader imported on its first call, a pattern or kept expression compiled on
first use) is not counted against a stage's time budget: on a loaded machine it could take a
benign first call past the budget and fail it closed. Work an input causes still is counted."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.cmdline.deadline import (
    DeadlineExceededError,
    check_deadline,
    one_time_setup,
    remaining,
    stage_deadline,
)
from dsh_policy.policy.cel import functions
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure


def test_set_up_inside_a_stage_moves_its_deadline_and_other_work_does_not() -> None:
    with stage_deadline(0.5):
        with one_time_setup():
            time.sleep(0.7)
        check_deadline()  # 0.7 s of set-up on a 0.5 s budget: still in time
        left = remaining()
        assert left is not None and left > 0
    with stage_deadline(0.05):
        time.sleep(0.1)  # the input's own work
        with pytest.raises(DeadlineExceededError):
            check_deadline()


RULES = """\
    - id: first-reads-the-line
      stage: pre-execute
      match: {tools: [shell]}
      when: size(shell.commands(args.command)) > 5
      decision: deny
    - id: second-reads-the-effects
      stage: pre-execute
      match: {tools: [shell]}
      when: shell.effects(args.command).exists(e, e.kind == "delete-tree")
      decision: deny
"""


def test_a_slow_first_import_of_a_reader_does_not_fail_the_call_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both readers are imported on their first call, each 0.4 s on a 0.3 s budget here; the
    call is still decided by the rules, not failed closed by the budget."""
    pack = tmp_path / "setup.yaml"
    pack.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\n"
        f"metadata: {{name: setup, version: '1'}}\nspec:\n  rules:\n{RULES}"
    )
    real_import = importlib.import_module

    def slow_import(name: str, package: str | None = None) -> Any:
        time.sleep(0.4)
        return real_import(name, package)

    for helper in functions._READERS.values():
        monkeypatch.setattr(helper, "_function", None)
    monkeypatch.setattr(functions.importlib, "import_module", slow_import)
    gate = Policy.load([pack], event_seconds=0.3)
    assert not isinstance(gate, LoadFailure), str(gate)
    verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={"command": "ls build"}))
    assert verdict.decision == "allow", [(e.rule, e.outcome, e.error) for e in verdict.trace]
    assert not [entry for entry in verdict.trace if entry.error]
