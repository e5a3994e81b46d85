"""Tool definitions, the registry, guards and the ten-step pipeline (HARNESS.md section 3).

A call goes through three phases so the loop can schedule bodies in parallel while keeping policy
sequential and commits in model order:

- :meth:`ToolRegistry.prepare` seals the identity and decides: ``tools/pre-execute``, approval,
  guards (steps 1-5);
- :meth:`PendingCall.dispatch` runs the ``tools/execute`` around-waterfall and the body (6-7);
- :meth:`PendingCall.settle` runs ``tools/post-execute``, ``finalize_content``, materializes and
  notifies ``tools/result`` (8-10).

:meth:`ToolRegistry.execute` runs all three. Every failure on the way becomes a JSON-safe
``is_error`` result (the normalization boundary); a *final* error skips the remaining policy stages
but still goes through ``finalize_content`` and ``tools/result``.

The result a ``tools/result`` observer gets carries how it was decided in
``result.meta["pipeline"]`` (for audit sinks): ``decision`` (allow/deny/ask from pre-execute),
``approval`` (the outcome, or ``no-service``/``no-agent``), ``denied_by`` (``tools/pre-execute``,
``approval`` or ``guard``), ``post`` (accept/block/replace-content/replace-value/failed),
``finalize`` (``failed``) and ``final`` (the stage whose failure ended the call early).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import structlog
from jsonschema.exceptions import SchemaError

from .decisions import Accept, Allow, Ask, Block, Deny, PostToolDecision, PreToolDecision, accept, allow
from .events import EventBus, resolve
from .execution import TextContent, ToolError, ToolExecution, ToolResult
from .frozen import FrozenDict, NotJsonError, freeze_json, to_json_text
from .messages import Message
from .model import ToolSpec
from .schema import SchemaValidator
from .signals import AbortSignal, cancel_on_abort

# --- error codes ----------------------------------------------------------------------------------

UNKNOWN_TOOL = "UNKNOWN_TOOL"
INVALID_ARGS = "INVALID_ARGS"
INVALID_TOOL_OUTPUT = "INVALID_TOOL_OUTPUT"
RENDER_FAILED = "RENDER_FAILED"
ABORTED = "ABORTED"
ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
LISTENER_FAILED = "LISTENER_FAILED"
GUARD_FAILED = "GUARD_FAILED"
FINALIZE_FAILED = "FINALIZE_FAILED"
BLOCKED = "BLOCKED"

ARGUMENTS_NOT_JSON = "tool execution arguments must be losslessly JSON-serializable"

ApprovalOutcome: TypeAlias = str  # "allowed-once" | "rejected" | "cancelled" | "unavailable"
Guard: TypeAlias = Callable[[ToolExecution], "str | None"]
FinalizeContent: TypeAlias = Callable[[ToolExecution, ToolResult], Any]
ToolBody: TypeAlias = Callable[[Any, "ToolRun"], Any]


class ToolDefinitionError(ValueError):
    """A tool definition is unusable (bad schema, bad name); raised at definition time."""


class ToolFailure(Exception):
    """Raise from a tool body to fail with a message and machine-readable ``info``."""

    def __init__(self, message: str, *, code: str | None = None, info: Mapping[str, Any] | None = None):
        super().__init__(message)
        merged = dict(info or {})
        if code is not None:
            merged["code"] = code
        self.info = merged or None


class ContractError(Exception):
    """A listener, guard or wrapper broke its contract (wrong return type, async guard, ...)."""


# --- definitions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """The output declaration: a JSON Schema for the value and a renderer to model-facing content.

    ``render(value)`` returns a string, a :class:`TextContent` or a sequence of them; without a
    renderer a string value is shown as is and anything else as compact JSON.
    """

    schema: Mapping[str, Any] | None = None
    render: Callable[[Any], Any] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ToolDefinition:
    """A tool: what the model sees (name, description, parameters) and what runs (``execute``)."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    execute: ToolBody
    output: ToolOutput
    finalize_content: FinalizeContent | None
    concurrency_safe: bool
    _arguments_validator: SchemaValidator
    _output_validator: SchemaValidator | None

    @property
    def spec(self) -> ToolSpec:
        """The model-facing view of this tool."""
        return ToolSpec(self.name, self.description, self.parameters)

    def arguments_problem(self, arguments: Any) -> str | None:
        """Why ``arguments`` do not match the parameters schema, or None."""
        return self._arguments_validator.problem(arguments)

    def output_problem(self, value: Any) -> str | None:
        """Why ``value`` does not match the output schema, or None."""
        if self._output_validator is None:
            return None
        return self._output_validator.problem(value)

    def render(self, value: Any) -> tuple[TextContent, ...]:
        """Model-facing content for a (frozen, valid) value."""
        return _render(self.output.render, value)


