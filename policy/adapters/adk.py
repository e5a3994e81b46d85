"""Google ADK: the gateway as a runner plugin around every tool call.

``App(name=..., root_agent=agent, plugins=[PolicyPlugin(policy, auditor=...)])`` puts every tool
call of every agent the runner drives through the gateway (function tools, agent tools, MCP and
OpenAPI toolsets alike: ADK runs the same tool callbacks for all of them), ``run_async`` and the
synchronous ``run`` alike, sync and async tool functions alike:

- **before the tool** (``before_tool_callback``): pre-execute and guards decide on the arguments
  ADK will pass. Plugins run before an agent's own ``before_tool_callback``, so a deny answers the
  call before anything else sees it: ADK skips the body and the model reads
  ``{"error": "Error: <reason>"}``. An agent's own callback runs *after* the decision and receives
  the same argument dict: an agent callback that rewrites arguments is not re-decided (keep such
  callbacks out of governed agents, or make them plugins ordered before this one).
- **ask** uses ADK's tool confirmation: the plugin calls ``tool_context.request_confirmation`` with
  the rule's message as the hint, the run pauses (an ``adk_request_confirmation`` function call in
  the events, the model is not asked to summarize), and the caller answers it with a
  ``FunctionResponse`` of ``{"confirmed": true | false}``. ADK then re-runs the original call (it
  checks the name and arguments match the call in the session history), and the plugin reads the
  confirmation: approved runs the guards (a guard still refuses), rejected records the refusal and
  gives the model the harness's text. A resumed call keeps the policy that asked while this plugin
  object lives; a resume in another process decides afresh, taking the confirmation as the answer.
- **after the tool** (``after_tool_callback``): post-execute reviews the result ADK hands the
  callbacks (a non-dict result is wrapped by ADK as ``{"result": ...}``; rules see that value).
  A block replaces it with ``{"error": <message>}``, a redaction with ``{"result": <redacted>}``;
  the rules' contexts are appended to the text.
- A tool body that raises is recorded as an error result (``on_tool_error_callback``) and the error
  goes on as ADK has it (another plugin or ADK itself decides what the model sees). A gateway
  failure refuses the call (fail closed).

Sessions are ADK session ids; the agent is the ADK agent's name. ``before_model_callback`` is not
used: ADK's model requests carry no tool call for pre-step rules to judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_policy.policy.adapters.gate import GatedCall, PolicySource, Shown, ToolGate
from dsh_policy.policy.adapters.support import json_value, missing, text_of
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.runtime.auditing import DecisionAuditor

try:
    from google.adk.plugins.base_plugin import BasePlugin
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing("adk", error) from error

FRAMEWORK = "google-adk"

__all__ = ["FRAMEWORK", "PolicyPlugin"]


class PolicyPlugin(BasePlugin):
    """An ADK plugin that puts every tool call of the runner through the gateway.

    ``tool_names`` maps the agents' tool names onto the packs' vocabulary (``{"terminal":
    "shell"}``; rules then see ``tool.original_name == "terminal"``)."""

    def __init__(
        self,
        policy: PolicySource,
        *,
        auditor: DecisionAuditor | None = None,
        observers: Sequence[Any] = (),
        tool_names: Mapping[str, str] | None = None,
        approver: QueueApprover | None = None,
        name: str = "dsh_policy",
    ) -> None:
        super().__init__(name=name)
        self.gate = ToolGate(
            policy, framework=FRAMEWORK, auditor=auditor, observers=observers, approver=approver
        )
        self.tool_names = dict(tool_names or {})
        #: Calls allowed to run, by call id, until their result (or error) is reviewed.
        self._running: dict[str, GatedCall] = {}

    # --- the hooks -----------------------------------------------------------------------------------

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
        call_id = str(getattr(tool_context, "function_call_id", None) or "")
        confirmation = getattr(tool_context, "tool_confirmation", None)
        call = self._resumed(call_id, tool_args) if confirmation is not None else None
        if call is None:
            call = self._open(tool, tool_args, tool_context, call_id)
            answer = await self.gate.acheck(call)
            if answer.action == "ask" and confirmation is not None:  # answered in another process
                answer = self.gate.resolve_ask(call, _outcome(confirmation))
        else:
            answer = self.gate.resolve_ask(call, _outcome(confirmation))
        if answer.action == "ask":
            self.gate.remember(call)  # the resume re-enters here: the same call, the same policy
            tool_context.request_confirmation(hint=answer.reason or "", payload=None)
            tool_context.actions.skip_summarization = True  # a pause, not a result to summarize
            return {"error": f"waiting for approval: {answer.reason or call.name}"}
        if answer.action == "allow":
            answer = self.gate.dispatching(call)
        if answer.action != "allow":
            self.gate.forget(call_id)
            return {"error": self.gate.refuse(call).text_with_contexts()}
        self.gate.forget(call_id)
        self._running[call_id] = call
        return None

    async def after_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: Any
    ) -> Any:
        call = self._running.pop(str(getattr(tool_context, "function_call_id", None) or ""), None)
        if call is None:
            return None  # refused or paused by this plugin: the answer is already ours
        output = result.get("result") if _is_wrapped(result) else result
        text, value = (output, output) if isinstance(output, str) else (text_of(output), json_value(output))
        shown = self.gate.finish(call, text=text, value=value)
        if shown.action == "block":
            return {"error": shown.text_with_contexts()}
        if not shown.replaced and not shown.contexts:
            return None
        return {"result": _replacement(shown)}

    async def on_tool_error_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception
    ) -> Any:
        call = self._running.pop(str(getattr(tool_context, "function_call_id", None) or ""), None)
        if call is not None:
            message = str(error) or type(error).__name__
            self.gate.finish(call, text=f"Error: {message}", is_error=True, error_message=message,
                             error_code="TOOL_FAILED")
        return None  # ADK (or a later plugin) decides what the model sees of a failed body

    # --- steps ---------------------------------------------------------------------------------------

    def _resumed(self, call_id: str, tool_args: Mapping[str, Any]) -> GatedCall | None:
        """The call that asked, if this plugin paused it and ADK resumes it with the same arguments
        (ADK checks them against the session history too); otherwise None (decided afresh)."""
        call = self.gate.recall(call_id) if call_id else None
        if call is None or call.pending_ask is None or call.approval is not None:
            return None
        if call.event.args != dict(tool_args):
            self.gate.forget(call_id)
            return None
        return call

    def _open(self, tool: Any, tool_args: Mapping[str, Any], tool_context: Any, call_id: str) -> GatedCall:
        name = str(getattr(tool, "name", "") or "")
        session = getattr(getattr(tool_context, "session", None), "id", None) or ""
        agent = getattr(tool_context, "agent_name", None)
        return self.gate.open(
            self.tool_names.get(name, name),
            dict(tool_args),
            call_id=call_id,
            session_id=str(session),
            agent_id=str(agent) if agent else None,
            original_name=name if name in self.tool_names else None,
        )


def _outcome(confirmation: Any) -> str:
    """ADK's confirmation as the harness's approval outcome: only an explicit ``confirmed`` is an
    approval."""
    return "allowed-once" if getattr(confirmation, "confirmed", False) is True else "rejected"


def _is_wrapped(result: Any) -> bool:
    """Whether ADK wrapped a non-dict tool return as ``{"result": value}`` (its callbacks see that)."""
    return isinstance(result, Mapping) and set(result) == {"result"}


def _replacement(shown: Shown) -> Any:
    """The value the model gets instead of the tool's: a redacted structured value as such (when
    there is nothing to append), otherwise text."""
    if shown.value is not None and not isinstance(shown.value, str) and not shown.contexts:
        return shown.value
    return shown.text_with_contexts()
