"""The Claude Agent SDK's ``can_use_tool``, recorded: every answer to a permission request lands in
the audit log as the in-process gateway records an approval.

Claude Code hands a call to the application's ``can_use_tool`` when a PreToolUse hook answered
``ask`` (and when its own permission mode wants a person). The SDK tells no hook what the
application answered, so a refusal there used to leave only the PreToolUse ``ask`` in the log.
:meth:`PolicyHooks.can_use_tool <.agent_sdk.PolicyHooks.can_use_tool>` wraps the application's
callback in :class:`RecordedPermissions`, which records each outcome with the pipeline's words
(HARNESS.md section 3, step 3):

| the application's callback        | approval          | record                                    |
|-----------------------------------|-------------------|-------------------------------------------|
| ``PermissionResultAllow``         | ``allowed-once``  | on the call's PostToolUse ``tool_result`` |
| ``PermissionResultDeny``          | ``rejected``      | ``tool_result``, ``denied_by: approval``  |
| no answer within ``wait_seconds`` | ``expired``       | the same                                  |
| cancelled (the run was stopped)   | ``cancelled``     | the same, then the cancellation goes on   |
| raises, or answers something else | ``unavailable``   | the same                                  |
| no callback at all                | ``no-service``    | the same                                  |

An allow that rewrites the input (``updated_input``) is decided afresh on the new input: a deny
refuses it, an ask counts as approved (the person approved exactly that input), unless the
hooks have an approval queue (``approver``): then the new input's ask waits on the queue like any
other, and the queue's answer stands. A permission
request for a call no PreToolUse decided (another matcher's tool, a lost event) is decided
first, the same way. Fail closed: an error inside the wrapper refuses the call; it never raises.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

import anyio
import structlog
from dsh_policy.core.pipeline import approval_refusal
from dsh_policy.policy.events import ToolCallVerdict, with_rules
from dsh_policy.policy.hooks.gateway.audit import record_decision
from dsh_policy.policy.hooks.protocol.events import HookDecision
from dsh_policy.policy.hooks.protocol.messages import FAIL_CLOSED_PREFIX, HookVerdict, PreToolUseInput
from dsh_policy.policy.runtime.auditing import DecisionAuditor

__all__ = ["AskedCalls", "CanUseTool", "PendingCall", "RecordedPermissions"]

_log = structlog.get_logger("dsh_policy.hooks")

#: ``ClaudeAgentOptions.can_use_tool``: (tool name, input, ToolPermissionContext) -> a
#: ``PermissionResultAllow`` or ``PermissionResultDeny``.
CanUseTool = Callable[[str, dict[str, Any], Any], Awaitable[Any]]

#: Calls kept between their PreToolUse and their permission request or PostToolUse. A call that
#: never comes back (a tool that failed, an interrupted session) is dropped oldest first.
KEPT_CALLS: Final[int] = 4096


class AskingHooks(Protocol):
    """What the wrapper needs of :class:`.agent_sdk.PolicyHooks` (a protocol, so this module does
    not import the one that imports it): the hook callback, its asked calls, session and auditor."""

    asked: AskedCalls
    session_id: str | None
    auditor: DecisionAuditor | None

    async def __call__(
        self, hook_input: Mapping[str, Any], tool_use_id: str | None, context: Any
    ) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A PreToolUse the gateway let through or asked about, as decided: what a later permission
    answer is recorded against."""

    payload: PreToolUseInput
    decision: HookDecision


class AskedCalls:
    """The PreToolUse decisions awaiting their permission request (by ``tool_use_id``), and the
    approvals awaiting their call's PostToolUse record. Thread-safe: with an approval queue the
    hooks decide on worker threads."""

    def __init__(self, limit: int = KEPT_CALLS) -> None:
        self._limit = limit
        self._pending: OrderedDict[str, PendingCall] = OrderedDict()
        self._approved: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        #: Set once an application wraps its callback (:meth:`PolicyHooks.can_use_tool`): before
        #: that no permission answer can be recorded, so no call is kept for one.
        self.watching = False

    def keep(self, tool_use_id: str, call: PendingCall) -> None:
        with self._lock:
            self._pending[tool_use_id] = call
            if len(self._pending) > self._limit:
                self._pending.popitem(last=False)

    def take(self, tool_use_id: str) -> PendingCall | None:
        with self._lock:
            return self._pending.pop(tool_use_id, None)

    def approve(self, tool_use_id: str, outcome: str) -> None:
        with self._lock:
            self._approved[tool_use_id] = outcome
            if len(self._approved) > self._limit:
                self._approved.popitem(last=False)

    def settle(self, tool_use_id: str) -> str | None:
        """The call ran: forget it; the approval outcome its record carries, if one was given."""
        if not self._pending and not self._approved:  # the common case, no lock to take
            return None
        with self._lock:
            self._pending.pop(tool_use_id, None)
            return self._approved.pop(tool_use_id, None)


def pending_call(payload: Any, decision: HookDecision) -> PendingCall | None:
    """What to keep of a PreToolUse decision, when a permission request may follow it."""
    if (
        isinstance(payload, PreToolUseInput)
        and payload.tool_use_id
        and decision.verdict.action in ("pass", "ask")
        and decision.tool_event is not None
        and isinstance(decision.decided, ToolCallVerdict)
    ):
        return PendingCall(payload, decision)
    return None


