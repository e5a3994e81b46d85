"""Recording every hook decision in the audit log, through the same auditor as our own loop.

The resident gateway (``hooks.gateway.server``) holds the one writer of its deployment's log and records
through :func:`record_decision`; a hook that decides in process opens the log, appends one record
and closes it (the writer's OS lock makes concurrent writers safe). Records reuse the native
shapes where the facts match:

| hook event / answer               | record                                                         |
|-----------------------------------|----------------------------------------------------------------|
| PreToolUse denied                 | ``tool_result``: the call ends here (``denied_by``)           |
| PreToolUse passed or asked        | ``hook_event`` with the call (arguments redacted) and the verdict |
| PostToolUse                       | ``tool_result`` with the post-execute verdict and the action taken |
| UserPromptSubmit rejected         | ``step_rejected``                                              |
| anything else (entered prompts, SessionStart, Stop, failures) | ``hook_event``                     |

Secrets stay out: arguments, reasons and a rejected prompt go through the policy's redaction
(``Policy.redact_arguments``); tool output, entered prompts and unparseable input are recorded as
digests only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

import structlog
from dsh_policy.audit.writer import AuditError
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import ResultVerdict, StepVerdict, ToolCallEvent, ToolCallVerdict
from dsh_policy.policy.hooks.gateway.policy_state import remember, transition
from dsh_policy.policy.hooks.protocol.events import HookDecision, response_text
from dsh_policy.policy.hooks.protocol.messages import (
    HookInput,
    HookInputError,
    HookVerdict,
    PostToolUseInput,
    UserPromptSubmitInput,
)
from dsh_policy.policy.hooks.protocol.vocabulary import Harness
from dsh_policy.policy.loading import PackInfo
from dsh_policy.policy.redaction import all_detector_redactions, redact_value
from dsh_policy.policy.runtime.audit_plan import AuditPlan, audit_plan, open_audit_writer
from dsh_policy.policy.runtime.auditing import (
    AuditUnavailableError,
    CallOutcome,
    DecisionAuditor,
    PolicyFacts,
    ResultFacts,
    instant,
    sha256_digest,
)

_log = structlog.get_logger("dsh_policy.audit")


def audit_target(flag: str | None, sources: PolicySources) -> AuditPlan | None:
    """``--audit LOG`` names the log (and makes a failed write refuse, since the operator asked
    for a record of every decision); a deployment file's ``audit:`` supplies the rest, including
    its own ``fail_closed`` choice when it names the path."""
    return audit_plan(sources, path=flag, fail_closed=True if flag is not None else None)


class UnloadedPolicy:
    """Stands in for a policy that failed to load, so the refusal is still recorded: no digest,
    and arguments redacted with every shipped detector."""

    digest = "none"
    engine_name = "none"

    def redact_arguments(self, args: Any) -> tuple[Any, int]:
        """Every shipped detector applied to every string of ``args``."""
        return redact_value(args, all_detector_redactions())


def record_invocation(
    flag: str | None,
    sources: PolicySources | Sequence[PolicyError],
    policy: Policy | None,
    harness: Harness,
    payload: HookInput | HookInputError,
    raw: bytes,
    decision: HookDecision,
    approval: str | None = None,
    approval_events: Sequence[tuple[str, dict[str, Any]]] = (),
) -> None:
    """Record one ``dsh-policy hook`` run: where (``--audit`` and/or the deployment file) and
    against which policy (an :class:`UnloadedPolicy` when it failed to load). ``approval`` and
    ``approval_events`` are what the approval queue said and journaled while deciding it
    (``hooks.gateway.approvals``): recorded before the decision, as the resident gateway does."""
    refuse = False
    if isinstance(sources, PolicySources):
        target = audit_target(flag, sources)
        refuse = sources.config is not None and sources.config.reload.refuse_weakening
    else:
        target = AuditPlan(flag, fail_closed=True) if flag else None
    if target is not None:
        facts: PolicyFacts = policy if policy is not None else UnloadedPolicy()
        record_hook_decision(
            target,
            facts,
            harness,
            payload,
            raw,
            decision,
            refuse_weakening=refuse,
            approval=approval,
            approval_events=approval_events,
        )


def record_hook_decision(
    target: AuditPlan,
    policy: PolicyFacts,
    harness: Harness,
    payload: HookInput | HookInputError,
    raw: bytes,
    decision: HookDecision,
    *,
    refuse_weakening: bool = False,
    approval: str | None = None,
    approval_events: Sequence[tuple[str, dict[str, Any]]] = (),
) -> None:
    """Append the record for one hook decision. Raises :class:`AuditUnavailableError` when the log
    cannot take it and the target is fail-closed; otherwise a failure is logged and ignored."""
    try:
        writer = open_audit_writer(target)
    except (AuditError, OSError, ValueError) as error:
        if target.fail_closed:
            raise AuditUnavailableError(f"cannot open audit log {target.path}: {error}") from None
        # Fail-open: the decision stands without its record; the loss must not be silent.
        _log.error("audit record lost", path=target.path, error=str(error), fail_closed=False)
        return
    try:
        auditor = DecisionAuditor(writer, policy, fail_closed=target.fail_closed)
        _record_policy_change(auditor, target, policy, refuse_weakening)
        for kind, fields in approval_events:
            auditor.approval_event(kind, fields)
        record_decision(auditor, harness, payload, raw, decision, approval)
    finally:
        try:
            writer.close()
        except (AuditError, OSError) as error:
            if target.fail_closed:
                raise AuditUnavailableError(f"cannot close audit log {target.path}: {error}") from None


def _record_policy_change(
    auditor: DecisionAuditor, target: AuditPlan, policy: PolicyFacts, refuse_weakening: bool
) -> None:
    """A policy that differs from the last one recorded in this log gets a ``policy_loaded``
    record with its summary and changes (or ``policy_reload_refused`` when the deployment refuses
    the weakening change and this run failed closed), so no edit between hook runs is silent."""
    compiled = getattr(policy, "compiled", None)
    if compiled is None:
        return  # the policy did not load: the failure record says so
    change = transition(target.path, compiled)
    if not change.changed:
        return
    if change.refused(refuse_weakening):
        auditor.policy_reload_refused(change.summary, change.changes.record())
        return
    packs = [PackInfo(pack.path, pack.name, pack.digest) for pack in compiled.packs]
    auditor.policy_loaded(
        packs, compiled, summary=change.summary, changes=None if change.first else change.changes.record()
    )
    with suppress(OSError):
        remember(target.path, change.summary)


def record_decision(
    auditor: DecisionAuditor,
    harness: Harness,
    payload: HookInput | HookInputError,
    raw: bytes,
    decision: HookDecision,
    approval: str | None = None,
) -> None:
    """Append the record for one hook decision through an open auditor (the resident gateway
    keeps one for its whole life; a hook process opens one per event). ``approval`` is what the
    approval queue said about an asked call (``hooks.gateway.approvals``), or, for the Claude
    Agent SDK, what the application's ``can_use_tool`` answered (a refusal's record, or the
    PostToolUse record of a call it approved)."""
    if isinstance(payload, HookInputError):
        auditor.hook_event(_input_error_fields(auditor, harness, payload, raw, decision.verdict))
        return
    verdict, decided, event = decision.verdict, decision.decided, decision.tool_event
    if isinstance(decided, ToolCallVerdict) and event is not None and verdict.action == "deny":
        auditor.tool_result(_denied_call(event, decided, verdict, harness, approval))
        return
    if isinstance(decided, ResultVerdict) and event is not None and isinstance(payload, PostToolUseInput):
        auditor.tool_result(_reviewed_call(event, decided, verdict, payload, harness, approval))
        return
    if isinstance(decided, StepVerdict) and decision.step is not None and decided.decision == "reject":
        auditor.step_rejected(decision.step, decided)
        return
    fields = _hook_event_fields(auditor, harness, payload, decision)
    if approval is not None:
        fields["answer"]["approval"] = approval  # the policy asked; the queue admitted the call
    auditor.hook_event(fields)


def _denied_call(
    event: ToolCallEvent,
    decided: ToolCallVerdict,
    verdict: HookVerdict,
    harness: Harness,
    approval: str | None = None,
) -> CallOutcome:
    denied_by = "guard" if decided.guard else "tools/pre-execute"
    return CallOutcome(
        call=event,
        pre_execute=decided,
        guard=None,
        approval=approval,
        # an approval outcome on a refusal means the approver refused it (the policy asked, or the
        # client asked for its own permission reasons and the application said no)
        denied_by="approval" if approval is not None else denied_by,
        review=None,
        post_action=None,
        result=ResultFacts(is_error=True, text=f"Error: {verdict.reason}", error_message=verdict.reason),
        harness=harness,
    )


_POST_ACTIONS = {"block": "block", "redact": "block-redacted", "pass": "accept"}


def _reviewed_call(
    event: ToolCallEvent,
    decided: ResultVerdict,
    verdict: HookVerdict,
    payload: PostToolUseInput,
    harness: Harness,
    approval: str | None = None,
) -> CallOutcome:
    action = _POST_ACTIONS.get(verdict.action, verdict.action)
    if verdict.action == "redact" and (
        (verdict.tool_name is not None and verdict.tool_name.startswith("mcp__"))
        # Claude Code takes a redacted response object as the tool's output (updatedToolOutput)
        or (harness == "claude-code" and isinstance(verdict.redacted_output, Mapping))
    ):
        action = "redact-value"  # the dialect may still block; the record says what policy decided
    return CallOutcome(
        call=event,
        pre_execute=None,  # decided by the PreToolUse hook process, recorded there
        guard=None,
        approval=approval,
        denied_by=None,
        review=decided,
        post_action=action,
        result=ResultFacts(is_error=False, text=response_text(payload.tool_response)),
        review_now=event.now,
        harness=harness,
    )


#: What a harness does with an answer it cannot honour (codex/dialect.py: Codex hooks cannot ask
#: for approval, so an ``ask`` is rendered as a refusal). Recorded as ``answer.client``.
_CLIENT_ACTIONS: dict[tuple[str, str], str] = {("codex", "ask"): "deny"}


def _answer(auditor: DecisionAuditor, verdict: HookVerdict) -> dict[str, Any]:
    return {
        "action": verdict.action,
        "reason": auditor.redacted(verdict.reason) if verdict.reason else None,
        "rules": list(verdict.rules),
        "failure": verdict.failure,
    }


def _input_error_fields(
    auditor: DecisionAuditor, harness: Harness, error: HookInputError, raw: bytes, verdict: HookVerdict
) -> dict[str, Any]:
    # The payload is untrusted and unparsed: record only its size and digest, never its bytes.
    return {
        "session": None,
        "agent": None,
        "turn": 0,
        "step": 0,
        "hook": {"harness": harness, "event": error.event, "input_bytes": len(raw)},
        "input_digest": sha256_digest(raw),
        "answer": _answer(auditor, verdict),
        "input_error": auditor.redacted(error.message[:500]),
    }


def _hook_event_fields(
    auditor: DecisionAuditor, harness: Harness, payload: HookInput, decision: HookDecision
) -> dict[str, Any]:
    verdict = decision.verdict
    fields: dict[str, Any] = {
        "session": payload.session_id,
        "agent": payload.agent_id or "main",
        "turn": 0,
        "step": 0,
        "hook": {"harness": harness, "event": payload.hook_event_name, "turn_id": payload.turn_id},
        "answer": _answer(auditor, verdict),
    }
    client = _CLIENT_ACTIONS.get((harness, verdict.action))
    if client is not None:
        fields["answer"]["client"] = client  # what the harness did with our answer
    decided_at = decision.tool_event.now if decision.tool_event is not None else None
    if decided_at is None and decision.step is not None:
        decided_at = decision.step.now
    if decided_at is not None and decision.decided is not None:
        fields["answer"]["now"] = instant(decided_at)  # the instant the rules saw as ``now``
    if decision.tool_event is not None:
        fields["call"] = auditor.call_fields(decision.tool_event)
    if isinstance(payload, UserPromptSubmitInput):
        fields["prompt_digest"] = sha256_digest(payload.prompt.encode("utf-8", "surrogatepass"))
    if verdict.contexts:
        fields["contexts"] = [auditor.redacted(text) for text in verdict.contexts]
    return fields
