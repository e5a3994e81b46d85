"""The agent loop beyond the checklist: parallel bodies, cancellation, drivers, model failures."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from dsh_policy.core import Message, ModelReply, ModelRequest, ScriptedModel, reply
from dsh_policy.core.agent import MAX_PARALLEL_TOOLS, parse_arguments

pytestmark = pytest.mark.anyio


class Concurrency:
    """Records how many bodies run at once and in which order they finish."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.finished: list[str] = []

    def body(self, delay_steps: int) -> Any:
        async def run(args: Any, run: Any) -> str:
            self.running += 1
            self.peak = max(self.peak, self.running)
            for _ in range(1 if args.get("fast") else delay_steps):
                await anyio.sleep(0)
            self.running -= 1
            self.finished.append(run.execution.call_id)
            return run.execution.call_id

        return run


async def test_concurrency_safe_bodies_run_in_parallel_and_commit_in_model_order(kit: Any) -> None:
    probe = Concurrency()
    kit.tool("read", probe.body(20), concurrency_safe=True)
    calls = [("read", "{}"), ("read", '{"fast": 1}'), ("read", "{}")]
    agent, _ = await kit.run([reply(tool_calls=calls), reply("done")], "go")
    assert probe.peak == 3
    committed = [f.data["call_id"] for f in agent.session.facts if f.type == "tool/result"]
    issued = [f.data["call_id"] for f in agent.session.facts if f.type == "tool/call"]
    assert committed == issued
    assert probe.finished[0] == issued[1]  # the fast one finished first but committed second


async def test_exclusive_calls_are_barriers(kit: Any) -> None:
    probe = Concurrency()
    kit.tool("read", probe.body(5), concurrency_safe=True)
    kit.tool("write", probe.body(5))
    calls = [("read", "{}"), ("read", "{}"), ("write", "{}"), ("read", "{}")]
    agent, _ = await kit.run([reply(tool_calls=calls), reply("done")], "go")
    issued = [f.data["call_id"] for f in agent.session.facts if f.type == "tool/call"]
    assert probe.peak == 2
    assert set(probe.finished[:2]) == set(issued[:2]) and probe.finished[2:] == issued[2:]


async def test_parallel_bodies_are_capped(kit: Any) -> None:
    probe = Concurrency()
    kit.tool("read", probe.body(10), concurrency_safe=True)
    calls = [("read", "{}")] * (MAX_PARALLEL_TOOLS + 5)
    await kit.run([reply(tool_calls=calls), reply("done")], "go")
    assert probe.peak == MAX_PARALLEL_TOOLS
    assert len(probe.finished) == MAX_PARALLEL_TOOLS + 5


async def test_pre_execute_runs_in_model_order_before_any_body(kit: Any) -> None:
    order: list[str] = []
    kit.tool("read", lambda a, r: order.append(f"body {r.execution.call_id}"), concurrency_safe=True)
    def pre(execution: Any, next: Any) -> Any:
        order.append(f"pre {execution.call_id}")
        return next()

    kit.harness.on("tools/pre-execute", pre)
    agent, _ = await kit.run([reply(tool_calls=[("read", "{}"), ("read", "{}")]), reply("ok")], "go")
    ids = [f.data["call_id"] for f in agent.session.facts if f.type == "tool/call"]
    assert order[:2] == [f"pre {ids[0]}", f"pre {ids[1]}"]


async def test_tool_call_fact_is_appended_before_pre_execute(kit: Any) -> None:
    seen: list[list[str]] = []
    kit.tool("t")

    def listener(execution: Any, next: Any) -> Any:
        seen.append([f.type for f in execution.agent.session.facts])
        return next()

    kit.harness.on("tools/pre-execute", listener)
    await kit.run([reply(tool_calls=[("t", "{}")]), reply("ok")], "go")
    assert seen[0][-1] == "tool/call"


class WaitingModel:
    """Replies from a script, but the request named ``hang`` waits until cancelled."""

    def __init__(self, replies: list[ModelReply], hang_at: int) -> None:
        self.script = ScriptedModel(replies)
        self.hang_at = hang_at
        self.started = anyio.Event()

    async def complete(self, request: ModelRequest) -> ModelReply:
        if len(self.script.requests) == self.hang_at:
            self.script.requests.append(request)
            self.started.set()
            await anyio.sleep(60)
        return await self.script.complete(request)


async def test_abort_during_a_model_request_ends_the_turn_aborted_and_the_loop_survives(kit: Any) -> None:
    model = WaitingModel([reply("unused"), reply("second turn")], hang_at=0)
    agent = await kit.harness.create_agent(model=model)
    errors: list[str] = []
    kit.harness.on("agent/error", lambda e: errors.append(e.reason))
    agent.followup(Message.user("slow question"))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent.wait_idle)
            await model.started.wait()
            agent.abort("user pressed escape")
    assert kit.turn_ends(agent) == [{"reason": "aborted", "detail": "user pressed escape"}]
    assert errors == ["aborted"]
    assert kit.types(agent)[-2:] == ["step/end", "turn/end"]
    agent.followup(Message.user("again"))
    await agent.wait_idle()
    assert kit.turn_ends(agent)[-1] == {"reason": "completed"}


