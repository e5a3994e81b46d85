"""``dsh-policy check`` and ``explain`` end to end through the CLI dispatcher, and the promise that
cases are decided exactly as the gateway decides: same events, same verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_policy.policy.cases import Case, load_cases, run_case
from dsh_policy.policy.cli import main
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import StepEvent, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure

PACKS = Path(__file__).parent / "packs"

BASELINE = str(PACKS / "baseline.yaml")
CASES = str(PACKS / "baseline.cases.yaml")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_valid_pack_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", BASELINE, "--engine", "python")
    assert code == 0
    assert out.startswith("ok: 1 pack(s), 10 rule(s); engine python; policy sha256:")


def test_all_cases_pass_exits_0_with_one_line_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", BASELINE, "--cases", CASES, "--engine", "python")
    assert code == 0, out
    lines = out.splitlines()
    assert "PASS  blocks rm -rf /  [pre-execute] deny by baseline/never-rm-root" in lines
    assert lines[-1] == "11 passed, 0 failed"


def test_a_failing_case_exits_1_and_says_what_differed(capsys: pytest.CaptureFixture[str]) -> None:
    failing = str(PACKS / "failing.cases.yaml")
    code, out, _ = run(capsys, "check", BASELINE, "--cases", failing, "--engine", "python")
    assert code == 1
    assert "FAIL  expects the wrong decision  [pre-execute] allow" in out
    assert f"{failing}:6: decision: expected deny, got allow" in out
    assert out.splitlines()[-1] == "1 passed, 1 failed"


def test_json_output_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    failing = str(PACKS / "failing.cases.yaml")
    code, out, _ = run(
        capsys, "check", BASELINE, "--cases", failing, "--format", "json", "--engine", "python"
    )
    report = json.loads(out)
    assert code == 1
    assert {"ok", "packs", "cases", "summary", "errors"} <= set(report)
    assert report["ok"] is False and report["errors"] == []
    assert report["summary"] == {"passed": 1, "failed": 1}
    (pack,) = report["packs"]
    assert pack["path"] == BASELINE and pack["name"] == "baseline" and pack["digest"].startswith("sha256:")
    passed, failed = report["cases"]
    assert passed == {
        "name": "passes",
        "stage": "pre-step",
        "decision": "enter",
        "rules": [],
        "message": None,
        "passed": True,
    }
    assert failed["passed"] is False and failed["decision"] == "allow"
    assert failed["expected"] == {"decision": "deny", "rules": ["baseline/never-rm-root"]}


def test_an_invalid_pack_exits_2_with_every_error(capsys: pytest.CaptureFixture[str]) -> None:
    invalid = str(PACKS / "invalid.yaml")
    code, _, err = run(capsys, "check", invalid, "--engine", "python")
    assert code == 2
    assert err.splitlines() == [
        f"{invalid}:9:7: spec.rules[0]: unknown key 'wehn' (did you mean 'when'?)",
        f"{invalid}:13:26: CEL: syntax error at '=='",
        " |       when: args.command ==",
        " |                          ^",
        "2 errors",
    ]


def test_invalid_pack_in_json_lists_errors_with_positions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(PACKS / "invalid.yaml"), "--format", "json", "--engine", "python")
    report = json.loads(out)
    assert code == 2 and report["ok"] is False and report["packs"] == []
    assert [(e["line"], e["col"]) for e in report["errors"]] == [(9, 7), (13, 26)]


def test_an_invalid_cases_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    invalid = str(PACKS / "invalid.cases.yaml")
    code, _, err = run(capsys, "check", BASELINE, "--cases", invalid, "--engine", "python")
    assert code == 2
    assert err.splitlines() == [
        f"{invalid}:5:24: case 'wrong decision word': decision 'block' does not fit stage pre-execute "
        "(allowed: allow | ask | deny)",
        f"{invalid}:8:5: cases[1]: unknown key 'promt' (did you mean 'prompt'?)",
        "2 errors",
    ]


def test_usage_errors_and_missing_packs_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "check", BASELINE, "--engine", "fast")[0] == 2
    code, _, err = run(capsys, "check")
    assert code == 2 and "no rule packs given" in err
    code, _, err = run(capsys, "check", str(tmp_path / "none.yaml"))
    assert code == 2 and "none.yaml: no such file" in err


def test_param_flags_change_the_outcome(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cases = tmp_path / "c.yaml"
    cases.write_text(
        "cases:\n  - {name: t, stage: pre-step, turn: 20, prompt: x, expect: {decision: reject}}\n"
    )
    assert run(capsys, "check", BASELINE, "--cases", str(cases), "--engine", "python")[0] == 1
    args = ("check", BASELINE, "--cases", str(cases), "--param", "max_turns=10", "--engine", "python")
    assert run(capsys, *args)[0] == 0
    code, _, err = run(capsys, "check", BASELINE, "--param", "max_turn=10")
    assert code == 2 and "param 'max_turn' is not declared by any loaded pack" in err


def test_engine_all_runs_every_installed_engine(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", BASELINE, "--cases", CASES, "--engine", "all", "--format", "json")
    report = json.loads(out)
    assert code == 0, report.get("disagreements")
    assert report["summary"] == {"passed": 11, "failed": 0}


def test_config_file_stands_in_for_flags(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n"
        f"  packs: [{Path(BASELINE).resolve()}]\n  params: {{max_turns: 10}}\n  engine: python\n"
        "  audit: {path: audit.jsonl, fsync: always, fail_closed: true}\n"
    )
    cases = tmp_path / "c.yaml"
    cases.write_text(
        "cases:\n  - {name: t, stage: pre-step, turn: 20, prompt: x, expect: {decision: reject}}\n"
    )
    assert run(capsys, "check", "--config", str(config), "--cases", str(cases))[0] == 0
    config.write_text(config.read_text().replace("max_turns", "max_turnz"))
    code, _, err = run(capsys, "check", "--config", str(config))
    assert code == 2
    assert f"{config}:5:12: param 'max_turnz' is not declared by any loaded pack" in err


def test_explain_lists_every_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    event = tmp_path / "event.yaml"
    event.write_text("stage: pre-execute\ntool: read_file\nargs: {path: /etc/passwd}\n")
    code, out, _ = run(
        capsys, "explain", BASELINE, "--event", str(event), "--format", "json", "--engine", "python"
    )
    report = json.loads(out)
    assert code == 0
    assert report["verdict"]["decision"] == "deny"
    assert report["verdict"]["rules"] == ["baseline/outside-workspace"]
    rows = {row["rule"]: row for row in report["trace"]}
    assert len(rows) == 10
    assert rows["baseline/outside-workspace"]["matched"] is True
    assert rows["baseline/outside-workspace"]["value"] is True
    assert rows["baseline/never-rm-root"]["evaluated"] is False
    assert "does not match" in rows["baseline/never-rm-root"]["skipped"]
    assert "not consulted" in rows["baseline/turn-budget"]["skipped"]
    code, out, _ = run(capsys, "explain", BASELINE, "--event", str(event), "--engine", "python")
    assert code == 0 and "baseline/outside-workspace" in out and "MATCH" in out


def test_explain_shows_evaluation_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    event = tmp_path / "event.yaml"
    event.write_text("stage: pre-execute\ntool: web_fetch\nargs: {}\n")
    code, out, _ = run(
        capsys, "explain", BASELINE, "--event", str(event), "--format", "json", "--engine", "python"
    )
    rows = {row["rule"]: row for row in json.loads(out)["trace"]}
    assert code == 0
    assert (
        rows["baseline/ask-network"]["error"] and rows["baseline/ask-network"]["outcome"] == "failed-closed"
    )


def test_explain_invalid_event_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    event = tmp_path / "event.yaml"
    event.write_text("stage: pre-execute\ntol: x\n")
    code, _, err = run(capsys, "explain", BASELINE, "--event", str(event))
    assert code == 2
    assert f"{event}:2:1: document: unknown key 'tol' (did you mean 'tool'?)" in err


def test_cases_and_the_plugin_api_give_identical_verdicts() -> None:
    """The plugins call Policy.pre_execute/guard/gate_step/review_tool_result; cases go through
    run_case. Both must agree on every case of the test suite."""
    policy = Policy.load([BASELINE], engine="python")
    assert not isinstance(policy, LoadFailure)
    cases = [case for case in load_cases(CASES) if isinstance(case, Case)]
    assert len(cases) == 11
    for case in cases:
        outcome = run_case(policy.current(), case)
        event = case.event
        if isinstance(event, StepEvent):
            step = policy.gate_step(event)
            assert (step.decision, step.rules, step.message, step.contexts) == (
                outcome.decision,
                outcome.rules,
                outcome.message,
                outcome.contexts,
            )
        elif isinstance(event, ToolResultEvent):
            review = policy.review_tool_result(event)
            text = review.message if review.decision == "block" else (review.redacted_text or event.text)
            plugin = (review.decision, review.rules, review.message, text, review.contexts)
            assert plugin == (
                outcome.decision,
                outcome.rules,
                outcome.message,
                outcome.text,
                outcome.contexts,
            )
        else:
            assert isinstance(event, ToolCallEvent)
            pre = policy.pre_execute(event)
            guard = policy.guard(event)
            # the harness runs guards after an allow (or an approved ask); a guard denial wins
            decision = "deny" if guard.denied else pre.decision
            rules = guard.rules if guard.denied else pre.rules
            message = guard.message if guard.denied else pre.message
            if case.stage == "guard":
                decision = "deny" if guard.denied else "allow"
                rules, message = guard.rules, guard.message
            assert (decision, rules, message) == (outcome.decision, outcome.rules, outcome.message)
        assert outcome.passed, outcome.failures


class NegatingEngine:
    """A deliberately wrong engine: every bool comes back negated."""

    name = "negating"

    def __init__(self) -> None:
        from dsh_policy.policy.cel import make_engine

        self.inner = make_engine("python")

    def compile(self, expression: str) -> object:
        compiled = self.inner.compile(expression)
        if not hasattr(compiled, "evaluate"):
            return compiled

        class Negated:
            source = compiled.source
            references = compiled.references
            reads = compiled.reads

            def evaluate(self, activation: object) -> object:
                value = compiled.evaluate(activation)
                return (not value) if isinstance(value, bool) else value

        return Negated()


def test_engine_all_reports_disagreements_and_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dsh_policy.policy.cli.check as check
    import dsh_policy.policy.compile as compile_module

    real = compile_module.make_engine
    monkeypatch.setattr(check, "available_engines", lambda: ["python", "negating"])
    monkeypatch.setattr(
        compile_module, "make_engine", lambda name: NegatingEngine() if name == "negating" else real(name)
    )
    code, out, _ = run(capsys, "check", BASELINE, "--cases", CASES, "--engine", "all", "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert report["engines"] == ["python", "negating"]
    disagreement = next(d for d in report["disagreements"] if d["case"] == "turn budget")
    assert disagreement["engines"]["python"]["rules"] == ["baseline/turn-budget"]
    assert "baseline/turn-budget" not in disagreement["engines"]["negating"]["rules"]
