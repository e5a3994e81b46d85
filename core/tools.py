"""Tool definitions, scopes and the registry (HARNESS.md section 3); the pipeline is in ``pipeline``.

A tool is registered in a *scope layer*: the registry's root layer holds global tools and guards,
an agent's layer is a child of its parent agent's layer (or of the root). A call sees the tools of
its agent's chain, the nearest layer's definition shadowing a farther one of the same name, and
runs the guards of the whole chain, farthest layer first. Each registration is removed by its own
disposer, never by what it registered, so the same definition or guard shared by two plugins (or
by a plugin applied both at the root and in an agent's scope) is two independent registrations.

:meth:`ToolRegistry.prepare`, :meth:`PendingCall.dispatch` and :meth:`PendingCall.settle` are the
three phases of one call (see :mod:`.pipeline`); :meth:`ToolRegistry.execute` runs all three.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import structlog
from jsonschema.exceptions import SchemaError

from .events import EventBus
from .execution import TextContent, ToolExecution, ToolResult
from .failures import exact_str, type_name
from .frozen import NotJsonError, freeze_json, thaw, to_json_text
from .messages import Message, checked_message
from .model import ToolSpec
from .schema import SchemaValidator
from .signals import AbortSignal

if TYPE_CHECKING:
    from .pipeline import PendingCall, ToolRun

# --- error codes ----------------------------------------------------------------------------------
# Stable: every error result the pipeline makes carries one of these in ``error.info["code"]``
# (a deny carries none: its reason is the whole message), so audit sinks and tests can tell a
# failure's origin without parsing text.

UNKNOWN_TOOL = "UNKNOWN_TOOL"
INVALID_ARGS = "INVALID_ARGS"
INVALID_TOOL_OUTPUT = "INVALID_TOOL_OUTPUT"
RENDER_FAILED = "RENDER_FAILED"
TOOL_FAILED = "TOOL_FAILED"
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
    """Raise from a tool body to fail with a message and machine-readable ``info``.

    ``info`` must be JSON; the result carries ``code`` (``TOOL_FAILED`` when none is given).
    """

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
        return render_value(self.output.render, value)


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
    They are snapshotted too: changing the dicts passed in changes nothing afterwards.
    """
    if not name or not isinstance(name, str):
        raise ToolDefinitionError("tool name must be a non-empty string")
    if not callable(execute):
        raise ToolDefinitionError(f'tool "{name}": execute must be callable')
    output = output or ToolOutput()
    try:
        frozen_parameters = freeze_json(parameters if parameters is not None else {"type": "object"})
        frozen_output = None if output.schema is None else freeze_json(output.schema)
    except NotJsonError as exc:
        raise ToolDefinitionError(f'tool "{name}": a schema must be JSON: {exc}') from exc
    try:
        arguments_validator = SchemaValidator(thaw(frozen_parameters))
        output_validator = None if frozen_output is None else SchemaValidator(thaw(frozen_output))
    except SchemaError as exc:
        raise ToolDefinitionError(f'tool "{name}": invalid JSON Schema: {exc.message}') from exc
    return ToolDefinition(
        name=name,
        description=description,
        parameters=frozen_parameters,
        execute=execute,
        output=ToolOutput(frozen_output, output.render),
        finalize_content=finalize_content,
        concurrency_safe=concurrency_safe,
        _arguments_validator=arguments_validator,
        _output_validator=output_validator,
    )


# --- content and contexts -------------------------------------------------------------------------


def render_value(renderer: Callable[[Any], Any] | None, value: Any) -> tuple[TextContent, ...]:
    """Content for a frozen value: the renderer's, else the string itself or compact JSON."""
    if renderer is not None:
        return coerce_content(renderer(value))
    if type(value) is str:
        return (TextContent(value),)
    return (TextContent(to_json_text(value)),)


def coerce_content(content: Any) -> tuple[TextContent, ...]:
    """Normalize content given as str, TextContent or a sequence of them; raise ContractError else.

    Judged by real types (a ``__class__`` property cannot pass for text), and every part comes
    out as an exact ``TextContent`` with an exact ``str``.
    """
    text = exact_str(content)
    if text is not None:
        return (TextContent(text),)
    kind = type(content)
    if issubclass(kind, TextContent):
        return (_checked_part(content),)
    if issubclass(kind, Sequence):
        parts: list[TextContent] = []
        for part in content:
            text = exact_str(part)
            parts.append(TextContent(text) if text is not None else _checked_part(part))
        return tuple(parts)
    raise ContractError(f"content must be str, TextContent or a sequence of them, not {type_name(content)}")


def _checked_part(part: Any) -> TextContent:
    if not issubclass(type(part), TextContent):
        raise ContractError(f"content part must be str or TextContent, not {type_name(part)}")
    text = exact_str(part.text)
    if text is None or exact_str(part.type) != "text":
        raise ContractError("TextContent must have type 'text' and str text")
    if type(part) is TextContent and text is part.text:
        return part
    return TextContent(text)


def coerce_messages(items: Iterable[Any], *, plugin: str | None = None) -> tuple[Message, ...]:
    """Contexts given as Message or str (str becomes a plugin-sourced message); ContractError else."""
    out: list[Message] = []
    for item in items:
        text = exact_str(item)
        if text is not None:
            out.append(Message.from_plugin(text, plugin))
            continue
        try:
            out.append(checked_message(item, "a context"))
        except TypeError as exc:
            raise ContractError(str(exc)) from None
    return tuple(out)


# --- scopes ---------------------------------------------------------------------------------------


