"""Property tests: random tool-call scripts and random listener behaviours through the real loop.

Whatever listeners, guards, approvers, wrappers and tools do, a turn never raises out of the loop,
a call a guard denied never runs its body, every call gets exactly one ``tool/result`` in model
order, and no context lands between a call and its result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
from dsh_policy.core import (
    Harness,
    Message,
    ModelReply,
    ModelToolCall,
    ScriptedModel,
    TextContent,
    ToolResult,
    accept,
    allow,
    ask,
    block,
    define_tool,
    deny,
    reply,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@dataclass(frozen=True)
class CallPlan:
    tool: str
    pre: str
    approval: str
    guard: str
    execute: str
    post: str
    finalize: str
    defer: int
    yields: int


call_plans = st.builds(
    CallPlan,
    tool=st.sampled_from(["safe", "exclusive", "raising", "ghost"]),
    pre=st.sampled_from(["next", "allow", "deny", "ask", "raise"]),
    approval=st.sampled_from(["allowed-once", "rejected", "cancelled", "unavailable", "raise"]),
    guard=st.sampled_from(["abstain", "deny", "raise"]),
    execute=st.sampled_from(["next", "raise", "own", "contexts"]),
    post=st.sampled_from(["next", "content", "block", "raise", "value", "context"]),
    finalize=st.sampled_from(["keep", "replace", "raise"]),
    defer=st.integers(0, 2),
    yields=st.integers(0, 3),
)
scripts = st.lists(st.lists(call_plans, min_size=1, max_size=4), min_size=1, max_size=3)


class Scenario:
    """A harness whose every seam does what the plan of the current call says."""

    def __init__(self, steps: list[list[CallPlan]]) -> None:
        self.plans: dict[str, CallPlan] = {}
        replies: list[ModelReply] = []
        for s, step in enumerate(steps):
            calls = []
            for c, plan in enumerate(step):
                call_id = f"s{s}c{c}"
                self.plans[call_id] = plan
                calls.append(ModelToolCall(call_id, plan.tool, json.dumps({"n": c})))
            replies.append(reply(tool_calls=calls))
        replies.append(reply("done"))
        self.model = ScriptedModel(replies)
        self.ran: list[str] = []
        self.results_seen: list[str] = []
        self.harness = Harness()
        self._install()

    def _install(self) -> None:
        harness = self.harness
        for name, safe in (("safe", True), ("exclusive", False), ("raising", True)):
            harness.tools.register(
                define_tool(
                    name,
                    description=name,
                    parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
                    execute=self._body,
                    finalize_content=self._finalize,
                    concurrency_safe=safe,
                )
            )
        harness.provide("approval", self)
        harness.tools.guard(self._guard)
        harness.on("tools/pre-execute", self._pre)
        harness.on("tools/execute", self._execute)
        harness.on("tools/post-execute", self._post)
        harness.on("tools/result", lambda ex, r: self.results_seen.append(ex.call_id))

    def plan(self, execution: Any) -> CallPlan:
        return self.plans[execution.call_id]

    async def _body(self, args: Any, run: Any) -> Any:
        plan = self.plan(run.execution)
        self.ran.append(run.execution.call_id)
        for i in range(plan.defer):
            run.defer_context(f"deferred {run.execution.call_id}/{i}")
        for _ in range(plan.yields):
            await anyio.sleep(0)
        if plan.tool == "raising":
            raise RuntimeError("tool exploded")
        return {"n": args["n"]}

    def _finalize(self, execution: Any, result: ToolResult) -> Any:
        plan = self.plan(execution)
        if plan.finalize == "raise":
            raise ValueError("finalize exploded")
        return "final word" if plan.finalize == "replace" else None

    async def request(self, execution: Any, reason: Any) -> str:
        outcome = self.plan(execution).approval
        if outcome == "raise":
            raise ConnectionError("approval channel down")
        return outcome

    def _guard(self, execution: Any) -> str | None:
        verdict = self.plan(execution).guard
        if verdict == "raise":
            raise RuntimeError("guard exploded")
        return "guard says no" if verdict == "deny" else None

    async def _pre(self, execution: Any, next: Any) -> Any:
        pre = self.plan(execution).pre
        if pre == "raise":
            raise RuntimeError("pre exploded")
        decided = {"next": None, "allow": allow(), "deny": deny("denied"), "ask": ask("confirm?")}[pre]
        return decided if decided is not None else await next()

    async def _execute(self, execution: Any, next: Any) -> Any:
        mode = self.plan(execution).execute
        if mode == "raise":
            raise RuntimeError("wrapper exploded")
        if mode == "own":
            return ToolResult(False, (TextContent("cached"),), value={"n": 0})
        result = await next()
        if mode == "contexts":
            extra = (Message.from_plugin(f"wrapper {execution.call_id}"),)
            return ToolResult(
                result.is_error, result.content, result.value, result.error,
                result.additional_contexts + extra, result.meta,
            )
        return result

    async def _post(self, execution: Any, result: ToolResult, next: Any) -> Any:
        mode = self.plan(execution).post
        if mode == "raise":
            raise RuntimeError("post exploded")
        if mode == "content":
            return accept(content="rewritten")
        if mode == "block":
            return block("blocked", [Message.from_plugin(f"block {execution.call_id}")])
        if mode == "value":
            return accept(value={"n": -1})  # a programming error on error results: must be contained
        if mode == "context":
            return accept(additional_contexts=[f"post {execution.call_id}"])
        return await next()

    async def run(self) -> Any:
        agent = await self.harness.create_agent(model=self.model)
        agent.followup(Message.user("go"))
        await agent.wait_idle()
        return agent


def guard_can_run(plan: CallPlan) -> bool:
    return plan.pre in ("next", "allow") or (plan.pre == "ask" and plan.approval == "allowed-once")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=scripts)
def test_random_scripts_keep_every_pipeline_and_loop_invariant(steps: list[list[CallPlan]]) -> None:
    scenario = Scenario(steps)
    agent = anyio.run(scenario.run)
    facts = agent.session.facts

    # A turn never raises out of the loop, and nothing a listener did escaped the pipeline.
    assert [f.data["reason"] for f in facts if f.type == "turn/end"] == ["completed"]
    assert len(scenario.model.requests) == len(steps) + 1

    # A call denied by a guard (or by pre-execute) never runs its body.
    for call_id in scenario.ran:
        plan = scenario.plans[call_id]
        assert plan.guard == "abstain" and guard_can_run(plan)
    for call_id, plan in scenario.plans.items():
        if plan.guard == "deny" and guard_can_run(plan):
            result = next(f for f in facts if f.type == "tool/result" and f.data["call_id"] == call_id)
            assert result.data["is_error"]

    # Every call produces exactly one tool/result, in model order, and one tools/result notification.
    issued = [f.data["call_id"] for f in facts if f.type == "tool/call"]
    committed = [f.data["call_id"] for f in facts if f.type == "tool/result"]
    assert issued == list(scenario.plans) == committed
    assert scenario.results_seen == issued

    # Contexts never land between a call and its result: a step's user messages all come first.
    in_tools = False
    for fact in facts:
        if fact.type == "tool/call":
            in_tools = True
        elif fact.type == "step/end":
            in_tools = False
        elif fact.type == "user/message":
            assert not in_tools

    # Everything logged is plain JSON.
    json.dumps([fact.to_json() for fact in agent.session.records])


@settings(max_examples=100, deadline=None)
@given(
    steps=scripts,
    abort_after=st.integers(0, 6),
)
def test_aborting_at_any_point_still_commits_one_result_per_issued_call(
    steps: list[list[CallPlan]], abort_after: int
) -> None:
    scenario = Scenario(steps)
    seen = 0

    def count(execution: Any, next: Any) -> Any:
        nonlocal seen
        seen += 1
        if seen > abort_after:
            execution.agent.abort("stop")
        return next()

    scenario.harness.on("tools/pre-execute", count, prepend=True)
    agent = anyio.run(scenario.run)
    facts = agent.session.facts
    issued = [f.data["call_id"] for f in facts if f.type == "tool/call"]
    committed = [f.data["call_id"] for f in facts if f.type == "tool/result"]
    assert issued == committed
    ends = [f.data["reason"] for f in facts if f.type == "turn/end"]
    assert len(ends) == 1 and ends[0] in ("completed", "aborted")
    assert agent.status == "idle"
