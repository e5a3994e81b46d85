"""The ten-step pipeline of one tool call (HARNESS.md section 3) and the normalization boundary.

A call goes through three phases so the loop can schedule bodies in parallel while keeping policy
sequential and commits in model order:

- :func:`prepare` seals the identity and decides: ``tools/pre-execute``, approval, guards (1-5);
- :meth:`PendingCall.dispatch` runs the ``tools/execute`` around-waterfall and the body (6-7);
- :meth:`PendingCall.settle` runs ``tools/post-execute``, ``finalize_content``, materializes and
  notifies ``tools/result`` (8-10).

The normalization boundary: whatever a listener, guard, wrapper, approver, renderer or body does
(raise any exception but cancellation, raise one whose ``__str__`` and ``__repr__`` raise, return
the wrong type, a non-string reason, non-JSON values or contexts), the call ends with a JSON-safe
``is_error`` result carrying a stable code (see :mod:`.tool_definitions`). A *final* error skips the
remaining policy stages but still goes through ``finalize_content`` and ``tools/result``. Only cancellation
propagates, and the loop then answers the call itself (:meth:`PendingCall.interrupt`).

The result a ``tools/result`` observer gets carries how it was decided in
``result.meta["pipeline"]`` (for audit sinks): ``decision`` (allow/deny/ask from pre-execute),
``approval`` (the outcome, or ``no-service``/``no-agent``), ``denied_by`` (``tools/pre-execute``,
``approval`` or ``guard``), ``post`` (accept/block/replace-content/replace-value/failed),
``finalize`` (``failed``) and ``final`` (the stage whose failure ended the call early).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

import anyio

from .decisions import Accept, Allow, Ask, Block, Deny, PreToolDecision, accept, allow
from .events import EventBus, resolve
from .execution import TextContent, ToolError, ToolExecution, ToolResult
from .failures import describe, exact_str, is_cancellation, log_failure, safe_text, type_name
from .frozen import FrozenDict, NotJsonError, _wrap, freeze_json
from .messages import Message
from .scopes import ScopeLayer, scope_of
from .signals import NEVER, AbortSignal, cancel_on_abort
from .tool_definitions import (
    ABORTED,
    ABORTED_BEFORE_DISPATCH,
    ARGUMENTS_NOT_JSON,
    BLOCKED,
    FINALIZE_FAILED,
    GUARD_FAILED,
    INVALID_ARGS,
    INVALID_TOOL_OUTPUT,
    LISTENER_FAILED,
    RENDER_FAILED,
    TOOL_FAILED,
    UNKNOWN_TOOL,
    ContractError,
    ToolDefinition,
    ToolFailure,
    coerce_content,
    coerce_messages,
    render_value,
)
from .tool_run import ToolCaller, ToolRun

#: A malformed call identity (``call_id``, ``name`` or ``root_call_id`` not a string, ``signal``
#: not an AbortSignal): an identity-shape failure, answered like every other failure.
INVALID_CALL = "INVALID_CALL"

#: How long the rest of a call (finalize, ``tools/result``) may take once its caller is cancelled.
SETTLE_GRACE_SECONDS = 5.0


class CallToken(tuple):  # a 1-tuple: immutable without a __setattr__
    """The opaque, unique identity token of one call (compared by identity; read-only)."""

    __slots__ = ()

    def __new__(cls, call_id: str) -> CallToken:
        return tuple.__new__(cls, (call_id,))

    @property
    def call_id(self) -> str:
        """The id of the call this token was minted for."""
        return self[0]

    __eq__ = object.__eq__  # identity, not the tuple's value
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<CallToken {self[0]} at {id(self):#x}>"


class CallHost(ToolCaller, Protocol):
    """What a call needs of the registry that runs it: the bus, the approval service, the root scope
    and its logger (and, for a body's nested calls, :meth:`ToolCaller.execute`). The registry is
    built on this module, so the pipeline names only this shape of it, never the class."""

    @property
    def bus(self) -> EventBus: ...

    @property
    def root_scope(self) -> ScopeLayer: ...

    @property
    def logger(self) -> Any: ...

    def service(self, name: str) -> Any: ...


# --- step 1 ---------------------------------------------------------------------------------------


async def prepare(
    registry: CallHost,
    name: Any,
    arguments: Any,
    *,
    call_id: Any,
    root_call_id: Any = None,
    agent: Any = None,
    parent: object | None = None,
    signal: Any = None,
) -> PendingCall:
    """Steps 1-5: seal the identity, run ``tools/pre-execute``, approval and guards."""
    problem = None
    if type(call_id) is str and type(name) is str and (root_call_id is None or type(root_call_id) is str):
        call_text, name_text, root_text = call_id, name, root_call_id or call_id
    else:
        call_text, name_text, root_text, problem = _identity_texts(call_id, name, root_call_id)
    if signal is None:
        signal = NEVER
    elif not isinstance(signal, AbortSignal):
        problem = problem or "signal"
        signal = NEVER
    if agent is None:
        definition = registry.root_scope.tools.get(name_text)
    else:
        definition = (scope_of(agent) or registry.root_scope).lookup(name_text)
    try:
        frozen_arguments = freeze_json(arguments)
        not_json: NotJsonError | None = None
    except NotJsonError as exc:
        frozen_arguments, not_json = None, exc
    execution = ToolExecution(
        call_text, root_text, name_text, frozen_arguments, agent, parent, CallToken(call_text), signal
    )
    call = PendingCall(registry, execution, definition)
    if problem is not None:
        reason = f"tool call identity is malformed: {problem} has the wrong type"
        call.finish_early("identity", ToolResult.failure(reason, code=INVALID_CALL))
    elif not_json is not None:
        detail = {"detail": str(not_json)}
        failure = ToolResult.failure(ARGUMENTS_NOT_JSON, code=INVALID_ARGS, info=detail)
        call.finish_early("identity", failure)
    elif signal.aborted:
        call.finish_early("identity", aborted_before_dispatch(name_text))
    else:
        await call.decide()
    return call


def _identity_texts(call_id: Any, name: Any, root_call_id: Any) -> tuple[str, str, str, str | None]:
    """Exact strings for an identity given with other types, and which field was malformed."""
    call_text, name_text = exact_str(call_id), exact_str(name)
    root_text = call_text if root_call_id is None else exact_str(root_call_id)
    if call_text is not None and name_text is not None and root_text is not None:
        return call_text, name_text, root_text, None
    problem = "call_id" if call_text is None else "name" if name_text is None else "root_call_id"
    call_text = call_text if call_text is not None else safe_text(call_id)
    name_text = name_text if name_text is not None else safe_text(name)
    return call_text, name_text, root_text if root_text is not None else call_text, problem


# --- result builders ------------------------------------------------------------------------------


def approval_refusal(outcome: str, name: str) -> str:
    """Why a call whose approval came back ``outcome`` (anything but ``allowed-once``) is refused:
    the pipeline's words, which every approval channel records (an unknown outcome refuses as
    no channel being available)."""
    if outcome == "rejected":
        return f'the user rejected tool "{name}"'
    if outcome == "cancelled":
        return f'approval for tool "{name}" was cancelled'
    return f'tool "{name}" requires approval, but no approval channel is available'


def aborted_before_dispatch(name: str) -> ToolResult:
    """The result of a call whose body never started because its caller was aborted."""
    return ToolResult.failure(f'tool "{name}" was aborted before dispatch', code=ABORTED_BEFORE_DISPATCH)


def aborted(name: str, contexts: tuple[Message, ...]) -> ToolResult:
    """The result of a call cancelled after its body started (deferred contexts survive)."""
    return ToolResult.failure(f'tool "{name}" was aborted', code=ABORTED, additional_contexts=contexts)


def failure_of(stage: str, exc: BaseException, contexts: tuple[Message, ...] = ()) -> ToolResult:
    """A listener's (or guard's) failure as an error result; never raises, whatever ``exc`` is."""
    return ToolResult.failure(
        f"{stage} failed: {describe(exc)}",
        code=GUARD_FAILED if stage == "guard" else LISTENER_FAILED,
        info={"name": type_name(exc), "stage": stage},
        additional_contexts=contexts,
    )


def body_failure(exc: BaseException, contexts: tuple[Message, ...]) -> ToolResult:
    """A raising body's error result: its message and, for :class:`ToolFailure`, its info."""
    info: dict[str, Any] | None = None
    if isinstance(exc, ToolFailure):
        try:
            raw = exc.info
            frozen = None if raw is None else freeze_json(dict(raw))
            info = None if frozen is None else dict(frozen.items())
        except Exception:
            info = None  # an info that is not JSON is dropped; the message still tells
    if info is None:
        info = {"name": type_name(exc)}
    info.setdefault("code", TOOL_FAILED)
    return ToolResult.failure(describe(exc), info=info, additional_contexts=contexts)