def define_tool(
    name: str,
    *,
    description: str,
    execute: ToolBody,
    parameters: Mapping[str, Any] | None = None,
    output: ToolOutput | None = None,
    finalize_content: FinalizeContent | None = None,
    concurrency_safe: bool = False,
) -> ToolDefinition:
    """Define a tool. ``execute(arguments, run)`` may be sync or async; ``arguments`` are the frozen
    JSON arguments, already validated against ``parameters``; ``run`` is the :class:`ToolRun`.

    Schemas are checked here, once, so a broken schema fails at registration and never per call.
    """
    if not name or not isinstance(name, str):
        raise ToolDefinitionError("tool name must be a non-empty string")
    if not callable(execute):
        raise ToolDefinitionError(f'tool "{name}": execute must be callable')
    schema = parameters if parameters is not None else {"type": "object"}
    output = output or ToolOutput()
    try:
        arguments_validator = SchemaValidator(schema)
        output_validator = None if output.schema is None else SchemaValidator(output.schema)
    except SchemaError as exc:
        raise ToolDefinitionError(f'tool "{name}": invalid JSON Schema: {exc.message}') from exc
    frozen_schema = freeze_json(schema)
    return ToolDefinition(
        name=name,
        description=description,
        parameters=frozen_schema,
        execute=execute,
        output=output,
        finalize_content=finalize_content,
        concurrency_safe=concurrency_safe,
        _arguments_validator=arguments_validator,
        _output_validator=output_validator,
    )


def _render(renderer: Callable[[Any], Any] | None, value: Any) -> tuple[TextContent, ...]:
    if renderer is not None:
        return coerce_content(renderer(value))
    if isinstance(value, str):
        return (TextContent(value),)
    return (TextContent(to_json_text(value)),)


def coerce_content(content: Any) -> tuple[TextContent, ...]:
    """Normalize content given as str, TextContent or a sequence of them; raise ContractError else."""
    if isinstance(content, str):
        return (TextContent(content),)
    if isinstance(content, TextContent):
        _check_text(content)
        return (content,)
    if isinstance(content, Sequence):
        parts: list[TextContent] = []
        for part in content:
            if isinstance(part, str):
                parts.append(TextContent(part))
            elif isinstance(part, TextContent):
                parts.append(_check_text(part))
            else:
                raise ContractError(f"content part must be str or TextContent, not {type(part).__name__}")
        return tuple(parts)
    raise ContractError(
        f"content must be str, TextContent or a sequence of them, not {type(content).__name__}"
    )


def _check_text(part: TextContent) -> TextContent:
    if not isinstance(part.text, str) or part.type != "text":
        raise ContractError("TextContent must have type 'text' and str text")
    return part


def coerce_messages(items: Iterable[Any], *, plugin: str | None = None) -> tuple[Message, ...]:
    """Contexts given as Message or str (str becomes a plugin-sourced message)."""
    out: list[Message] = []
    for item in items:
        if isinstance(item, Message):
            out.append(item)
        elif isinstance(item, str):
            out.append(Message.from_plugin(item, plugin))
        else:
            raise ContractError(f"context must be a Message or str, not {type(item).__name__}")
    return tuple(out)


# --- guards and scopes ----------------------------------------------------------------------------


