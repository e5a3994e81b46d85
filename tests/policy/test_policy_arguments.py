"""Argument names are checked against the tools a rule is scoped to, and a pack that refuses
every event of a stage is warned about: typos never silently disable (or over-fire) a rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_policy.policy import cli
from dsh_policy.policy.hooks.protocol.vocabulary import CANONICAL_TOOLS
from dsh_policy.policy.tool_arguments import TOOL_ARGUMENTS, argument_problem

ROOT = Path(__file__).resolve().parents[2]

HEADER = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: p, version: "0.1.0", description: argument names}
spec:
  rules:
"""


def _check(capsys: pytest.CaptureFixture[str], tmp_path: Path, rules: str) -> tuple[int, str, str]:
    pack = tmp_path / "p.yaml"
    pack.write_text(HEADER + rules)
    capsys.readouterr()
    code = cli.main(["check", str(pack)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_misspelled_argument_in_a_shell_rule_is_an_error_at_its_line(tmp_path: Path, capsys) -> None:
    code, _, err = _check(
        capsys,
        tmp_path,
        """\
    - id: no-destroy
      stage: guard
      match: {tools: [shell]}
      when: 'has(args.comand) && args.comand.contains("destroy")'
      message: never
""",
    )
    assert code == 2
    where = f"{tmp_path / 'p.yaml'}:9:23"
    assert f"{where}: unknown argument 'args.comand' for shell (did you mean 'command'?)" in err
    assert err.count("unknown argument") == 1 and "1 error" in err  # one report, not one per use


def test_arguments_of_any_scoped_tool_are_fine_and_unknown_tools_are_not_checked(
    tmp_path: Path, capsys
) -> None:
    code, _, err = _check(
        capsys,
        tmp_path,
        """\
    - id: files
      stage: pre-execute
      match: {tools: [read_file, shell]}
      when: 'has(args.path) || args.command == "cat"'
      decision: deny
    - id: mcp
      stage: pre-execute
      match: {tools: ["mcp__mail__*", send_invoice]}
      when: 'args.recipient.endsWith("@example.com")'
      decision: ask
""",
    )
    assert code == 0 and "warning" not in err, err


def test_an_unscoped_rule_reading_an_unknown_argument_is_warned(tmp_path: Path, capsys) -> None:
    code, out, err = _check(
        capsys,
        tmp_path,
        """\
    - id: etc
      stage: pre-execute
      when: 'has(args.pathh) && args.pathh.startsWith("/etc")'
      decision: deny
""",
    )
    assert code == 0 and "1 warning(s)" in out
    assert "'args.pathh' is not an argument of any known tool (did you mean 'path'?)" in err


def test_a_pack_that_refuses_every_event_of_a_stage_is_warned(tmp_path: Path, capsys) -> None:
    code, out, err = _check(
        capsys,
        tmp_path,
        """\
    - id: everything
      stage: pre-execute
      decision: deny
      message: forgot the match
    - id: every-step
      stage: pre-step
      when: 'true'
      decision: reject
    - id: scoped
      stage: pre-execute
      match: {tools: [shell]}
      decision: deny
""",
    )
    assert code == 0, err
    assert "rule 'p/everything' denys" not in err  # the verb reads right
    assert "rule 'p/everything' denies every event at stage pre-execute" in err
    assert "rule 'p/every-step' rejects every event at stage pre-step" in err
    assert "p/scoped" not in err
    assert "2 warning(s)" in out
    pack = tmp_path / "p.yaml"
    pack.write_text(pack.read_text().replace("spec:\n", "spec:\n  defaults: {decision: deny}\n", 1))
    capsys.readouterr()
    cli.main(["check", str(pack)])
    assert "no rule allows: every tool call is denied" in capsys.readouterr().err


def test_the_table_covers_the_canonical_vocabulary() -> None:
    assert set(TOOL_ARGUMENTS) == set(CANONICAL_TOOLS)
    for tool, fields in CANONICAL_TOOLS.items():
        assert set(fields) <= TOOL_ARGUMENTS[tool], tool
        assert all(argument_problem([tool], name) is None for name in fields)


def test_every_shipped_pack_and_example_loads_without_argument_warnings(capsys) -> None:
    packs = sorted(p for p in (ROOT / "rules").glob("*.yaml") if not p.name.endswith(".cases.yaml"))
    capsys.readouterr()
    assert cli.main(["check", *map(str, packs)]) == 0
    _, err = capsys.readouterr()
    assert "warning" not in err, err
    for config in ("examples/gateway.yaml", "examples/hooks/gateway.yaml"):
        assert cli.main(["check", "--config", str(ROOT / config)]) == 0
        assert "warning" not in capsys.readouterr().err
