"""A dry run (``dsh-policy check --cases``) and the live plugins give identical decisions.

Every case of every shipped pack and of the gateway test pack is replayed through a real harness
with the gateway installed: the case's tool is called by a scripted model with the case's
arguments (or returns the case's output), and what the live pipeline did is compared with what
``check`` decided for the same case. Approvals are granted, so an ``ask`` that a guard overrides
shows up live exactly as the dry run's whole-gate ``deny``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_policy.core import Harness, Message, MessageSource, ScriptedModel, ToolOutput, define_tool, reply
from dsh_policy.policy.cases import Case, load_cases, run_case
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import StepEvent, StepVerdict, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.auditing import CallOutcome
from dsh_policy.policy.runtime.gateway import PolicyGateway

ROOT = Path(__file__).resolve().parents[2]
PACKS = [
    (ROOT / "rules" / f"{name}.yaml", ROOT / "rules" / f"{name}.cases.yaml")
    for name in ("baseline", "secrets", "injection")
]


class Recorder:
    """Collects what the live gateway decided."""

    def __init__(self) -> None:
        self.calls: list[CallOutcome] = []
        self.steps: list[StepVerdict] = []

    def call_settled(self, outcome: CallOutcome) -> None:
        self.calls.append(outcome)

    def step_gated(self, event: StepEvent, verdict: StepVerdict) -> None:
        self.steps.append(verdict)


class Approve:
    async def request(self, execution: Any, reason: str | None) -> str:
        return "allowed-once"


def live_call_decision(outcome: CallOutcome) -> tuple[str, set[str]]:
    pre = outcome.pre_execute
    assert pre is not None
    if outcome.guard is not None and outcome.guard.denied:
        return "deny", set(outcome.guard.rules)
    if pre.decision == "deny":
        return "deny", set(pre.rules)
    return pre.decision, set(pre.rules)


async def replay(policy: Policy, case: Case) -> tuple[str, set[str], str | None]:
    """Run ``case`` through a live harness; returns (decision, rules, text the model saw)."""
    recorder = Recorder()
    harness = Harness()
    harness.provide("approval", Approve())
    harness.plugin(PolicyGateway(policy, observers=[recorder]))
    event = case.event
    if isinstance(event, StepEvent):
        agent = await harness.create_agent(model=ScriptedModel([reply("fine")] * event.turn))
        for _ in range(event.turn - 1):
            agent.followup(Message.user("ok"))
            await agent.wait_idle()
        for message in event.messages:  # claimed together by the turn's first step, in order
            source = MessageSource(message.source_kind, message.source_plugin)  # type: ignore[arg-type]
            live = Message(message.role, message.text, source)  # type: ignore[arg-type]
            (agent.followup if message.source_kind == "user" else agent.inject)(live)
        await agent.wait_idle()
        verdict = recorder.steps[-1]
        return verdict.decision, set(verdict.rules), None
    call = event.call if isinstance(event, ToolResultEvent) else event
    if isinstance(event, ToolResultEvent):
        # The body returns the case's value and renders exactly the case's text.
        value = event.value if event.value is not None else event.text
        tool = define_tool(call.tool, description="replayed", execute=lambda a, r: value,
                           output=ToolOutput(render=lambda v: v if isinstance(v, str) else event.text))
    else:
        tool = define_tool(call.tool, description="replayed", execute=lambda a, r: "ok")
    harness.tools.register(tool)
    model = ScriptedModel([reply(tool_calls=[(call.tool, json.dumps(call.args))]), reply("done")])
    agent = await harness.create_agent(model=model)
    agent.followup(Message.user("go"))
    await agent.wait_idle()
    (outcome,) = recorder.calls
    text = next(f.data["content"] for f in agent.session.facts if f.type == "tool/result")
    if isinstance(event, ToolResultEvent):
        review = outcome.review
        assert review is not None
        return review.decision, set(review.rules), "\n".join(text)
    decision, rules = live_call_decision(outcome)
    return decision, rules, None


def parity_cases() -> list[Any]:
    params = []
    for pack, cases_file in PACKS:
        cases = load_cases(cases_file)
        for case in cases:
            assert isinstance(case, Case), str(case)
            event = case.event
            if isinstance(event, ToolResultEvent) and event.is_error:
                continue  # a body cannot produce an arbitrary error result; errors are tested elsewhere
            params.append(pytest.param(pack, case, id=f"{pack.stem}:{case.line}"))
    return params


_POLICIES: dict[Path, Policy] = {}


def policy_for(pack: Path) -> Policy:
    """The pack on the default engine: parity is between the dry run and the live plugins, which
    share it; the engines' agreement on these cases is ``check --engine all``'s (test_shipped_packs)."""
    if pack not in _POLICIES:
        loaded = Policy.load([pack])
        assert not isinstance(loaded, LoadFailure), str(loaded)
        _POLICIES[pack] = loaded
    return _POLICIES[pack]


@pytest.mark.parametrize(("pack", "case"), parity_cases())
def test_live_plugins_decide_like_the_dry_run(pack: Path, case: Case) -> None:
    policy = policy_for(pack)
    dry = run_case(policy.current(), case)
    live_decision, live_rules, live_text = anyio.run(replay, policy, case)
    assert live_decision == dry.decision, case.name
    assert live_rules == set(dry.rules), case.name
    if isinstance(case.event, ToolResultEvent) and dry.decision == "accept":
        assert live_text == dry.text, case.name
