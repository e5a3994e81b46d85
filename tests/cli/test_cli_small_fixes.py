"""The small things a new user trips over: each promise kept, checked here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from dsh_policy.audit.archive import move_log_aside
from dsh_policy.policy import cli

ROOT = Path(__file__).resolve().parents[2]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_redact_output_help_exits_0(capsys) -> None:
    code, out, _ = _cli(capsys, "redact-output", "--help")
    assert code == 0 and out.startswith("usage: dsh-policy redact-output")
    assert _cli(capsys, "redact-output", "--no-such-option")[0] == 2  # still refuses bad options


def test_a_case_missing_its_stage_is_reported_once(tmp_path: Path, capsys) -> None:
    cases = tmp_path / "c.cases.yaml"
    cases.write_text("cases:\n  - name: no stage\n    tool: shell\n    args: {command: ls}\n")
    code, out, err = _cli(capsys, "check", str(ROOT / "rules" / "baseline.yaml"), "--cases", str(cases))
    said = out + err
    assert code == 2
    assert said.count("missing required key 'stage'") == 1, said
    assert f"{cases}:2:5: cases[0]: missing required key 'stage'" in said


def test_the_sessions_readme_names_files_that_exist() -> None:
    text = (ROOT / "examples" / "sessions" / "README.md").read_text(encoding="utf-8")
    named = re.findall(r"`([\w./-]+/[\w.-]+\.(?:json|py|yaml))`", text)
    assert "policy/source/session.schema.json" in named
    assert [path for path in named if not (ROOT / path).exists()] == []


def test_diff_marks_weakening_as_policy_log_does(tmp_path: Path, capsys) -> None:
    strict = ROOT / "rules" / "databases.yaml"
    weaker = tmp_path / "databases.yaml"
    weaker.write_text(strict.read_text().replace("decision: deny", "decision: ask"))
    code, out, _ = _cli(capsys, "diff", str(strict), str(weaker))
    assert code == 1
    assert "WEAKENED  databases/deny-destructive-sql-in-production: effect changed" in out
    assert "protected paths" not in out  # where each side's file lives is not a weakening
    code, out, _ = _cli(capsys, "diff", str(strict), str(weaker), "--format", "json")
    document = json.loads(out)
    assert document["weakening"] is True and document["weakened"]
    code, out, _ = _cli(capsys, "diff", str(strict), str(strict), "--format", "json")
    assert code == 0 and json.loads(out)["weakening"] is False


def test_previous_logs_go_into_one_folder_beside_the_log(tmp_path: Path) -> None:
    log = tmp_path / "demo-audit.jsonl"
    for run in range(3):
        log.write_text(f"run {run}\n")
        moved = move_log_aside(log)
        assert not isinstance(moved, str) and moved is not None
        assert moved.path.parent == tmp_path / "demo-audit.jsonl.previous"
    beside = sorted(p.name for p in tmp_path.iterdir())
    assert beside == ["demo-audit.jsonl.lock", "demo-audit.jsonl.previous"]
    kept = sorted((tmp_path / "demo-audit.jsonl.previous").iterdir())
    assert [p.read_text() for p in kept] == ["run 0\n", "run 1\n", "run 2\n"]


def test_enforcing_commands_refuse_off_linux_and_readers_run_anywhere(monkeypatch) -> None:
    from dsh_policy.policy.platform_support import OVERRIDE_VARIABLE, platform_problem

    monkeypatch.delenv(OVERRIDE_VARIABLE, raising=False)
    assert platform_problem("hook", "linux") is None
    problem = platform_problem("hook", "darwin")
    assert problem is not None and "SO_PEERCRED" in problem and "Linux" in problem
    assert platform_problem("serve", "win32") is not None
    assert platform_problem("verify", "darwin") is None and platform_problem("check", "win32") is None
    monkeypatch.setenv(OVERRIDE_VARIABLE, "allow")
    assert platform_problem("hook", "darwin") is None
