"""Property: random hostile behaviour at every seam never leaves a dangling call or escapes a turn.

Each call of a random script gets a random behaviour per seam (raise a hostile exception object,
return the wrong type, block, replace, deny with a non-string, defer malformed contexts, abort the
turn, conclude it, ...), and the loop's own seams misbehave too. Whatever happens: ``wait_idle``
returns, every turn that started ended with ``turn/end``, every ``tool/call`` has exactly one
``tool/result`` before its step closes, the history never holds a call without its result, the log
is plain JSON, and the agent takes the next prompt. ``DSH_FUZZ_EXAMPLES=N`` raises the budget.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import anyio
from dsh_policy.core import (
    Deny,
    Harness,
    Message,
    ModelReply,
    ModelRequest,
    ModelToolCall,
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
from edge_kit import Fatal, Impostor, NonStringStr, Unprintable, assert_well_formed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("DSH_FUZZ_EXAMPLES", "150"))

HOSTILE = {"unprintable": Unprintable, "fatal": Fatal, "nonstr": NonStringStr, "exit": SystemExit}


def hostile(kind: str) -> BaseException:
    return HOSTILE[kind]()


raise_kinds = st.sampled_from(sorted(HOSTILE))


@dataclass(frozen=True)
class Plan:
    tool: str
    pre: str
    raise_kind: str
    guard: str
    execute: str
    body: str
    post: str
    finalize: str
    observer: str


plans = st.builds(
    Plan,
    tool=st.sampled_from(["safe", "exclusive", "ghost"]),
    pre=st.sampled_from(["next", "allow", "deny", "deny-nonstr", "ask", "raise", "wrong", "impostor"]),
    raise_kind=raise_kinds,
    guard=st.sampled_from(["abstain", "deny", "raise", "wrong", "impostor"]),
    execute=st.sampled_from(["next", "raise", "wrong", "own", "own-malformed"]),
    body=st.sampled_from(["value", "raise", "not-json", "contexts", "bad-context", "conclude", "abort"]),
    post=st.sampled_from(
        ["next", "block", "block-nonstr", "content", "content-hostile", "value", "raise", "bad-context",
         "context"]
    ),
    finalize=st.sampled_from(["keep", "replace", "raise", "wrong"]),
    observer=st.sampled_from(["ok", "raise", "abort"]),
)
loop_behaviours = st.sampled_from(
    ["none", "pre-step-raise", "pre-step-wrong", "reject", "stop-raise", "stop-steer"]
)
scripts = st.lists(st.lists(plans, min_size=1, max_size=3), min_size=1, max_size=3)


class ForgivingModel:
    """Replays the script, then keeps answering with text (a misbehaving turn may ask again)."""

    def __init__(self, replies: list[ModelReply]) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return self.replies.pop(0) if self.replies else reply("done")


class Hostile:
    """A harness whose every seam does what the current call's plan says."""

    def __init__(self, steps: list[list[Plan]], loop: str, loop_kind: str) -> None:
        self.plans: dict[str, Plan] = {}
        replies: list[ModelReply] = []
        for s, step in enumerate(steps):
            calls = []
            for c, plan in enumerate(step):
                call_id = f"s{s}c{c}"
                self.plans[call_id] = plan
                calls.append(ModelToolCall(call_id, plan.tool, json.dumps({"n": c})))
            replies.append(reply(tool_calls=calls))
        self.model = ForgivingModel(replies)
        self.loop = loop
        self.loop_kind = loop_kind
        self.steered = False
        self.harness = Harness()
        self._install()

    def plan(self, execution: Any) -> Plan:
        return self.plans.get(execution.call_id) or Plan(*(["safe"] + ["next"] * 8))

    def _install(self) -> None:
        h = self.harness
        for name, safe in (("safe", True), ("exclusive", False)):
            h.tools.register(
                define_tool(
                    name, description=name, execute=self._body, finalize_content=self._finalize,
                    parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
                    concurrency_safe=safe,
                )
            )
        h.provide("approval", self)
        h.tools.guard(self._guard)
        h.on("tools/pre-execute", self._pre)
        h.on("tools/execute", self._execute)
        h.on("tools/post-execute", self._post)
        h.on("tools/result", self._observe)
        h.on("agent/pre-step", self._pre_step)
        h.on("agent/turn-stopping", self._stopping)

    async def request(self, execution: Any, reason: Any) -> Any:
        return Impostor() if self.plan(execution).raise_kind == "nonstr" else "allowed-once"

    def _guard(self, execution: Any) -> Any:
        plan = self.plan(execution)
        return {"abstain": None, "deny": "guard says no", "wrong": 42, "impostor": Impostor()}.get(
            plan.guard
        ) if plan.guard != "raise" else _raise(hostile(plan.raise_kind))

    async def _pre(self, execution: Any, next: Any) -> Any:
        plan = self.plan(execution)
        if plan.pre == "raise":
            raise hostile(plan.raise_kind)
        if plan.pre == "deny-nonstr":
            forged = deny("x")
            object.__setattr__(forged, "reason", Unprintable())
            return forged
        decided = {"allow": allow(), "deny": deny("denied"), "ask": ask("sure?"), "wrong": 42,
                   "impostor": Impostor()}.get(plan.pre)
        return decided if decided is not None else await next()

    async def _execute(self, execution: Any, next: Any) -> Any:
        plan = self.plan(execution)
        if plan.execute == "raise":
            raise hostile(plan.raise_kind)
        if plan.execute == "wrong":
            return {"not": "a result"}
        if plan.execute == "own":
            return ToolResult(False, (TextContent("cached"),), value={"n": 0})
        if plan.execute == "own-malformed":
            return ToolResult(False, [Impostor()], value={1, 2})  # type: ignore[arg-type]
        return await next()

    async def _body(self, args: Any, run: Any) -> Any:
        plan = self.plan(run.execution)
        await anyio.sleep(0)
        if plan.body == "raise":
            raise hostile(plan.raise_kind)
        if plan.body == "not-json":
            return {"x": float("inf")}
        if plan.body == "contexts":
            run.defer_context(f"deferred {run.execution.call_id}")
        if plan.body == "bad-context":
            run.defer_context(Message("user", Unprintable()))  # type: ignore[arg-type]
        if plan.body == "conclude":
            run.defer_context(f"concluding {run.execution.call_id}")
            run.conclude_turn()
        if plan.body == "abort":
            run.defer_context(f"aborting {run.execution.call_id}")
            run.execution.agent.abort(Unprintable())
        return {"n": args["n"]}

    async def _post(self, execution: Any, result: ToolResult, next: Any) -> Any:
        plan = self.plan(execution)
        mode = plan.post
        if mode == "raise":
            raise hostile(plan.raise_kind)
        if mode == "block":
            return block("blocked", [f"block {execution.call_id}"])
        if mode == "block-nonstr":
            forged = block("x")
            object.__setattr__(forged, "feedback", Impostor())
            return forged
        if mode == "content":
            return accept(content="rewritten")
        if mode == "content-hostile":
            return accept(content=[Impostor()])
        if mode == "value":
            return accept(value={"n": -1})
        if mode == "bad-context":
            return accept(additional_contexts=[Message("user", Impostor())])  # type: ignore[arg-type]
        if mode == "context":
            return accept(additional_contexts=[f"post {execution.call_id}"])
        return await next()

    def _finalize(self, execution: Any, result: ToolResult) -> Any:
        mode = self.plan(execution).finalize
        if mode == "raise":
            raise hostile(self.plan(execution).raise_kind)
        return {"replace": "final word", "wrong": Impostor()}.get(mode)

    def _observe(self, execution: Any, result: ToolResult) -> None:
        mode = self.plan(execution).observer
        if mode == "raise":
            raise hostile(self.plan(execution).raise_kind)
        if mode == "abort" and execution.agent is not None:
            execution.agent.abort("observer stops the turn")

    async def _pre_step(self, event: Any, next: Any) -> Any:
        if event.step == 2:
            if self.loop == "pre-step-raise":
                raise hostile(self.loop_kind)
            if self.loop == "pre-step-wrong":
                return Deny("wrong decision type")
            if self.loop == "reject":
                return __import__("dsh_policy.core", fromlist=["reject"]).reject("no")
        return await next()

    def _stopping(self, event: Any) -> None:
        if self.loop == "stop-raise":
            raise hostile(self.loop_kind)
        if self.loop == "stop-steer" and not self.steered:
            self.steered = True
            event.agent.steer("one more")