class RecordedPermissions:
    """``ClaudeAgentOptions(can_use_tool=...)``: the application's ``ask`` (None: there is nobody
    to ask, every permission request is refused), with its answer recorded. ``wait_seconds``
    bounds the wait for it (None: as long as it takes)."""

    def __init__(self, hooks: AskingHooks, ask: CanUseTool | None, wait_seconds: float | None) -> None:
        self.hooks = hooks
        self.ask = ask
        self.wait_seconds = wait_seconds

    async def __call__(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        tool_use_id = str(getattr(context, "tool_use_id", None) or "")
        try:
            pending = self.hooks.asked.take(tool_use_id)
            if pending is None:
                decided, refusal = await self._decide(tool_name, tool_input, tool_use_id, context)
                if decided is None:
                    return PermissionResultDeny(message=refusal or FAIL_CLOSED_PREFIX)
                pending = decided
        except Exception as error:
            return PermissionResultDeny(message=_failed(tool_name, error))
        outcome, result = "no-service", None
        if self.ask is not None:
            try:
                with anyio.move_on_after(self.wait_seconds) as waited:
                    result = await self.ask(tool_name, tool_input, context)
                outcome = "expired" if waited.cancelled_caught else _outcome(result)
            except anyio.get_cancelled_exc_class():
                self._refused(pending, "cancelled")
                raise
            except Exception as error:
                _log.error("can_use_tool failed, call refused", tool=tool_name, error=repr(error))
                outcome = "unavailable"
        try:
            if outcome == "allowed-once":
                assert isinstance(result, PermissionResultAllow)
                updated = result.updated_input
                if updated is not None and updated != tool_input:
                    again, refusal = await self._decide(tool_name, dict(updated), tool_use_id, context)
                    if again is None:
                        return PermissionResultDeny(message=refusal or FAIL_CLOSED_PREFIX)
                self.hooks.asked.approve(tool_use_id, outcome)
                return result
            reason = self._refused(pending, outcome)
        except Exception as error:
            return PermissionResultDeny(message=_failed(tool_name, error))
        if isinstance(result, PermissionResultDeny):
            return result  # the application's own words to the model
        return PermissionResultDeny(message=with_rules(reason, pending.decision.verdict.rules))

    async def _decide(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str, context: Any
    ) -> tuple[PendingCall | None, str | None]:
        """A PreToolUse decision for a call the hooks have not decided as it stands (recorded as
        one): the pending call, or the refusal the model reads."""
        hook_input: dict[str, Any] = {
            "session_id": self.hooks.session_id or "claude-agent-sdk",
            "hook_event_name": "PreToolUse",
            "tool_name": tool_name,
            "tool_input": dict(tool_input),
            "tool_use_id": tool_use_id,
        }
        agent = getattr(context, "agent_id", None)
        if isinstance(agent, str) and agent:
            hook_input["agent_id"] = agent
        answer = await self.hooks(hook_input, tool_use_id, context)
        specific = answer.get("hookSpecificOutput") or {}
        if specific.get("permissionDecision") == "deny":
            return None, str(specific.get("permissionDecisionReason") or FAIL_CLOSED_PREFIX)
        pending = self.hooks.asked.take(tool_use_id)
        if pending is None:  # nothing decided to record against: the safe side
            return None, f'{FAIL_CLOSED_PREFIX}: tool "{tool_name}" could not be decided'
        return pending, None

    def _refused(self, pending: PendingCall, outcome: str) -> str:
        """Record the refusal as the in-process gateway does; returns its reason."""
        decision = pending.decision
        event = decision.tool_event
        decided = decision.decided
        assert event is not None and isinstance(decided, ToolCallVerdict)
        name = event.tool
        if outcome == "expired":
            reason = f'approval for tool "{name}" expired: no answer within {self.wait_seconds:g} s'
        elif outcome == "no-service":  # the pipeline refuses with the rule's question, if it has one
            reason = decided.message or (
                f'tool "{name}" requires approval, but the application gave the SDK no can_use_tool'
            )
        else:
            reason = approval_refusal(outcome, name)
        verdict = decision.verdict
        refusal = HookVerdict("PreToolUse", "deny", reason, rules=verdict.rules, tool_name=verdict.tool_name)
        auditor = self.hooks.auditor
        if auditor is not None:
            try:
                refused = replace(decision, verdict=refusal)
                record_decision(auditor, "claude-code", pending.payload, b"", refused, outcome)
            except Exception as error:  # the call is refused either way; the loss must not be silent
                _log.error("permission record lost", tool=event.tool, approval=outcome, error=repr(error))
        return reason


def _outcome(result: Any) -> str:
    from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

    if isinstance(result, PermissionResultAllow):
        return "allowed-once"
    if isinstance(result, PermissionResultDeny):
        return "rejected"
    return "unavailable"  # the SDK would fail the request anyway; we refuse it, recorded


def _failed(tool_name: str, error: BaseException) -> str:
    _log.error("permission callback failed closed", tool=tool_name, error=repr(error))
    return f'{FAIL_CLOSED_PREFIX}: tool "{tool_name}" refused ({type(error).__name__})'