class ScopeLayer:
    """One layer of tools and guards. The root layer is global; an agent's layer is a child of its
    parent agent's layer, so lookups go nearest layer first and guards farthest ancestor first."""

    __slots__ = ("_chain", "_guard_handles", "_tool_handles", "_versions", "_visible", "guards", "parent",
                 "tools")

    def __init__(self, parent: ScopeLayer | None = None) -> None:
        self.parent = parent
        self.guards: list[Guard] = []
        self.tools: dict[str, ToolDefinition] = {}
        self._guard_handles: list[object] = []
        self._tool_handles: dict[str, object] = {}
        # A layer's ancestry never changes, so its chain is computed once; the tool view is
        # cached against a counter the whole tree shares and every tool (un)registration bumps.
        self._chain: tuple[ScopeLayer, ...] = (*parent._chain, self) if parent is not None else (self,)
        self._versions: list[int] = parent._versions if parent is not None else [0]
        self._visible: tuple[int, Mapping[str, ToolDefinition]] | None = None

    def add(self, guard: Guard) -> Callable[[], None]:
        """Register a guard in this layer; returns a disposer that removes this registration only."""
        if not callable(guard):
            raise TypeError("guard must be callable")
        handle = object()
        # Replaced, not mutated: a running guard pass keeps the list it started with.
        self.guards = [*self.guards, guard]
        self._guard_handles = [*self._guard_handles, handle]

        def dispose() -> None:
            handles = self._guard_handles
            for index, item in enumerate(handles):
                if item is handle:
                    self.guards = [*self.guards[:index], *self.guards[index + 1 :]]
                    self._guard_handles = [*handles[:index], *handles[index + 1 :]]
                    return

        return dispose

    def register(self, definition: ToolDefinition) -> Callable[[], None]:
        """Make a tool visible in this layer; a second one of the same name in it is an error."""
        name = definition.name
        if name in self.tools:
            raise ToolDefinitionError(f'tool "{name}" is already registered')
        handle = object()
        self.tools = {**self.tools, name: definition}
        self._tool_handles = {**self._tool_handles, name: handle}
        self._versions[0] += 1

        def dispose() -> None:
            if self._tool_handles.get(name) is handle:
                self.tools = {key: value for key, value in self.tools.items() if key != name}
                self._tool_handles = {k: v for k, v in self._tool_handles.items() if k != name}
                self._versions[0] += 1

        return dispose

    def chain(self) -> tuple[ScopeLayer, ...]:
        """This layer and its ancestors, farthest ancestor first."""
        return self._chain

    def lookup(self, name: str) -> ToolDefinition | None:
        """The definition called ``name`` this layer sees (nearest layer first)."""
        scope: ScopeLayer | None = self
        while scope is not None:
            definition = scope.tools.get(name)
            if definition is not None:
                return definition
            scope = scope.parent
        return None

    def visible(self) -> Mapping[str, ToolDefinition]:
        """Every tool this layer sees, in registration order, farthest layer first (read-only)."""
        version = self._versions[0]
        cached = self._visible
        if cached is not None and cached[0] == version:
            return cached[1]
        out: dict[str, ToolDefinition] = {}
        for layer in self._chain:
            out.update(layer.tools)
        self._visible = (version, out)
        return out


def scope_of(agent: Any) -> ScopeLayer | None:
    """The scope layer of a call's agent (anything with a ``guard_scope`` layer), or None."""
    if agent is None:
        return None
    try:
        scope = agent.guard_scope
    except Exception:
        return None
    return scope if isinstance(scope, ScopeLayer) else None


# --- the registry ---------------------------------------------------------------------------------


class ToolRegistry:
    """Visible tools, global guards and the pipeline entry points."""

    def __init__(self, bus: EventBus, service: Callable[[str], Any], logger: Any = None) -> None:
        self._bus = bus
        self._service = service
        self.root_scope = ScopeLayer()
        self.logger = logger if logger is not None else structlog.get_logger("dsh_policy.core.tools")

    @property
    def bus(self) -> EventBus:
        """The event bus the pipeline dispatches on."""
        return self._bus

    def service(self, name: str) -> Any:
        """An optional service (``approval``), or None."""
        return self._service(name)

    # registration

    def register(self, definition: ToolDefinition, scope: ScopeLayer | None = None) -> Callable[[], None]:
        """Make a tool visible (globally by default); returns a disposer for this registration."""
        if not isinstance(definition, ToolDefinition):
            raise TypeError("register() takes a ToolDefinition (see define_tool)")
        return (scope or self.root_scope).register(definition)

    def guard(self, guard: Guard, scope: ScopeLayer | None = None) -> Callable[[], None]:
        """Install a sync guard ``guard(execution) -> deny reason | None`` (global by default)."""
        return (scope or self.root_scope).add(guard)

    def get(self, name: str, scope: ScopeLayer | None = None) -> ToolDefinition | None:
        """The definition called ``name`` as ``scope`` (default: the root) sees it."""
        return (scope or self.root_scope).lookup(name)

    def names(self, scope: ScopeLayer | None = None) -> tuple[str, ...]:
        """Names of the tools ``scope`` (default: the root) sees."""
        return tuple((scope or self.root_scope).visible())

    def specs(self, scope: ScopeLayer | None = None) -> tuple[ToolSpec, ...]:
        """The model-facing view of every tool ``scope`` (default: the root) sees."""
        return tuple(d.spec for d in (scope or self.root_scope).visible().values())

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
        return await _pipeline.prepare(
            self, name, arguments, call_id=call_id, root_call_id=root_call_id, agent=agent,
            parent=parent, signal=signal,
        )


from . import pipeline as _pipeline  # noqa: E402  (the pipeline builds on the definitions above)


def __getattr__(name: str) -> Any:
    """``ToolRun``, ``PendingCall`` and ``CallToken`` lived here; they are in :mod:`.pipeline` now."""
    if name in ("ToolRun", "PendingCall", "CallToken"):
        return getattr(_pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