def _set_signal(execution: ToolExecution, signal: AbortSignal) -> None:
    # The identity is frozen on purpose; the signal is the one field tools/execute may swap.
    object.__setattr__(execution, "signal", signal)


def _freeze_meta(meta: Any) -> FrozenDict | None:
    if meta is None:
        return None
    frozen = freeze_json(meta)
    if not isinstance(frozen, FrozenDict):
        raise ContractError(f"result meta must be a JSON object, not {type_name(meta)}")
    return frozen


def _kind(decision: PreToolDecision) -> str:
    return "allow" if isinstance(decision, Allow) else "deny" if isinstance(decision, Deny) else "ask"


def _failed(exc: BaseException) -> bool:
    """Whether a caught exception is a failure to normalize (True) or must propagate (False)."""
    return not is_cancellation(exc)


class PendingCall:
    """One call between its phases. ``result`` is set once a stage produced one."""

    __slots__ = (
        "_finalize",
        "_registry",
        "definition",
        "dispatched",
        "execution",
        "final",
        "materialized",
        "result",
        "settled",
        "trace",
    )

    def __init__(self, registry: CallHost, execution: ToolExecution, definition: ToolDefinition | None):
        self._registry = registry
        self.execution = execution
        self.definition = definition
        # Snapshot at creation: re-registering the tool mid-call does not change the last word.
        self._finalize = definition.finalize_content if definition is not None else None
        self.result: ToolResult | None = None
        self.final = False
        self.settled = False
        self.materialized = False
        self.dispatched = False
        self.trace: dict[str, Any] = {}

    @property
    def concurrency_safe(self) -> bool:
        """Whether the body may run in parallel with other concurrency-safe bodies."""
        return self.definition is not None and self.definition.concurrency_safe

    @property
    def will_dispatch(self) -> bool:
        """Whether :meth:`dispatch` still has a body (or wrapper) to run."""
        return self.result is None

    def finish_early(self, stage: str, result: ToolResult) -> None:
        """A final error: skip the remaining policy stages, keep finalize and tools/result."""
        self.result = result
        self.final = True
        self.trace["final"] = stage

    def interrupt(self, *, cancelled: bool) -> None:
        """The turn is ending before this call settled: give it a final result to settle with.

        A call that never reached its body ends ``ABORTED_BEFORE_DISPATCH``; one cut off inside it
        ``ABORTED``. On cancellation a success turns into ``ABORTED`` too (and post-execute, async
        listener code, is skipped); otherwise a finished body's result settles as usual.
        """
        if not self.settled:
            self._make_final(cancelled=cancelled)

    def _make_final(self, *, cancelled: bool) -> None:
        if self.final:
            return
        name = self.execution.name
        result = self.result
        if result is None:
            contexts: tuple[Message, ...] = ()
            self.finish_early(
                "interrupted", aborted(name, contexts) if self.dispatched else aborted_before_dispatch(name)
            )
        elif cancelled:
            if not result.is_error:
                result = aborted(name, result.additional_contexts)
            self.finish_early("interrupted", result)

    # steps 2-5

    async def decide(self) -> None:
        """Run ``tools/pre-execute``, resolve ``ask``, run guards; a deny becomes the result."""
        execution = self.execution
        try:
            decision = await self._registry.bus.waterfall("tools/pre-execute", (execution,), allow)
            kind = type(decision)
            if kind is Allow:
                pass
            elif not issubclass(kind, Allow | Deny | Ask):
                expected = "expected allow/deny/ask"
                raise ContractError(f"tools/pre-execute returned {type_name(decision)}, {expected}")
            elif isinstance(decision, Deny):
                reason = exact_str(decision.reason)
                if reason is None:
                    raise ContractError(f"deny() needs a str reason, not {type_name(decision.reason)}")
                decision = Deny(reason)
            elif isinstance(decision, Ask):
                ask_reason = decision.reason
                if ask_reason is not None and exact_str(ask_reason) is None:
                    raise ContractError(f"ask() needs a str reason or None, not {type_name(ask_reason)}")
                decision = Ask(None if ask_reason is None else exact_str(ask_reason))
        except BaseException as exc:
            if not _failed(exc):
                raise
            self.finish_early("tools/pre-execute", failure_of("tools/pre-execute", exc))
            return
        self.trace["decision"] = "allow" if kind is Allow else _kind(decision)
        resolved: PreToolDecision | None = decision
        if isinstance(decision, Ask):
            resolved = await self._ask(decision)
            if resolved is None:
                return
        if isinstance(resolved, Allow):
            reason = self._run_guards()
            if self.final:
                return
            if reason is not None:
                self.trace["denied_by"] = "guard"
                resolved = Deny(reason)
        elif isinstance(resolved, Deny) and "denied_by" not in self.trace:
            self.trace["denied_by"] = "tools/pre-execute"
        if isinstance(resolved, Deny):
            self.result = ToolResult.failure(resolved.reason)

    async def _ask(self, decision: Ask) -> PreToolDecision | None:
        execution = self.execution
        name = execution.name
        self.trace["denied_by"] = "approval"
        approval = self._registry.service("approval")
        if approval is None:
            self.trace["approval"] = "no-service"
            return Deny(decision.reason or f'tool "{name}" requires approval (not yet supported)')
        if execution.agent is None:
            self.trace["approval"] = "no-agent"
            return Deny(f'tool "{name}" requires approval, but the call has no agent to route it through')
        raw: Any = "cancelled"
        try:
            with cancel_on_abort(execution.signal):
                raw = await resolve(approval.request(execution, decision.reason))
        except BaseException as exc:
            if not _failed(exc):
                raise
            log_failure(self._registry.logger, "approval request failed", tool=name, error=describe(exc))
            raw = "unavailable"
        # Only an exact outcome string counts; anything else (a hostile __eq__ included) is an
        # unknown outcome, which denies.
        outcome = exact_str(raw)
        self.trace["approval"] = outcome if outcome is not None else f"<{type_name(raw)}>"
        if outcome == "allowed-once":
            del self.trace["denied_by"]
            return allow()
        if outcome == "cancelled" and execution.signal.aborted:
            self.finish_early("approval", aborted_before_dispatch(name))
            return None
        return Deny(approval_refusal(outcome or "", name))

    def _run_guards(self) -> str | None:
        execution = self.execution
        agent_scope = None if execution.agent is None else scope_of(execution.agent)
        layers = agent_scope.chain() if agent_scope is not None else (self._registry.root_scope,)
        for layer in layers:
            for guard in layer.guards:
                try:
                    verdict = guard(execution)
                    if verdict is None:
                        continue
                    text = exact_str(verdict)
                    if text is None:
                        if inspect.isawaitable(verdict):
                            if inspect.iscoroutine(verdict):
                                verdict.close()
                            raise ContractError("guards are synchronous; this one returned an awaitable")
                        raise ContractError(f"a guard must return a str or None, not {type_name(verdict)}")
                except BaseException as exc:
                    if not _failed(exc):
                        raise
                    self.finish_early("guard", failure_of("guard", exc))
                    return None
                return text or f'tool "{execution.name}" was denied by a guard'
        return None

    # steps 6-7

    async def dispatch(self) -> None:
        """Run the ``tools/execute`` around-waterfall whose innermost step is the body."""
        if self.result is not None:
            return
        execution = self.execution
        if execution.signal.aborted:
            self.finish_early("dispatch", aborted_before_dispatch(execution.name))
            return
        self.dispatched = True
        listeners = self._registry.bus.listeners("tools/execute")
        try:
            if listeners:
                self.result = await self._around(listeners, 0)
            else:
                self.result = await self._dispatch_core()
        except BaseException as exc:
            if not _failed(exc):
                raise
            self.finish_early("tools/execute", failure_of("tools/execute", exc))

    async def _around(self, listeners: list[Any], index: int) -> ToolResult:
        if index == len(listeners):
            return await self._dispatch_core()
        execution = self.execution
        produced: list[ToolResult] = []

        async def next_(signal: AbortSignal | None = None) -> ToolResult:
            if signal is None:
                result = await self._around(listeners, index + 1)
            else:
                if not isinstance(signal, AbortSignal):
                    raise ContractError(f"next(signal=...) takes an AbortSignal, not {type_name(signal)}")
                previous = execution.signal
                combined = AbortSignal.any(previous, signal)
                _set_signal(execution, combined)
                try:
                    result = await self._around(listeners, index + 1)
                finally:
                    _set_signal(execution, previous)
                    combined.detach()
            produced.append(result)
            return result

        returned = await resolve(listeners[index](execution, next_))
        if not issubclass(type(returned), ToolResult):
            raise ContractError(f"tools/execute returned {type_name(returned)}, expected a ToolResult")
        if any(returned is item for item in produced):
            return returned
        # A wrapper's own result skipped (or replaced) the body: hold it to the output declaration.
        return self._renormalize(returned)

    async def _dispatch_core(self) -> ToolResult:
        execution = self.execution
        name = execution.name
        definition = self.definition
        if definition is None:
            return ToolResult.failure(
                f'unknown tool "{name}"', info={"name": "ToolNotFoundError", "code": UNKNOWN_TOOL}
            )
        problem = definition.arguments_problem(execution.arguments)
        if problem is not None:
            return ToolResult.failure(f'invalid arguments for tool "{name}": {problem}', code=INVALID_ARGS)
        signal = execution.signal
        if signal.aborted:
            return aborted(name, ())
        run = ToolRun(self._registry, execution)
        value: Any = None
        try:
            if signal.can_abort:
                with cancel_on_abort(signal):
                    value = await resolve(definition.execute(execution.arguments, run))
            else:
                value = await resolve(definition.execute(execution.arguments, run))
        except BaseException as exc:
            if not _failed(exc):
                raise
            return body_failure(exc, run.deferred)
        if signal.aborted:
            return aborted(name, run.deferred)
        if isinstance(value, ToolResult):
            try:
                result = self._renormalize(value)
            except BaseException as exc:
                if not _failed(exc):
                    raise
                return ToolResult.failure(
                    f'tool "{name}" returned an invalid result: {describe(exc)}',
                    code=INVALID_TOOL_OUTPUT,
                    additional_contexts=run.deferred,
                )
            return replace(result, additional_contexts=run.deferred + result.additional_contexts)
        return self._normalize_success(value, run.deferred, run.meta)

    def _normalize_success(
        self, value: Any, contexts: tuple[Message, ...], meta: Mapping[str, Any] | None
    ) -> ToolResult:
        name = self.execution.name
        definition = self.definition
        try:
            frozen = freeze_json(value)
        except NotJsonError as exc:
            return ToolResult.failure(
                f'tool "{name}" returned a value that is not JSON: {exc}',
                code=INVALID_TOOL_OUTPUT,
                additional_contexts=contexts,
            )
        if definition is not None:
            problem = definition.output_problem(frozen)
            if problem is not None:
                return ToolResult.failure(
                    f'tool "{name}" returned invalid output: {problem}',
                    code=INVALID_TOOL_OUTPUT,
                    additional_contexts=contexts,
                )
        try:
            content = definition.render(frozen) if definition is not None else render_value(None, frozen)
        except BaseException as exc:
            if not _failed(exc):
                raise
            return ToolResult.failure(
                f'tool "{name}" output could not be rendered: {describe(exc)}',
                code=RENDER_FAILED,
                info={"name": type_name(exc)},
                additional_contexts=contexts,
            )
        return ToolResult(False, content, frozen, None, contexts, _freeze_meta(meta))

    def _renormalize(self, result: Any) -> ToolResult:
        """Bring a result made outside the core dispatch back to the normalized, frozen form."""
        if not issubclass(type(result), ToolResult):
            raise ContractError(f"expected a ToolResult, not {type_name(result)}")
        contexts = coerce_messages(result.additional_contexts)
        is_error = result.is_error
        if type(is_error) is not bool:
            raise ContractError(f"ToolResult.is_error must be a bool, not {type_name(is_error)}")
        if is_error:
            error = result.error
            info: FrozenDict | None = None
            if issubclass(type(error), ToolError):
                message = safe_text(error.message)
                if error.info is not None:
                    frozen_info = freeze_json(dict(error.info))
                    info = frozen_info if isinstance(frozen_info, FrozenDict) else None
            else:
                message = "tool failed"
            content = coerce_content(result.content) if result.content else ()
            return ToolResult(
                True,
                content or (TextContent(f"Error: {message}"),),
                None,
                ToolError(message, info),
                contexts,
                _freeze_meta(result.meta),
            )
        normalized = self._normalize_success(result.value, contexts, result.meta)
        if normalized.is_error or not result.content:
            return normalized
        return normalized.with_content(coerce_content(result.content))

    # steps 8-10

    async def settle(self) -> ToolResult:
        """Run ``tools/post-execute`` (unless final), ``finalize_content`` once, materialize and
        notify ``tools/result``. Returns the result the caller and the model see.

        Cancelled during post-execute, the call still ends: ``ABORTED`` (an error result keeps
        its error), finalized and observed in a shielded, bounded scope, then the cancellation
        goes on.
        """
        if self.settled:
            raise RuntimeError("a call settles exactly once")
        self.settled = True
        if self.result is None:  # dispatch() was never called, or never finished
            self._make_final(cancelled=False)
        result = self.result
        assert result is not None
        if not self.final:
            try:
                result = await self._post_execute(result)
            except BaseException:  # only cancellation gets here (post-execute contains the rest)
                self._make_final(cancelled=True)
                with anyio.CancelScope(shield=True), anyio.move_on_after(SETTLE_GRACE_SECONDS):
                    assert self.result is not None
                    await self._finish(self.result)
                raise
        return await self._finish(result)

    async def _finish(self, result: ToolResult) -> ToolResult:
        result = self._materialize(self._run_finalize(result))
        self.result = result
        self.materialized = True
        await self._registry.bus.emit_contained("tools/result", self.execution, result)
        return result

    async def _post_execute(self, result: ToolResult) -> ToolResult:
        execution = self.execution
        try:
            decision = await self._registry.bus.waterfall(
                "tools/post-execute", (execution, result), accept
            )
            return self._apply_post(result, decision)
        except BaseException as exc:
            if not _failed(exc):
                raise
            self.trace["post"] = "failed"
            return failure_of("tools/post-execute", exc)

    def _apply_post(self, result: ToolResult, decision: Any) -> ToolResult:
        if isinstance(decision, Block):
            feedback = exact_str(decision.feedback)
            if feedback is None:
                raise ContractError(f"block() needs str feedback, not {type_name(decision.feedback)}")
            contexts = coerce_messages(decision.additional_contexts)
            self.trace["post"] = "block"
            return ToolResult(
                True,
                (TextContent(feedback),),
                None,
                ToolError(feedback, _wrap({"code": BLOCKED})),
                contexts,
            )
        if not isinstance(decision, Accept):
            raise ContractError(f"tools/post-execute returned {type_name(decision)}, expected accept/block")
        contexts = result.additional_contexts + coerce_messages(decision.additional_contexts)
        if decision.replaces_value:
            if result.is_error:
                raise ContractError("accept(value=...) cannot turn an error result into a value")
            self.trace["post"] = "replace-value"
            return self._normalize_success(decision.value, contexts, result.meta)
        if decision.content is not None:
            self.trace["post"] = "replace-content"
            return replace(result, content=coerce_content(decision.content), additional_contexts=contexts)
        self.trace["post"] = "accept"
        if len(contexts) == len(result.additional_contexts):
            return result
        return replace(result, additional_contexts=contexts)

    def _run_finalize(self, result: ToolResult) -> ToolResult:
        finalize, self._finalize = self._finalize, None  # exactly once, even if settle is re-entered
        if finalize is None:
            return result
        try:
            content = finalize(self.execution, result)
            if content is None:
                return result
            if exact_str(content) is None and inspect.isawaitable(content):
                if inspect.iscoroutine(content):
                    content.close()
                raise ContractError("finalize_content is synchronous; it returned an awaitable")
            return result.with_content(coerce_content(content))
        except BaseException as exc:
            if not _failed(exc):
                raise
            self.trace["finalize"] = "failed"
            failed = ToolResult.failure(
                f'finalize_content of tool "{self.execution.name}" failed: {describe(exc)}',
                code=FINALIZE_FAILED,
                info={"name": type_name(exc)},
                additional_contexts=result.additional_contexts,
            )
            return replace(failed, meta=result.meta)

    def _materialize(self, result: ToolResult) -> ToolResult:
        """Step 10: a JSON-safe frozen result carrying the pipeline trace in ``meta``."""
        # Every constructor above froze its parts; only the trace (plain strings) is new here.
        meta = _wrap({**(result.meta or {}), "pipeline": _wrap(dict(self.trace))})
        return ToolResult(
            result.is_error, result.content, result.value, result.error, result.additional_contexts, meta
        )
