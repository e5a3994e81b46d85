"""One framework tool call through the gateway: the neutral middle every framework adapter shares.

A framework adapter translates its framework's tool call into this conversation, and its
framework's way of refusing, asking and rewriting into the answers::

    call = gate.open("shell", {"command": "pytest -q"}, call_id="c1")  # one compiled policy, one now
    answer = gate.check(call)                     # pre-execute + guards: allow | ask | deny
    answer = gate.resolve_ask(call, "rejected")   # (ask) the framework's approval outcome
    answer = gate.dispatching(call)               # (allow) fail-closed audit: logged before it runs
    shown = gate.refuse(call)                     # (deny) what the model sees, recorded
    shown = gate.finish(call, text=output)        # (ran) post-execute: accept | redact | block, recorded

It keeps the semantics of the harness plugins (:mod:`..runtime.gateway` and the tool pipeline,
HARNESS.md section 3) step for step, so a call decided here and the same call decided by our own
loop give the same verdicts, the same model-visible text and the same audit record, apart from the
record naming the framework (``harness``). A deny reviews the error result like the pipeline does
(post-execute sees it), and approval outcomes use the pipeline's strings.

Fail closed: any exception while deciding (a broken policy, a bug) turns into a refusal that never
runs the tool; any exception while reviewing a result withholds the result. Recording a decision
never raises into the framework: a lost record is logged (a fail-closed auditor refuses at
:meth:`ToolGate.dispatching`, before anything ran).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio.to_thread
import orjson
import structlog
from dsh_policy.core.pipeline import approval_refusal
from dsh_policy.policy.events import (
    GuardVerdict,
    ResultVerdict,
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

if TYPE_CHECKING:
    from dsh_policy.policy.approvals.calls import QueueApprover
    from dsh_policy.policy.decide import Decider
    from dsh_policy.policy.runtime.gateway import GatewayObserver

__all__ = [
    "AUDIT_UNAVAILABLE",
    "BLOCKED",
    "GATEWAY_FAILED",
    "Answer",
    "ApprovalOutcome",
    "GatedCall",
    "PolicySource",
    "Shown",
    "ToolGate",
]

_log = structlog.get_logger("dsh_policy.adapters")

#: Error codes of results the gateway made (the harness pipeline's, where it has one).
BLOCKED = "BLOCKED"
AUDIT_UNAVAILABLE = "AUDIT_UNAVAILABLE"
GATEWAY_FAILED = "GATEWAY_FAILED"

#: Approval outcomes, as the harness's approval service answers (HARNESS.md section 3, step 3).
ApprovalOutcome = Literal["allowed-once", "rejected", "cancelled", "unavailable", "no-service"]


class PolicySource(Protocol):
    """What the gate decides with: a ``Policy`` or ``ReloadingPolicy`` (one decider per call)."""

    def current(self) -> Decider: ...


@dataclass(frozen=True, slots=True)
class Answer:
    """What the framework must do with a call before it runs: ``allow`` it, ``ask`` a human
    (``reason`` is the question's text), or ``deny`` it (``reason`` tells the model why)."""

    action: Literal["allow", "ask", "deny"]
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Shown:
    """What the model may see of a call's result.

    ``action``: ``accept`` (unchanged), ``redact`` (``text``/``value`` are the redacted ones),
    ``block`` (the output is withheld; ``text`` says why) or ``refuse`` (the call never ran).
    ``contexts`` are the rules' extra messages for the model (the harness adds them as separate
    messages; adapters append them where the framework has no such channel)."""

    action: Literal["accept", "redact", "block", "refuse"]
    text: str
    value: Any = None
    is_error: bool = False
    contexts: tuple[str, ...] = ()
    error_code: str | None = None

    @property
    def replaced(self) -> bool:
        """Whether the framework must swap the tool's own output for ``text``/``value``."""
        return self.action != "accept"

    def text_with_contexts(self) -> str:
        """``text`` followed by the contexts, for frameworks with one channel per result."""
        return "\n\n".join((self.text, *self.contexts)) if self.contexts else self.text


@dataclass(slots=True)
class GatedCall:
    """One call from gate to record. ``decider`` is the compiled policy in force when the call was
    opened: pre-execute, guard and post-execute are all decided by it, even across a reload or an
    approval that takes minutes (the same pinning as the harness gateway)."""

    event: ToolCallEvent
    decider: Decider | None
    pre_execute: ToolCallVerdict | None = None
    guard: GuardVerdict | None = None
    approval: str | None = None
    denied_by: str | None = None
    review: ResultVerdict | None = None
    post_action: str | None = None
    review_now: datetime.datetime | None = None
    #: Why the call must not run (None while it may); ``refusal_code`` its error code.
    refusal: str | None = None
    refusal_code: str | None = None
    pending_ask: str | None = None
    settled: bool = False

    @property
    def name(self) -> str:
        return self.event.tool


_now = datetime.datetime.now
_UTC = datetime.UTC


def _utc_now() -> datetime.datetime:
    return _now(_UTC)


#: The fields a call event is built from (all of them are ``__init__`` fields), for :func:`_at`.
_CALL_FIELDS = tuple(f.name for f in fields(ToolCallEvent) if f.name != "now")
assert all(f.init for f in fields(ToolCallEvent))


def _at(event: ToolCallEvent, now: datetime.datetime) -> ToolCallEvent:
    """``dataclasses.replace(event, now=now)`` without its per-call field introspection, which was
    the largest single cost of reviewing a result."""
    return ToolCallEvent(**{name: getattr(event, name) for name in _CALL_FIELDS}, now=now)


def _describe(error: BaseException) -> str:
    return type(error).__name__


class ToolGate:
    """The gateway for one framework. ``framework`` names it in every audit record (``harness``);
    ``auditor`` (optional) writes the records; ``observers`` get every settled call (the same
    :class:`~..runtime.gateway.GatewayObserver` the harness plugin notifies). ``approver`` (the
    deployment's approval queue, ``approvals.calls.queue_approver``) answers every ``ask`` in
    :meth:`check` itself: the call waits a bounded time for an approver, then is allowed (once) or
    refused naming the request, so the framework's own interrupt is never raised."""

    def __init__(
        self,
        policy: PolicySource,
        *,
        framework: str,
        auditor: DecisionAuditor | None = None,
        observers: Sequence[GatewayObserver] = (),
        approver: QueueApprover | None = None,
    ) -> None:
        self.policy = policy
        self.framework = framework
        self.auditor = auditor
        self.observers = tuple(observers)
        self.approver = approver
        self._open: dict[str, GatedCall] = {}
        self._lock = threading.Lock()

    # --- opening a call ----------------------------------------------------------------------------

    def open(
        self,
        tool: str,
        args: Any,
        *,
        call_id: str,
        session_id: str = "",
        agent_id: str | None = None,
        turn: int = 0,
        step: int = 0,
        original_name: str | None = None,
    ) -> GatedCall:
        """A new call, pinned to the compiled policy in force now. Never raises: a policy that
        cannot give a decider makes a call that :meth:`check` refuses."""
        event = ToolCallEvent(
            tool=tool,
            args=args,
            call_id=call_id,
            root_call_id=call_id,
            session_id=session_id,
            agent_id=agent_id,
            turn=turn,
            step=step,
            original_name=original_name,
            now=_utc_now(),
        )
        try:
            decider: Decider | None = self.policy.current()
        except Exception as error:
            _log.error("policy unavailable, call refused", tool=tool, error=repr(error))
            call = GatedCall(event, None)
            self._fail(call, error)
            return call
        return GatedCall(event, decider)

    def remember(self, call: GatedCall) -> None:
        """Keep an open call between two framework hooks (before/after the tool, approval)."""
        with self._lock:
            self._open[call.event.call_id] = call

    def recall(self, call_id: str) -> GatedCall | None:
        """The open call with this id (still kept), if any."""
        with self._lock:
            return self._open.get(call_id)

    def forget(self, call_id: str) -> GatedCall | None:
        """Stop keeping a call (it settled, or the framework dropped it)."""
        if call_id not in self._open:  # most calls were never kept: no lock to take
            return None
        with self._lock:
            return self._open.pop(call_id, None)

    # --- before the tool runs ----------------------------------------------------------------------

    def check(self, call: GatedCall) -> Answer:
        """Pre-execute and guards, as the harness runs them: a pre-execute deny also evaluates the
        guards (a matching guard names the refusal), an allow runs the guards, an ask waits for
        :meth:`resolve_ask`."""
        if call.refusal is not None:
            return Answer("deny", call.refusal)
        try:
            return self._check(call)
        except Exception as error:
            return self._fail(call, error)

    def _check(self, call: GatedCall) -> Answer:
        decider = call.decider
        assert decider is not None
        verdict = call.pre_execute = decider.pre_execute(call.event)
        if verdict.decision == "deny":
            guard = call.guard = decider.guard(call.event)
            if guard.denied:
                reason = guard.message or f'tool "{call.name}" denied by a policy guard'
            else:
                reason = verdict.message or f'tool "{call.name}" denied by policy'
            return self._deny(call, reason, "tools/pre-execute")
        if verdict.decision == "ask" and self.approver is not None:
            return self._queued(call, verdict)
        if verdict.decision == "ask":
            call.pending_ask = verdict.message
            call.denied_by = "approval"  # until an approval clears it, as the pipeline traces it
            return Answer("ask", verdict.message)
        return self._guard(call)

    def _queued(self, call: GatedCall, verdict: ToolCallVerdict) -> Answer:
        """The ask answered by the approval queue: approved (or granted) runs the guards,
        anything else refuses with the queue's message (which names the request)."""
        assert self.approver is not None and call.decider is not None
        gate = self.approver.admit_call(
            call.event, verdict, harness=self.framework, redactor=call.decider, auditor=self.auditor
        )
        call.approval = gate.approval
        if not gate.allowed:
            return self._deny(call, gate.message, "approval")
        return self._guard(call)

    async def acheck(self, call: GatedCall) -> Answer:
        """:meth:`check` for async frameworks: with an approver it runs on a worker thread, since
        waiting for an approver must not stall the event loop (other calls, other runs)."""
        if self.approver is None:
            return self.check(call)
        return await anyio.to_thread.run_sync(self.check, call)

    def _guard(self, call: GatedCall) -> Answer:
        decider = call.decider
        assert decider is not None
        guard = call.guard = decider.guard(call.event)
        if guard.denied:
            return self._deny(call, guard.message or f'tool "{call.name}" denied by a policy guard', "guard")
        return Answer("allow")

    def _deny(self, call: GatedCall, reason: str, by: str, code: str | None = None) -> Answer:
        call.refusal, call.refusal_code, call.denied_by = reason, code, by
        return Answer("deny", reason)

    def _fail(self, call: GatedCall, error: BaseException) -> Answer:
        _log.error("policy gateway failed, call refused", tool=call.name, error=repr(error))
        reason = f'tool "{call.name}" refused: the policy gateway failed ({_describe(error)})'
        return self._deny(call, reason, "gateway", GATEWAY_FAILED)

    def resolve_ask(self, call: GatedCall, outcome: str) -> Answer:
        """The framework's approval answer to an ``ask`` (the pipeline's outcome strings): allowed
        once runs the guards; anything else refuses with the pipeline's wording."""
        if call.refusal is not None:
            return Answer("deny", call.refusal)
        try:
            call.approval = outcome
            name = call.name
            if outcome == "allowed-once":
                call.denied_by = None
                return self._guard(call)
            if outcome == "no-service":
                reason = call.pending_ask or (
                    f'tool "{name}" requires approval, but {self.framework} offers no approval channel here'
                )
                return self._deny(call, reason, "approval")
            return self._deny(call, approval_refusal(outcome, name), "approval")
        except Exception as error:
            return self._fail(call, error)

    def dispatching(self, call: GatedCall) -> Answer:
        """The call is about to run. A fail-closed auditor records it first (``tool_dispatch``);
        no record, no run."""
        if call.refusal is not None:
            return Answer("deny", call.refusal)
        auditor = self.auditor
        if auditor is None or not auditor.fail_closed:
            return Answer("allow")
        try:
            stamp = call.decider.stamp if call.decider is not None else None
            auditor.tool_dispatch(call.event, stamp, harness=self.framework)
        except AuditUnavailableError as error:
            reason = f"audit log unavailable, call refused: {error}"
            call.refusal, call.refusal_code = reason, AUDIT_UNAVAILABLE
            return Answer("deny", reason)
        except Exception as error:
            return self._fail(call, error)
        return Answer("allow")

    # --- after it ran (or did not) ------------------------------------------------------------------

    def refuse(self, call: GatedCall) -> Shown:
        """The call will not run: the error result the harness would give (``Error: <reason>``),
        reviewed by post-execute as the pipeline does, then recorded."""
        reason = call.refusal or f'tool "{call.name}" denied by policy'
        return self.finish(
            call,
            text=f"Error: {reason}",
            is_error=True,
            error_message=reason,
            error_code=call.refusal_code,
        )

    def finish(
        self,
        call: GatedCall,
        *,
        text: str,
        value: Any = None,
        is_error: bool = False,
        error_message: str | None = None,
        error_code: str | None = None,
    ) -> Shown:
        """Review the result (post-execute), record the call, and say what the model may see."""
        shown = self.review(
            call,
            text=text,
            value=value,
            is_error=is_error,
            error_message=error_message,
            error_code=error_code,
        )
        self.settle(call, shown, error_message=error_message, error_code=error_code)
        return shown

    def review(
        self,
        call: GatedCall,
        *,
        text: str,
        value: Any = None,
        is_error: bool = False,
        error_message: str | None = None,
        error_code: str | None = None,
    ) -> Shown:
        """Post-execute alone (for frameworks whose review and recording happen at two points)."""
        try:
            return self._review(call, text, value, is_error, error_message, error_code)
        except Exception as error:
            _log.error(
                "policy gateway failed reviewing a result, withheld", tool=call.name, error=repr(error)
            )
            call.post_action = "block"
            message = f'tool "{call.name}" output withheld: the policy gateway failed ({_describe(error)})'
            return Shown("block", message, is_error=True, error_code=GATEWAY_FAILED)

    def _review(
        self,
        call: GatedCall,
        text: str,
        value: Any,
        is_error: bool,
        error_message: str | None,
        error_code: str | None,
    ) -> Shown:
        if call.decider is None:
            raise RuntimeError("no compiled policy for this call")
        call.review_now = _utc_now()
        review = call.review = call.decider.review_tool_result(
            ToolResultEvent(
                call=_at(call.event, call.review_now),
                is_error=is_error,
                text=text,
                value=value,
                error_message=error_message,
                error_code=error_code,
            )
        )
        if review.decision == "block":
            call.post_action = "block"
            message = review.message or "tool output withheld by policy"
            return Shown("block", message, is_error=True, contexts=review.contexts, error_code=BLOCKED)
        refused = call.refusal is not None
        if review.value_redacted and not is_error:
            call.post_action = "redact-value"
            redacted = review.redacted_value
            shown_text = review.redacted_text if review.redacted_text is not None else _text_of(redacted)
            return Shown("redact", shown_text, redacted, is_error, review.contexts, error_code)
        if review.redacted_text is not None:
            call.post_action = "redact-content"
            return Shown(
                "refuse" if refused else "redact",
                review.redacted_text,
                None,
                is_error,
                review.contexts,
                error_code,
            )
        call.post_action = "accept"
        return Shown("refuse" if refused else "accept", text, value, is_error, review.contexts, error_code)

    def settle(
        self,
        call: GatedCall,
        shown: Shown,
        *,
        error_message: str | None = None,
        error_code: str | None = None,
    ) -> CallOutcome | None:
        """Write the call's audit record (once) and notify observers. Never raises. Returns the
        outcome, or None when the call had settled already or nobody records or observes it (the
        audit-free path builds no outcome)."""
        if call.settled:
            return None
        call.settled = True
        self.forget(call.event.call_id)
        if self.auditor is None and not self.observers:
            return None
        if shown.action == "block":
            error_message, error_code = shown.text, shown.error_code
        outcome = CallOutcome(
            call=call.event,
            pre_execute=call.pre_execute,
            guard=call.guard,
            approval=call.approval,
            denied_by=call.denied_by if call.refusal is not None else None,
            review=call.review,
            post_action=call.post_action,
            review_now=call.review_now,
            result=ResultFacts(
                is_error=shown.is_error,
                text=shown.text,
                error_code=error_code,
                error_message=error_message,
            ),
            harness=self.framework,
        )
        if self.auditor is not None:
            try:
                self.auditor.tool_result(outcome)
            except Exception as error:  # the decision stands; a lost record must not be silent
                _log.error("tool result not audited", call_id=call.event.call_id, error=repr(error))
        for observer in self.observers:
            try:
                observer.call_settled(outcome)
            except Exception as error:  # an observer never changes a decision
                _log.error("gateway observer failed", observer=repr(observer), error=repr(error))
        return outcome


def _text_of(value: Any) -> str:
    """A redacted value as text, for frameworks that show the model text."""
    if isinstance(value, str):
        return value
    return orjson.dumps(canonical_domain(value)).decode()
