"""OpenAI Agents SDK: the gateway as tool guardrails and ``needs_approval`` on function tools.

``PolicyGuardrails(policy, auditor=...).govern(tool)`` returns the function tool with three things
set (and any guardrails it already had kept after ours):

- **``needs_approval``** decides the call when the SDK plans it (pre-execute and guards, pinned to
  the policy in force then): an ``ask`` interrupts the run (``result.interruptions``); everything
  else does not. Approve with the SDK's own ``state.approve(item)``; **reject with
  ``guardrails.reject(state, item)``**, which records the refusal and gives the model the
  harness's text (``RunState.reject`` alone would leave the call unrecorded).
- **a tool input guardrail** enforces the decision before the body runs: a deny answers
  ``reject_content`` with ``Error: <reason>`` (the body never runs, the model reads why); an
  approved ask runs the guards (a guard still refuses); a fail-closed auditor records the call
  before it runs.
- **a tool output guardrail** reviews the output: a block or a redaction replaces what the model
  sees with ``reject_content`` (the policy's message, or the redacted text); contexts are appended
  to it. The SDK cannot rewrite a result in place, so a redaction is delivered as that
  replacement message, and the tool's raw return value still exists inside the SDK's own run
  items (``ToolCallOutputItem.output`` keeps what the model saw; hooks and tracing see the raw one:
  disable tracing of tool outputs where that matters).

Guardrails exist only for function tools in the SDK: hosted tools (web search, file search, code
interpreter), MCP tools and handoffs are not governed by this adapter. The SDK's ``needs_approval``
and guardrails run for ``Runner.run`` and ``Runner.run_sync`` alike, and for sync and async tool
functions. Sessions: the SDK gives a tool no conversation id, so ``session`` is empty; turn and
step are 0.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread
from dsh_policy.policy.adapters.gate import Answer, GatedCall, PolicySource, ToolGate
from dsh_policy.policy.adapters.support import json_value, missing, text_of
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.runtime.auditing import DecisionAuditor

try:
    from agents import FunctionTool, ToolGuardrailFunctionOutput
    from agents.tool_guardrails import ToolInputGuardrail, ToolOutputGuardrail
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing("openai-agents", error) from error

FRAMEWORK = "openai-agents"

__all__ = ["FRAMEWORK", "PolicyGuardrails"]


class PolicyGuardrails:
    """The gateway for the function tools of an OpenAI Agents SDK agent.

    ``tool_names`` maps the agent's tool names onto the packs' vocabulary (``{"terminal":
    "shell"}``; rules then see ``tool.original_name == "terminal"``)."""

    def __init__(
        self,
        policy: PolicySource,
        *,
        auditor: DecisionAuditor | None = None,
        observers: Sequence[Any] = (),
        tool_names: Mapping[str, str] | None = None,
        approver: QueueApprover | None = None,
    ) -> None:
        self.gate = ToolGate(
            policy, framework=FRAMEWORK, auditor=auditor, observers=observers, approver=approver
        )
        self.tool_names = dict(tool_names or {})
        self.input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._before, name="dsh-policy"
        )
        self.output_guardrail: ToolOutputGuardrail[Any] = ToolOutputGuardrail(
            guardrail_function=self._after, name="dsh-policy"
        )

    def govern(self, tool: FunctionTool) -> FunctionTool:
        """``tool`` with the gateway's approval check and guardrails (ours run first)."""
        if not isinstance(tool, FunctionTool):
            raise TypeError(f"only function tools have guardrails in the SDK, not {type(tool).__name__}")
        name = tool.name

        async def needs_approval(context: Any, params: dict[str, Any], call_id: str) -> bool:
            if self.gate.approver is not None:  # waiting for an approver must not stall the loop
                return await anyio.to_thread.run_sync(self._plan, name, params, call_id)
            return self._plan(name, params, call_id)

        return dataclasses.replace(
            tool,
            needs_approval=needs_approval,
            tool_input_guardrails=[self.input_guardrail, *(tool.tool_input_guardrails or [])],
            tool_output_guardrails=[self.output_guardrail, *(tool.tool_output_guardrails or [])],
        )

    def govern_all(self, tools: Sequence[FunctionTool]) -> list[FunctionTool]:
        """Every tool governed (see :meth:`govern`)."""
        return [self.govern(tool) for tool in tools]

    def reject(self, state: Any, item: Any, outcome: str = "rejected") -> None:
        """Reject an interruption: record the refusal and send the model the harness's text."""
        call = self.gate.recall(_item_call_id(item))
        if call is None:  # not one of ours (another tool's approval): reject as the SDK would
            state.reject(item)
            return
        self.gate.resolve_ask(call, outcome)
        shown = self.gate.refuse(call)
        state.reject(item, rejection_message=shown.text_with_contexts())

    # --- the SDK's callbacks -----------------------------------------------------------------------

    def _open(self, name: str, args: Any, call_id: str) -> GatedCall:
        return self.gate.open(
            self.tool_names.get(name, name),
            args,
            call_id=call_id,
            original_name=name if name in self.tool_names else None,
        )

    def _plan(self, name: str, params: Mapping[str, Any], call_id: str) -> bool:
        """``needs_approval``: decide now; only an ask interrupts the run."""
        call = self._open(name, dict(params), call_id)
        answer = self.gate.check(call)
        self.gate.remember(call)
        return answer.action == "ask"

    def _before(self, data: Any) -> Any:
        context = data.context
        call = self.gate.recall(context.tool_call_id)
        if call is None:  # needs_approval was not consulted (or another process planned it)
            call = self._open(context.tool_name, _arguments(context.tool_arguments), context.tool_call_id)
            self.gate.remember(call)
            answer = self.gate.check(call)
            if answer.action == "ask":  # nobody was asked: no approval channel on this path
                answer = self.gate.resolve_ask(call, "no-service")
        elif call.pending_ask is not None and call.approval is None:
            answer = self.gate.resolve_ask(call, "allowed-once")  # the SDK runs only approved calls
        else:
            answer = Answer("deny", call.refusal) if call.refusal is not None else Answer("allow")
        if answer.action == "allow":
            answer = self.gate.dispatching(call)
        if answer.action != "allow":
            shown = self.gate.refuse(call)
            return ToolGuardrailFunctionOutput.reject_content(shown.text_with_contexts())
        return ToolGuardrailFunctionOutput.allow()

    def _after(self, data: Any) -> Any:
        context = data.context
        call = self.gate.recall(context.tool_call_id)
        if call is None or call.settled:
            return ToolGuardrailFunctionOutput.allow()
        output = data.output
        text = text_of(output)
        value = text if isinstance(output, str) else json_value(output)
        shown = self.gate.finish(call, text=text, value=value)
        if shown.replaced or shown.contexts:
            return ToolGuardrailFunctionOutput.reject_content(shown.text_with_contexts())
        return ToolGuardrailFunctionOutput.allow()


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return raw  # the rules see the raw text; a broken call is theirs to judge


def _item_call_id(item: Any) -> str:
    call_id = getattr(item, "call_id", None)
    if call_id is None:
        call_id = getattr(getattr(item, "raw_item", None), "call_id", "")
    return str(call_id or "")
