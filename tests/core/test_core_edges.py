"""The harness at its edges (issue 17), each case through the real loop.

Seed (000, 4.7): tool errors, listener errors, invalid values and identity-shape failures become
JSON-safe ``isError`` results instead of escaping the turn. Seed (000, 5.2): the context FIFO is
appended after every recorded result when the batch settles, including before an interrupted turn
closes. HARNESS.md 5: a concluding result stops after one request. Seed (001, 6): registrations
roll back through the framework's bookkeeping, so each is removed by its own handle.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from dsh_policy.core import (
    Deny,
    Harness,
    Message,
    ModelReply,
    ModelToolCall,
    ScriptedModel,
    ToolResult,
    accept,
    block,
    define_tool,
    deny,
    reply,
)
from edge_kit import (
    Fatal,
    Impostor,
    NonStringStr,
    Unprintable,
    assert_well_formed,
    facts_of,
    hostile_exceptions,
    raising,
    results,
)

pytestmark = pytest.mark.anyio

HOSTILE = hostile_exceptions()
HOSTILE_IDS = [type(exc).__name__ for exc in HOSTILE]


def one_call(name: str = "t", arguments: str = "{}") -> list[ModelReply]:
    return [reply(tool_calls=[(name, arguments)]), reply("done")]


async def run_turn(kit: Any, replies: list[ModelReply] | None = None, prompt: str = "go") -> Any:
    agent, model = await kit.run(replies or one_call(), prompt)
    assert_well_formed(agent)
    return agent, model


def only_result(agent: Any) -> dict[str, Any]:
    (result,) = results(agent)
    return result


def code_of(result: dict[str, Any]) -> Any:
    return (result["error"] or {}).get("info", {}).get("code")


def assert_answered_in_next_request(model: ScriptedModel) -> None:
    """The request after a tool round carries the call and its (error) result, adjacent."""
    kinds = [type(entry).__name__ for entry in model.requests[1].messages]
    assert kinds[-2:] == ["AssistantMessage", "ToolResultMessage"]


# --- hostile failures from every stage become error results --------------------------------------


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_pre_execute_listener_failure_is_a_listener_failed_result(kit: Any, exc: Any) -> None:
    kit.tool("t")
    kit.harness.on("tools/pre-execute", raising(exc))
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "LISTENER_FAILED"
    assert result["content"][0].startswith("Error: tools/pre-execute failed: ")
    assert kit.calls == []
    assert facts_of(agent, "turn/end") == [{"reason": "completed"}]
    assert_answered_in_next_request(model)


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_guard_failure_is_a_guard_failed_result(kit: Any, exc: Any) -> None:
    kit.tool("t")
    kit.harness.tools.guard(raising(exc))
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "GUARD_FAILED"
    assert kit.calls == []
    assert_answered_in_next_request(model)


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_execute_wrapper_failure_is_a_listener_failed_result(kit: Any, exc: Any) -> None:
    kit.tool("t")
    kit.harness.on("tools/execute", raising(exc))
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "LISTENER_FAILED"
    assert result["error"]["info"]["stage"] == "tools/execute"
    assert_answered_in_next_request(model)


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_tool_body_failure_is_a_tool_failed_result(kit: Any, exc: Any) -> None:
    seen: list[Any] = []
    kit.tool("t", raising(exc))
    kit.harness.on("tools/post-execute", lambda ex, r, next: seen.append(r.is_error) or next())
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "TOOL_FAILED"
    assert result["error"]["info"]["name"] == type(exc).__name__
    assert seen == [True]  # post-execute may inspect a tool that raised
    assert_answered_in_next_request(model)


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_post_execute_failure_is_a_listener_failed_result(kit: Any, exc: Any) -> None:
    kit.tool("t")
    kit.harness.on("tools/post-execute", raising(exc))
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "LISTENER_FAILED"
    assert result["error"]["info"]["stage"] == "tools/post-execute"
    assert_answered_in_next_request(model)


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_finalize_content_failure_is_a_finalize_failed_result(kit: Any, exc: Any) -> None:
    calls: list[str] = []

    def finalize(execution: Any, result: ToolResult) -> Any:
        calls.append(execution.call_id)
        raise exc

    kit.tool("t", finalize_content=finalize)
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "FINALIZE_FAILED"
    assert len(calls) == 1  # exactly once, not again on its own failure
    assert_answered_in_next_request(model)


@pytest.mark.parametrize("exc", HOSTILE, ids=HOSTILE_IDS)
async def test_a_hostile_result_observer_changes_nothing(kit: Any, exc: Any) -> None:
    later: list[str] = []
    kit.tool("t", lambda args, run: "fine")
    kit.harness.on("tools/result", raising(exc))
    kit.harness.on("tools/result", lambda ex, r: later.append(r.text))
    agent, _ = await run_turn(kit)
    assert only_result(agent)["content"] == ["fine"]
    assert later == ["fine"]


@pytest.mark.parametrize(
    "reason", [42, None, Unprintable(), Impostor(), b"bytes"], ids=["int", "none", "exc", "impostor", "bytes"]
)
async def test_deny_with_a_non_string_reason_fails_closed_as_the_listeners_error(
    kit: Any, reason: Any
) -> None:
    kit.tool("t")
    kit.harness.on("tools/pre-execute", lambda ex, next: deny(reason))
    agent, model = await run_turn(kit)
    result = only_result(agent)
    assert result["is_error"] and code_of(result) == "LISTENER_FAILED" and kit.calls == []
    assert_answered_in_next_request(model)


async def test_a_deny_forged_past_its_constructor_still_fails_closed(kit: Any) -> None:
    def forged(execution: Any, next: Any) -> Deny:
        decision = deny("fine")
        object.__setattr__(decision, "reason", Unprintable())
        return decision

    kit.tool("t")
    kit.harness.on("tools/pre-execute", forged)
    agent, _ = await run_turn(kit)
    assert code_of(only_result(agent)) == "LISTENER_FAILED" and kit.calls == []


async def test_block_feedback_and_guard_verdicts_that_are_not_strings_fail_closed(kit: Any) -> None:
    kit.tool("a")
    kit.tool("b")
    kit.harness.tools.guard(lambda ex: Impostor() if ex.name == "a" else None)
    kit.harness.on("tools/post-execute", lambda ex, r, next: block(Unprintable()))
    replies = [reply(tool_calls=[("a", "{}"), ("b", "{}")]), reply("done")]
    agent, _ = await run_turn(kit, replies)
    first, second = results(agent)
    assert code_of(first) == "GUARD_FAILED" and code_of(second) == "LISTENER_FAILED"
    assert [name for name, _ in kit.calls] == ["b"]


async def test_hostile_contexts_and_content_from_listeners_fail_that_call_only(kit: Any) -> None:
    kit.tool("a")
    kit.tool("b")

    def post(execution: Any, result: Any, next: Any) -> Any:
        if execution.name == "a":
            return accept(additional_contexts=[Message("user", Unprintable())])  # type: ignore[arg-type]
        return accept(content=[Impostor()], additional_contexts=["kept"])

    kit.harness.on("tools/post-execute", post)
    replies = [reply(tool_calls=[("a", "{}"), ("b", "{}")]), reply("done")]
    agent, _ = await run_turn(kit, replies)
    first, second = results(agent)
    assert code_of(first) == "LISTENER_FAILED" and code_of(second) == "LISTENER_FAILED"


async def test_an_approval_service_returning_a_hostile_outcome_denies(kit: Any) -> None:
    class Approver:
        async def request(self, execution: Any, reason: Any) -> Any:
            return Impostor()

    kit.tool("t")
    kit.harness.provide("approval", Approver())
    kit.harness.on("tools/pre-execute", lambda ex, next: __import__("dsh_policy.core").core.ask("sure?"))
    agent, _ = await run_turn(kit)
    result = only_result(agent)
    assert result["content"] == ['Error: tool "t" requires approval, but no approval channel is available']
    assert kit.calls == []


async def test_a_wrapper_returning_a_malformed_result_is_contained(kit: Any) -> None:
    kit.tool("t")
    kit.harness.on(
        "tools/execute",
        lambda ex, next: ToolResult("yes", (), value={"x": float("nan")}),  # type: ignore[arg-type]
    )
    agent, _ = await run_turn(kit)
    assert code_of(only_result(agent)) == "LISTENER_FAILED" and kit.calls == []


async def test_a_body_returning_a_hostile_mapping_is_invalid_output(kit: Any) -> None:
    class Hostile(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            raise Unprintable()

    kit.tool("t", lambda args, run: Hostile(a=1))
    agent, _ = await run_turn(kit)
    assert code_of(only_result(agent)) == "INVALID_TOOL_OUTPUT"


async def test_a_body_with_conclude_turn_that_then_raises_does_not_conclude(kit: Any) -> None:
    def body(args: Any, run: Any) -> Any:
        run.conclude_turn()
        raise NonStringStr()

    kit.tool("t", body)
    agent, model = await run_turn(kit)
    assert len(model.requests) == 2 and code_of(only_result(agent)) == "TOOL_FAILED"


async def test_a_blocked_concluding_result_does_not_conclude(kit: Any) -> None:
    kit.tool("t", lambda args, run: run.conclude_turn())
    kit.harness.on("tools/post-execute", lambda ex, r, next: block("not like that"))
    agent, model = await run_turn(kit)
    assert len(model.requests) == 2 and code_of(only_result(agent)) == "BLOCKED"


# --- malformed identities and model output --------------------------------------------------------


async def test_arguments_that_are_not_json_constants_fail_validation_not_the_turn(kit: Any) -> None:
    kit.tool("t", parameters={"type": "object"})
    agent, _ = await run_turn(kit, one_call("t", '{"x": NaN, "y": Infinity}'))
    result = only_result(agent)
    assert code_of(result) == "INVALID_ARGS" and kit.calls == []
    assert facts_of(agent, "tool/call")[0]["arguments"] == '{"x": NaN, "y": Infinity}'


async def test_arguments_nested_too_deep_to_snapshot_are_logged_as_text(kit: Any) -> None:
    kit.tool("t")
    deep = "[" * 900 + "]" * 900
    agent, _ = await run_turn(kit, one_call("t", deep))
    assert code_of(only_result(agent)) in ("INVALID_ARGS",)


@pytest.mark.parametrize(
    "bad_call",
    [
        ModelToolCall("c1", "t", 42),  # type: ignore[arg-type]
        ModelToolCall(7, "t", "{}"),  # type: ignore[arg-type]
        ModelToolCall("c1", Impostor(), "{}"),  # type: ignore[arg-type]
        "not a call",
    ],
    ids=["arguments", "id", "name", "shape"],
)
async def test_a_malformed_model_reply_ends_the_turn_before_anything_dangles(kit: Any, bad_call: Any) -> None:
    kit.tool("t")
    bad = ModelReply(tool_calls=(bad_call,), stop_reason="tool_calls")
    agent, model = await kit.run([bad, reply("recovered")], "go")
    assert_well_formed(agent)
    (end,) = facts_of(agent, "turn/end")
    assert end["reason"] == "error" and end["error"]["code"] == "UNKNOWN"
    assert facts_of(agent, "assistant/message") == [] and kit.calls == []
    agent.followup("again")
    await agent.wait_idle()
    assert_well_formed(agent)
    assert [type(e).__name__ for e in model.requests[1].messages] == ["Message", "Message"]


async def test_a_direct_call_with_a_malformed_identity_is_an_error_result(kit: Any) -> None:
    seen: list[Any] = []
    kit.tool("t")
    kit.harness.on("tools/result", lambda ex, r: seen.append((ex.call_id, r.error.code if r.error else None)))
    registry = kit.harness.runtime.tools
    result = await registry.execute("t", {}, call_id=123)  # type: ignore[arg-type]
    assert result.is_error and result.error is not None and result.error.code == "INVALID_CALL"
    assert seen == [("123", "INVALID_CALL")] and kit.calls == []
    json.dumps({"content": [p.text for p in result.content], "message": result.error.message})


# --- the loop: every turn ends, nothing dangles, and the loop survives ---------------------------


@pytest.mark.parametrize(
    "exc", [Unprintable(), Fatal(), NonStringStr()], ids=["unprintable", "fatal", "nonstr"]
)
async def test_a_hostile_pre_step_failure_ends_the_turn_in_error_and_the_loop_survives(
    kit: Any, exc: Any
) -> None:
    errors: list[Any] = []
    failing = [True]

    def pre_step(event: Any, next: Any) -> Any:
        if failing[0]:
            failing[0] = False
            raise exc
        return next()

    kit.harness.on("agent/pre-step", pre_step)
    kit.harness.on("agent/error", lambda event: errors.append(event.reason))
    agent, model = await kit.run([reply("later")], "first")
    (end,) = facts_of(agent, "turn/end")
    assert end["reason"] == "error" and end["error"]["code"] == "UNKNOWN"
    assert isinstance(end["error"]["message"], str) and errors == ["error"]
    agent.followup("second")
    await agent.wait_idle()
    assert_well_formed(agent)
    assert len(model.requests) == 1


async def test_an_abort_with_an_unprintable_reason_still_closes_the_turn(kit: Any) -> None:
    kit.tool("t", lambda args, run: run.execution.agent.abort(Unprintable()))
    agent, _ = await run_turn(kit)
    (end,) = facts_of(agent, "turn/end")
    assert end["reason"] == "aborted" and end["detail"] == "<unprintable Unprintable>"


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(2), Fatal()], ids=["kbd", "exit", "fatal"])
async def test_a_base_exception_from_the_model_is_an_error_turn_not_an_escape(kit: Any, exc: Any) -> None:
    class Raising:
        async def complete(self, request: Any) -> Any:
            raise exc

    agent = await kit.harness.create_agent(model=Raising())
    agent.followup("go")
    await agent.wait_idle()
    assert_well_formed(agent)
    (end,) = facts_of(agent, "turn/end")
    assert end["reason"] == "error" and end["error"]["code"] == "UNKNOWN"
    assert agent.status == "idle"


async def test_cancelling_the_caller_mid_batch_answers_every_call_and_closes_the_turn(kit: Any) -> None:
    observed: list[str] = []
    started = anyio.Event()

    async def slow(args: Any, run: Any) -> Any:
        started.set()
        await anyio.sleep(60)

    kit.tool("slow", slow, concurrency_safe=True)
    kit.tool("fast", concurrency_safe=True)
    kit.tool("later")
    kit.harness.on(
        "tools/result", lambda ex, r: observed.append(f"{ex.name}:{r.error.code if r.error else 'ok'}")
    )
    replies = [reply(tool_calls=[("slow", "{}"), ("fast", "{}"), ("later", "{}")]), reply("next turn")]
    agent, model = await kit.agent(replies)
    agent.followup("go")
    with anyio.move_on_after(30) as scope:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent.wait_idle)
            await started.wait()
            tasks.cancel_scope.cancel()
    assert not scope.cancelled_caught
    assert_well_formed(agent)
    # Cancellation after dispatch turns even a finished success into ABORTED; a body that never
    # started is ABORTED_BEFORE_DISPATCH. Each call is still finalized and observed once.
    codes = [code_of(r) for r in results(agent)]
    assert codes == ["ABORTED", "ABORTED", "ABORTED_BEFORE_DISPATCH"]
    assert observed == ["slow:ABORTED", "fast:ABORTED", "later:ABORTED_BEFORE_DISPATCH"]
    assert facts_of(agent, "turn/end") == [{"reason": "aborted", "detail": "cancelled"}]
    agent.followup("again")
    await agent.wait_idle()
    assert_well_formed(agent)
    assert [type(e).__name__ for e in model.requests[1].messages][-4:] == [
        "ToolResultMessage", "ToolResultMessage", "ToolResultMessage", "Message"
    ]


async def test_a_failing_session_store_mid_batch_leaves_no_dangling_call_in_the_history(kit: Any) -> None:
    kit.tool("a")
    kit.tool("b")
    replies = [reply(tool_calls=[("a", "{}"), ("b", "{}")]), reply("next")]
    agent, model = await kit.agent(replies)
    original = agent.session.append
    failures = [1]

    def flaky(kind: str, **data: Any) -> Any:
        if kind == "tool/result" and failures[0]:
            failures[0] -= 1
            raise OSError("disk full")
        return original(kind, **data)

    agent.session.append = flaky  # type: ignore[method-assign]
    agent.followup("go")
    await agent.wait_idle()
    (end,) = facts_of(agent, "turn/end")
    assert end["reason"] == "error" and end["error"]["message"] == "disk full"
    # The log lost one result (the store refused it); the history the model sees did not.
    assert [f["call_id"] for f in facts_of(agent, "tool/result")] == [replies[0].tool_calls[1].id]
    agent.followup("again")
    await agent.wait_idle()
    kinds = [type(e).__name__ for e in model.requests[1].messages]
    assert kinds[1:4] == ["AssistantMessage", "ToolResultMessage", "ToolResultMessage"]


async def test_resuming_a_log_that_lost_a_result_sends_no_dangling_call(kit: Any, tmp_path: Any) -> None:
    from dsh_policy.core import Session

    kit.tool("a")
    path = tmp_path / "session.jsonl"
    replies = [reply(tool_calls=[("a", "{}")]), reply("unused")]
    agent, _ = await kit.agent(replies, session=Session.to_file(path))
    original = agent.session.append

    def refuse_results(kind: str, **data: Any) -> Any:
        if kind == "tool/result":
            raise OSError("disk full")
        return original(kind, **data)

    agent.session.append = refuse_results  # type: ignore[method-assign]
    agent.followup("go")
    await agent.wait_idle()
    model = ScriptedModel([reply("resumed")])
    resumed = await kit.harness.resume_agent(Session.load(path), model=model)
    resumed.followup("again")
    await resumed.wait_idle()
    kinds = [type(e).__name__ for e in model.requests[0].messages]
    assert kinds == ["Message", "AssistantMessage", "ToolResultMessage", "Message"]


# --- contexts: flushed before any turn closes; a concluding result stops ------------------------


def context_tool(kit: Any, name: str, *, conclude: bool = False, abort: bool = False) -> None:
    def body(args: Any, run: Any) -> str:
        run.defer_context(f"{name} deferred 1")
        run.defer_context(f"{name} deferred 2")
        if conclude:
            run.conclude_turn()
        return f"{name} ran"

    kit.tool(name, body)
    if abort:
        kit.harness.on("tools/result", lambda ex, r: ex.name == name and ex.agent.abort("stop"))


def step_tail(agent: Any) -> list[str]:
    """The facts of the last step, from its first tool/result to turn/end, as type:text."""
    facts = agent.session.facts
    first = next(i for i, f in enumerate(facts) if f.type == "tool/result")
    return [f"{f.type}:{f.data.get('text', f.data.get('name', ''))}" for f in facts[first:]]


async def test_an_interrupted_turn_records_its_contexts_before_it_closes(kit: Any) -> None:
    context_tool(kit, "a")
    context_tool(kit, "b", abort=True)
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(additional_contexts=[f"post {ex.name}"]))
    replies = [reply(tool_calls=[("a", "{}"), ("b", "{}")]), reply("after")]
    agent, model = await kit.run(replies, "first")
    assert_well_formed(agent)
    assert step_tail(agent) == [
        "tool/result:a", "tool/result:b",
        "user/message:a deferred 1", "user/message:a deferred 2", "user/message:post a",
        "user/message:b deferred 1", "user/message:b deferred 2", "user/message:post b",
        "step/end:", "turn/end:",
    ]
    assert facts_of(agent, "turn/end")[0]["reason"] == "aborted"
    assert not agent.inbox.pending()
    seen: list[tuple[str, ...]] = []
    kit.harness.on("agent/pre-step", lambda e, next: seen.append(tuple(m.text for m in e.messages)) or next())
    agent.followup("second")
    await agent.wait_idle()
    assert seen == [("second",)]  # the next turn opens with its prompt, not the old contexts
    sent = [getattr(e, "text", "") for e in model.requests[1].messages]
    assert sent[-2:] == ["post b", "second"]


async def test_a_concluding_result_with_contexts_makes_one_request_and_records_them(kit: Any) -> None:
    stopping: list[int] = []
    context_tool(kit, "finish", conclude=True)
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(additional_contexts=["post"]))
    kit.harness.on("agent/turn-stopping", lambda event: stopping.append(event.turn))
    agent, model = await kit.run([reply(tool_calls=[("finish", "{}")]), reply("unused")], "go")
    assert_well_formed(agent)
    assert len(model.requests) == 1
    assert step_tail(agent) == [
        "tool/result:finish", "user/message:finish deferred 1", "user/message:finish deferred 2",
        "user/message:post", "step/end:", "turn/end:",
    ]
    assert facts_of(agent, "turn/end") == [{"reason": "completed"}]
    assert stopping == [1]
    assert not agent.inbox.pending()


async def test_steering_at_a_concluded_stop_waits_for_the_next_turn(kit: Any) -> None:
    kit.tool("finish", lambda args, run: run.conclude_turn())
    steered: list[int] = []

    def stopping(event: Any) -> None:
        if not steered:
            steered.append(event.turn)
            event.agent.steer("one more thing")

    kit.harness.on("agent/turn-stopping", stopping)
    agent, model = await kit.run([reply(tool_calls=[("finish", "{}")]), reply("sure")], "go")
    assert_well_formed(agent)
    # Turn 1 made exactly one request; the steer opened turn 2 instead of a second step.
    assert [(f.type, f.turn) for f in agent.session.facts if f.type in ("turn/start", "step/start")] == [
        ("turn/start", 1), ("step/start", 1), ("turn/start", 2), ("step/start", 2)
    ]
    assert [getattr(e, "text", "") for e in model.requests[1].messages][-1] == "one more thing"


async def test_contexts_recorded_by_a_concluded_turn_reach_the_next_request(kit: Any) -> None:
    context_tool(kit, "finish", conclude=True)
    agent, model = await kit.run([reply(tool_calls=[("finish", "{}")]), reply("next")], "go")
    agent.followup("more")
    await agent.wait_idle()
    assert_well_formed(agent)
    sent = [getattr(e, "text", "") for e in model.requests[1].messages]
    assert sent[-3:] == ["finish deferred 1", "finish deferred 2", "more"]


async def test_a_turn_without_interruption_still_sends_contexts_with_the_next_step(kit: Any) -> None:
    context_tool(kit, "a")
    agent, model = await kit.run([reply(tool_calls=[("a", "{}")]), reply("done")], "go")
    assert_well_formed(agent)
    assert len(model.requests) == 2
    sent = [getattr(e, "text", "") for e in model.requests[1].messages]
    assert sent[-2:] == ["a deferred 1", "a deferred 2"]


# --- registrations are removed by their own handle ----------------------------------------------


def shared_listener(execution: Any, result: Any) -> None:
    SEEN.append(execution.call_id)


def shared_guard(execution: Any) -> str | None:
    return "no" if execution.name == "forbidden" else None


SHARED_TOOL = define_tool("shared", description="shared", execute=lambda args, run: "shared ran")
SEEN: list[str] = []


class SharingPlugin:
    """Registers module-level objects, as two plugins importing one helper module would."""

    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self, ctx: Any) -> None:
        ctx.on("tools/result", shared_listener)
        ctx.tools.guard(shared_guard)
        ctx.tools.register(SHARED_TOOL)


async def test_disposing_one_of_two_plugins_sharing_functions_keeps_the_other(kit: Any) -> None:
    SEEN.clear()
    bus = kit.harness.runtime.bus

    class ListenerOnly:
        def __init__(self, name: str) -> None:
            self.name = name

        def apply(self, ctx: Any) -> None:
            ctx.on("tools/result", shared_listener)
            ctx.tools.guard(shared_guard)

    first = kit.harness.plugin(ListenerOnly("first"))
    kit.harness.plugin(ListenerOnly("second"))
    assert bus.count("tools/result") == 2 and len(kit.harness.runtime.tools.root_scope.guards) == 2
    first.dispose()
    assert bus.count("tools/result") == 1 and len(kit.harness.runtime.tools.root_scope.guards) == 1
    kit.tool("forbidden")
    agent, _ = await run_turn(kit, one_call("forbidden"))
    assert only_result(agent)["content"] == ["Error: no"]  # the remaining guard still guards
    assert [facts_of(agent, "tool/call")[0]["call_id"]] == SEEN  # and the listener fires once


async def test_closing_an_agent_scoped_copy_keeps_the_root_copy_of_the_same_plugin(kit: Any) -> None:
    SEEN.clear()
    harness: Harness = kit.harness
    root = harness.plugin(SharingPlugin("root copy"))
    scoped_model = ScriptedModel(one_call("shared"))
    scoped = await harness.create_agent(model=scoped_model, plugins=[SharingPlugin("agent copy")])
    assert harness.runtime.bus.count("tools/result") == 2
    assert len(scoped.guard_scope.guards) == 1 and len(harness.runtime.tools.root_scope.guards) == 1
    scoped.followup("go")
    await scoped.wait_idle()
    assert_well_formed(scoped)
    scoped.close()
    assert harness.runtime.bus.count("tools/result") == 1
    assert len(harness.runtime.tools.root_scope.guards) == 1 and scoped.guard_scope.guards == []
    assert harness.tools.get("shared") is SHARED_TOOL
    SEEN.clear()
    other, _ = await kit.run(one_call("shared"), "go")
    assert_well_formed(other)
    assert only_result(other)["content"] == ["shared ran"] and len(SEEN) == 1
    root.dispose()
    assert harness.runtime.bus.count() == 0 and harness.tools.get("shared") is None


async def test_an_agent_scoped_tool_shadows_the_global_one_for_that_agent_only(kit: Any) -> None:
    kit.tool("echo", lambda args, run: "global")
    local = define_tool("echo", description="local", execute=lambda args, run: "local")

    class Local:
        name = "local"

        def apply(self, ctx: Any) -> None:
            ctx.tools.register(local)

    scoped = await kit.harness.create_agent(model=ScriptedModel(one_call("echo")), plugins=[Local()])
    scoped.followup("go")
    await scoped.wait_idle()
    other, other_model = await kit.run(one_call("echo"), "go")
    assert only_result(scoped)["content"] == ["local"]
    assert only_result(other)["content"] == ["global"]
    assert [s.description for s in other_model.requests[0].tools] == ["the echo tool"]
    scoped.close()
    assert kit.harness.tools.get("echo") is not local


async def test_a_disposer_removes_only_its_own_registration_however_often_it_runs(kit: Any) -> None:
    harness: Harness = kit.harness
    tools = harness.runtime.tools
    dispose_tool = harness.tools.register(SHARED_TOOL)
    dispose_service = harness.provide("approval", object())
    dispose_listener = harness.on("tools/result", shared_listener, prepend=True)
    dispose_tool()
    dispose_service()
    dispose_listener()
    kept_tool = harness.tools.register(SHARED_TOOL)
    service = object()
    harness.provide("approval", service)
    harness.on("tools/result", shared_listener)
    dispose_tool()  # again, after the same objects were registered anew
    dispose_service()
    dispose_listener()
    assert tools.get("shared") is SHARED_TOOL and harness.runtime.services["approval"] is service
    assert harness.runtime.bus.count("tools/result") == 1
    kept_tool()
    assert tools.get("shared") is None


# --- frozen values cannot be changed through anything a caller can reach -----------------------


async def test_nothing_a_body_or_observer_can_reach_mutates_the_sealed_call(kit: Any) -> None:
    attempts: list[str] = []

    def try_all(label: str, *actions: Any) -> None:
        for index, action in enumerate(actions):
            try:
                action()
            except (TypeError, AttributeError):
                continue
            attempts.append(f"{label}[{index}] mutated")

    def body(args: Any, run: Any) -> Any:
        execution = run.execution
        try_all(
            "arguments",
            lambda: args.__setitem__("path", "/etc"),
            lambda: args._data.__setitem__("path", "/etc"),
            lambda: setattr(args, "_data", {"path": "/etc"}),
            lambda: setattr(args, "__class__", dict),
            lambda: args["nested"]["list"].append(1),
            lambda: args["nested"]._data.update(x=1),
            lambda: delattr(args, "_data"),
            lambda: args.items().mapping.__setitem__("path", "/etc"),
        )
        try_all(
            "identity",
            lambda: setattr(execution, "name", "other"),
            lambda: setattr(execution, "arguments", {}),
            lambda: setattr(execution.token, "call_id", "forged"),
        )
        return {"ok": True}

    def observe(execution: Any, result: Any) -> None:
        try_all(
            "result",
            lambda: setattr(result, "is_error", True),
            lambda: result.value._data.__setitem__("ok", False),
            lambda: result.meta["pipeline"]._data.clear(),
            lambda: setattr(result.meta, "_data", {}),
            lambda: setattr(result.content[0], "text", "forged"),
        )

    kit.tool("t", body)
    kit.harness.on("tools/result", observe)
    agent, _ = await run_turn(kit, one_call("t", '{"path": "/tmp", "nested": {"list": [1]}}'))
    assert attempts == []
    assert only_result(agent)["value"] == {"ok": True}
    assert facts_of(agent, "tool/call")[0]["arguments"]["path"] == "/tmp"
