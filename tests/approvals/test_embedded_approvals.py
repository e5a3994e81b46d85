"""The embedded gateway (our own harness) and the Claude Agent SDK hooks routed to the approval
queue: an ask waits for an approver instead of the harness's approval service or the SDK's
``can_use_tool``; approved it runs once, refused it never runs; the records carry ``approval``."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from approval_kit import Deployment
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.core import Harness, Message, ScriptedModel, ToolOutput, define_tool, reply, thaw
from dsh_policy.policy.approvals import ApprovalChannel, ApprovalQueue, ApprovalStore
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.config import ApprovalSettings
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.in_process.agent_sdk import PolicyHooks
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from dsh_policy.policy.runtime.gateway import PolicyGateway
from test_hook_and_cli import FETCH, PACK

URL = FETCH["tool_input"]["url"]


def approver_for(deployment: Deployment, wait: float) -> QueueApprover:
    settings = ApprovalSettings(
        folder=str(deployment.folder / "queue"), approvers=str(deployment.approvers_file), wait_seconds=wait
    )
    return QueueApprover(ApprovalChannel(settings))


def real_time_queue(deployment: Deployment) -> ApprovalQueue:
    """The deployment's queue on the wall clock (the channels here run on it)."""
    queue = deployment.queue()
    queue.clock = time.time
    return queue


def answer_when_asked(deployment: Deployment, verdict: str) -> threading.Thread:
    """An approver who answers the first pending request as soon as it shows."""
    store = ApprovalStore(deployment.folder / "queue")

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pending = [r["id"] for r in store.read()["requests"].values() if r["status"] == "pending"]
            if pending:
                decided = real_time_queue(deployment).decide(
                    pending[0], "alice", deployment.keys["alice"], verdict
                )  # type: ignore[arg-type]
                assert isinstance(decided, dict), decided
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


class Embedded:
    """Our harness with the gateway installed and a ``web_fetch`` tool that counts its runs."""

    def __init__(self, log: Path, approver: QueueApprover) -> None:
        policy = Policy.load([PACK])
        assert isinstance(policy, Policy)
        self.writer = AuditWriter.open(log, fsync="off")
        self.harness = Harness()
        self.harness.plugin(
            PolicyGateway(policy, auditor=DecisionAuditor(self.writer, policy), approver=approver)
        )
        self.ran: list[Any] = []

        def body(args: Any, _run: Any) -> Any:
            self.ran.append(thaw(args))
            return {"content": "page text"}

        self.harness.tools.register(
            define_tool("web_fetch", description="fetch", execute=body, output=ToolOutput(render=str))
        )

    async def run(self) -> list[dict[str, Any]]:
        model = ScriptedModel([reply(tool_calls=[("web_fetch", json.dumps({"url": URL}))]), reply("done")])
        agent = await self.harness.create_agent(model=model)
        agent.followup(Message.user("go"))
        await agent.wait_idle()
        return [thaw(f.data) for f in agent.session.facts if f.type == "tool/result"]


@pytest.mark.anyio
@pytest.mark.parametrize("verdict", ["approve", "deny"])
async def test_the_embedded_gateway_waits_on_the_queue(
    deployment: Deployment, tmp_path: Path, verdict: str
) -> None:
    log = tmp_path / "audit.jsonl"
    embedded = Embedded(log, approver_for(deployment, wait=30))
    approver = answer_when_asked(deployment, verdict)
    try:
        (result,) = await embedded.run()
    finally:
        approver.join(timeout=60)
    embedded.writer.close()
    assert verify_log([log]).intact
    (call,) = [r for r in records(log) if r["kind"] == "tool_result"]
    (decided,) = [r for r in records(log) if r["kind"] == "approval_decided"]
    if verdict == "approve":
        assert embedded.ran == [{"url": URL}] and result["is_error"] is False
        assert call["decision"]["approval"] == f"approved:{decided['request']}"
        assert call["decision"]["denied_by"] is None
    else:
        assert embedded.ran == [] and result["is_error"] is True
        assert call["decision"]["approval"] == f"denied:{decided['request']}"
        assert call["decision"]["denied_by"] == "approval"


def test_the_agent_sdk_hooks_take_the_queue_path(deployment: Deployment, tmp_path: Path) -> None:
    policy = Policy.load([PACK])
    assert isinstance(policy, Policy)
    log = tmp_path / "audit.jsonl"
    writer = AuditWriter.open(log, fsync="off")
    hooks = PolicyHooks(policy, auditor=DecisionAuditor(writer, policy), approver=approver_for(deployment, 0))
    first = hooks.answer(FETCH)["hookSpecificOutput"]
    assert (
        first["permissionDecision"] == "deny"
        and "waiting for approval: request apr-" in first["permissionDecisionReason"]
    )
    (request,) = deployment.queue().snapshot()["requests"]
    assert isinstance(
        real_time_queue(deployment).decide(request, "alice", deployment.keys["alice"], "approve"), dict
    )
    assert hooks.answer({**FETCH, "tool_use_id": "toolu_2"}) == {}  # admitted: Claude Code's own checks apply
    third = hooks.answer({**FETCH, "tool_use_id": "toolu_3"})["hookSpecificOutput"]
    assert third["permissionDecision"] == "deny" and request not in third["permissionDecisionReason"]
    writer.close()
    assert verify_log([log]).intact
    admitted = [r for r in records(log) if r["kind"] == "hook_event" and r["answer"].get("approval")]
    assert [r["answer"]["approval"] for r in admitted] == [f"approved:{request}"]
    assert [r["request"] for r in records(log) if r["kind"] == "approval_used"] == [request]