class GuardScope:
    """One layer of guards. The registry's root scope holds global guards; an agent's scope is a
    child of its parent agent's scope (or of the root), so guards run farthest ancestor first."""

    __slots__ = ("guards", "parent")

    def __init__(self, parent: GuardScope | None = None) -> None:
        self.parent = parent
        self.guards: list[Guard] = []

    def add(self, guard: Guard) -> Callable[[], None]:
        """Register a guard in this layer; returns a disposer."""
        if not callable(guard):
            raise TypeError("guard must be callable")
        self.guards = [*self.guards, guard]

        def dispose() -> None:
            self.guards = [g for g in self.guards if g is not guard]

        return dispose

    def chain(self) -> list[GuardScope]:
        """This scope and its ancestors, farthest ancestor first."""
        layers: list[GuardScope] = []
        scope: GuardScope | None = self
        while scope is not None:
            layers.append(scope)
            scope = scope.parent
        layers.reverse()
        return layers


class CallToken:
    """The opaque, unique identity token of one call (compared by identity)."""

    __slots__ = ("call_id",)

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id

    def __repr__(self) -> str:
        return f"<CallToken {self.call_id} at {id(self):#x}>"


# --- the run context a body sees ------------------------------------------------------------------


class ToolRun:
    """What a tool body may do besides returning: defer contexts, conclude the turn, call tools."""

    __slots__ = ("_concludes", "_deferred", "_nested", "_registry", "execution")

    def __init__(self, registry: ToolRegistry, execution: ToolExecution) -> None:
        self._registry = registry
        self.execution = execution
        self._deferred: list[Message] = []
        self._concludes = False
        self._nested = 0

    @property
    def signal(self) -> AbortSignal:
        """The call's current signal (a ``tools/execute`` wrapper may have combined it)."""
        return self.execution.signal

    def defer_context(self, message: Message | str) -> None:
        """Queue a context message that lands after this call's result (also if the body raises)."""
        self._deferred.append(message if isinstance(message, Message) else Message.from_tool(message))

    def conclude_turn(self) -> None:
        """Mark the result as concluding the turn: the loop stops after this step."""
        self._concludes = True

    async def call(self, name: str, arguments: Any, *, call_id: str | None = None) -> ToolResult:
        """Run a nested call through the whole pipeline; its contexts are deferred into this call."""
        self._nested += 1
        execution = self.execution
        result = await self._registry.execute(
            name,
            arguments,
            call_id=call_id or f"{execution.call_id}.{self._nested}",
            root_call_id=execution.root_call_id,
            agent=execution.agent,
            parent=execution.token,
            signal=execution.signal,
        )
        self._deferred.extend(result.additional_contexts)
        return result

    @property
    def deferred(self) -> tuple[Message, ...]:
        """Contexts deferred so far, in order."""
        return tuple(self._deferred)

    @property
    def meta(self) -> FrozenDict | None:
        """Result metadata the body asked for."""
        return FrozenDict({"concludes_turn": True}) if self._concludes else None


# --- the registry ---------------------------------------------------------------------------------


