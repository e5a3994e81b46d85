"""``check --event-seconds``: each case is decided under the budget given, as the gateway decides
a call under its own; a rule still unevaluated when the budget runs out fails closed, so a slow CI
runner can give the cases the time they need instead of seeing false failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_policy.policy.cli import main as cli_main

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: budget}
spec:
  rules:
    - id: deny-rm
      stage: pre-execute
      match: {tools: [shell]}
      when: shell.commands(args.command).exists(c, c[0] == "rm")
      decision: deny
"""

CASES = """\
cases:
  - name: an ordinary listing stays allowed
    stage: pre-execute
    tool: shell
    args: {command: "ls -la"}
    expect: {decision: allow}
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    pack, cases = tmp_path / "budget.yaml", tmp_path / "budget.cases.yaml"
    pack.write_text(PACK, encoding="utf-8")
    cases.write_text(CASES, encoding="utf-8")
    return str(pack), str(cases)


def test_the_default_budget_decides_the_case(files: tuple[str, str]) -> None:
    pack, cases = files
    assert cli_main(["check", pack, "--cases", cases]) == 0


def test_a_budget_too_small_for_any_rule_fails_the_case_closed(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    pack, cases = files
    assert cli_main(["check", pack, "--cases", cases, "--event-seconds", "1e-9"]) == 1
    assert "expected allow, got deny" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan", "soon"])
def test_a_budget_that_is_not_a_positive_number_is_a_usage_error(
    files: tuple[str, str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pack, cases = files
    assert cli_main(["check", pack, "--cases", cases, "--event-seconds", value]) == 2
    assert "--event-seconds" in capsys.readouterr().err
