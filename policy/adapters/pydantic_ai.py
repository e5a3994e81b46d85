"""PydanticAI: the gateway as a capability wrapping tool execution (``wrap_tool_execute``).

``Agent(model, tools=..., output_type=[str, DeferredToolRequests],
capabilities=[PolicyCapability(policy, auditor=...)])`` puts every function tool call of the agent
through the gateway, ``run`` and ``run_sync`` alike, sync and async tool functions alike:

- **before the tool**: pre-execute and guards decide on the validated arguments the tool would get
  (the capability asks to be the *innermost* one, so no other capability rewrites them after the
  decision). A deny raises PydanticAI's ``ToolFailed`` with the harness's ``Error: <reason>``: the
  body never runs and the model gets a failed tool return with that text.
- **ask** raises ``ApprovalRequired``: the run ends with ``DeferredToolRequests`` (the agent's
  ``output_type`` must include it, or a ``HandleDeferredToolCalls`` capability must answer it inline;
  otherwise PydanticAI raises ``UserError`` and nothing runs). Resume with
  ``deferred_tool_results=policy_capability.results(requests, {call_id: True | False | ...})``:
  an approval runs the guards when the call executes (a guard still refuses), a rejection records
  the refusal and gives the model the harness's text as PydanticAI's ``ToolDenied``. Answering with
  PydanticAI's own ``False``/``ToolDenied`` refuses too, but leaves the call unrecorded. A resumed
  call keeps the policy that asked while this capability object lives; a resume in another process
  decides afresh (an ask then counts as approved: PydanticAI runs only approved calls), and an
  approval that overrides the arguments (``ToolApproved(override_args=...)``) is decided afresh on
  the new arguments.
- **after the tool**: post-execute reviews the result (a ``ToolReturn``'s ``return_value`` and its
  extra ``content`` together); a block raises ``ToolFailed`` with the policy's message, a redaction
  replaces the result (the redacted value for a structured result, else the redacted text); the
  rules' contexts are appended to the text. Outer capabilities' ``after_tool_execute`` see only what
  the model sees.
- A tool body that raises (also ``ModelRetry`` / ``ToolFailed``) is recorded as an error result and
  the error goes on as PydanticAI has it. A gateway failure refuses the call (fail closed).

Sessions are PydanticAI conversation ids (``ctx.conversation_id``, else the run id); ``step`` is
the run step. Output tools are PydanticAI's own (the run's result), not tool calls: not governed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread
from dsh_policy.policy.adapters.gate import Answer, GatedCall, PolicySource, Shown, ToolGate
from dsh_policy.policy.adapters.support import approval_outcome, json_value, missing, text_of
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.runtime.auditing import DecisionAuditor

try:
    from pydantic_ai import ApprovalRequired, DeferredToolRequests, DeferredToolResults, ToolDenied
    from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering
    from pydantic_ai.exceptions import (
        CallDeferred,
        ModelRetry,
        SkipToolExecution,
        ToolFailed,
        ToolFailedError,
        ToolRetryError,
    )
    from pydantic_ai.messages import ToolReturn
    from pydantic_core import to_jsonable_python
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing("pydantic-ai", error) from error

FRAMEWORK = "pydantic-ai"

__all__ = ["FRAMEWORK", "PolicyCapability"]

#: Exceptions that steer PydanticAI's run rather than report a failed body.
_CONTROL = (SkipToolExecution, CallDeferred, ApprovalRequired)


class PolicyCapability(AbstractCapability[Any]):
    """A PydanticAI capability that puts every function tool call through the gateway.

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
        self.id = "dsh_policy"
        self.description = None
        self.defer_loading = False
        self.gate = ToolGate(
            policy, framework=FRAMEWORK, auditor=auditor, observers=observers, approver=approver
        )
        self.tool_names = dict(tool_names or {})

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a compiled policy and an audit writer: not part of an agent spec

    def get_ordering(self) -> CapabilityOrdering:
        # Innermost: decide on the arguments the tool really gets, and hand outer capabilities
        # only what the model may see.
        return CapabilityOrdering(position="innermost")

    # --- approvals -----------------------------------------------------------------------------------

    def answer(self, call_id: str, reply: Any) -> bool | ToolDenied:
        """One approval answer (``True``/``False``, ``"approve"``, ...) as the value PydanticAI's
        ``DeferredToolResults.approvals`` takes. A refusal is recorded here, with the harness's text."""
        outcome = approval_outcome(reply)
        call = self.gate.recall(call_id)
        if outcome == "allowed-once":
            return True  # the guards run when the call executes
        if call is None:
            return ToolDenied(f"Error: the user rejected tool call {call_id!r}")
        self.gate.resolve_ask(call, outcome)
        return ToolDenied(self.gate.refuse(call).text_with_contexts())

    def results(self, requests: DeferredToolRequests, replies: Mapping[str, Any]) -> DeferredToolResults:
        """``DeferredToolResults`` for every approval in ``requests``; a call without a reply is
        refused (no answer is not an approval)."""
        return DeferredToolResults(
            approvals={
                part.tool_call_id: self.answer(part.tool_call_id, replies.get(part.tool_call_id))
                for part in requests.approvals
            }
        )

    # --- the hook ------------------------------------------------------------------------------------

    async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        if self.gate.approver is not None:  # waiting for an approver must not stall the loop
            gated = await anyio.to_thread.run_sync(self._before, ctx, call, args)
        else:
            gated = self._before(ctx, call, args)
        try:
            result = await handler(args)
        except _CONTROL:
            raise
        except ToolRetryError as error:
            self._failed(gated, _content_text(error.tool_retry), "TOOL_RETRY")
            raise
        except ModelRetry as error:
            self._failed(gated, error.message, "TOOL_RETRY")
            raise
        except ToolFailedError as error:
            self._failed(gated, _content_text(error.tool_failed), "TOOL_FAILED")
            raise
        except Exception as error:  # the body failed (also ModelRetry / ToolFailed it raised)
            self._failed(gated, str(error) or type(error).__name__, "TOOL_FAILED")
            raise
        return self._after(gated, result)

    # --- steps ---------------------------------------------------------------------------------------

    def _before(self, ctx: Any, part: Any, args: Any) -> GatedCall:
        """Decide the call; raises ``ApprovalRequired`` for an ask and ``ToolFailed`` for a refusal."""
        call_id = str(part.tool_call_id or "")
        plain = _plain_args(args)
        call = self.gate.recall(call_id) if call_id else None
        if call is not None and (call.settled or call.event.args != plain):
            self.gate.forget(call_id)  # overridden arguments: decided afresh
            call = None
        if call is None:
            call = self._open(ctx, part, plain, call_id)
            answer = self.gate.check(call)
            if answer.action == "ask" and ctx.tool_call_approved:
                answer = self.gate.resolve_ask(call, "allowed-once")  # approved elsewhere
        elif call.pending_ask is not None and call.approval is None and ctx.tool_call_approved:
            answer = self.gate.resolve_ask(call, "allowed-once")  # PydanticAI runs only approved calls
        else:
            answer = Answer("deny", call.refusal) if call.refusal is not None else self.gate.check(call)
        if answer.action == "ask":
            self.gate.remember(call)  # the resume re-enters here: the same call, the same policy
            raise ApprovalRequired(metadata={"dsh_policy": answer.reason or ""})
        if answer.action == "allow":
            answer = self.gate.dispatching(call)
        if answer.action != "allow":
            raise ToolFailed(self.gate.refuse(call).text_with_contexts())
        return call

    def _open(self, ctx: Any, part: Any, args: Any, call_id: str) -> GatedCall:
        name = str(part.tool_name)
        session = getattr(ctx, "conversation_id", None) or getattr(ctx, "run_id", None) or ""
        return self.gate.open(
            self.tool_names.get(name, name),
            args,
            call_id=call_id,
            session_id=str(session),
            step=int(getattr(ctx, "run_step", 0) or 0),
            original_name=name if name in self.tool_names else None,
        )

    def _after(self, call: GatedCall, result: Any) -> Any:
        if isinstance(result, ToolReturn):
            output: Any = result.return_value
            if result.content is not None:  # extra content the model also reads
                output = [result.return_value, result.content]
        else:
            output = result
        if isinstance(output, str):
            text, value = output, output
        else:
            plain = to_jsonable_python(output, fallback=repr)
            text, value = text_of(plain), json_value(plain)
        shown = self.gate.finish(call, text=text, value=value)
        if shown.action == "block":
            raise ToolFailed(shown.text_with_contexts())
        if not shown.replaced and not shown.contexts:
            return result
        return _replacement(shown)

    def _failed(self, call: GatedCall, message: str, code: str) -> None:
        self.gate.finish(
            call, text=f"Error: {message}", is_error=True, error_message=message, error_code=code
        )