async def test_abort_during_tool_bodies_still_commits_one_result_per_call(kit: Any) -> None:
    started = anyio.Event()

    async def slow(args: Any, run: Any) -> str:
        started.set()
        await anyio.sleep(60)
        return "never"

    kit.tool("slow", slow, concurrency_safe=True)
    kit.tool("after", lambda a, r: "never")
    calls = [("slow", "{}"), ("slow", "{}"), ("after", "{}")]
    agent, _ = await kit.agent([reply(tool_calls=calls), reply("x")])
    agent.followup(Message.user("go"))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent.wait_idle)
            await started.wait()
            agent.abort("stop")
    results = [f for f in agent.session.facts if f.type == "tool/result"]
    codes = [f.data["error"]["info"]["code"] for f in results]
    assert codes == ["ABORTED", "ABORTED", "ABORTED_BEFORE_DISPATCH"]
    assert kit.turn_ends(agent)[0]["reason"] == "aborted"
    assert [name for name, _ in kit.calls] == ["slow", "slow"]  # "after" never started


async def test_a_model_failure_is_an_error_turn(kit: Any) -> None:
    agent, _ = await kit.run([], "hello")
    end = kit.turn_ends(agent)[0]
    assert end["reason"] == "error" and end["error"]["code"] == "UNKNOWN"
    assert "scripted model has 0 replies" in end["error"]["message"]
    assert kit.types(agent) == ["turn/start", "step/start", "user/message", "step/end", "turn/end"]


async def test_max_tokens_stop_reason_ends_the_turn_as_max_tokens(kit: Any) -> None:
    agent, _ = await kit.run([ModelReply(text="trunc", stop_reason="max_tokens")], "hello")
    assert kit.turn_ends(agent) == [{"reason": "max_tokens"}]


async def test_each_followup_is_its_own_turn(kit: Any) -> None:
    agent, model = await kit.run([reply("a"), reply("b")], "one", "two")
    assert [f.turn for f in agent.session.facts if f.type == "turn/start"] == [1, 2]
    assert kit.sent(model, 1) == ["one", "a", "two"]


async def test_inject_alone_does_not_wake_the_agent(kit: Any) -> None:
    agent, model = await kit.agent([reply("ok")])
    agent.inject(Message.from_plugin("quiet context"))
    await agent.wait_idle()
    assert model.requests == [] and agent.inbox.pending()
    agent.followup("now")
    await agent.wait_idle()
    assert kit.sent(model, 0) == ["quiet context", "now"]


async def test_a_background_runner_drives_the_agent_and_wait_idle_waits_for_it(kit: Any) -> None:
    agent, model = await kit.agent([reply("a"), reply("b")])
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent.run)
            agent.followup("one")
            await agent.wait_idle()
            assert len(model.requests) == 1
            agent.followup("two")
            await agent.wait_idle()
            assert len(model.requests) == 2
            tasks.cancel_scope.cancel()
    assert kit.turn_ends(agent) == [{"reason": "completed"}, {"reason": "completed"}]


async def test_pre_step_returning_a_wrong_type_is_an_error_turn(kit: Any) -> None:
    kit.harness.on("agent/pre-step", lambda e, next: "go ahead")
    agent, model = await kit.run([reply("never")], "hello")
    assert kit.turn_ends(agent)[0]["reason"] == "error" and model.requests == []


async def test_a_raising_agent_error_listener_does_not_break_the_loop(kit: Any) -> None:
    kit.harness.on("agent/error", lambda e: 1 / 0)
    kit.harness.on("agent/pre-step", lambda e, next: 1 / 0)
    agent, _ = await kit.run([], "hello")
    assert kit.turn_ends(agent)[0]["reason"] == "error" and agent.status == "idle"


async def test_the_model_sees_tool_specs_and_results(kit: Any) -> None:
    kit.tool("t", lambda a, r: "tool says hi", parameters={"type": "object", "properties": {}})
    _, model = await kit.run([reply(tool_calls=[("t", "{}")]), reply("ok")], "go")
    assert [spec.name for spec in model.requests[0].tools] == ["t"]
    assert kit.sent(model, 1)[-1] == "tool says hi"


def test_argument_parsing_follows_the_model_text() -> None:
    assert parse_arguments("") == {} and parse_arguments("  ") == {}
    assert parse_arguments('{"a": [1]}') == {"a": [1]}
    assert parse_arguments("{oops") == "{oops"
