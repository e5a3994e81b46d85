"""A hook's ``ask`` sent to the deployment's approval queue (docs/approvals.md).

With ``approvals:`` in the deployment file, a PreToolUse that a rule asks about is not handed to
the client's terminal prompt (which a headless run does not have): the call's binding goes to
:meth:`~dsh_policy.policy.approvals.ApprovalChannel.admit`, which waits a bounded time. Approved
or granted, the hook answers as for an allowed call (nothing: the client's own permissions still
apply); otherwise it denies, naming the request, and the same call made again after an approver
answered is admitted once.

The wait is capped below the hook client's answer budget (``ANSWER_SECONDS``): a longer one would
make the client give up on its gateway and decide in process.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.approvals.calls import admit_asked_call
from dsh_policy.policy.approvals.channel import Recorder
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallVerdict
from dsh_policy.policy.hooks.protocol.events import HookDecision
from dsh_policy.policy.hooks.protocol.messages import HookVerdict
from dsh_policy.policy.runtime.auditing import DecisionAuditor

#: Seconds a resident gateway holds a hook request waiting for an approver (the client waits
#: ``ANSWER_SECONDS`` = 10 for a heartbeating gateway before deciding in process).
HOOK_WAIT_LIMIT: Final[float] = 8.0


@dataclass(frozen=True, slots=True)
class GatedDecision:
    """The decision to record (the policy's ``ask``, or the refusal), the verdict to answer
    with, and the approval outcome for the record."""

    recorded: HookDecision
    answer: HookVerdict
    approval: str | None


def gate_ask(
    channel: ApprovalChannel,
    policy: Policy,
    harness: str,
    decision: HookDecision,
    auditor: DecisionAuditor | None,
    *,
    wait_limit: float = HOOK_WAIT_LIMIT,
    record: Recorder | None = None,
) -> GatedDecision:
    """Send an asked PreToolUse call to the queue; anything else passes through unchanged. The
    queue's events go to ``auditor``, else to ``record`` (a hook deciding in process collects them
    for the record it writes afterwards), else stay journaled."""
    verdict, decided, event = decision.verdict, decision.decided, decision.tool_event
    if verdict.action != "ask" or event is None or not isinstance(decided, ToolCallVerdict):
        return GatedDecision(decision, verdict, None)
    gate = admit_asked_call(
        channel,
        event,
        harness=harness,
        policy_digest=decided.policy.digest or policy.digest,
        rules=decided.rules,
        message=verdict.reason,
        redactor=policy,
        auditor=auditor,
        record=record,
        wait_seconds=min(channel.settings.wait_seconds, wait_limit),
    )
    if gate.allowed:
        answer = HookVerdict("PreToolUse", "pass", rules=verdict.rules, tool_name=verdict.tool_name)
        return GatedDecision(decision, answer, gate.approval)
    refusal = HookVerdict(
        "PreToolUse", "deny", gate.message, rules=verdict.rules, tool_name=verdict.tool_name
    )
    return GatedDecision(replace(decision, verdict=refusal), refusal, gate.approval)
