"""The gateway as ordinary harness plugins: one call installs every seam (POLICY.md section 2).

``PolicyGateway(policy, auditor=...)`` is a plugin for the ``core`` harness. It adds nothing the
harness does not offer: an ``agent/pre-step`` listener, a ``tools/pre-execute`` listener, a
``ctx.tools.guard`` invariant, a ``tools/post-execute`` listener, a ``tools/execute`` wrapper (only
to log a call before it runs when the deployment fails closed on audit) and a ``tools/result``
observer that writes the audit record. Every decision comes from the framework-neutral API in
:mod:`.decide`, the same code path ``dsh-policy check`` dry-runs.

Listeners call ``next()`` whenever the policy does not refuse, so other plugins keep their say:
a later ``deny`` still wins over our ``ask``, and a later listener's replacement content is
redacted again before it can carry a secret past us.
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import anyio
import anyio.to_thread
import orjson
import structlog
from dsh_policy.core import (
    Accept,
    Block,
    Deny,
    Enter,
    Message,
    PostToolDecision,
    PreStepDecision,
    PreStepEvent,
    PreToolDecision,
    TextContent,
    ToolExecution,
    ToolResult,
    accept,
    ask,
    block,
    deny,
    enter,
    reject,
)
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.decide import Decider, Policy
from dsh_policy.policy.events import (
    GuardVerdict,
    ResultVerdict,
    StepEvent,
    StepMessage,
    StepVerdict,
    ToolCallEvent,
    ToolCallVerdict,
    ToolResultEvent,
)
from dsh_policy.policy.runtime.auditing import (
    AuditUnavailableError,
    CallOutcome,
    DecisionAuditor,
    ResultFacts,
    canonical_domain,
)

PLUGIN_NAME = "dsh-policy"
_UNREDACTABLE = (
    "tool output withheld by policy: it contained a secret that redaction could not remove from "
    "what the tool renders"
)

__all__ = [
    "PLUGIN_NAME",
    "GatewayObserver",
    "PolicyGateway",
    "result_event",
    "step_event",
    "tool_call_event",
]


class ApprovalGate(Protocol):
    """An approval queue's answer for one asked call (``approvals.channel.Gate``)."""

    @property
    def allowed(self) -> bool: ...

    @property
    def message(self) -> str: ...

    @property
    def approval(self) -> str: ...


class CallApprover(Protocol):
    """Where an ``ask`` goes when the deployment routes embedded asks to the approval queue
    (``approvals.calls.QueueApprover``, docs/approvals.md) instead of the harness's approval
    service. ``admit_call`` blocks for up to its wait: the gateway calls it from a worker thread."""

    def admit_call(
        self,
        event: ToolCallEvent,
        verdict: ToolCallVerdict,
        *,
        harness: str,
        redactor: Decider,
        auditor: DecisionAuditor | None,
    ) -> ApprovalGate: ...


class GatewayObserver(Protocol):
    """Something that wants every settled decision (a narrator, metrics); failures are logged."""

    def call_settled(self, outcome: CallOutcome) -> None:
        """A call reached ``tools/result`` with everything the gateway decided about it."""

    def step_gated(self, event: StepEvent, verdict: StepVerdict) -> None:
        """The policy decided a pre-step (enter or reject)."""


_log = structlog.get_logger("dsh_policy.gateway")


@dataclass(slots=True)
class _CallState:
    """What the gateway decided about one call so far, keyed by the call's opaque token.

    ``decider`` is the compiled policy in force when the call was first seen: pre-execute, guard
    and post-execute of one call are all decided by it, even when a reload lands mid-call, so the
    digest every verdict (and so the audit record) carries is the one that decided."""

    event: ToolCallEvent
    decider: Decider
    pre_execute: ToolCallVerdict | None = None
    guard: GuardVerdict | None = None
    review: ResultVerdict | None = None
    post_action: str | None = None
    review_now: datetime.datetime | None = None
    #: What the approval queue said (``approved:apr-...``, ``pending:apr-...``; a queued ask only)
    #: and ``approval`` when it refused the call; the harness's trace says it otherwise.
    approval: str | None = None
    denied_by: str | None = None


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def tool_call_event(execution: ToolExecution) -> ToolCallEvent:
    """The decide API's view of a sealed harness call (coordinates from its agent, 0 without)."""
    agent = execution.agent
    return ToolCallEvent(
        tool=execution.name,
        args=execution.arguments,
        call_id=execution.call_id,
        root_call_id=execution.root_call_id,
        nested=execution.nested,
        session_id=str(getattr(agent, "session_id", "") or ""),
        agent_id=getattr(agent, "id", None),
        turn=int(getattr(agent, "turn", 0) or 0),
        step=int(getattr(agent, "step", 0) or 0),
    )