def _plain_args(args: Any) -> Any:
    """Validated arguments as JSON values (what rules see); models and dates become their JSON.
    Arguments that are JSON already (the common case) are copied without pydantic's serializer,
    which gives an equal copy of them."""
    copied = _json_copy(args, 0)
    return copied if copied is not _NOT_JSON else to_jsonable_python(args, fallback=repr)


_NOT_JSON: Any = object()
#: Leaf types ``to_jsonable_python`` returns as they are (floats are left to it: it turns NaN and
#: the infinities into null).
_LEAVES = frozenset({str, int, bool, type(None)})


def _json_copy(value: Any, depth: int) -> Any:
    """A deep copy of a value made of dicts with string keys, lists, strings, ints, booleans and
    None; ``_NOT_JSON`` for anything else (or nested deeper than 16)."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if depth > 16:
        return _NOT_JSON
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            copied = _json_copy(item, depth + 1)
            if type(key) is not str or copied is _NOT_JSON:
                return _NOT_JSON
            out[key] = copied
        return out
    if kind is list:
        items = [_json_copy(item, depth + 1) for item in value]
        return _NOT_JSON if any(item is _NOT_JSON for item in items) else items
    return _NOT_JSON


def _content_text(part: Any) -> str:
    """The text the model gets from one of PydanticAI's retry or failure parts."""
    return text_of(to_jsonable_python(getattr(part, "content", ""), fallback=repr))


def _replacement(shown: Shown) -> Any:
    """What the model gets instead of the tool's result: a redacted structured value as such (when
    there is nothing to append), otherwise text."""
    if shown.value is not None and not isinstance(shown.value, str) and not shown.contexts:
        return shown.value
    return shown.text_with_contexts()
