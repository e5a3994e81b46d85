"""``check`` judges a case written in an agent client's tool vocabulary as that client's hook does.

A cases file copied from a Claude Code transcript says ``Read`` with ``file_path``; the rules see
``read_file`` with ``path``. Before this, such a case was decided as a tool no rule names (allow),
while the real hook denied the same call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_policy.policy import cli

ROOT = Path(__file__).resolve().parents[2]
BASELINE = str(ROOT / "rules" / "baseline.yaml")
CREDENTIALS = "~/.aws/credentials"


def _check(capsys: pytest.CaptureFixture[str], cases: Path, *extra: str) -> tuple[int, dict, str]:
    capsys.readouterr()
    code = cli.main(["check", BASELINE, "--cases", str(cases), "--format", "json", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _write(tmp_path: Path, document: dict) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(json.dumps(document))  # JSON is YAML
    return path


def _case(name: str, tool: str, args: dict, decision: str, **extra: str) -> dict:
    return {
        "name": name,
        "stage": "pre-execute",
        "tool": tool,
        "args": args,
        "expect": {"decision": decision},
        **extra,
    }


def test_a_client_tool_name_is_judged_as_its_hook_judges_it_and_the_report_says_so(tmp_path, capsys) -> None:
    cases = _write(tmp_path, {"cases": [_case("claude read", "Read", {"file_path": CREDENTIALS}, "deny")]})
    code, report, _ = _check(capsys, cases)
    assert code == 0, report
    assert report["cases"][0]["rules"] == ["baseline/deny-credential-file-reads"]
    assert report["notes"] == [
        "1 case(s) call 'Read', judged as claude-code sends it (read_file); "
        "set `client:` on the case or the file to choose another client"
    ]


def test_the_file_client_maps_every_case_and_a_canonical_call_is_left_alone(tmp_path, capsys) -> None:
    cases = _write(
        tmp_path,
        {
            "client": "gemini-cli",
            "cases": [
                _case("gemini read", "read_file", {"absolute_path": CREDENTIALS}, "deny"),
                _case("gemini shell", "run_shell_command", {"command": "ls -la"}, "allow"),
                _case("canonical read", "read_file", {"path": CREDENTIALS}, "deny", client="dsh"),
            ],
        },
    )
    code, report, _ = _check(capsys, cases)
    assert code == 0, report
    assert "notes" not in report  # every mapping was named, none guessed


def test_a_call_missing_its_clients_fields_is_an_error_at_its_line(tmp_path, capsys) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "client: claude-code\ncases:\n  - name: ok\n    stage: pre-execute\n    tool: Bash\n"
        "    args: {command: ls}\n  - name: no content\n    stage: pre-execute\n    tool: Write\n"
        "    args: {file_path: notes.txt}\n"
    )
    code, report, _ = _check(capsys, cases)
    assert code == 2
    (error,) = report["errors"]
    assert error["line"] == 7 and "no content" in error["message"] and "missing 'content'" in error["message"]


def test_the_command_line_client_overrides_the_files(tmp_path, capsys) -> None:
    # OpenCode's read takes filePath; under claude-code's vocabulary "read" is no tool of its own.
    cases = _write(
        tmp_path,
        {
            "client": "claude-code",
            "cases": [_case("opencode read", "read", {"filePath": CREDENTIALS}, "deny")],
        },
    )
    # claude-code's table leaves "read" alone: the decider still judges it by what its arguments
    # do (policy/decide/tool_views.py), and says so; --client opencode maps it as OpenCode's hook
    code, report, _ = _check(capsys, cases)
    assert code == 0 and 'tool "read" judged as read_file' in report["cases"][0]["message"]
    code, report, _ = _check(capsys, cases, "--client", "opencode")
    assert code == 0 and report["cases"][0]["message"] == "reading credential files is not allowed"


def test_explain_maps_a_clients_call_as_check_does(tmp_path, capsys) -> None:
    event = tmp_path / "event.yaml"
    event.write_text(
        json.dumps(
            {
                "stage": "pre-execute",
                "client": "claude-code",
                "tool": "Read",
                "args": {"file_path": CREDENTIALS},
            }
        )
    )
    capsys.readouterr()
    code = cli.main(["explain", "--pack", BASELINE, "--event", str(event), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["verdict"]["decision"] == "deny", report
    assert report["event"]["tool"] == "read_file"


def test_client_is_refused_where_no_tool_call_is_decided(tmp_path, capsys) -> None:
    cases = _write(
        tmp_path, {"cases": [{"name": "prompt", "stage": "pre-step", "prompt": "hi", "client": "codex"}]}
    )
    code, report, _ = _check(capsys, cases)
    assert code == 2 and "client is not used at stage pre-step" in report["errors"][0]["message"]
