"""LangChain v1 / LangGraph: the gateway as agent middleware (``wrap_tool_call``).

``create_agent(model, tools, middleware=[PolicyMiddleware(policy, auditor=...)])`` puts every tool
call of the agent through the gateway, sync (``invoke``) and async (``ainvoke``) alike:

- **before the tool**: pre-execute and guards decide; a deny returns a ``ToolMessage`` with
  ``status="error"`` and the harness's ``Error: <reason>`` text instead of calling the tool, so the
  model reads why and the tool body never runs.
- **ask** becomes a LangGraph ``interrupt`` shaped like LangChain's human-in-the-loop request
  (``action_requests`` / ``review_configs``, decisions ``approve`` / ``reject``); resume with
  ``Command(resume={"decisions": [{"type": "approve"}]})`` (or ``True``/``"approve"``). The call
  stays pinned to the policy that asked. A graph without a checkpointer cannot resume, so there an
  ask is refused (the outcome ``no-service``), never left hanging or allowed.
- **after the tool**: post-execute reviews the ``ToolMessage`` text; a block replaces it with the
  policy's message (``status="error"``), a redaction replaces the content and drops the message's
  ``artifact`` (raw output the model does not see, but state and tracing would keep); the rules'
  context messages are appended to the content. A tool that returns a ``Command`` has the
  ``ToolMessage`` of its update reviewed the same way; other state it writes is not reviewed.
- A tool body that raises is recorded as an error result and the exception propagates as
  LangChain would have it. A gateway failure refuses the call (fail closed).

Sessions are LangGraph threads (``configurable.thread_id``); turn and step are 0.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio.to_thread
from dsh_policy.policy.adapters.gate import Answer, GatedCall, PolicySource, Shown, ToolGate
from dsh_policy.policy.adapters.support import approval_outcome, json_value, missing, text_of
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.runtime.auditing import DecisionAuditor

try:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import ToolMessage
    from langgraph.errors import GraphBubbleUp
    from langgraph.types import Command, interrupt
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing("langgraph", error) from error

FRAMEWORK = "langgraph"
#: LangGraph's config key for the checkpointer of the running graph (``langgraph._internal``).
_CHECKPOINTER_KEY = "__pregel_checkpointer"

__all__ = ["FRAMEWORK", "PolicyMiddleware"]


class PolicyMiddleware(AgentMiddleware):
    """Agent middleware that puts every tool call through the gateway.

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
        super().__init__()
        self.gate = ToolGate(
            policy, framework=FRAMEWORK, auditor=auditor, observers=observers, approver=approver
        )
        self.tool_names = dict(tool_names or {})

    # --- the two hooks -----------------------------------------------------------------------------

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        call, refusal = self._before(request)
        if refusal is not None:
            return refusal
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise  # an interrupt raised by another middleware or the tool: not a result
        except Exception as error:
            self._failed(call, error)
            raise
        return self._after(request, call, result)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        if self.gate.approver is not None:  # waiting for an approver must not stall the loop
            call, refusal = await anyio.to_thread.run_sync(self._before, request)
        else:
            call, refusal = self._before(request)
        if refusal is not None:
            return refusal
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as error:
            self._failed(call, error)
            raise
        return self._after(request, call, result)

    # --- steps -------------------------------------------------------------------------------------

    def _before(self, request: Any) -> tuple[GatedCall, Any]:
        """Decide the call; returns it and the refusal ``ToolMessage`` when it must not run."""
        tool_call = request.tool_call
        call_id = str(tool_call.get("id") or "")
        call = self.gate.recall(call_id) if call_id else None
        if call is None or call.settled:
            call = self._open(request, call_id)
            answer = self.gate.check(call)
        elif call.pending_ask is not None and call.approval is None:
            answer = Answer("ask", call.pending_ask)  # resumed after an interrupt: same policy
        else:
            answer = self.gate.check(call)
        if answer.action == "ask":
            answer = self._ask(request, call, answer)
        if answer.action == "allow":
            answer = self.gate.dispatching(call)
        if answer.action == "deny":
            return call, _tool_message(request, self.gate.refuse(call), None)
        return call, None

    def _open(self, request: Any, call_id: str) -> GatedCall:
        tool_call = request.tool_call
        name = str(tool_call.get("name") or "")
        config = _config(request)
        thread = (config.get("configurable") or {}).get("thread_id")
        return self.gate.open(
            self.tool_names.get(name, name),
            tool_call.get("args"),
            call_id=call_id,
            session_id=str(thread) if thread is not None else "",
            original_name=name if name in self.tool_names else None,
        )

    def _ask(self, request: Any, call: GatedCall, answer: Answer) -> Answer:
        """An interrupt the graph's caller answers; without a checkpointer nobody can."""
        config = _config(request)
        if (config.get("configurable") or {}).get(_CHECKPOINTER_KEY) is None:
            return self.gate.resolve_ask(call, "no-service")
        self.gate.remember(call)  # a resume re-enters this hook: the same call, the same policy
        tool_call = request.tool_call
        name = str(tool_call.get("name") or "")
        question = {
            "action_requests": [
                {"name": name, "args": tool_call.get("args"), "description": answer.reason or ""}
            ],
            "review_configs": [{"action_name": name, "allowed_decisions": ["approve", "reject"]}],
        }
        reply = interrupt(question)  # raises GraphInterrupt until the caller resumes
        return self.gate.resolve_ask(call, approval_outcome(reply))

    def _after(self, request: Any, call: GatedCall, result: Any) -> Any:
        if isinstance(result, Command):
            return self._after_command(request, call, result)
        if not isinstance(result, ToolMessage):
            shown = self.gate.finish(call, text=text_of(result), value=json_value(result))
            return _tool_message(request, shown, None) if shown.replaced or shown.contexts else result
        text = text_of(result.content)
        is_error = result.status == "error"
        shown = self.gate.finish(
            call, text=text, value=text, is_error=is_error, error_message=text if is_error else None
        )
        if not shown.replaced and not shown.contexts:
            return result
        return _tool_message(request, shown, result)

    def _after_command(self, request: Any, call: GatedCall, command: Any) -> Any:
        update = command.update
        messages = update.get("messages") if isinstance(update, Mapping) else None
        call_id = str(request.tool_call.get("id") or "")
        if not isinstance(messages, list):
            messages = []
        mine = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
        if not mine:
            self.gate.finish(call, text="")
            return command
        text = "\n".join(text_of(m.content) for m in mine)
        shown = self.gate.finish(call, text=text, value=text)
        if not shown.replaced and not shown.contexts:
            return command
        # The first of the call's messages carries the reviewed text; the others are folded into it.
        replaced = [
            _tool_message(request, shown, m) if m is mine[0] else m
            for m in messages
            if not any(m is extra for extra in mine[1:])
        ]
        return Command(
            graph=command.graph,
            update={**update, "messages": replaced},
            resume=command.resume,
            goto=command.goto,
        )

    def _failed(self, call: GatedCall, error: Exception) -> None:
        message = str(error) or type(error).__name__
        self.gate.finish(
            call, text=f"Error: {message}", is_error=True, error_message=message, error_code="TOOL_FAILED"
        )


def _config(request: Any) -> Mapping[str, Any]:
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None)
    return config if isinstance(config, Mapping) else {}


def _tool_message(request: Any, shown: Shown, original: Any) -> Any:
    """The ``ToolMessage`` the model gets: the shown text (and contexts); an error status when the
    output was withheld or the call refused; no artifact once the output was replaced."""
    tool_call = request.tool_call
    status = "error" if shown.is_error else (original.status if original is not None else "success")
    artifact = original.artifact if original is not None and not shown.replaced else None
    return ToolMessage(
        content=shown.text_with_contexts(),
        tool_call_id=str(tool_call.get("id") or ""),
        name=tool_call.get("name"),
        status=status,
        artifact=artifact,
    )
