"""What a tool is: its definition, the stable error codes of its results, and content coercion.

The lowest of the tool modules: :mod:`.scopes` registers definitions, :mod:`.pipeline` runs them and
:mod:`.tools` (the registry) drives the pipeline, each importing only the ones below it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from jsonschema.exceptions import SchemaError

from .execution import TextContent, ToolExecution, ToolResult
from .failures import exact_str, type_name
from .frozen import NotJsonError, freeze_json, thaw, to_json_text
from .messages import Message, checked_message
from .model import ToolSpec
from .schema import SchemaValidator
from .tool_run import ToolRun

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
ToolBody: TypeAlias = Callable[[Any, ToolRun], Any]


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