def step_event(event: PreStepEvent) -> StepEvent:
    """The decide API's view of an ``agent/pre-step`` proposal."""
    agent = event.agent
    return StepEvent(
        session_id=str(getattr(agent, "session_id", "") or ""),
        agent_id=getattr(agent, "id", None),
        turn=event.turn,
        step=event.step,
        messages=tuple(StepMessage(m.role, m.text, m.source.kind, m.source.plugin) for m in event.messages),
    )


def result_event(call: ToolCallEvent, result: ToolResult) -> ToolResultEvent:
    """The decide API's view of a normalized result."""
    error = result.error
    return ToolResultEvent(
        call=call,
        is_error=result.is_error,
        text=result.text,
        value=result.value,
        error_message=None if error is None else error.message,
        error_code=None if error is None else error.code,
    )


class PolicyGateway:
    """The gateway plugin. ``harness.plugin(PolicyGateway(policy, auditor=auditor))`` is the whole
    installation; disposing the returned fiber removes every listener and the guard.

    ``approver`` (the deployment's approval queue, when it routes embedded asks there) answers an
    ``ask`` instead of the harness's approval service: the call waits a bounded time for an
    approver, then runs (once) or is refused naming the request."""

    name = PLUGIN_NAME

    def __init__(
        self,
        policy: Policy,
        *,
        auditor: DecisionAuditor | None = None,
        observers: Sequence[GatewayObserver] = (),
        approver: CallApprover | None = None,
    ) -> None:
        self.policy = policy
        self.auditor = auditor
        self.observers = tuple(observers)
        self.approver = approver
        self._calls: dict[int, _CallState] = {}
        self._tools: Any = None

    def _notify(self, method: str, *args: Any) -> None:
        for observer in self.observers:
            try:
                getattr(observer, method)(*args)
            except Exception as error:  # an observer must never change a decision
                _log.error("gateway observer failed", observer=repr(observer), error=repr(error))

    def apply(self, ctx: Any, config: Any = None) -> None:
        """Register the gateway's listeners and guard on ``ctx`` (prepended: policy goes first)."""
        self._tools = ctx.tools
        ctx.on("agent/pre-step", self.pre_step, prepend=True)
        ctx.on("tools/pre-execute", self.pre_execute, prepend=True)
        ctx.tools.guard(self.guard)
        if self.auditor is not None and self.auditor.fail_closed:
            ctx.on("tools/execute", self.execute, prepend=True)
        ctx.on("tools/post-execute", self.post_execute, prepend=True)
        ctx.on("tools/result", self.on_result)

    # --- per-call state ----------------------------------------------------------------------------

    def _state(self, execution: ToolExecution) -> _CallState:
        """The call's state; its event pins ``now`` to the instant the gateway first saw the call,
        so pre-execute and guard rules see one instant and the audit record can name it."""
        key = id(execution.token)
        state = self._calls.get(key)
        if state is None:
            state = self._calls[key] = _CallState(
                replace(tool_call_event(execution), now=_utc_now()), self.policy.current()
            )
        return state

    # --- seams -------------------------------------------------------------------------------------

    async def pre_step(
        self, event: PreStepEvent, next: Callable[[], Awaitable[PreStepDecision]]
    ) -> PreStepDecision:
        """Reject the step when an enforced rule says so; otherwise let the rest decide and add the
        rules' context messages to whatever they entered."""
        request = replace(step_event(event), now=_utc_now())
        verdict = self.policy.current().gate_step(request)
        if verdict.decision == "enter" and self.auditor is not None:
            try:
                self.auditor.step_entered(request, verdict)
            except AuditUnavailableError as error:
                # A model call acts on nothing; fail-closed refuses the tool calls that follow.
                _log.error("step entered but not audited", error=str(error))
        if verdict.decision == "reject":
            _log.info("step rejected", turn=event.turn, step=event.step, rules=verdict.rules)
            if self.auditor is not None:
                try:
                    self.auditor.step_rejected(request, verdict)
                except AuditUnavailableError as error:
                    _log.error("step rejected but not audited", error=str(error))
            self._notify("step_gated", request, verdict)
            return reject(verdict.message)
        self._notify("step_gated", request, verdict)
        decision = await next()
        if isinstance(decision, Enter) and verdict.contexts:
            extras = tuple(Message.from_plugin(text, PLUGIN_NAME) for text in verdict.contexts)
            return enter((*decision.messages, *extras))
        return decision

    async def pre_execute(
        self, execution: ToolExecution, next: Callable[[], Awaitable[PreToolDecision]]
    ) -> PreToolDecision:
        """deny short-circuits; ask still lets later listeners deny; allow defers to them.

        A denied call never reaches the harness's guards, yet a matching guard is the stronger
        statement ("never allowed"): it is evaluated here too, so the model, the audit record and
        ``check``'s whole-gate verdict all name the guard when one matches."""
        state = self._state(execution)
        verdict = state.decider.pre_execute(state.event)
        state.pre_execute = verdict
        if verdict.decision == "deny":
            guard = state.guard = state.decider.guard(state.event)
            if guard.denied:
                return deny(guard.message or f'tool "{execution.name}" denied by a policy guard')
            return deny(verdict.message or f'tool "{execution.name}" denied by policy')
        later = await next()
        if verdict.decision == "ask" and not isinstance(later, Deny):
            if self.approver is not None:
                return await self._queued(state, verdict, later)
            return ask(verdict.message)
        return later

    async def _queued(
        self, state: _CallState, verdict: ToolCallVerdict, later: PreToolDecision
    ) -> PreToolDecision:
        """The ask answered by the approval queue (off the event loop: it waits): approved, the
        later listeners' decision stands; otherwise the call is refused naming the request."""
        approver = self.approver
        assert approver is not None
        gate = await anyio.to_thread.run_sync(
            lambda: approver.admit_call(
                state.event, verdict, harness=PLUGIN_NAME, redactor=state.decider, auditor=self.auditor
            )
        )
        state.approval = gate.approval
        if not gate.allowed:
            state.denied_by = "approval"
            return deny(gate.message)
        return later

    def guard(self, execution: ToolExecution) -> str | None:
        """The invariants: a guard rule's match denies, whatever any listener or approval said."""
        state = self._state(execution)
        verdict = state.decider.guard(state.event)
        state.guard = verdict
        if verdict.denied:
            return verdict.message or f'tool "{execution.name}" denied by a policy guard'
        return None

    async def execute(
        self, execution: ToolExecution, next: Callable[..., Awaitable[ToolResult]]
    ) -> ToolResult:
        """Fail-closed deployments log the call before it runs; no log, no run."""
        assert self.auditor is not None
        try:
            state = self._state(execution)
            self.auditor.tool_dispatch(state.event, state.decider.stamp)
        except AuditUnavailableError as error:
            return ToolResult.failure(
                f"audit log unavailable, call refused: {error}", code="AUDIT_UNAVAILABLE"
            )
        return await next()

    async def post_execute(
        self,
        execution: ToolExecution,
        result: ToolResult,
        next: Callable[[], Awaitable[PostToolDecision]],
    ) -> PostToolDecision:
        """Block, or redact content AND value, and append the rules' contexts."""
        state = self._state(execution)
        # The review sees the instant it runs at (a tool may run for minutes after the gate).
        state.review_now = _utc_now()
        review = state.decider.review_tool_result(
            result_event(replace(state.event, now=state.review_now), result)
        )
        state.review = review
        contexts = tuple(Message.from_plugin(text, PLUGIN_NAME) for text in review.contexts)
        if review.decision == "block":
            state.post_action = "block"
            return block(review.message or "tool output withheld by policy", contexts)
        later = await next()
        if isinstance(later, Block):
            state.post_action = "block-by-other"
            return Block(later.feedback, (*later.additional_contexts, *contexts))
        return self._redacted_accept(state, result, later, contexts)

    def _redacted_accept(
        self,
        state: _CallState,
        result: ToolResult,
        later: PostToolDecision,
        contexts: tuple[Message, ...],
    ) -> PostToolDecision:
        assert isinstance(later, Accept)
        review = state.review
        assert review is not None
        merged = (*later.additional_contexts, *contexts)
        if later.replaces_value or later.content is not None:
            # Another listener replaced the result: review its replacement before it leaves.
            return self._review_replacement(state, result, later, merged)
        if review.value_redacted and not result.is_error:
            if self._renders_a_secret(state, review.redacted_value):
                state.post_action = "block-unredactable"
                return block(_UNREDACTABLE, merged)
            state.post_action = "redact-value"
            return accept(value=review.redacted_value, additional_contexts=merged)
        if review.redacted_text is not None:
            state.post_action = "redact-content"
            return accept(content=(TextContent(review.redacted_text),), additional_contexts=merged)
        state.post_action = "accept"
        return accept(additional_contexts=merged)

    def _renders_a_secret(self, state: _CallState, value: Any) -> bool:
        """A replaced value is re-rendered by the tool's own renderer; one that does not derive
        its text from the value could show the secret again, so check the text it will produce."""
        definition = self._tools.get(state.event.tool) if self._tools is not None else None
        if definition is None:
            return False
        try:
            text = "\n".join(part.text for part in definition.render(value))
        except Exception:  # the pipeline will turn a failing renderer into an error result
            return False
        second = state.decider.review_tool_result(
            ToolResultEvent(call=replace(state.event, now=state.review_now), text=text, value=value)
        )
        return second.decision == "block" or second.redacted_text is not None

    def _review_replacement(
        self, state: _CallState, result: ToolResult, later: Accept, contexts: tuple[Message, ...]
    ) -> PostToolDecision:
        call = replace(state.event, now=state.review_now)
        if later.replaces_value:
            replaced = ToolResultEvent(
                call=call, is_error=result.is_error, value=later.value, text=_text_of(later.value)
            )
        else:
            replaced = ToolResultEvent(
                call=call, is_error=result.is_error, value=result.value, text=_text_of(later.content)
            )
        second = state.decider.review_tool_result(replaced)
        if second.decision == "block":
            state.post_action = "block"
            return block(second.message or "tool output withheld by policy", contexts)
        if later.replaces_value:
            state.post_action = "replace-value"
            value = second.redacted_value if second.value_redacted else later.value
            return accept(value=value, additional_contexts=contexts)
        state.post_action = "replace-content"
        content = (TextContent(second.redacted_text),) if second.redacted_text is not None else later.content
        return accept(content=content, additional_contexts=contexts)

    def on_result(self, execution: ToolExecution, result: ToolResult) -> None:
        """Write the audit record for this call (a contained observer: it changes nothing)."""
        state = self._calls.pop(id(execution.token), None) or _CallState(
            tool_call_event(execution), self.policy.current()
        )
        pipeline = (result.meta or {}).get("pipeline", {})
        error = result.error
        outcome = CallOutcome(
            call=state.event,
            pre_execute=state.pre_execute,
            guard=state.guard,
            approval=state.approval or pipeline.get("approval"),
            denied_by=state.denied_by or pipeline.get("denied_by"),
            review=state.review,
            post_action=state.post_action,
            review_now=state.review_now,
            result=ResultFacts(
                is_error=result.is_error,
                text=result.text,
                error_code=None if error is None else error.code,
                error_message=None if error is None else error.message,
            ),
        )
        if self.auditor is not None:
            try:
                self.auditor.tool_result(outcome)
            except AuditUnavailableError as failure:
                _log.error("tool result not audited", call_id=execution.call_id, error=str(failure))
        self._notify("call_settled", outcome)


def _text_of(content: Any) -> str:
    """Text of a replacement (content parts, a string, or any JSON value) for re-review."""
    if isinstance(content, str):
        return content
    if isinstance(content, tuple | list) and all(isinstance(p, TextContent) for p in content):
        return "\n".join(p.text for p in content)
    return orjson.dumps(canonical_domain(thaw(content))).decode()
