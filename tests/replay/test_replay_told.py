"""Replay of a log that says what the agent was told (``hook_told``) instead of its gateway's
decision: the recorded decision is the one compared, the told record is shown beside it, and
``verify`` counts such records."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from dsh_policy.audit import AuditWriter
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.in_process import adapter
from dsh_policy.policy.review import ReplayReport, replay_log
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from replay_kit import (
    HOOK_PACK,
    HOOK_PAYLOADS,
    compiled,
    edited_packs,
    records,
    replay_cli,
    stdin_bytes,
    without_rules,
)

CLI = [sys.executable, "-m", "dsh_policy.policy.cli"]


def _decide(log: Path, name: str, request: str) -> int:
    """One event decided in process, as the hook client's slow path does, with its request id."""
    data = (HOOK_PAYLOADS / "claude-code" / f"{name}.json").read_bytes()
    argv = ["claude-code", "--pack", str(HOOK_PACK), "--audit", str(log)]
    with stdin_bytes(data), redirect_stdout(io.StringIO()):
        return adapter.main(argv, delivery={"request": request})


def _told(log: Path, request: str, action: str, code: int) -> None:
    """The record a gateway appends for a hook's note (``GatewayService.record_told``)."""
    writer = AuditWriter.open(str(log))
    try:
        DecisionAuditor(writer, Policy(compiled([HOOK_PACK]))).hook_told(
            {
                "request": request,
                "hook": {"harness": "claude-code", "event": "PreToolUse"},
                "told": {"exit_code": code, "action": action},
                "why": "resident gateway: closed the connection before answering",
            }
        )
    finally:
        writer.close()


@pytest.fixture(scope="module")
def told_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ls`` allowed by the gateway but the agent told ``deny``; ``rm -rf /`` denied and the
    agent told ``deny`` as well (its answer was lost on the way)."""
    log = tmp_path_factory.mktemp("told") / "hooks.jsonl"
    assert _decide(log, "pre_tool_use_bash_ls", "r-ls") == 0
    _told(log, "r-ls", "deny", 2)
    assert _decide(log, "pre_tool_use_bash_rm_root", "r-rm") == 2
    _told(log, "r-rm", "deny", 2)
    kinds = [record["kind"] for record in records(log)]
    assert kinds.count("hook_told") == 2
    return log


def test_a_told_record_is_never_compared_as_the_gateways_decision(told_log: Path) -> None:
    report = replay_log([told_log], compiled([HOOK_PACK]))
    assert isinstance(report, ReplayReport)
    # Only the two decisions are replayed; had the "deny" told for ls been taken for a decision,
    # the unchanged policy (which allows ls) would report it changed.
    assert (report.summary.replayed, report.summary.unchanged, report.summary.changed) == (2, 2, 0)
    assert report.summary.told == 2
    assert report.changes == () and report.undetermined == ()
    assert report.exit_code == 0


def test_a_changed_decision_shows_what_the_agent_was_told(told_log: Path, tmp_path: Path) -> None:
    (candidate,) = edited_packs(tmp_path, "normroot", without_rules(lambda r: r["id"] == "never-rm-root"),
                                (HOOK_PACK,))
    code, out = replay_cli(str(told_log), "--pack", str(candidate), "--format", "json")
    document = json.loads(out)
    assert code == 1
    (change,) = document["changes"]
    assert change["recorded"]["decision"] == "deny" and change["replayed"]["decision"] == "allow"
    assert change["told"]["request"] == "r-rm" and change["told"]["action"] == "deny"
    assert document["summary"]["told"] == 2
    code, text = replay_cli(str(told_log), "--pack", str(candidate))
    assert "the agent was told deny, not this decision" in text
    assert "told 2: hook_told record(s)" in text


def test_verify_counts_the_told_records(told_log: Path) -> None:
    shown = subprocess.run([*CLI, "verify", "--format", "json", str(told_log)], capture_output=True,
                           text=True, check=False, timeout=120)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert json.loads(shown.stdout)["hook_told"] == 2
    text = subprocess.run([*CLI, "verify", str(told_log)], capture_output=True, text=True, check=False,
                          timeout=120)
    assert "told         2 hook_told record(s)" in text.stdout
