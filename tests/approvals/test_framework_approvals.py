"""Framework adapters routed to the approval queue (``approvals: {embedded: queue}``): on the real
LangGraph library with a scripted model, an asked tool call becomes a request, an approver answers
it with the real ``dsh-policy approvals`` command (signed with a test key), and the call runs
exactly once when approved and never when denied; the audit log verifies and names the approver.
Without the setting the framework's own interrupt stays the path. (PydanticAI, the OpenAI Agents
SDK and Google ADK on the queue: their files in tests/adapters/, where their imports are paid.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the langgraph extra is not installed")

from approval_kit import Clock, Deployment
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.adapters.langgraph import PolicyMiddleware
from dsh_policy.policy.approvals import ApprovalChannel, ApprovalStore, QueueError
from dsh_policy.policy.approvals.calls import QueueApprover, queue_approver
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.config import ApprovalSettings, load_gateway_config
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

PACK = Path(__file__).parents[1] / "hooks" / "packs" / "hook-guard.yaml"
URL = "https://paste.example.net/raw/abc"
CLI = Path(sys.executable).parent / "dsh-policy"
_ANY_ARGS = {"type": "object", "properties": {}, "additionalProperties": True}


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's own fake chat model, accepting tools (the script decides the calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


class Agent:
    """A LangGraph agent whose model fetches ``URL`` once per run, governed by the middleware."""

    def __init__(self, policy: Policy, log: Path, approver: QueueApprover | None) -> None:
        self.ran: list[dict[str, Any]] = []
        self.writer = AuditWriter.open(log, fsync="off")
        self.middleware = PolicyMiddleware(
            policy, auditor=DecisionAuditor(self.writer, policy), approver=approver
        )
        self.runs = 0

    def run(self, call_id: str, *, thread: str = "t1") -> dict[str, Any]:
        def fetch(**kwargs: Any) -> str:
            self.ran.append(kwargs)
            return "page text"

        call = {"name": "web_fetch", "args": {"url": URL}, "id": call_id}
        script = iter([AIMessage(content="", tool_calls=[call]), AIMessage(content="done")])
        agent = create_agent(
            ScriptedChatModel(messages=script),
            tools=[StructuredTool(name="web_fetch", description="fetch", args_schema=_ANY_ARGS, func=fetch)],
            middleware=[self.middleware],
            checkpointer=InMemorySaver(),
        )
        state: dict[str, Any] = agent.invoke(
            {"messages": [{"role": "user", "content": "go"}]}, {"configurable": {"thread_id": thread}}
        )
        return state


def tool_text(state: dict[str, Any]) -> str:
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    return str(message.content)


def cli(deployment: Deployment, *args: str, process: bool) -> subprocess.CompletedProcess[str]:
    """``dsh-policy approvals``, as an approver runs it: the installed command in a process of its
    own, or (``process=False``, cheaper) its entry point in this one."""
    argv = ["approvals", *args, "--queue", str(deployment.folder / "queue")]
    argv += ["--approvers", str(deployment.approvers_file)]
    if process:
        return subprocess.run([str(CLI), *argv], capture_output=True, text=True, timeout=120, check=False)
    return subprocess.CompletedProcess(argv, cli_main(argv), "", "")


def answer_when_asked(
    deployment: Deployment, verdict: str, stop: threading.Event, out: list[Any], process: bool
) -> None:
    """An approver watching the queue: answers the first pending request with the command."""
    store = ApprovalStore(deployment.folder / "queue")
    while not stop.is_set():
        pending = [r["id"] for r in store.read()["requests"].values() if r["status"] == "pending"]
        if pending:
            key = str(deployment.folder / "alice.key")
            signed = ("--as", "alice", "--key", key, "--reason", "test")
            out.append(cli(deployment, verdict, pending[0], *signed, process=process))
            return
        time.sleep(0.05)


def run_answered(
    agent: Agent, deployment: Deployment, verdict: str, call_id: str, *, process: bool = True
) -> tuple[dict[str, Any], Any]:
    stop, answered = threading.Event(), []
    approver = threading.Thread(target=answer_when_asked, args=(deployment, verdict, stop, answered, process))
    approver.start()
    try:
        state = agent.run(call_id)
    finally:
        stop.set()
        approver.join(timeout=150)
    assert answered, "no request reached the queue"
    assert answered[0].returncode == 0, answered[0].stderr
    return state, answered[0]


@pytest.fixture
def policy() -> Policy:
    loaded = Policy.load([PACK])
    assert isinstance(loaded, Policy)
    return loaded


@pytest.fixture
def queued(deployment: Deployment) -> Iterator[QueueApprover]:
    """The deployment file routes embedded asks to the queue; calls wait up to 60 s (an answer
    ends the wait at once)."""
    shutil.copy(PACK, deployment.folder / "hook-guard.yaml")
    config = deployment.folder / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [hook-guard.yaml]\n"
        "  approvals: {folder: queue, approvers: approvers.yaml, wait_seconds: 60, embedded: queue}\n"
    )
    loaded = load_gateway_config(config)
    assert not isinstance(loaded, list), loaded
    approver = queue_approver(loaded)
    assert approver is not None
    yield approver


def records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_an_approved_call_runs_exactly_once_and_the_log_names_the_approver(
    policy: Policy, deployment: Deployment, queued: QueueApprover, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    agent = Agent(policy, log, queued)
    state, answered = run_answered(agent, deployment, "approve", "call-1")
    assert agent.ran == [{"url": URL}]  # approved during the wait: ran once, in the same run
    assert tool_text(state).startswith("page text")
    queued.wait_seconds = 0  # nobody answers the next one: no need to wait
    again = agent.run("call-2")  # the same call again: the approval was used up
    assert agent.ran == [{"url": URL}] and "waiting for approval" in tool_text(again)

    agent.writer.close()
    assert verify_log([log]).intact
    found = records(log)
    (decided,) = [r for r in found if r["kind"] == "approval_decided"]
    assert decided["approver"] == "alice" and decided["verdict"] == "approve"
    (used,) = [r for r in found if r["kind"] == "approval_used"]
    assert used["request"] == decided["request"] and used["approvers"] == ["alice"]
    calls = [r for r in found if r["kind"] == "tool_result"]
    assert [r["harness"] for r in calls] == ["langgraph", "langgraph"]
    assert calls[0]["decision"]["approval"] == f"approved:{decided['request']}"
    assert calls[0]["decision"]["denied_by"] is None and calls[0]["result"]["is_error"] is False
    assert calls[1]["decision"]["denied_by"] == "approval"
    assert calls[1]["decision"]["approval"].startswith("pending:apr-")
    assert decided["request"] in answered.stdout


def test_a_denied_call_never_runs(
    policy: Policy, deployment: Deployment, queued: QueueApprover, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    agent = Agent(policy, log, queued)
    state, _ = run_answered(agent, deployment, "deny", "call-1", process=False)
    assert agent.ran == []
    assert "denied by approver alice" in tool_text(state)
    agent.writer.close()
    assert verify_log([log]).intact
    (call,) = [r for r in records(log) if r["kind"] == "tool_result"]
    assert call["decision"]["denied_by"] == "approval" and call["decision"]["approval"].startswith("denied:")


def test_an_expired_approval_runs_nothing(policy: Policy, deployment: Deployment, tmp_path: Path) -> None:
    clock = Clock()
    settings = ApprovalSettings(
        folder=str(deployment.folder / "queue"), approvers=str(deployment.approvers_file), wait_seconds=0
    )
    agent = Agent(policy, tmp_path / "audit.jsonl", QueueApprover(ApprovalChannel(settings, clock=clock)))
    first = agent.run("call-1")
    assert agent.ran == [] and "waiting for approval" in tool_text(first)
    queue = deployment.queue()
    queue.clock = clock
    (request,) = queue.snapshot()["requests"]
    decided = queue.decide(request, "alice", deployment.keys["alice"], "approve", valid_seconds=60)
    assert not isinstance(decided, QueueError), decided
    clock.now += 120  # the approval lapsed before the call was made again
    second = agent.run("call-2")
    assert agent.ran == [] and "waiting for approval" in tool_text(second)
    assert queue.snapshot()["requests"][request]["status"] == "expired"


def test_without_the_setting_the_framework_interrupt_stays_the_path(
    policy: Policy, deployment: Deployment, tmp_path: Path
) -> None:
    config = deployment.folder / "gateway.yaml"
    shutil.copy(PACK, deployment.folder / "hook-guard.yaml")
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [hook-guard.yaml]\n"
        "  approvals: {folder: queue, approvers: approvers.yaml}\n"
    )
    loaded = load_gateway_config(config)
    assert not isinstance(loaded, list)
    assert queue_approver(loaded) is None
    agent = Agent(policy, tmp_path / "audit.jsonl", None)
    state = agent.run("call-1")
    assert state.get("__interrupt__") and agent.ran == []
    assert not (deployment.folder / "queue" / "queue.json").exists()

