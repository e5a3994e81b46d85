"""The hook path and the ``approvals`` command together: an ask in a headless run is queued and
denied naming its request; approved from the command line, the same call runs exactly once; the
audit log verifies and names the approver; ``log`` shows the approval records."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from approval_kit import Deployment
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.cli import main as cli
from dsh_policy.policy.config import ApprovalSettings
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.runtime.auditing import DecisionAuditor

PACK = Path(__file__).parents[1] / "hooks" / "packs" / "hook-guard.yaml"
FETCH = {
    "session_id": "sess-1",
    "cwd": "/tmp",
    "hook_event_name": "PreToolUse",
    "tool_name": "WebFetch",
    "tool_input": {"url": "https://paste.example.net/raw/abc", "prompt": "Summarise"},
    "tool_use_id": "toolu_1",
}


class Gateway:
    def __init__(self, deployment: Deployment, log: Path, **params: Any) -> None:
        policy = Policy.load([PACK], params=params or None)
        assert isinstance(policy, Policy)
        self.writer = AuditWriter.open(log, fsync="off")
        self.service = GatewayService(
            DeploymentSpec(packs=(str(PACK),)),
            policy,
            auditor=DecisionAuditor(self.writer, policy),
            writer=self.writer,
            audit_path=str(log),
        )
        self.service.approvals = ApprovalChannel(
            ApprovalSettings(
                folder=str(deployment.folder / "queue"),
                approvers=str(deployment.approvers_file),
                wait_seconds=0,
            )
        )

    def call(self, url: str = "https://paste.example.net/raw/abc", use: str = "toolu_1") -> Any:
        payload = {**FETCH, "tool_input": {**FETCH["tool_input"], "url": url}, "tool_use_id": use}
        return self.service.hook("claude-code", json.dumps(payload).encode()).reply


def queue_args(deployment: Deployment) -> list[str]:
    return ["--queue", str(deployment.folder / "queue"), "--approvers", str(deployment.approvers_file)]


def request_id(reply: Any) -> str:
    found = re.search(r"request (apr-[0-9a-f]+)", reply.stderr)
    assert found, reply.stderr
    return found.group(1)


def test_an_approved_headless_call_runs_exactly_once(
    deployment: Deployment, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "audit.jsonl"
    gateway = Gateway(deployment, log)
    first = gateway.call()
    assert first.exit_code == 2 and "waiting for approval" in first.stderr
    request = request_id(first)

    capsys.readouterr()  # the service's debug lines
    assert cli(["approvals", "list", *queue_args(deployment), "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed["requests"]] == [request]
    assert listed["requests"][0]["rules"] == ["hook-guard/ask-network"]
    assert listed["requests"][0]["call"] == "https://paste.example.net/raw/abc"

    key = str(deployment.folder / "bob.key")
    refused = cli(["approvals", "approve", request, *queue_args(deployment), "--as", "bob", "--key", key])
    assert refused == 1 and "may not approve" in capsys.readouterr().err
    key = str(deployment.folder / "alice.key")
    assert cli(["approvals", "approve", request, *queue_args(deployment), "--as", "alice", "--key", key]) == 0
    assert "approved" in capsys.readouterr().out

    other = gateway.call(url="https://paste.example.net/raw/other", use="toolu_2")
    assert other.exit_code == 2 and request not in other.stderr  # other arguments: a new request
    admitted = gateway.call(use="toolu_3")
    assert admitted.exit_code == 0 and admitted.stdout == ""  # runs (the client's permissions apply)
    again = gateway.call(use="toolu_4")
    assert again.exit_code == 2 and request not in again.stderr  # single use

    gateway.writer.close()
    report = verify_log([log])
    assert report.intact, report
    records = [json.loads(line) for line in log.read_text().splitlines()]
    decided = [r for r in records if r["kind"] == "approval_decided"]
    assert decided and decided[0]["approver"] == "alice" and decided[0]["request"] == request
    used = [r for r in records if r["kind"] == "approval_used"]
    assert [r["request"] for r in used] == [request] and used[0]["approvers"] == ["alice"]
    told = [r for r in records if r["kind"] == "hook_event" and r["answer"].get("approval")]
    assert [r["answer"]["approval"] for r in told] == [f"approved:{request}"]
    assert told[0]["answer"]["action"] == "ask"  # the policy's verdict stays what replay re-decides

    capsys.readouterr()
    assert cli(["log", str(log)]) == 0
    shown = capsys.readouterr().out
    assert "approval_decided" in shown or "APPROVAL" in shown


def test_a_policy_change_between_approval_and_call_voids_it(deployment: Deployment, tmp_path: Path) -> None:
    gateway = Gateway(deployment, tmp_path / "a.jsonl")
    request = request_id(gateway.call())
    key = str(deployment.folder / "alice.key")
    assert cli(["approvals", "approve", request, *queue_args(deployment), "--as", "alice", "--key", key]) == 0
    changed = Gateway(deployment, tmp_path / "b.jsonl", allowed_hosts=["pypi.org"])  # another digest
    reply = changed.call()
    assert reply.exit_code == 2 and request not in reply.stderr
    document = json.loads((deployment.folder / "queue" / "queue.json").read_text())
    assert document["requests"][request]["status"] == "void"


def test_grant_and_revoke_from_the_command_line(
    deployment: Deployment, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gateway = Gateway(deployment, tmp_path / "a.jsonl")
    key = str(deployment.folder / "alice.key")
    args = [*queue_args(deployment), "--as", "alice", "--key", key, "--format", "json"]
    match = ["--match", r"https://paste\.example\.net/raw/.*", "--session", "sess-1"]
    capsys.readouterr()
    assert cli(["approvals", "grant", *args, "--rule", "hook-guard/ask-network", "--for", "30m", *match]) == 0
    grant = json.loads(capsys.readouterr().out)
    assert grant["holds"] and grant["approver"] == "alice"
    assert gateway.call().exit_code == 0
    assert gateway.call(url="https://paste.example.net/raw/two").exit_code == 0
    assert gateway.call(url="https://evil.example.org/x").exit_code == 2  # outside the pattern
    assert cli(["approvals", "revoke", grant["id"], *queue_args(deployment), "--by", "alice"]) == 0
    assert gateway.call().exit_code == 2
    capsys.readouterr()
    assert cli(["approvals", "show", grant["id"], *queue_args(deployment), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "revoked" and shown["uses"] == 2
