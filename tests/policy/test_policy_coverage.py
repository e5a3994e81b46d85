"""``check --coverage`` (rules no case or example exercised, branch sides none took; text and
JSON) and ``--engine all`` telling real disagreements from engine-specific error wording."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cel import CelEvalError, make_engine
from dsh_policy.policy.cel.engine import CelCompileIssue
from dsh_policy.policy.cli import main

WritePack = Callable[..., Path]

PACK = """
rules:
  - id: rm
    stage: guard
    when: 'has(args.command) && args.command.matches("^rm ")'
  - id: never
    stage: pre-execute
    decision: deny
    when: 'tool.name == "nope"'
  - id: stop
    stage: pre-step
    decision: reject
    when: '["stop", "halt"].exists(w, prompt.contains(w))'
    examples: {reject: [stop], enter: [go on]}
"""

CASES = """
cases:
  - {name: rm, stage: pre-execute, tool: shell, args: {command: rm x}, expect: {decision: deny}}
  - {name: rm again, stage: guard, tool: shell, args: {command: rm y}, expect: {decision: deny}}
"""


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["check", *argv])
    return code, capsys.readouterr().out


@pytest.fixture
def files(write_pack: WritePack, tmp_path: Path) -> tuple[str, str]:
    cases = tmp_path / "t.cases.yaml"
    cases.write_text(CASES)
    return str(write_pack(PACK)), str(cases)


def test_coverage_in_text(capsys: pytest.CaptureFixture[str], files: tuple[str, str]) -> None:
    pack, cases = files
    code, out = check(capsys, pack, "--cases", cases, "--coverage", "--engine", "python")
    assert code == 0
    report = out[out.index("coverage:") :].splitlines()
    assert report == [
        "coverage: 2 of 3 rules matched by a case or inline example",
        f"  not exercised  {pack}:10  t/never  (evaluated 1 time(s), never matched)",
        "branches: 3 of 4 sides of matches/exists calls taken",
        f"  {pack}:9:48  t/rm  args.command.matches(...)  never false",
    ]


def test_coverage_in_json(capsys: pytest.CaptureFixture[str], files: tuple[str, str]) -> None:
    pack, cases = files
    code, out = check(capsys, pack, "--cases", cases, "--coverage", "--engine", "python", "--format", "json")
    coverage = json.loads(out)["coverage"]
    assert code == 0
    assert coverage["rules"] == {"total": 3, "exercised": 2}
    assert coverage["unexercised"] == [{"rule": "t/never", "file": pack, "line": 10, "evaluated": 1}]
    assert coverage["branches"] == {"total": 2, "sides": 4, "taken": 3}
    assert [
        (b["owner"], b["function"], b["true"], b["false"], b["missing"]) for b in coverage["partial_branches"]
    ] == [("t/rm", "matches", 2, 0, "false")]


def test_examples_alone_count_for_coverage(
    capsys: pytest.CaptureFixture[str], files: tuple[str, str]
) -> None:
    pack, _ = files
    code, out = check(capsys, pack, "--coverage", "--engine", "python", "--format", "json")
    coverage = json.loads(out)["coverage"]
    assert code == 0
    assert [rule["rule"] for rule in coverage["unexercised"]] == ["t/rm", "t/never"]
    # stop's exists took both sides (its two examples); rm's matches was never evaluated
    assert [(b["owner"], b["missing"]) for b in coverage["partial_branches"]] == [("t/rm", "both")]


# -- --engine all --------------------------------------------------------------------------------


class RewordingEngine:
    """The python engine with its own wording for every evaluation error, as another runtime has."""

    name = "reworded"

    def __init__(self) -> None:
        self._inner = make_engine("python")

    def compile(self, expression: str) -> Any:
        compiled = self._inner.compile(expression)
        if isinstance(compiled, CelCompileIssue):
            return compiled

        class Reworded:
            source = compiled.source
            references = compiled.references

            def evaluate(self, activation: Mapping[str, Any]) -> Any:
                value = compiled.evaluate(activation)
                return CelEvalError("Key not found in map") if isinstance(value, CelEvalError) else value

        return Reworded()


def test_error_wording_is_not_a_disagreement(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, write_pack: WritePack, tmp_path: Path
) -> None:
    import dsh_policy.policy.cli.check as check_module
    import dsh_policy.policy.compile as compile_module

    real = compile_module.make_engine
    monkeypatch.setattr(check_module, "available_engines", lambda: ["python", "reworded"])
    monkeypatch.setattr(
        compile_module, "make_engine", lambda name: RewordingEngine() if name == "reworded" else real(name)
    )
    pack = write_pack(
        "rules:\n  - {id: r, stage: pre-execute, decision: ask, when: 'args.path.startsWith(\"/etc\")'}"
    )
    cases = tmp_path / "c.yaml"
    cases.write_text(
        "cases:\n  - {name: no path, stage: pre-execute, tool: t, args: {}, expect: {decision: deny}}\n"
    )
    code, out = check(capsys, str(pack), "--cases", str(cases), "--engine", "all", "--format", "json")
    report = json.loads(out)
    assert code == 0, report["disagreements"]
    assert report["disagreements"] == []
    [note] = report["wording"]
    messages = {name: engine["message"] for name, engine in note["engines"].items()}
    assert "no such member in mapping: 'path'" in messages["python"]
    assert "Key not found in map" in messages["reworded"]
    code, text = check(capsys, str(pack), "--cases", str(cases), "--engine", "all")
    assert code == 0
    assert "NOTE  no path  engines agree; only the wording of an evaluation error differs" in text
    assert (
        "      reworded: policy rule t/r could not be evaluated (Key not found in map); failing closed"
        in text
    )
