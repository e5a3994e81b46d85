"""An asked call from an embedded channel (a framework adapter, the embedded gateway, the Claude
Agent SDK hooks) sent to the approval queue, when the deployment routes embedded asks there.

Those channels have a person in the loop by default: the framework's interrupt, the harness's
approval service, the SDK's ``can_use_tool``. A headless run has nobody there, so a deployment
can say ``approvals: {embedded: queue}`` (docs/approvals.md): the ask then becomes a request in
the queue that an approver answers from the command line or the console, exactly as a hook's does,
through the same :meth:`~.channel.ApprovalChannel.admit` (same binding, same bounded wait, same
single use, same audit records). :func:`queue_approver` reads that choice from the deployment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from dsh_policy.policy.approvals.binding import CallBinding
from dsh_policy.policy.approvals.channel import ApprovalChannel, Gate, Recorder
from dsh_policy.policy.config import GatewayConfig
from dsh_policy.policy.events import ToolCallEvent, ToolCallVerdict
from dsh_policy.policy.runtime.auditing import DecisionAuditor, canonical_domain

__all__ = ["QueueApprover", "queue_approver"]


class _Redacting(Protocol):
    """What redacts the arguments and message people see (a ``Decider`` or ``Policy``)."""

    def redact_arguments(self, args: Any) -> tuple[Any, int]: ...


class QueueApprover:
    """The deployment's approval queue as an embedded channel asks it. ``wait_seconds`` overrides
    the deployment's wait (None: the deployment's)."""

    def __init__(self, channel: ApprovalChannel, *, wait_seconds: float | None = None) -> None:
        self.channel = channel
        self.wait_seconds = wait_seconds

    def admit_call(
        self,
        event: ToolCallEvent,
        verdict: ToolCallVerdict,
        *,
        harness: str,
        redactor: _Redacting,
        auditor: DecisionAuditor | None,
    ) -> Gate:
        """Admit the asked call once an approver approved it (or a grant covers it), waiting a
        bounded time; otherwise refuse it naming the request. Blocks for up to the wait: async
        channels call it from a worker thread. Never raises."""
        return admit_asked_call(
            self.channel,
            event,
            harness=harness,
            policy_digest=verdict.policy.digest,
            rules=verdict.rules,
            message=verdict.message or f'tool "{event.tool}" needs approval',
            redactor=redactor,
            auditor=auditor,
            wait_seconds=self.wait_seconds,
        )


def queue_approver(config: GatewayConfig | None) -> QueueApprover | None:
    """The queue, when the deployment file has ``approvals:`` with ``embedded: queue``; None
    otherwise (the channel keeps its native approval path)."""
    if config is None or config.approvals is None or config.approvals.embedded != "queue":
        return None
    return QueueApprover(ApprovalChannel(config.approvals))


def admit_asked_call(
    channel: ApprovalChannel,
    event: ToolCallEvent,
    *,
    harness: str,
    policy_digest: str,
    rules: Sequence[str],
    message: str,
    redactor: _Redacting,
    auditor: DecisionAuditor | None,
    record: Recorder | None = None,
    wait_seconds: float | None = None,
) -> Gate:
    """What every channel does with an asked call: bind it (harness, session, agent, tool,
    arguments, policy digest, asking rules), show approvers its arguments and message redacted
    (by the audit log's redaction where there is one, else by ``redactor``), and wait on the
    queue (:meth:`ApprovalChannel.admit`). The queue's events go to ``auditor``, else to
    ``record``, else stay journaled. Never raises."""
    binding = CallBinding(
        harness=harness,
        session=event.session_id,
        agent=event.agent_id,
        tool=event.tool,
        args=event.args,
        policy_digest=policy_digest,
        rules=tuple(rules),
    )
    if auditor is not None:
        shown, message = auditor.redacted(event.args), str(auditor.redacted(message))
    else:
        shown = canonical_domain(redactor.redact_arguments(event.args)[0])
        message = str(canonical_domain(redactor.redact_arguments(message)[0]))
    return channel.admit(
        binding,
        message=message,
        shown_args=shown,
        record=auditor.approval_event if auditor is not None else record,
        wait_seconds=wait_seconds,
    )