class ToolRegistry:
    """Visible tools, global guards and the pipeline entry points."""

    def __init__(self, bus: EventBus, service: Callable[[str], Any], logger: Any = None) -> None:
        self._bus = bus
        self._service = service
        self._definitions: dict[str, ToolDefinition] = {}
        self.root_scope = GuardScope()
        self.logger = logger if logger is not None else structlog.get_logger("dsh_policy.core.tools")

    # registration

    def register(self, definition: ToolDefinition) -> Callable[[], None]:
        """Make a tool visible; a second tool with the same name is an error. Returns a disposer."""
        if not isinstance(definition, ToolDefinition):
            raise TypeError("register() takes a ToolDefinition (see define_tool)")
        if definition.name in self._definitions:
            raise ToolDefinitionError(f'tool "{definition.name}" is already registered')
        self._definitions[definition.name] = definition

        def dispose() -> None:
            if self._definitions.get(definition.name) is definition:
                del self._definitions[definition.name]

        return dispose

    def guard(self, guard: Guard, scope: GuardScope | None = None) -> Callable[[], None]:
        """Install a sync guard ``guard(execution) -> deny reason | None`` (global by default)."""
        return (scope or self.root_scope).add(guard)

    def get(self, name: str) -> ToolDefinition | None:
        """The visible definition called ``name``."""
        return self._definitions.get(name)

    def names(self) -> tuple[str, ...]:
        """Names of the visible tools, in registration order."""
        return tuple(self._definitions)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The model-facing view of every visible tool."""
        return tuple(d.spec for d in self._definitions.values())

    # the pipeline

    async def execute(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str,
        root_call_id: str | None = None,
        agent: Any = None,
        parent: object | None = None,
        signal: AbortSignal | None = None,
    ) -> ToolResult:
        """Run one call through the whole pipeline; never raises for tool or listener failures."""
        call = await self.prepare(
            name, arguments, call_id=call_id, root_call_id=root_call_id, agent=agent, parent=parent,
            signal=signal,
        )
        await call.dispatch()
        return await call.settle()

    async def prepare(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str,
        root_call_id: str | None = None,
        agent: Any = None,
        parent: object | None = None,
        signal: AbortSignal | None = None,
    ) -> PendingCall:
        """Steps 1-5: seal the identity, run ``tools/pre-execute``, approval and guards."""
        definition = self._definitions.get(name)
        signal = signal if signal is not None else AbortSignal.never()
        try:
            frozen_arguments = freeze_json(arguments)
            not_json: NotJsonError | None = None
        except NotJsonError as exc:
            frozen_arguments, not_json = None, exc
        execution = ToolExecution(
            call_id=call_id,
            root_call_id=root_call_id or call_id,
            name=name,
            arguments=frozen_arguments,
            agent=agent,
            parent=parent,
            token=CallToken(call_id),
            signal=signal,
        )
        call = PendingCall(self, execution, definition)
        if not_json is not None:
            detail = {"detail": str(not_json)}
            failure = ToolResult.failure(ARGUMENTS_NOT_JSON, code=INVALID_ARGS, info=detail)
            call.finish_early("identity", failure)
        elif signal.aborted:
            call.finish_early("identity", _aborted_before_dispatch(name))
        else:
            await call.decide()
        return call


def _aborted_before_dispatch(name: str) -> ToolResult:
    return ToolResult.failure(f'tool "{name}" was aborted before dispatch', code=ABORTED_BEFORE_DISPATCH)


def _aborted(name: str, contexts: tuple[Message, ...]) -> ToolResult:
    return ToolResult.failure(f'tool "{name}" was aborted', code=ABORTED, additional_contexts=contexts)


def _failure_of(stage: str, exc: BaseException, contexts: tuple[Message, ...] = ()) -> ToolResult:
    return ToolResult.failure(
        f"{stage} failed: {exc}" if str(exc) else f"{stage} failed: {type(exc).__name__}",
        code=GUARD_FAILED if stage == "guard" else LISTENER_FAILED,
        info={"name": type(exc).__name__, "stage": stage},
        additional_contexts=contexts,
    )


def _set_signal(execution: ToolExecution, signal: AbortSignal) -> None:
    # The identity is frozen on purpose; the signal is the one field tools/execute may swap.
    object.__setattr__(execution, "signal", signal)


class PendingCall:
    """One call between its phases. ``result`` is set once a stage produced one."""

    __slots__ = (
        "_finalize",
        "_registry",
        "definition",
        "execution",
        "final",
        "result",
        "settled",
        "trace",
    )

    def __init__(self, registry: ToolRegistry, execution: ToolExecution, definition: ToolDefinition | None):
        self._registry = registry
        self.execution = execution
        self.definition = definition
        # Snapshot at creation: re-registering the tool mid-call does not change the last word.
        self._finalize = definition.finalize_content if definition is not None else None
        self.result: ToolResult | None = None
        self.final = False
        self.settled = False
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

    # steps 2-5

    async def decide(self) -> None:
        """Run ``tools/pre-execute``, resolve ``ask``, run guards; a deny becomes the result."""
        execution = self.execution
        bus = self._registry._bus
        try:
            decision = await bus.waterfall("tools/pre-execute", (execution,), allow)
            if not isinstance(decision, Allow | Deny | Ask):
                raise ContractError(f"tools/pre-execute returned {decision!r}, expected allow/deny/ask")
        except Exception as exc:
            self.finish_early("tools/pre-execute", _failure_of("tools/pre-execute", exc))
            return
        self.trace["decision"] = _kind(decision)
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
        approval = self._registry._service("approval")
        if approval is None:
            self.trace["approval"] = "no-service"
            return Deny(decision.reason or f'tool "{name}" requires approval (not yet supported)')
        if execution.agent is None:
            self.trace["approval"] = "no-agent"
            return Deny(f'tool "{name}" requires approval, but the call has no agent to route it through')
        outcome: Any = "cancelled"
        try:
            with cancel_on_abort(execution.signal):
                outcome = await resolve(approval.request(execution, decision.reason))
        except Exception as exc:
            self._registry.logger.error("approval request failed", tool=name, error=repr(exc))
            outcome = "unavailable"
        self.trace["approval"] = outcome if isinstance(outcome, str) else repr(outcome)
        if outcome == "allowed-once":
            del self.trace["denied_by"]
            return allow()
        if outcome == "rejected":
            return Deny(f'the user rejected tool "{name}"')
        if outcome == "cancelled":
            if execution.signal.aborted:
                self.finish_early("approval", _aborted_before_dispatch(name))
                return None
            return Deny(f'approval for tool "{name}" was cancelled')
        return Deny(f'tool "{name}" requires approval, but no approval channel is available')

    def _run_guards(self) -> str | None:
        execution = self.execution
        agent_scope = getattr(execution.agent, "guard_scope", None)
        layers = agent_scope.chain() if isinstance(agent_scope, GuardScope) else [self._registry.root_scope]
        for layer in layers:
            for guard in layer.guards:
                try:
                    verdict = guard(execution)
                    if inspect.isawaitable(verdict):
                        if inspect.iscoroutine(verdict):
                            verdict.close()
                        raise ContractError("guards are synchronous; this one returned an awaitable")
                    if verdict is not None and not isinstance(verdict, str):
                        kind = type(verdict).__name__
                        raise ContractError(f"a guard must return a str or None, not {kind}")
                except Exception as exc:
                    self.finish_early("guard", _failure_of("guard", exc))
                    return None
                if verdict is not None:
                    return verdict or f'tool "{execution.name}" was denied by a guard'
        return None

    # steps 6-7

    async def dispatch(self) -> None:
        """Run the ``tools/execute`` around-waterfall whose innermost step is the body."""
        if self.result is not None:
            return
        execution = self.execution
        if execution.signal.aborted:
            self.finish_early("dispatch", _aborted_before_dispatch(execution.name))
            return
        listeners = self._registry._bus.listeners("tools/execute")
        try:
            if listeners:
                self.result = await self._around(listeners, 0)
            else:
                self.result = await self._dispatch_core()
        except Exception as exc:
            self.finish_early("tools/execute", _failure_of("tools/execute", exc))

    async def _around(self, listeners: list[Any], index: int) -> ToolResult:
        if index == len(listeners):
            return await self._dispatch_core()
        execution = self.execution
        produced: list[ToolResult] = []

        async def next_(signal: AbortSignal | None = None) -> ToolResult:
            if signal is None:
                result = await self._around(listeners, index + 1)
            else:
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
        if not isinstance(returned, ToolResult):
            raise ContractError(f"tools/execute returned {type(returned).__name__}, expected a ToolResult")
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
            return _aborted(name, ())
        run = ToolRun(self._registry, execution)
        value: Any = None
        try:
            if signal.can_abort:
                with cancel_on_abort(signal):
                    value = await resolve(definition.execute(execution.arguments, run))
            else:
                value = await resolve(definition.execute(execution.arguments, run))
        except Exception as exc:
            return _body_failure(exc, run.deferred)
        if signal.aborted:
            return _aborted(name, run.deferred)
        if isinstance(value, ToolResult):
            try:
                result = self._renormalize(value)
            except Exception as exc:
                return ToolResult.failure(
                    f'tool "{name}" returned an invalid result: {exc}',
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
            content = definition.render(frozen) if definition is not None else _render(None, frozen)
        except Exception as exc:
            return ToolResult.failure(
                f'tool "{name}" output could not be rendered: {exc}',
                code=RENDER_FAILED,
                info={"name": type(exc).__name__},
                additional_contexts=contexts,
            )
        return ToolResult(False, content, frozen, None, contexts, _freeze_meta(meta))

    def _renormalize(self, result: ToolResult) -> ToolResult:
        """Bring a result made outside the core dispatch back to the normalized, frozen form."""
        contexts = coerce_messages(result.additional_contexts)
        if result.is_error:
            error = result.error
            if not isinstance(error, ToolError):
                error = ToolError(result.text or "tool failed")
            info = None if error.info is None else freeze_json(dict(error.info))
            content = coerce_content(result.content) or (TextContent(f"Error: {error.message}"),)
            return ToolResult(
                True, content, None, ToolError(str(error.message), info), contexts, _freeze_meta(result.meta)
            )
        normalized = self._normalize_success(result.value, contexts, result.meta)
        if normalized.is_error or not result.content:
            return normalized
        return normalized.with_content(coerce_content(result.content))

    # steps 8-10

    async def settle(self) -> ToolResult:
        """Run ``tools/post-execute`` (unless final), ``finalize_content`` once, materialize and
        notify ``tools/result``. Returns the result the caller and the model see."""
        if self.settled:
            raise RuntimeError("a call settles exactly once")
        self.settled = True
        execution = self.execution
        result = self.result
        if result is None:  # dispatch() was never called: the body never ran
            self.finish_early("dispatch", _aborted_before_dispatch(execution.name))
            result = self.result
        assert result is not None
        if not self.final:
            result = await self._post_execute(result)
        result = self._run_finalize(result)
        result = self._materialize(result)
        self.result = result
        await self._registry._bus.emit_contained("tools/result", execution, result)
        return result

    async def _post_execute(self, result: ToolResult) -> ToolResult:
        execution = self.execution
        try:
            decision: PostToolDecision = await self._registry._bus.waterfall(
                "tools/post-execute", (execution, result), accept
            )
            return self._apply_post(result, decision)
        except Exception as exc:
            self.trace["post"] = "failed"
            return _failure_of("tools/post-execute", exc)

    def _apply_post(self, result: ToolResult, decision: Any) -> ToolResult:
        if isinstance(decision, Block):
            self.trace["post"] = "block"
            return ToolResult(
                True,
                (TextContent(str(decision.feedback)),),
                None,
                ToolError(str(decision.feedback), FrozenDict({"code": BLOCKED})),
                coerce_messages(decision.additional_contexts),
            )
        if not isinstance(decision, Accept):
            raise ContractError(f"tools/post-execute returned {decision!r}, expected accept/block")
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
            if inspect.isawaitable(content):
                if inspect.iscoroutine(content):
                    content.close()
                raise ContractError("finalize_content is synchronous; it returned an awaitable")
            if content is None:
                return result
            return result.with_content(coerce_content(content))
        except Exception as exc:
            self.trace["finalize"] = "failed"
            failed = ToolResult.failure(
                f'finalize_content of tool "{self.execution.name}" failed: {exc}',
                code=FINALIZE_FAILED,
                info={"name": type(exc).__name__},
                additional_contexts=result.additional_contexts,
            )
            return replace(failed, meta=result.meta)

    def _materialize(self, result: ToolResult) -> ToolResult:
        """Step 10: a JSON-safe frozen result carrying the pipeline trace in ``meta``."""
        # Every constructor above froze its parts; only the trace (plain strings) is new here.
        meta = FrozenDict({**(result.meta or {}), "pipeline": FrozenDict(self.trace)})
        return ToolResult(
            result.is_error, result.content, result.value, result.error, result.additional_contexts, meta
        )


def _body_failure(exc: Exception, contexts: tuple[Message, ...]) -> ToolResult:
    info = exc.info if isinstance(exc, ToolFailure) else {"name": type(exc).__name__}
    message = str(exc) or type(exc).__name__
    return ToolResult.failure(message, info=info, additional_contexts=contexts)


def _freeze_meta(meta: Mapping[str, Any] | None) -> FrozenDict | None:
    if meta is None:
        return None
    frozen = freeze_json(meta)
    assert isinstance(frozen, FrozenDict)
    return frozen


def _kind(decision: PreToolDecision) -> str:
    return "allow" if isinstance(decision, Allow) else "deny" if isinstance(decision, Deny) else "ask"
