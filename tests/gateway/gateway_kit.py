"""A harness with the gateway installed, a scripted model and recording tools (imported by the
gateway tests under this unique module name, so it never collides with another directory's
conftest)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dsh_policy.audit.writer import AuditWriter
from dsh_policy.core import Harness, Message, ModelReply, ScriptedModel, ToolOutput, define_tool, reply, thaw
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from dsh_policy.policy.runtime.gateway import PolicyGateway

PACKS = Path(__file__).parent / "packs"


def load_policy(*names: str, engine: str = "python", **params: Any) -> Policy:
    policy = Policy.load([PACKS / name for name in names], params=params or None, engine=engine)
    assert not isinstance(policy, LoadFailure), str(policy)
    return policy


class GatewayKit:
    """One harness with the gateway, tools that record their calls, and an optional audit log."""

    def __init__(self, policy: Policy, audit_path: Path | None = None, fail_closed: bool = False) -> None:
        self.policy = policy
        self.harness = Harness()
        self.ran: list[tuple[str, Any]] = []
        self.writer = AuditWriter.open(audit_path, fsync="off") if audit_path else None
        self.auditor = (
            DecisionAuditor(self.writer, policy, fail_closed=fail_closed) if self.writer else None
        )
        self.gateway = PolicyGateway(policy, auditor=self.auditor)
        self.fiber = self.harness.plugin(self.gateway)
        self.approvals: list[str] = []
        self.outputs: dict[str, Any] = {}
        self.harness.provide("approval", self)
        for name in ("shell", "web_fetch", "read_file"):
            self._tool(name)

    async def request(self, execution: Any, reason: str | None) -> str:
        return self.approvals.pop(0) if self.approvals else "rejected"

    def _tool(self, name: str) -> None:
        def body(args: Any, _run: Any) -> Any:
            self.ran.append((name, args))
            return self.outputs.get(name, {"content": f"{name} ok"})

        self.harness.tools.register(
            define_tool(name, description=name, execute=body, output=ToolOutput(render=_render))
        )

    async def session(self, turns: Sequence[tuple[str, Sequence[ModelReply]]]) -> Any:
        """Run turns (prompt, replies); returns the agent."""
        replies = [r for _, rs in turns for r in rs]
        agent = await self.harness.create_agent(model=ScriptedModel(replies))
        for prompt, _ in turns:
            agent.followup(Message.user(prompt))
            await agent.wait_idle()
        return agent

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _render(value: Any) -> str:
    return str(value["content"]) if isinstance(value, Mapping) else str(value)


def calls(*pairs: tuple[str, str]) -> ModelReply:
    return reply(tool_calls=list(pairs))


def results(agent: Any) -> list[dict[str, Any]]:
    return [thaw(f.data) for f in agent.session.facts if f.type == "tool/result"]
