"""The tool pipeline's failure paths, approval outcomes and result-shaping rules (HARNESS.md s.3)."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import pytest
from dsh_policy.core import (
    AbortController,
    AbortSignal,
    Message,
    TextContent,
    ToolFailure,
    ToolOutput,
    ToolResult,
    accept,
    allow,
    ask,
    block,
    define_tool,
    deny,
    reply,
)
from dsh_policy.core.tool_definitions import ToolDefinitionError

pytestmark = pytest.mark.anyio

AGENT = object()  # a stand-in caller: approval only needs "some agent" to route through


async def run_call(kit: Any, name: str = "t", arguments: Any = None, **options: Any) -> ToolResult:
    return await kit.harness.runtime.tools.execute(
        name, {} if arguments is None else arguments, call_id=options.pop("call_id", "c1"), **options
    )


def error_code(result: ToolResult) -> str | None:
    return None if result.error is None else result.error.code


# --- approval: every outcome and its exact reason -------------------------------------------------


class Approver:
    def __init__(self, outcome: Any = None, error: Exception | None = None) -> None:
        self.outcome = outcome
        self.error = error
        self.requests: list[tuple[Any, Any]] = []

    async def request(self, execution: Any, reason: Any) -> Any:
        self.requests.append((execution, reason))
        if self.error is not None:
            raise self.error
        return self.outcome


def ask_for(kit: Any, reason: str | None = None) -> None:
    kit.harness.on("tools/pre-execute", lambda ex, next: ask(reason))


async def test_ask_without_approval_service_denies_with_the_ask_reason(kit: Any) -> None:
    kit.tool("t")
    ask_for(kit, "writes outside the repo")
    result = await run_call(kit, agent=AGENT)
    assert result.text == "Error: writes outside the repo"
    assert result.error is not None and result.error.message == "writes outside the repo"
    assert kit.calls == []


async def test_ask_without_approval_service_or_reason_says_not_yet_supported(kit: Any) -> None:
    kit.tool("t")
    ask_for(kit)
    result = await run_call(kit, agent=AGENT)
    assert result.text == 'Error: tool "t" requires approval (not yet supported)'


async def test_ask_for_a_call_without_agent_cannot_be_routed(kit: Any) -> None:
    kit.tool("t")
    kit.harness.provide("approval", Approver("allowed-once"))
    ask_for(kit, "why")
    result = await run_call(kit)
    assert result.text == 'Error: tool "t" requires approval, but the call has no agent to route it through'
    assert kit.calls == []


async def test_allowed_once_allows_and_guards_still_run(kit: Any) -> None:
    kit.tool("t")
    approver = Approver("allowed-once")
    kit.harness.provide("approval", approver)
    ask_for(kit, "please confirm")
    result = await run_call(kit, "t", {"x": 1}, agent=AGENT)
    assert not result.is_error and kit.calls == [("t", {"x": 1})]
    assert approver.requests[0][1] == "please confirm"
    kit.harness.tools.guard(lambda ex: "guard says no")
    result = await run_call(kit, agent=AGENT, call_id="c2")
    assert result.text == "Error: guard says no"
    assert len(kit.calls) == 1


async def test_rejected_approval_denies(kit: Any) -> None:
    kit.tool("t")
    kit.harness.provide("approval", Approver("rejected"))
    ask_for(kit)
    result = await run_call(kit, agent=AGENT)
    assert result.text == 'Error: the user rejected tool "t"'
    assert kit.calls == []


async def test_cancelled_approval_denies(kit: Any) -> None:
    kit.tool("t")
    kit.harness.provide("approval", Approver("cancelled"))
    ask_for(kit)
    result = await run_call(kit, agent=AGENT)
    assert result.text == 'Error: approval for tool "t" was cancelled'
    assert error_code(result) is None


async def test_cancelled_approval_when_the_caller_aborted_too_is_aborted_before_dispatch(kit: Any) -> None:
    kit.tool("t")
    controller = AbortController()
    post: list[str] = []

    class AbortingApprover:
        async def request(self, execution: Any, reason: Any) -> str:
            controller.abort("user left")
            return "cancelled"

    kit.harness.provide("approval", AbortingApprover())
    ask_for(kit)
    kit.harness.on("tools/post-execute", kit.passthrough(post, "post"))
    result = await run_call(kit, agent=AGENT, signal=controller.signal)
    assert error_code(result) == "ABORTED_BEFORE_DISPATCH"
    assert post == []  # a final error skips post-execute


async def test_abort_while_approval_is_pending_cancels_the_request(kit: Any) -> None:
    kit.tool("t")
    controller = AbortController()

    class SlowApprover:
        async def request(self, execution: Any, reason: Any) -> str:
            await anyio.sleep(30)
            return "allowed-once"

    kit.harness.provide("approval", SlowApprover())
    ask_for(kit)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: anyio.sleep(0.01))
        with anyio.fail_after(5):
            tasks.start_soon(_abort_soon, controller)
            result = await run_call(kit, agent=AGENT, signal=controller.signal)
    assert error_code(result) == "ABORTED_BEFORE_DISPATCH"
    assert kit.calls == []


async def _abort_soon(controller: AbortController) -> None:
    await anyio.sleep(0.01)
    controller.abort("stop")


@pytest.mark.parametrize(
    "approver",
    [
        Approver("unavailable"),
        Approver(error=RuntimeError("channel down")),
        Approver("maybe?"),
        Approver(None),
    ],
    ids=["unavailable", "answerer-threw", "unknown-outcome", "none"],
)
async def test_unavailable_throwing_or_unknown_approval_denies_as_no_channel(kit: Any, approver: Any) -> None:
    kit.tool("t")
    kit.harness.provide("approval", approver)
    ask_for(kit)
    result = await run_call(kit, agent=AGENT)
    assert result.text == 'Error: tool "t" requires approval, but no approval channel is available'
    assert kit.calls == []


# --- deny shape, guards ---------------------------------------------------------------------------


async def test_deny_is_an_error_result_that_still_goes_through_post_finalize_and_result(kit: Any) -> None:
    seen: list[str] = []
    kit.tool("t", finalize_content=lambda ex, r: seen.append("finalize"))
    kit.harness.on("tools/pre-execute", lambda ex, next: deny("nope"))
    kit.harness.on("tools/execute", kit.passthrough(seen, "execute"))
    kit.harness.on("tools/post-execute", kit.passthrough(seen, "post"))
    kit.harness.on("tools/result", lambda ex, r: seen.append("result"))
    result = await run_call(kit)
    assert result.is_error and result.content == (TextContent("Error: nope"),)
    assert result.error is not None and result.error.message == "nope" and result.error.info is None
    assert seen == ["post", "finalize", "result"]
    assert kit.calls == []


async def test_guards_run_global_first_then_agent_scopes_from_farthest_to_nearest(kit: Any) -> None:
    order: list[str] = []

    def guard(label: str, verdict: str | None = None) -> Any:
        def check(execution: Any) -> str | None:
            order.append(label)
            return verdict

        return check

    kit.tool("t")
    kit.harness.tools.guard(guard("global-1"))
    kit.harness.tools.guard(guard("global-2"))
    parent, _ = await kit.agent([])
    child, _ = await kit.agent([], parent=parent)
    parent.ctx.tools.guard(guard("parent"))
    child.ctx.tools.guard(guard("child-1"))
    child.ctx.tools.guard(guard("child-2", "child says no"))
    child.ctx.tools.guard(guard("child-3", "never reached"))
    result = await run_call(kit, agent=child)
    assert order == ["global-1", "global-2", "parent", "child-1", "child-2"]
    assert result.text == "Error: child says no"
    order.clear()
    result = await run_call(kit, agent=parent, call_id="c2")
    assert order == ["global-1", "global-2", "parent"] and not result.is_error


async def test_no_listener_can_revive_a_call_a_guard_denied(kit: Any) -> None:
    kit.tool("t")
    kit.harness.tools.guard(lambda ex: "invariant")
    kit.harness.on("tools/pre-execute", lambda ex, next: allow(), prepend=True)
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(content="all good"))
    result = await run_call(kit)
    assert kit.calls == []
    assert result.is_error  # post-execute may reword the content, never the verdict
    assert result.error is not None and result.error.message == "invariant"


async def test_guards_do_not_run_when_the_decision_is_deny(kit: Any) -> None:
    ran: list[str] = []
    kit.tool("t")
    kit.harness.tools.guard(lambda ex: ran.append("guard"))
    kit.harness.on("tools/pre-execute", lambda ex, next: deny("no"))
    await run_call(kit)
    assert ran == []


@pytest.mark.parametrize(
    "guard",
    [lambda ex: 1 / 0, lambda ex: True, lambda ex: _async_guard()],
    ids=["raises", "returns-bool", "async"],
)
async def test_a_broken_guard_gives_a_final_error(kit: Any, guard: Any) -> None:
    post: list[str] = []
    kit.tool("t")
    kit.harness.tools.guard(guard)
    kit.harness.on("tools/post-execute", kit.passthrough(post, "post"))
    result = await run_call(kit)
    assert error_code(result) == "GUARD_FAILED"
    assert kit.calls == [] and post == []


async def _async_guard() -> None:
    return None


# --- listener failures ----------------------------------------------------------------------------


async def test_raising_pre_execute_listener_gives_a_final_error(kit: Any) -> None:
    seen: list[str] = []
    kit.tool("t", finalize_content=lambda ex, r: seen.append("finalize"))
    kit.harness.on("tools/pre-execute", lambda ex, next: 1 / 0)
    kit.harness.on("tools/post-execute", kit.passthrough(seen, "post"))
    kit.harness.on("tools/result", lambda ex, r: seen.append("result"))
    result = await run_call(kit)
    assert error_code(result) == "LISTENER_FAILED"
    assert "tools/pre-execute failed" in result.text
    assert seen == ["finalize", "result"] and kit.calls == []


async def test_pre_execute_returning_a_wrong_type_fails_closed(kit: Any) -> None:
    kit.tool("t")
    kit.harness.on("tools/pre-execute", lambda ex, next: "yes please")
    result = await run_call(kit)
    assert error_code(result) == "LISTENER_FAILED" and kit.calls == []


async def test_raising_execute_wrapper_gives_a_final_error(kit: Any) -> None:
    seen: list[str] = []

    async def wrapper(execution: Any, next: Any) -> Any:
        await next()
        raise RuntimeError("metrics backend down")

    kit.tool("t")
    kit.harness.on("tools/execute", wrapper)
    kit.harness.on("tools/post-execute", kit.passthrough(seen, "post"))
    result = await run_call(kit)
    assert error_code(result) == "LISTENER_FAILED"
    assert "metrics backend down" in result.text
    assert seen == []


async def test_execute_wrapper_returning_nothing_fails_closed(kit: Any) -> None:
    kit.tool("t")
    kit.harness.on("tools/execute", lambda ex, next: None)
    result = await run_call(kit)
    assert error_code(result) == "LISTENER_FAILED"


async def test_raising_post_execute_listener_gives_an_error_that_loses_contexts_but_is_finalized(
    kit: Any,
) -> None:
    finalized: list[ToolResult] = []

    def body(args: Any, run: Any) -> str:
        run.defer_context("deferred")
        return "ok"

    kit.tool("t", body, finalize_content=lambda ex, r: finalized.append(r))
    kit.harness.on("tools/post-execute", lambda ex, r, next: 1 / 0)
    result = await run_call(kit)
    assert error_code(result) == "LISTENER_FAILED"
    assert result.additional_contexts == ()
    assert len(finalized) == 1 and finalized[0].is_error


async def test_a_failing_result_listener_is_logged_and_changes_nothing(kit: Any) -> None:
    later: list[ToolResult] = []
    kit.tool("t")
    kit.harness.on("tools/result", lambda ex, r: 1 / 0)
    kit.harness.on("tools/result", lambda ex, r: later.append(r))
    result = await run_call(kit, "t", {"a": 1})
    assert not result.is_error and later == [result]


# --- the body -------------------------------------------------------------------------------------


async def test_unknown_tool_is_an_error_that_pre_execute_still_saw(kit: Any) -> None:
    seen: list[Any] = []
    kit.harness.on("tools/pre-execute", kit.passthrough(seen))
    result = await run_call(kit, "ghost")
    assert [execution.name for execution in seen] == ["ghost"]
    assert result.text == 'Error: unknown tool "ghost"'
    assert result.error is not None
    assert dict(result.error.info or {}) == {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"}


async def test_invalid_arguments_fail_before_the_body_runs(kit: Any) -> None:
    kit.tool("t", parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    result = await run_call(kit, "t", {"n": "five"})
    assert error_code(result) == "INVALID_ARGS" and "$.n" in result.text
    assert kit.calls == []


async def test_invalid_json_from_the_model_is_kept_raw_and_fails_validation(kit: Any) -> None:
    kit.tool("t")
    agent, _ = await kit.run([reply(tool_calls=[("t", "{not json")]), reply("ok")], "go")
    call = next(f for f in agent.session.facts if f.type == "tool/call")
    result = next(f for f in agent.session.facts if f.type == "tool/result")
    assert call.data["arguments"] == "{not json"
    assert result.data["error"]["info"]["code"] == "INVALID_ARGS"
    assert kit.calls == []


async def test_empty_argument_text_means_an_empty_object(kit: Any) -> None:
    kit.tool("t")
    await kit.run([reply(tool_calls=[("t", "")]), reply("ok")], "go")
    assert kit.calls == [("t", {})]


async def test_arguments_that_are_not_json_give_a_final_error(kit: Any) -> None:
    seen: list[str] = []
    kit.tool("t")
    kit.harness.on("tools/pre-execute", kit.passthrough(seen, "pre"))
    result = await run_call(kit, "t", {"when": {1, 2}})
    assert result.error is not None
    assert result.error.message == "tool execution arguments must be losslessly JSON-serializable"
    assert seen == [] and kit.calls == []


async def test_a_raising_body_becomes_an_error_with_message_and_info(kit: Any) -> None:
    def body(args: Any, run: Any) -> None:
        raise ToolFailure("disk quota exceeded", code="EQUOTA", info={"path": "/tmp"})

    kit.tool("t", body)
    result = await run_call(kit)
    assert result.text == "Error: disk quota exceeded"
    assert result.error is not None and dict(result.error.info or {}) == {"path": "/tmp", "code": "EQUOTA"}
    kit2 = type(kit)()
    kit2.tool("t", lambda a, r: a["missing"])
    result = await run_call(kit2)
    assert result.is_error and result.error is not None
    assert result.error.info == {"name": "KeyError", "code": "TOOL_FAILED"}


@pytest.mark.parametrize(
    ("value", "output"),
    [
        ({"n": "x"}, ToolOutput(schema={"type": "object", "properties": {"n": {"type": "integer"}}})),
        ({1, 2}, None),
        (float("nan"), None),
    ],
    ids=["schema-mismatch", "set", "nan"],
)
async def test_invalid_output_is_an_invalid_tool_output_error(kit: Any, value: Any, output: Any) -> None:
    kit.tool("t", lambda a, r: value, output=output)
    result = await run_call(kit)
    assert error_code(result) == "INVALID_TOOL_OUTPUT" and result.value is None


async def test_renderer_failure_and_bad_content_become_errors(kit: Any) -> None:
    kit.tool("boom", lambda a, r: 1, output=ToolOutput(render=lambda v: 1 / 0))
    kit.tool("junk", lambda a, r: 1, output=ToolOutput(render=lambda v: {"not": "content"}))
    assert error_code(await run_call(kit, "boom")) == "RENDER_FAILED"
    assert error_code(await run_call(kit, "junk", call_id="c2")) == "RENDER_FAILED"


async def test_success_value_is_frozen_validated_and_rendered(kit: Any) -> None:
    output = ToolOutput(
        schema={"type": "object", "properties": {"lines": {"type": "array"}}},
        render=lambda v: [f"{len(v['lines'])} lines", *v["lines"]],
    )
    kit.tool("t", lambda a, r: {"lines": ["a", "b"]}, output=output)
    result = await run_call(kit)
    assert result.text == "2 lines\na\nb"
    with pytest.raises(TypeError):
        result.value["lines"] = []
    assert result.value["lines"] == ("a", "b")


async def test_cancellation_after_dispatch_turns_a_success_into_aborted(kit: Any) -> None:
    controller = AbortController()

    def body(args: Any, run: Any) -> str:
        run.defer_context("kept")
        controller.abort("stop")
        return "done anyway"

    kit.tool("t", body)
    result = await run_call(kit, signal=controller.signal)
    assert error_code(result) == "ABORTED"
    assert [m.text for m in result.additional_contexts] == ["kept"]


async def test_abort_cancels_a_body_that_is_waiting(kit: Any) -> None:
    controller = AbortController()

    async def body(args: Any, run: Any) -> str:
        controller.abort("stop")
        await anyio.sleep(30)
        return "never"

    kit.tool("t", body)
    with anyio.fail_after(5):
        result = await run_call(kit, signal=controller.signal)
    assert error_code(result) == "ABORTED"


# --- tools/execute wrappers -----------------------------------------------------------------------


async def test_a_wrapper_signal_is_combined_for_the_dispatch_and_restored_after(kit: Any) -> None:
    caller = AbortController()
    seen: dict[str, Any] = {}

    async def body(args: Any, run: Any) -> str:
        seen["inside"] = run.signal
        await anyio.sleep(30)
        return "never"

    async def timeout_wrapper(execution: Any, next: Any) -> Any:
        timer = AbortController()
        seen["before"] = execution.signal
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_abort_later, timer)
            result = await next(signal=timer.signal)
        seen["after"] = execution.signal
        return result

    kit.tool("t", body)
    kit.harness.on("tools/execute", timeout_wrapper)
    with anyio.fail_after(5):
        result = await run_call(kit, signal=caller.signal)
    assert error_code(result) == "ABORTED"
    assert seen["before"] is caller.signal and seen["after"] is caller.signal
    assert seen["inside"] is not caller.signal and seen["inside"].aborted
    assert not caller.signal.aborted


async def _abort_later(controller: AbortController) -> None:
    await anyio.sleep(0.01)
    controller.abort("timeout")


async def test_a_wrapper_sees_a_normalized_result_never_an_exception(kit: Any) -> None:
    seen: list[ToolResult] = []

    async def wrapper(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result)
        return result

    kit.tool("t", lambda a, r: 1 / 0)
    kit.harness.on("tools/execute", wrapper)
    result = await run_call(kit)
    assert seen[0].is_error and seen[0] is not None
    assert result.is_error and "division by zero" in result.text


async def test_a_wrapper_own_success_skips_the_body_and_is_revalidated(kit: Any) -> None:
    output = ToolOutput(schema={"type": "integer"})
    kit.tool("t", output=output)
    kit.harness.on("tools/execute", lambda ex, next: ToolResult(False, (), value=42))
    good = await run_call(kit)
    assert not good.is_error and good.value == 42 and good.text == "42"
    assert kit.calls == []
    kit2 = type(kit)()
    kit2.tool("t", output=output)
    kit2.harness.on("tools/execute", lambda ex, next: ToolResult(False, (TextContent("cached"),), value="x"))
    bad = await run_call(kit2)
    assert error_code(bad) == "INVALID_TOOL_OUTPUT"


async def test_a_retry_wrapper_may_call_next_twice(kit: Any) -> None:
    attempts = 0

    def flaky(args: Any, run: Any) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionError("reset")
        return "ok"

    async def retry(execution: Any, next: Any) -> Any:
        result = await next()
        return await next() if result.is_error else result

    kit.tool("t", flaky)
    kit.harness.on("tools/execute", retry)
    result = await run_call(kit)
    assert not result.is_error and attempts == 2


# --- post-execute semantics -----------------------------------------------------------------------


async def test_accept_content_replaces_presentation_only_and_keeps_the_value(kit: Any) -> None:
    kit.tool("t", lambda a, r: {"token": "s3cret"})
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(content="[hidden]"))
    result = await run_call(kit)
    assert result.text == "[hidden]"
    assert result.value == {"token": "s3cret"}  # NOT a confidentiality boundary


async def test_accept_value_revalidates_and_rerenders(kit: Any) -> None:
    output = ToolOutput(schema={"type": "object", "required": ["token"]})
    kit.tool("t", lambda a, r: {"token": "s3cret"}, output=output)
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(value={"token": "***"}))
    result = await run_call(kit)
    assert result.value == {"token": "***"} and result.text == '{"token":"***"}'
    kit2 = type(kit)()
    kit2.tool("t", lambda a, r: {"token": "s3cret"}, output=output)
    kit2.harness.on("tools/post-execute", lambda ex, r, next: accept(value={"other": 1}))
    assert error_code(await run_call(kit2)) == "INVALID_TOOL_OUTPUT"


async def test_accept_value_on_an_error_result_is_a_programming_error(kit: Any) -> None:
    kit.tool("t", lambda a, r: 1 / 0)
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(value="fixed"))
    result = await run_call(kit)
    assert error_code(result) == "LISTENER_FAILED"


def test_accept_with_both_content_and_value_is_rejected() -> None:
    with pytest.raises(ValueError):
        accept(content="x", value=1)


async def test_post_execute_sees_a_frozen_result(kit: Any) -> None:
    problems: list[str] = []

    def listener(execution: Any, result: ToolResult, next: Any) -> Any:
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.is_error = True
        with pytest.raises(TypeError):
            result.value["k"] = 2
        if not isinstance(result.content, tuple):
            problems.append("content is mutable")
        return next()

    kit.tool("t", lambda a, r: {"k": 1})
    kit.harness.on("tools/post-execute", listener)
    result = await run_call(kit)
    assert problems == [] and result.value == {"k": 1}


async def test_block_turns_the_result_into_an_error_with_the_feedback_as_content(kit: Any) -> None:
    kit.tool("t", lambda a, r: "leaked key AKIA...")
    kit.harness.on("tools/post-execute", lambda ex, r, next: block("output withheld: contains a key"))
    result = await run_call(kit)
    assert result.is_error and result.text == "output withheld: contains a key"
    assert result.value is None and error_code(result) == "BLOCKED"


# --- finalize_content -----------------------------------------------------------------------------


async def test_finalize_runs_exactly_once_and_may_only_replace_content(kit: Any) -> None:
    calls: list[ToolResult] = []

    def finalize(execution: Any, result: ToolResult) -> str:
        calls.append(result)
        return result.text + " (checked)"

    def body(args: Any, run: Any) -> str:
        run.defer_context("ctx")
        return "fine"

    kit.tool("t", body, finalize_content=finalize)
    result = await run_call(kit)
    assert len(calls) == 1
    assert result.text == "fine (checked)" and result.value == "fine" and not result.is_error
    assert [m.text for m in result.additional_contexts] == ["ctx"]


async def test_finalize_runs_on_final_errors_too(kit: Any) -> None:
    calls: list[ToolResult] = []
    kit.tool("t", finalize_content=lambda ex, r: calls.append(r))
    kit.harness.on("tools/pre-execute", lambda ex, next: 1 / 0)
    await run_call(kit)
    assert len(calls) == 1 and calls[0].is_error


async def test_a_raising_finalize_turns_the_result_into_an_error_and_is_not_called_again(kit: Any) -> None:
    calls = 0

    def finalize(execution: Any, result: ToolResult) -> str:
        nonlocal calls
        calls += 1
        raise ValueError("content invariant violated")

    kit.tool("t", lambda a, r: "x", finalize_content=finalize)
    result = await run_call(kit)
    assert calls == 1 and error_code(result) == "FINALIZE_FAILED"
    assert "content invariant violated" in result.text


async def test_finalize_is_snapshotted_when_the_call_is_created(kit: Any) -> None:
    seen: list[str] = []
    registry = kit.harness.runtime.tools

    async def swap(execution: Any, next: Any) -> Any:
        dispose_new = registry.register(
            define_tool("u", description="u", execute=lambda a, r: "u", finalize_content=lambda e, r: "new")
        )
        dispose_new()
        return await next()

    def finalize(execution: Any, result: ToolResult) -> str:
        seen.append("old")
        return "old"

    kit.tool("t", lambda a, r: "x", finalize_content=finalize)
    kit.harness.on("tools/execute", swap)
    result = await run_call(kit)
    assert seen == ["old"] and result.text == "old"


# --- identity -------------------------------------------------------------------------------------


async def test_every_stage_sees_the_same_sealed_identity(kit: Any) -> None:
    seen: list[Any] = []

    def body(args: Any, run: Any) -> str:
        seen.append(run.execution)
        return "ok"

    kit.tool("t", body)
    kit.harness.on("tools/pre-execute", kit.passthrough(seen))
    kit.harness.on("tools/execute", kit.passthrough(seen))
    kit.harness.on("tools/post-execute", kit.passthrough(seen))
    kit.harness.on("tools/result", lambda ex, r: seen.append(ex))
    args = {"path": ["a"]}
    await run_call(kit, "t", args)
    assert len(seen) == 5 and all(item is seen[0] for item in seen)
    execution = seen[0]
    args["path"].append("b")  # the caller's object changing later does not reach the identity
    assert execution.arguments == {"path": ("a",)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        execution.name = "other"
    assert execution.root_call_id == "c1" and execution.parent is None


async def test_nested_calls_carry_the_parent_token_and_defer_their_contexts(kit: Any) -> None:
    seen: list[Any] = []

    def inner(args: Any, run: Any) -> str:
        run.defer_context("from inner")
        return "inner done"

    async def outer(args: Any, run: Any) -> str:
        result = await run.call("inner", {})
        return f"outer saw: {result.text}"

    kit.tool("inner", inner)
    kit.tool("outer", outer)
    kit.harness.on("tools/result", lambda ex, r: seen.append(ex))
    result = await run_call(kit, "outer", call_id="root")
    nested, top = seen
    assert nested.parent is top.token and nested.root_call_id == "root" and nested.nested
    assert top.parent is None and result.text == "outer saw: inner done"
    assert [m.text for m in result.additional_contexts] == ["from inner"]


async def test_execute_without_a_signal_uses_one_that_never_fires(kit: Any) -> None:
    seen: list[AbortSignal] = []
    kit.tool("t", lambda a, r: seen.append(r.signal))
    await run_call(kit)
    assert not seen[0].aborted


def test_define_tool_rejects_an_invalid_schema() -> None:
    with pytest.raises(ToolDefinitionError, match='tool "bad"'):
        define_tool("bad", description="b", execute=lambda a, r: None, parameters={"type": "nonsense"})


async def test_registering_a_duplicate_name_is_an_error(kit: Any) -> None:
    kit.tool("t")
    with pytest.raises(ToolDefinitionError, match="already registered"):
        kit.tool("t")


async def test_results_and_contexts_are_json_safe_messages(kit: Any) -> None:
    kit.tool("t", lambda a, r: "x")
    kit.harness.on("tools/post-execute", lambda ex, r, next: accept(additional_contexts=["plain text"]))
    result = await run_call(kit)
    assert result.additional_contexts == (Message.from_plugin("plain text"),)
    assert result.meta is not None and result.meta["pipeline"]["decision"] == "allow"


async def test_a_body_may_return_its_own_result_which_is_normalized(kit: Any) -> None:
    kit.tool("fails", lambda a, r: ToolResult(True, (), error=None))
    kit.tool("junk", lambda a, r: ToolResult(False, (TextContent("x"),), value={1, 2}))
    kit.tool("bad-parts", lambda a, r: ToolResult(True, ("not", 3)))
    failed = await run_call(kit, "fails")
    assert failed.is_error and failed.text == "Error: tool failed"
    assert error_code(await run_call(kit, "junk", call_id="c2")) == "INVALID_TOOL_OUTPUT"
    assert error_code(await run_call(kit, "bad-parts", call_id="c3")) == "INVALID_TOOL_OUTPUT"
