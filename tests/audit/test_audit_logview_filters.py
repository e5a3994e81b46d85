"""``dsh-policy log`` refuses filter values that could only be typos, and shows what the harness did.

A mistyped ``--decision`` or ``--rule`` used to list nothing and exit 0, which reads like "there
were none"; a Codex ``ask`` showed as ASK although Codex refused the call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.audit.logview import DECISION_VALUES, log_main
from dsh_policy.audit.writer import AuditWriter


def _hook_event(harness: str, action: str, *, client: str | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"action": action, "reason": "needs approval", "rules": ["p/ask-push"]}
    if client is not None:
        answer["client"] = client
    return {
        "session": "sess-hook",
        "agent": "main",
        "turn": 0,
        "step": 0,
        "hook": {"harness": harness, "event": "PreToolUse", "turn_id": None},
        "answer": answer,
        "call": {"name": "shell", "args": {"command": "git push"}},
    }


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off") as writer:
        writer.append(
            "policy_loaded", {"packs": [{"name": "p"}], "rules": {"p/no-cat": "f1", "p/ask-push": "f2"}}
        )
        writer.append("hook_event", _hook_event("codex", "ask", client="deny"))
        writer.append("hook_event", _hook_event("codex", "ask"))  # written before answer.client existed
        writer.append("hook_event", _hook_event("claude-code", "ask"))
    return path


def _run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = log_main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_an_unknown_decision_is_refused_with_the_valid_ones(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(str(log), "--decision", "denied", capsys=capsys)
    assert code == 2 and out == ""
    assert "--decision denied: not a decision" in err and "deny" in err.split("valid:")[1]
    assert {"allow", "deny", "ask", "block", "redact", "reject", "error", "pass"} <= DECISION_VALUES
    assert _run(str(log), "--decision", "DENY", capsys=capsys)[0] == 0


def test_a_rule_no_pack_of_the_log_defines_is_refused(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(str(log), "--rule", "p/no-kat", capsys=capsys)
    assert code == 2 and "--rule p/no-kat: no rule of this log matches" in err
    assert "p/no-cat" in err and "p/ask-push" in err
    code, out, _ = _run(str(log), "--rule", "p/ask-*", capsys=capsys)
    assert code == 0 and out.count("p/ask-push") == 3
    # Defined by a pack but never deciding anything: a real answer of "none", not a typo.
    code, out, _ = _run(str(log), "--rule", "no-cat", capsys=capsys)
    assert code == 0 and out.startswith("0 of")


def test_a_codex_ask_shows_as_the_refusal_codex_made(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(str(log), "--format", "json", capsys=capsys)
    entries = [json.loads(line) for line in out.splitlines()]
    hooks = [e for e in entries if e["kind"] == "hook_event"]
    assert [(e["harness"], e["decision"]) for e in hooks] == [
        ("codex", "deny"),
        ("codex", "deny"),
        ("claude-code", "ask"),
    ]
    assert hooks[0]["message"].startswith("codex did deny; policy said ask")
    code, out, _ = _run(str(log), "--decision", "deny", capsys=capsys)
    assert code == 0 and out.count("DENY") == 2 and "ASK" not in out.replace("ask-push", "")
