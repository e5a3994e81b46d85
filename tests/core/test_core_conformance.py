"""HARNESS.md section 5, one test per checklist item, through the real loop with a scripted model."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import pytest
from dsh_policy.core import (
    Message,
    MessageSource,
    ModelToolCall,
    PreStepEvent,
    ToolResultMessage,
    accept,
    ask,
    block,
    deny,
    enter,
    reject,
    reply,
)
from dsh_policy.core.session import MemoryStore, Session

pytestmark = pytest.mark.anyio


# --- agent/pre-step -------------------------------------------------------------------------------


async def test_c01_default_enter_logs_the_user_message_unchanged(kit: Any) -> None:
    agent, model = await kit.run([reply("hi")], "hello")
    facts = [f for f in agent.session.facts if f.type == "user/message"]
    assert len(facts) == 1
    assert facts[0].data["text"] == "hello"
    assert facts[0].data["source"]["kind"] == "user"
    assert model.requests[0].messages == (Message.user("hello"),)


async def test_c02_pre_step_coordinates_for_one_tool_round(kit: Any) -> None:
    seen: list[tuple[int, int, int]] = []
    def listener(event: PreStepEvent, next: Any) -> Any:
        seen.append((event.turn, event.step, len(event.messages)))
        return next()

    kit.harness.on("agent/pre-step", listener)
    kit.tool("echo")
    await kit.run([reply(tool_calls=[("echo", "{}")]), reply("done")], "go")
    assert seen == [(1, 1, 1), (1, 2, 0)]


async def test_c03_pre_step_messages_are_frozen_and_identity_is_kept(kit: Any) -> None:
    original = Message.user("hello")
    problems: list[str] = []

    def listener(event: PreStepEvent, next: Any) -> Any:
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.messages[0].text = "changed"
        with pytest.raises(AttributeError):
            event.messages.append(Message.user("more"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.step = 9
        if event.messages[0] is not original:
            problems.append("identity replaced")
        return next()

    kit.harness.on("agent/pre-step", listener)
    agent, model = await kit.agent([reply("ok")])
    agent.followup(original)
    await agent.wait_idle()
    assert problems == []
    assert model.requests[0].messages[0] is original
    assert kit.texts(agent) == ["hello"]


async def test_c04_enter_with_rewritten_content_is_logged_and_sent(kit: Any) -> None:
    kit.harness.on(
        "agent/pre-step", lambda e, next: enter([Message.user(m.text.upper()) for m in e.messages])
    )
    agent, model = await kit.run([reply("ok")], "quiet please")
    assert kit.texts(agent) == ["QUIET PLEASE"]
    assert kit.sent(model, 0) == ["QUIET PLEASE"]


async def test_c05_enter_with_an_extra_plugin_message_logs_it_separately_and_sends_it(kit: Any) -> None:
    extra = Message.from_plugin("policy: be careful", "gate")
    kit.harness.on("agent/pre-step", lambda e, next: enter([*e.messages, extra]))
    agent, model = await kit.run([reply("ok")], "do it")
    facts = [f for f in agent.session.facts if f.type == "user/message"]
    assert [f.data["text"] for f in facts] == ["do it", "policy: be careful"]
    assert facts[1].data["source"] == {"kind": "plugin", "plugin": "gate"}
    assert model.requests[0].messages == (Message.user("do it"), extra)


async def test_c06_completed_turn_whose_pending_input_is_rewritten_to_empty_opens_no_extra_step(
    kit: Any,
) -> None:
    stops = 0

    def stopping(event: Any) -> None:
        nonlocal stops
        stops += 1
        if stops == 1:
            event.agent.steer(Message.from_plugin("one more thing"))

    kit.harness.on("agent/turn-stopping", stopping)
    kit.harness.on(
        "agent/pre-step", lambda e, next: enter([]) if e.step > 1 else next()
    )
    agent, model = await kit.run([reply("ok"), reply("never")], "hello")
    assert len(model.requests) == 1
    assert kit.types(agent).count("step/start") == 1
    assert kit.turn_ends(agent) == [{"reason": "completed"}]
    assert "one more thing" not in kit.texts(agent)


async def test_c07_reject_makes_no_model_request(kit: Any) -> None:
    kit.harness.on("agent/pre-step", lambda e, next: reject("not today"))
    agent, model = await kit.run([reply("never")], "hello")
    assert model.requests == []
    assert kit.types(agent) == ["turn/start", "turn/end"]
    assert kit.turn_ends(agent)[0]["reason"] == "blocked"


async def test_c08_inject_and_steer_during_a_pending_pre_step_land_after_the_prompt(kit: Any) -> None:
    staged = False

    async def listener(event: PreStepEvent, next: Any) -> Any:
        nonlocal staged
        if not staged:
            staged = True
            event.agent.inject(Message.from_plugin("injected"))
            await anyio.sleep(0)
            event.agent.steer(Message.from_plugin("steered"))
        return await next()

    kit.harness.on("agent/pre-step", listener)
    agent, model = await kit.run([reply("first"), reply("second")], "prompt")
    assert kit.sent(model, 0) == ["prompt"]
    assert kit.sent(model, 1) == ["prompt", "first", "injected", "steered"]
    assert kit.texts(agent) == ["prompt", "injected", "steered"]
    assert kit.types(agent).count("turn/start") == 1


async def _reject_bad_and_stage(kit: Any) -> tuple[Any, Any]:
    def listener(event: PreStepEvent, next: Any) -> Any:
        if any(m.text == "bad" for m in event.messages):
            event.agent.followup(Message.user("staged followup"))
            event.agent.inject(Message.from_plugin("staged context"))
            return reject("destructive")
        return next()

    kit.harness.on("agent/pre-step", listener)
    return await kit.run([reply("a"), reply("b"), reply("c")], "bad")


async def test_c09_input_staged_while_a_rejected_batch_was_pending_stays_queued(kit: Any) -> None:
    agent, model = await _reject_bad_and_stage(kit)
    assert model.requests == []
    assert agent.status == "idle"
    assert [m.text for _, m in agent.inbox.next_turn] == ["staged followup"]
    assert [m.text for _, m in agent.inbox.next_step] == ["staged context"]


async def test_c10_staged_input_is_sent_on_the_next_wake(kit: Any) -> None:
    agent, model = await _reject_bad_and_stage(kit)
    agent.steer(Message.from_plugin("wake up"))
    await agent.wait_idle()
    assert kit.sent(model, 0) == ["staged context", "wake up", "staged followup"]
    assert not agent.inbox.pending()


async def test_c11_the_blocked_prompt_is_never_sent(kit: Any) -> None:
    agent, model = await _reject_bad_and_stage(kit)
    agent.followup(Message.user("next"))
    await agent.wait_idle()
    sent = [text for i in range(len(model.requests)) for text in kit.sent(model, i)]
    assert "bad" not in sent
    assert "bad" not in kit.texts(agent)
    assert "next" in sent


class _FlakyStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.failing = False

    def append(self, record: Any) -> None:
        if self.failing:
            raise OSError("disk full")
        super().append(record)


async def test_c12_failing_durable_append_leaves_the_inbox_unchanged_and_the_agent_idle(kit: Any) -> None:
    store = _FlakyStore()
    agent, model = await kit.agent([reply("never")], session=Session(store))
    facts_before = list(agent.session.records)
    store.failing = True
    with pytest.raises(OSError, match="disk full"):
        agent.followup(Message.user("hello"))
    with pytest.raises(OSError):
        agent.inject(Message.from_plugin("context"))
    assert not agent.inbox.pending()
    assert agent.session.records == facts_before
    store.failing = False
    await agent.wait_idle()
    assert agent.status == "idle"
    assert model.requests == []


async def test_c13_a_blocked_prompt_keeps_the_adjacent_queued_prompt(kit: Any) -> None:
    kit.harness.on(
        "agent/pre-step",
        lambda e, next: reject() if any(m.text == "bad" for m in e.messages) else next(),
    )
    agent, model = await kit.run([reply("one"), reply("two")], "bad", "good")
    assert model.requests == []
    assert [m.text for _, m in agent.inbox.next_turn] == ["good"]
    agent.followup(Message.user("third"))
    await agent.wait_idle()
    assert [kit.sent(model, i)[-1] for i in range(2)] == ["good", "third"]
    assert [e["reason"] for e in kit.turn_ends(agent)] == ["blocked", "completed", "completed"]


async def test_c14_raising_pre_step_listener_ends_the_turn_with_error_and_keeps_later_work(kit: Any) -> None:
    statuses: list[str] = []
    errors: list[Any] = []
    kit.harness.on("agent/status", lambda e: statuses.append(e.status))
    kit.harness.on("agent/error", lambda e: errors.append(e))

    def listener(event: PreStepEvent, next: Any) -> Any:
        raise RuntimeError("boom")

    kit.harness.on("agent/pre-step", listener)
    agent, model = await kit.run([reply("never")], "first", "later")
    assert kit.turn_ends(agent) == [{"reason": "error", "error": {"message": "boom", "code": "UNKNOWN"}}]
    assert len(errors) == 1 and str(errors[0].error) == "boom"
    assert statuses == ["running", "idle"]
    assert [m.text for _, m in agent.inbox.next_turn] == ["later"]
    assert model.requests == []


# --- agent/session-start --------------------------------------------------------------------------


async def test_c15_session_start_fires_once_with_source_startup_before_any_turn(kit: Any) -> None:
    seen: list[tuple[str, int]] = []
    kit.harness.on(
        "agent/session-start", lambda e: seen.append((e.source, len(e.agent.session.facts)))
    )
    agent, _ = await kit.run([reply("a"), reply("b")], "one", "two")
    assert seen == [("startup", 0)]
    assert kit.types(agent).count("turn/start") == 2


async def test_c16_session_start_listener_can_inject_context_the_first_request_sees(kit: Any) -> None:
    kit.harness.on("agent/session-start", lambda e: e.agent.inject(Message.from_plugin("repo rules")))
    _, model = await kit.run([reply("ok")], "hello")
    assert kit.sent(model, 0) == ["repo rules", "hello"]


async def test_c17_raising_session_start_listener_does_not_abort_creation(kit: Any) -> None:
    def broken(event: Any) -> None:
        raise RuntimeError("listener bug")

    later: list[str] = []
    kit.harness.on("agent/session-start", broken)
    kit.harness.on("agent/session-start", lambda e: later.append(e.source))
    agent, model = await kit.run([reply("ok")], "hello")
    assert later == ["startup"]
    assert kit.turn_ends(agent) == [{"reason": "completed"}]
    assert len(model.requests) == 1


# --- context buffering ----------------------------------------------------------------------------


async def test_c18_two_calls_both_results_come_before_the_first_context(kit: Any) -> None:
    kit.tool("a")
    kit.tool("b")
    kit.harness.on(
        "tools/post-execute",
        lambda ex, result, next: accept(additional_contexts=[Message.from_plugin(f"context of {ex.name}")]),
    )
    agent, model = await kit.run(
        [reply(tool_calls=[("a", "{}"), ("b", "{}")]), reply("done")], "go"
    )
    order = [
        f.type if f.type != "user/message" else f.data["text"]
        for f in agent.session.facts
        if f.type in ("tool/result", "user/message")
    ]
    assert order == ["go", "tool/result", "tool/result", "context of a", "context of b"]
    assert kit.sent(model, 1)[-2:] == ["context of a", "context of b"]


async def test_c19_two_contexts_deferred_by_one_tool_are_logged_after_its_result_in_order(kit: Any) -> None:
    def body(args: Any, run: Any) -> str:
        run.defer_context("first note")
        run.defer_context("second note")
        return "ok"

    kit.tool("noter", body)
    agent, _ = await kit.run([reply(tool_calls=[("noter", "{}")]), reply("done")], "go")
    facts = agent.session.facts
    result_at = next(i for i, f in enumerate(facts) if f.type == "tool/result")
    later = [f.data["text"] for f in facts[result_at:] if f.type == "user/message"]
    assert later == ["first note", "second note"]
    assert all(f.data["source"]["kind"] == "tool" for f in facts[result_at:] if f.type == "user/message")


# --- tools/pre-execute ----------------------------------------------------------------------------


async def test_c20_deny_skips_the_body_and_the_model_sees_an_error_result_with_the_reason(kit: Any) -> None:
    kit.tool("rm")
    kit.harness.on("tools/pre-execute", lambda ex, next: deny("rm is destructive"))
    _, model = await kit.run([reply(tool_calls=[("rm", '{"path": "/"}')]), reply("ok")], "clean")
    assert kit.calls == []
    seen = [e for e in model.requests[1].messages if isinstance(e, ToolResultMessage)]
    assert len(seen) == 1
    assert seen[0].is_error and seen[0].text == "Error: rm is destructive"


# --- the worked example plugin --------------------------------------------------------------------


class GuardianPlugin:
    """The worked example: notify, gate steps, gate calls, rewrite results, audit results."""

    name = "guardian"

    def __init__(self) -> None:
        self.fired: list[str] = []

    def apply(self, ctx: Any, config: Any = None) -> None:
        ctx.on("agent/session-start", self.session_start)
        ctx.on("agent/pre-step", self.pre_step)
        ctx.on("tools/pre-execute", self.pre_execute)
        ctx.on("tools/post-execute", self.post_execute)
        ctx.on("tools/result", self.result)
        ctx.tools.guard(lambda ex: "no root" if ex.arguments.get("path") == "/" else None)

    def session_start(self, event: Any) -> None:
        self.fired.append("session-start")
        event.agent.inject(Message.from_plugin("guardian active", self.name))

    def pre_step(self, event: PreStepEvent, next: Any) -> Any:
        self.fired.append("pre-step")
        if any("rm -rf" in m.text for m in event.messages):
            return reject("destructive prompt")
        return next()

    def pre_execute(self, execution: Any, next: Any) -> Any:
        self.fired.append("pre-execute")
        return deny("no deleting") if execution.name == "delete" else next()

    def post_execute(self, execution: Any, result: Any, next: Any) -> Any:
        self.fired.append("post-execute")
        if "secret" in result.text:
            return accept(content="[redacted]")
        return next()

    def result(self, execution: Any, result: Any) -> None:
        self.fired.append("result")


async def test_c21_worked_example_plugin_fires_all_four_seams_in_one_session(kit: Any) -> None:
    plugin = GuardianPlugin()
    kit.harness.plugin(plugin)
    kit.tool("read", lambda args, run: "the secret is 42")
    agent, model = await kit.run([reply(tool_calls=[("read", "{}")]), reply("done")], "read it")
    assert {"session-start", "pre-step", "pre-execute", "post-execute", "result"} <= set(plugin.fired)
    assert [f.data["content"] for f in agent.session.facts if f.type == "tool/result"] == [("[redacted]",)]
    assert kit.sent(model, 0) == ["guardian active", "read it"]


async def test_c22_the_worked_example_rejects_a_destructive_prompt_in_a_no_step_turn(kit: Any) -> None:
    kit.harness.plugin(GuardianPlugin())
    agent, model = await kit.run([reply("never")], "please rm -rf /")
    assert model.requests == []
    assert kit.types(agent) == ["turn/start", "turn/end"]
    assert kit.turn_ends(agent)[0] == {"reason": "blocked", "detail": "destructive prompt"}


async def test_c23_disposing_the_plugin_removes_all_its_listeners(kit: Any) -> None:
    baseline = kit.bus.count()
    plugin = GuardianPlugin()
    fiber = kit.harness.plugin(plugin)
    assert kit.bus.count() == baseline + 5
    assert len(kit.harness.runtime.tools.root_scope.guards) == 1
    fiber.dispose()
    assert kit.bus.count() == baseline
    assert kit.harness.runtime.tools.root_scope.guards == []
    kit.tool("delete")
    await kit.run([reply(tool_calls=[("delete", '{"path": "/"}')]), reply("ok")], "rm -rf /")
    assert plugin.fired == []
    assert kit.calls == [("delete", {"path": "/"})]
    # Reload = dispose + apply: the same plugin object applies again cleanly.
    kit.harness.plugin(plugin)
    assert kit.bus.count() == baseline + 5


# --- tool pipeline items --------------------------------------------------------------------------


async def test_c24_context_order_is_deferred_then_wrapper_then_post(kit: Any) -> None:
    def body(args: Any, run: Any) -> str:
        run.defer_context("deferred")
        return "ok"

    async def wrapper(execution: Any, next: Any) -> Any:
        result = await next()
        return dataclasses.replace(
            result, additional_contexts=(*result.additional_contexts, Message.from_plugin("wrapper"))
        )

    kit.tool("t", body)
    kit.harness.on("tools/execute", wrapper)
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(additional_contexts=["post"]))
    agent, _ = await kit.run([reply(tool_calls=[("t", "{}")]), reply("done")], "go")
    assert kit.texts(agent)[1:] == ["deferred", "wrapper", "post"]


async def test_c25_block_drops_deferred_contexts_and_a_raise_keeps_them(kit: Any) -> None:
    def body(args: Any, run: Any) -> str:
        run.defer_context(f"deferred by {args['mode']}")
        if args["mode"] == "raise":
            raise RuntimeError("tool broke")
        return "ok"

    kit.tool("t", body)
    kit.harness.on(
        "tools/post-execute",
        lambda ex, r, next: block("blocked!", [Message.from_plugin("from block")])
        if ex.arguments["mode"] == "block"
        else next(),
    )
    agent, _ = await kit.run(
        [reply(tool_calls=[("t", '{"mode": "block"}'), ("t", '{"mode": "raise"}')]), reply("done")], "go"
    )
    results = [f for f in agent.session.facts if f.type == "tool/result"]
    assert results[0].data["content"] == ("blocked!",) and results[0].data["is_error"]
    assert results[1].data["content"] == ("Error: tool broke",)
    assert kit.texts(agent)[1:] == ["from block", "deferred by raise"]


async def test_c26_phase_order_is_pre_execute_body_post_finalize_result(kit: Any) -> None:
    order: list[str] = []

    def body(args: Any, run: Any) -> str:
        order.append("body")
        return "ok"

    def finalize(execution: Any, result: Any) -> None:
        order.append("finalize")

    async def wrapper(execution: Any, next: Any) -> Any:
        order.append("execute(before)")
        result = await next()
        order.append("execute(after)")
        return result

    kit.tool("t", body, finalize_content=finalize)
    kit.harness.on("tools/pre-execute", kit.passthrough(order, "pre"))
    kit.harness.on("tools/execute", wrapper)
    kit.harness.on("tools/post-execute", kit.passthrough(order, "post"))
    kit.harness.on("tools/result", lambda ex, r: order.append("result"))
    await kit.run([reply(tool_calls=[("t", "{}")]), reply("done")], "go")
    assert order == ["pre", "execute(before)", "body", "execute(after)", "post", "finalize", "result"]


async def test_c27_a_pre_aborted_call_runs_only_finalize_and_result(kit: Any) -> None:
    order: list[str] = []

    def log(stage: str) -> Any:
        def listener(execution: Any, *rest: Any) -> Any:
            order.append(f"{stage} {execution.call_id}")
            if stage == "pre" and execution.call_id == "first":
                execution.agent.abort("user pressed stop")  # the next call is aborted before it starts
            return rest[-1]() if rest and callable(rest[-1]) else None

        return listener

    def finalize(execution: Any, result: Any) -> None:
        order.append(f"finalize {execution.call_id}")

    kit.tool("t", lambda a, r: order.append("body"), finalize_content=finalize)
    kit.harness.on("tools/pre-execute", log("pre"))
    kit.harness.on("tools/execute", log("execute"))
    kit.harness.on("tools/post-execute", log("post"))
    kit.harness.on("tools/result", lambda ex, r: order.append(f"result {ex.call_id}"))
    calls = [ModelToolCall("first", "t", "{}"), ModelToolCall("second", "t", "{}")]
    agent, _ = await kit.run([reply(tool_calls=calls), reply("never")], "go")
    assert [entry for entry in order if entry.endswith("second")] == ["finalize second", "result second"]
    codes = [f.data["error"]["info"]["code"] for f in agent.session.facts if f.type == "tool/result"]
    assert codes == ["ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"]
    assert kit.turn_ends(agent) == [{"reason": "aborted", "detail": "user pressed stop"}]


class _Approver:
    def __init__(self, outcome: str) -> None:
        self.outcome = outcome

    async def request(self, execution: Any, reason: Any) -> str:
        if self.outcome == "raise":
            raise ConnectionError("approval UI crashed")
        return self.outcome


@pytest.mark.parametrize(
    ("service", "decision", "expected"),
    [
        (None, deny("writes to /etc"), "Error: writes to /etc"),
        (None, ask("needs a human"), "Error: needs a human"),
        (None, ask(), 'Error: tool "t" requires approval (not yet supported)'),
        ("allowed-once", ask(), None),
        ("rejected", ask(), 'Error: the user rejected tool "t"'),
        ("cancelled", ask(), 'Error: approval for tool "t" was cancelled'),
        ("unavailable", ask(), 'Error: tool "t" requires approval, but no approval channel is available'),
        ("raise", ask(), 'Error: tool "t" requires approval, but no approval channel is available'),
        ("perhaps", ask(), 'Error: tool "t" requires approval, but no approval channel is available'),
    ],
)
async def test_c32_deny_ask_and_approval_outcomes_give_their_exact_reasons(
    kit: Any, service: str | None, decision: Any, expected: str | None
) -> None:
    kit.tool("t", lambda a, r: "ran")
    if service is not None:
        kit.harness.provide("approval", _Approver(service))
    kit.harness.on("tools/pre-execute", lambda ex, next: decision)
    _, model = await kit.run([reply(tool_calls=[("t", "{}")]), reply("ok")], "go")
    seen = next(e for e in model.requests[1].messages if isinstance(e, ToolResultMessage))
    if expected is None:
        assert not seen.is_error and seen.text == "ran" and len(kit.calls) == 1
    else:
        assert seen.is_error and seen.text == expected and kit.calls == []


# --- loop items -----------------------------------------------------------------------------------


async def test_c28_a_steer_from_turn_stopping_continues_the_same_turn(kit: Any) -> None:
    steered = False

    def stopping(event: Any) -> None:
        nonlocal steered
        if not steered:
            steered = True
            event.agent.steer(Message.from_plugin("you forgot the tests"))

    kit.harness.on("agent/turn-stopping", stopping)
    agent, model = await kit.run([reply("done"), reply("tests added")], "build it")
    assert len(model.requests) == 2
    assert kit.types(agent).count("turn/start") == 1
    steps = [f.step for f in agent.session.facts if f.type == "step/start"]
    assert steps == [1, 2]
    assert kit.sent(model, 1)[-1] == "you forgot the tests"


async def test_c29_raising_turn_stopping_listener_gives_an_error_turn_and_the_loop_survives(kit: Any) -> None:
    raised = False

    def stopping(event: Any) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise ValueError("stop hook crashed")

    kit.harness.on("agent/turn-stopping", stopping)
    agent, model = await kit.run([reply("one"), reply("two")], "first")
    assert kit.turn_ends(agent)[0]["reason"] == "error"
    assert kit.turn_ends(agent)[0]["error"]["message"] == "stop hook crashed"
    agent.followup(Message.user("second"))
    await agent.wait_idle()
    assert kit.turn_ends(agent)[1] == {"reason": "completed"}
    assert len(model.requests) == 2


async def test_c30_concludes_turn_stops_after_one_request(kit: Any) -> None:
    def finish(args: Any, run: Any) -> str:
        run.conclude_turn()
        return "submitted"

    kit.tool("submit", finish)
    agent, model = await kit.run([reply(tool_calls=[("submit", "{}")]), reply("never")], "go")
    assert len(model.requests) == 1
    assert kit.turn_ends(agent) == [{"reason": "completed"}]


async def test_c31_an_inject_during_a_tool_lands_after_the_tool_result(kit: Any) -> None:
    def body(args: Any, run: Any) -> str:
        run.execution.agent.inject(Message.from_plugin("side note"))
        return "ok"

    kit.tool("t", body)
    agent, model = await kit.run([reply(tool_calls=[("t", "{}"), ("t", "{}")]), reply("done")], "go")
    kinds = [f.type for f in agent.session.facts]
    last_result = max(i for i, t in enumerate(kinds) if t == "tool/result")
    facts = agent.session.facts
    notes = [i for i, f in enumerate(facts) if f.type == "user/message" and f.data["text"] == "side note"]
    assert len(notes) == 2 and all(i > last_result for i in notes)
    assert kit.sent(model, 1)[-2:] == ["side note", "side note"]
    assert all(m.source == MessageSource("plugin") for m in model.requests[1].messages[-2:])