def _raise(exc: BaseException) -> Any:
    raise exc


def check(scenario: Hostile, agent: Any) -> None:
    assert_well_formed(agent)
    assert agent.status == "idle"
    issued = [f.data["call_id"] for f in agent.session.facts if f.type == "tool/call"]
    committed = [f.data["call_id"] for f in agent.session.facts if f.type == "tool/result"]
    assert issued == committed
    for fact in agent.session.facts:
        if fact.type == "tool/result" and fact.data["is_error"]:
            assert fact.data["content"] and all(type(text) is str for text in fact.data["content"])
            assert type(fact.data["error"]["message"]) is str


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=scripts, loop=loop_behaviours, loop_kind=raise_kinds)
def test_hostile_behaviour_at_any_seam_never_dangles_a_call_or_escapes_a_turn(
    steps: list[list[Plan]], loop: str, loop_kind: str
) -> None:
    scenario = Hostile(steps, loop, loop_kind)

    async def run() -> Any:
        agent = await scenario.harness.create_agent(model=scenario.model)
        agent.followup("go")
        await agent.wait_idle()
        check(scenario, agent)
        turns = sum(1 for f in agent.session.facts if f.type == "turn/end")
        agent.followup("and again")  # the loop survived whatever happened
        await agent.wait_idle()
        check(scenario, agent)
        assert sum(1 for f in agent.session.facts if f.type == "turn/end") == turns + 1
        return agent

    anyio.run(run)
