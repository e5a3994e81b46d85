"""Policy on one ``tools/call``: the gate before the server sees it, the review of its result.

Both sides use the decision API exactly as the embedded gateway does (one decider per call,
pre-execute and guard evaluated separately so the record names which refused, post-execute on the
result), and describe the outcome as a :class:`~dsh_policy.policy.runtime.auditing.CallOutcome`,
so the audit record of an MCP call has the shape of every other call's.

An MCP result is reviewed as the decision API's result event: ``text`` is its text content blocks,
one per line (what ``result.text`` rules read), ``value`` is ``{content, structuredContent}``, so
a redaction rewrites both, and the result is rebuilt from the redacted value.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from typing import Any

from dsh_policy.core.frozen import NotJsonError, freeze_json
from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.approvals.calls import admit_asked_call
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.events import (
    GuardVerdict,
    ResultVerdict,
    ToolCallEvent,
    ToolCallVerdict,
    ToolResultEvent,
    with_rules,
)
from dsh_policy.policy.runtime.auditing import CallOutcome, DecisionAuditor, ResultFacts

#: What a proxy without an approval queue answers when a rule asks (docs/approvals.md adds one).
APPROVAL_NEEDED = "approval needed: {message}. This MCP proxy has no approval path, so the call was not run"
CONTEXT_PREFIX = "[dsh-policy] "
#: The fields of a result that carry the tool's output (a blocked result keeps none of them).
_RESULT_PAYLOAD = frozenset({"content", "structuredContent", "isError"})


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@dataclass(slots=True)
class CallState:
    """One call between gate and result: the decider pinned for it and every verdict so far."""

    event: ToolCallEvent
    decider: Decider
    pre_execute: ToolCallVerdict | None = None
    guard: GuardVerdict | None = None
    denied_by: str | None = None
    approval: str | None = None
    refusal: str | None = None
    review: ResultVerdict | None = None
    review_now: datetime.datetime | None = None
    post_action: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def outcome(self, result: ResultFacts) -> CallOutcome:
        return CallOutcome(
            call=self.event,
            pre_execute=self.pre_execute,
            guard=self.guard,
            approval=self.approval,
            denied_by=self.denied_by,
            review=self.review,
            post_action=self.post_action,
            result=result,
            review_now=self.review_now,
        )


def call_event(qualified: str, arguments: Any, *, call_id: str, session_id: str) -> ToolCallEvent | str:
    """The decision API's view of a ``tools/call``, or why its arguments are not acceptable."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return "tools/call arguments must be a JSON object"
    try:
        frozen = freeze_json(arguments)
    except NotJsonError as error:
        return f"tools/call arguments are not JSON: {error}"
    return ToolCallEvent(
        tool=qualified,
        args=frozen,
        call_id=call_id,
        root_call_id=call_id,
        session_id=session_id,
        agent_id="main",
        now=utc_now(),
    )


def gate(
    state: CallState, approvals: ApprovalChannel | None = None, auditor: DecisionAuditor | None = None
) -> None:
    """Pre-execute and guard on the call; sets ``state.refusal`` (the text the model reads) when it
    must not run. A guard that matches is the stronger statement and is named, whatever
    pre-execute said; ``ask`` goes to the deployment's approval queue when it has one (a bounded
    wait, then a refusal naming the request), and is refused otherwise."""
    decider, event = state.decider, state.event
    pre = state.pre_execute = decider.pre_execute(event)
    guard = state.guard = decider.guard(event)
    if guard.denied:
        state.denied_by = "guard"
        state.refusal = with_rules(
            guard.message or f'tool "{event.tool}" denied by a policy guard', guard.rules
        )
    elif pre.decision == "deny":
        state.denied_by = "tools/pre-execute"
        state.refusal = with_rules(pre.message or f'tool "{event.tool}" denied by policy', pre.rules)
    elif pre.decision == "ask" and approvals is not None:
        _ask_queue(state, pre, approvals, auditor)
    elif pre.decision == "ask":
        state.denied_by, state.approval = "approval", "no-service"
        message = APPROVAL_NEEDED.format(message=pre.message or f'tool "{event.tool}" needs approval')
        state.refusal = with_rules(message, pre.rules)


def _ask_queue(
    state: CallState, pre: ToolCallVerdict, approvals: ApprovalChannel, auditor: DecisionAuditor | None
) -> None:
    """The same wait as every channel's (:meth:`ApprovalChannel.admit`), bound to this call."""
    event = state.event
    admitted = admit_asked_call(
        approvals,
        event,
        harness="mcp",
        policy_digest=pre.policy.digest or state.decider.stamp.digest,
        rules=pre.rules,
        message=pre.message or f'tool "{event.tool}" needs approval',
        redactor=state.decider,
        auditor=auditor,
    )
    state.approval = admitted.approval
    if not admitted.allowed:
        state.denied_by = "approval"
        state.refusal = with_rules(admitted.message, pre.rules)


def result_text(content: list[Any]) -> str:
    """The text blocks of an MCP result, one per line."""
    return "\n".join(
        block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


def review(state: CallState, result: dict[str, Any]) -> dict[str, Any]:
    """Post-execute on a server's result: the result to relay (blocked, redacted or as sent, with
    the rules' contexts appended as text blocks)."""
    content = result.get("content")
    content = content if isinstance(content, list) else []
    value: dict[str, Any] = {"content": content}
    if "structuredContent" in result:
        value["structuredContent"] = result["structuredContent"]
    text = result_text(content)
    is_error = result.get("isError") is True
    state.review_now = utc_now()
    verdict = state.review = state.decider.review_tool_result(
        ToolResultEvent(
            call=replace(state.event, now=state.review_now),
            is_error=is_error,
            text=text,
            value=value,
            error_message=text if is_error else None,
        )
    )
    contexts = [{"type": "text", "text": CONTEXT_PREFIX + context} for context in verdict.contexts]
    if verdict.decision == "block":
        state.post_action = "block"
        message = with_rules(verdict.message or "tool output withheld by policy", verdict.rules)
        kept = {key: value for key, value in result.items() if key not in _RESULT_PAYLOAD}
        return {**kept, "content": [{"type": "text", "text": message}, *contexts], "isError": True}
    relayed = dict(result)
    if verdict.value_redacted and isinstance(verdict.redacted_value, dict):
        state.post_action = "redact-value"
        redacted = verdict.redacted_value
        relayed["content"] = redacted.get("content", content)
        if "structuredContent" in redacted:
            relayed["structuredContent"] = redacted["structuredContent"]
    else:
        state.post_action = "accept"
    if contexts:
        relayed["content"] = [*relayed.get("content", content), *contexts]
    return relayed


def result_facts(result: dict[str, Any]) -> ResultFacts:
    """What the audit record keeps of a relayed result: its error flag and a digest of its text."""
    content = result.get("content")
    text = result_text(content) if isinstance(content, list) else ""
    is_error = result.get("isError") is True
    return ResultFacts(is_error=is_error, text=text, error_message=text[:500] if is_error else None)
