"""The Claude Code hook in process, for applications built on the Claude Agent SDK.

The Claude Agent SDK (``claude-agent-sdk``) drives the Claude Code CLI and lets the application
answer Claude Code's hooks with Python callbacks instead of commands. The events, their payloads
and the answers are Claude Code's own, so this module decides them with exactly the pieces the
command hook uses (:func:`~..protocol.events.decide_hook`, :class:`~.dialect.ClaudeCodeDialect`,
:func:`~..gateway.audit.record_decision`), only without a process per event::

    from claude_agent_sdk import ClaudeAgentOptions, query
    from dsh_policy.policy.hooks.in_process.agent_sdk import PolicyHooks

    hooks = PolicyHooks(policy, auditor=auditor)
    options = ClaudeAgentOptions(hooks=hooks.matchers(), can_use_tool=hooks.can_use_tool(ask), ...)
    async for message in query(prompt="...", options=options): ...

What holds, event by event, is what HOOKS.md says of the Claude Code command hook: PreToolUse
denies (the tool never runs; the model reads the reason), asks (Claude Code's permission request,
which the SDK hands to the application's ``can_use_tool`` callback; without one a headless run
refuses; :meth:`PolicyHooks.can_use_tool` wraps that callback so its answer is recorded too,
:mod:`.sdk_permissions`), or passes; PostToolUse redacts the output (``updatedMCPToolOutput`` for MCP tools,
``updatedToolOutput`` in the tool's own response shape for built-in ones) and blocks what it cannot
rewrite; UserPromptSubmit rejects a prompt. Records name the harness ``claude-code``: the
SDK runs the Claude Code CLI, and its records are that client's.

Fail closed: the matchers are registered with ``on_failure="block"``, and a callback never raises:
any error while deciding becomes the event's safe answer (a refusal for PreToolUse, a withheld
result for PostToolUse, a rejected prompt, or a halted session). Bash output is not routed through
``dsh-policy redact-output`` here (that needs the command-line deployment), so a secret in Bash
output is handled by PostToolUse alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import anyio.to_thread
import structlog
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.claude_code.dialect import ClaudeCodeDialect
from dsh_policy.policy.hooks.gateway.approvals import gate_ask
from dsh_policy.policy.hooks.gateway.audit import record_decision
from dsh_policy.policy.hooks.in_process.sdk_permissions import (
    AskedCalls,
    CanUseTool,
    RecordedPermissions,
    pending_call,
)
from dsh_policy.policy.hooks.protocol.events import HookDecision, SessionContext, decide_hook
from dsh_policy.policy.hooks.protocol.messages import (
    FAIL_CLOSED_PREFIX,
    EventName,
    HookInputError,
    HookReply,
    PostToolUseInput,
    event_of,
    failure_verdict,
    parse_hook_input,
    render_safely,
)
from dsh_policy.policy.runtime.auditing import DecisionAuditor

__all__ = ["EVENTS", "PolicyHooks"]

_log = structlog.get_logger("dsh_policy.hooks")

#: The Claude Code events the gateway decides (SessionStart and Stop carry nothing to decide).
EVENTS: Final[tuple[EventName, ...]] = ("PreToolUse", "PostToolUse", "UserPromptSubmit")

_DIALECT = ClaudeCodeDialect()
#: Seconds of the CLI's callback timeout kept for recording and answering after a queued wait.
APPROVAL_RESERVE_SECONDS: Final[float] = 5.0


class PolicyHooks:
    """Claude Code's hook events decided in process for the Claude Agent SDK.

    ``auditor`` (optional) records every decision, as the resident gateway does; ``timeout`` is
    the seconds the CLI waits for a callback before the matcher's ``on_failure`` refuses.
    ``approver`` (the deployment's approval queue, ``approvals.calls.queue_approver``) takes an
    asked PreToolUse instead of the application's ``can_use_tool``: the resident gateway's path
    (queue, bounded wait, single use, the same records), for runs nobody watches."""

    def __init__(
        self,
        policy: Policy,
        *,
        auditor: DecisionAuditor | None = None,
        timeout: float = 60.0,
        approver: QueueApprover | None = None,
    ) -> None:
        self.policy = policy
        self.auditor = auditor
        self.timeout = timeout
        self.approver = approver
        #: Calls between their PreToolUse and their permission answer or PostToolUse.
        self.asked = AskedCalls()
        #: The last session seen, for a permission request no hook decided first.
        self.session_id: str | None = None

    def matchers(self) -> dict[str, list[Any]]:
        """``ClaudeAgentOptions(hooks=...)``: one matcher per decided event, for every tool, that
        blocks when the callback fails."""
        from claude_agent_sdk import HookMatcher  # the SDK is the application's; import it late

        # The SDK types a callback's input as its own TypedDicts; a Mapping is what we read.
        callback: Any = self.__call__
        return {
            event: [HookMatcher(matcher=None, hooks=[callback], timeout=self.timeout, on_failure="block")]
            for event in EVENTS
        }

    def can_use_tool(self, ask: CanUseTool | None = None, *, wait_seconds: float | None = None) -> CanUseTool:
        """``ClaudeAgentOptions(can_use_tool=...)``: the application's own ``ask`` (a person, a
        review UI; None refuses every permission request), its every answer recorded as the
        in-process gateway records an approval (``rejected``, ``expired`` after ``wait_seconds``,
        ``cancelled``, ``unavailable``, ``no-service``, or ``allowed-once`` on the call's result).
        Without this wrapper a call the application refuses leaves only the PreToolUse ``ask``
        in the log: the SDK does not tell hooks what ``can_use_tool`` answered."""
        self.asked.watching = True
        return RecordedPermissions(self, ask, wait_seconds)

    async def __call__(
        self, hook_input: Mapping[str, Any], tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        """One hook event, as the SDK calls a hook callback: the answer Claude Code reads."""
        if self.approver is not None:  # waiting for an approver must not stall the SDK's loop
            return await anyio.to_thread.run_sync(self.answer, hook_input)
        return self.answer(hook_input)

    def answer(self, hook_input: Mapping[str, Any]) -> dict[str, Any]:
        """Decide and record one event. Never raises: a failure is the event's safe answer."""
        event: EventName | None = None
        try:
            raw = json.dumps(dict(hook_input), ensure_ascii=False).encode("utf-8")
            payload = parse_hook_input(raw)
            event = event_of(payload)
            if isinstance(payload, HookInputError):
                decision = HookDecision(failure_verdict(payload.event, str(payload)))
            else:
                self.session_id = payload.session_id
                decision = decide_hook(self.policy, "claude-code", payload, SessionContext(None, None))
            answer, approval = decision.verdict, None
            if isinstance(payload, PostToolUseInput) and payload.tool_use_id:
                approval = self.asked.settle(payload.tool_use_id)  # what can_use_tool said, if asked
            if self.approver is not None and decision.verdict.action == "ask":
                gated = gate_ask(
                    self.approver.channel,
                    self.policy,
                    "claude-code",
                    decision,
                    self.auditor,
                    wait_limit=self._wait_limit(),
                )
                decision, answer, approval = gated.recorded, gated.answer, gated.approval
            if self.auditor is not None:
                record_decision(self.auditor, "claude-code", payload, raw, decision, approval)
            # a permission request may follow: with a wrapped callback its answer is recorded against it
            pending = pending_call(payload, decision) if self.asked.watching else None
            if pending is not None:
                self.asked.keep(pending.payload.tool_use_id or "", pending)
            return sdk_answer(render_safely(_DIALECT, answer), event)
        except Exception as error:  # a bug or an unwritable fail-closed log: the safe answer
            _log.error("hook callback failed closed", hook_event=event, error=repr(error))
            failed = failure_verdict(event, f"{type(error).__name__}: {error}")
            return sdk_answer(render_safely(_DIALECT, failed), event)


    def _wait_limit(self) -> float:
        """The approver's wait, ending early enough to answer before the CLI's callback timeout."""
        assert self.approver is not None
        limit = max(0.0, self.timeout - APPROVAL_RESERVE_SECONDS)
        return limit if self.approver.wait_seconds is None else min(limit, self.approver.wait_seconds)


def sdk_answer(reply: HookReply, event: EventName | None) -> dict[str, Any]:
    """A command hook's reply as a callback's return value. A command hook blocks by exiting 2
    with the reason on stderr; a callback has no exit code, so that becomes the JSON answer with
    the same effect for the event. ``continue`` is spelled ``continue_`` for the SDK."""
    if reply.exit_code != 0:
        reason = reply.stderr.strip() or FAIL_CLOSED_PREFIX
        if event is None or event == "PreToolUse":
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": reason}}
        if event in ("PostToolUse", "UserPromptSubmit"):
            return {"decision": "block", "reason": reason}
        return {"continue_": False, "stopReason": reason}
    if not reply.stdout.strip():
        return {}
    document: dict[str, Any] = json.loads(reply.stdout)
    if "continue" in document:
        document["continue_"] = document.pop("continue")
    return document
