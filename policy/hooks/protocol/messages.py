"""The command-hook protocol shared by Claude Code and Codex: what comes in, what goes out.

A harness runs ``dsh-policy hook <harness>`` once per event, writes one JSON object to its stdin and
reads the exit code, stdout and stderr (HOOKS.md). This module owns the harness-neutral halves:

- :func:`parse_hook_input` validates the stdin bytes into one of five typed payloads (pydantic,
  since this is outside input) or returns a :class:`HookInputError` value;
- :class:`HookVerdict` is what the gateway decided, before any harness spelling;
- :class:`HookReply` is the exit code and the two output streams a dialect renders a verdict into.

The dialects (``hook_claude_code``, ``hook_codex``) differ only in how they spell a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal, Protocol, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

EventName: TypeAlias = Literal["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
SUPPORTED_EVENTS: Final[tuple[EventName, ...]] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
)

# A hook payload is one event; even a huge tool response stays far below this. Bigger input is not
# read to the end (it would only cost memory) and fails closed.
MAX_INPUT_BYTES: Final[int] = 32 * 1024 * 1024

# Exit codes of the protocol: 0 = the harness reads stdout; 2 = block, stderr is the reason. Any
# other code is a *non-blocking* error in both harnesses (the call runs), so we never use one.
EXIT_OK: Final[int] = 0
EXIT_BLOCK: Final[int] = 2


# --- input ----------------------------------------------------------------------------------------


class _CommonPayload(BaseModel):
    """Fields every event carries. Unknown fields are kept: harnesses add fields between releases
    (``permission_mode``, ``prompt_id``, ``agent_type``...) and a new field must not break a guard.
    Types are strict: a number where a string belongs is a malformed payload, not a coercion."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    session_id: Annotated[str, Field(min_length=1)]
    hook_event_name: str
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    # Codex extras (HOOKS.md): the active model, and the id of the turn the event belongs to.
    model: str | None = None
    turn_id: str | None = None
    # Set by both harnesses when the event fires inside a subagent.
    agent_id: str | None = None
    agent_type: str | None = None


class SessionStartInput(_CommonPayload):
    """A session started, resumed, or was cleared/compacted (``source`` says which)."""

    hook_event_name: Literal["SessionStart"]
    source: str | None = None


class UserPromptSubmitInput(_CommonPayload):
    """The user submitted a prompt; it has not reached the model yet."""

    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class PreToolUseInput(_CommonPayload):
    """The model asked for a tool call; it has not run yet. ``tool_input`` is the full arguments."""

    hook_event_name: Literal["PreToolUse"]
    tool_name: Annotated[str, Field(min_length=1)]
    tool_input: dict[str, JsonValue]
    tool_use_id: str | None = None


class PostToolUseInput(_CommonPayload):
    """A tool call finished; ``tool_response`` is its output in the harness's own shape."""

    hook_event_name: Literal["PostToolUse"]
    tool_name: Annotated[str, Field(min_length=1)]
    tool_input: dict[str, JsonValue]
    tool_response: JsonValue
    tool_use_id: str | None = None


class StopInput(_CommonPayload):
    """The agent is about to end its turn."""

    hook_event_name: Literal["Stop"]
    stop_hook_active: bool = False
    last_assistant_message: str | None = None


HookInput: TypeAlias = (
    SessionStartInput | UserPromptSubmitInput | PreToolUseInput | PostToolUseInput | StopInput
)

_INPUT_ADAPTER: Final[TypeAdapter[HookInput]] = TypeAdapter(
    Annotated[HookInput, Field(discriminator="hook_event_name")]
)


@dataclass(frozen=True, slots=True)
class HookInputError:
    """Stdin was not a valid payload. ``event`` is the event it claimed to be, when readable, so the
    failure can be spelled in that event's protocol; ``None`` means even that was unreadable."""

    message: str
    event: EventName | None = None

    def __str__(self) -> str:
        return self.message


class _DuplicateKeyError(ValueError):
    pass


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Two "tool_name" keys would let the payload mean different things to different readers.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKeyError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def event_of(payload: HookInput | HookInputError) -> EventName | None:
    """The event that fired, when the input says so readably (its answer is spelled for it)."""
    return payload.event if isinstance(payload, HookInputError) else payload.hook_event_name


def parse_hook_input(raw: bytes) -> HookInput | HookInputError:
    """Validate one hook payload; every way it can be wrong is an error value, never an exception."""
    if len(raw) > MAX_INPUT_BYTES:
        return HookInputError(f"hook input larger than {MAX_INPUT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return HookInputError(f"hook input is not UTF-8 (byte {error.start})")
    if not text.strip():
        return HookInputError("empty hook input: expected one JSON object on stdin")
    try:
        document = json.loads(text, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        return HookInputError(f"hook input is not JSON: {error}")
    if not isinstance(document, dict):
        return HookInputError(f"hook input must be a JSON object, got {_json_type(document)}")
    claimed = document.get("hook_event_name")
    if not isinstance(claimed, str):
        return HookInputError("hook input has no string 'hook_event_name'")
    if claimed not in SUPPORTED_EVENTS:
        supported = ", ".join(SUPPORTED_EVENTS)
        return HookInputError(f"unsupported hook event {claimed!r} (dsh-policy handles {supported})")
    event: EventName = claimed
    try:
        return _INPUT_ADAPTER.validate_python(document)
    except ValidationError as error:
        return HookInputError(f"invalid {event} payload: {_describe(error)}", event)
    except RecursionError:
        return HookInputError(f"invalid {event} payload: nested too deeply", event)


def _describe(error: ValidationError) -> str:
    parts = []
    for issue in error.errors(include_url=False)[:5]:
        # Drop the discriminator tag pydantic puts first in a tagged union's location.
        location = [str(p) for p in issue["loc"][1:]] or ["(payload)"]
        parts.append(f"{'.'.join(location)}: {issue['msg']}")
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


# --- output ---------------------------------------------------------------------------------------

Action: TypeAlias = Literal["pass", "deny", "ask", "block", "redact", "halt", "rewrite"]


@dataclass(frozen=True, slots=True)
class HookVerdict:
    """What the gateway decided for one event, before a harness spells it.

    ``pass``: no objection (the harness's own permission system still applies), with optional
    ``contexts`` for the model. ``deny``/``ask``: a PreToolUse call is refused / needs a human.
    ``block``: a PostToolUse result is withheld, or a UserPromptSubmit prompt is rejected.
    ``redact``: a PostToolUse result was accepted but with secrets replaced (``redacted_output``);
    most harnesses cannot rewrite tool output, so dialects may degrade it to a block.
    ``halt``: stop the session (the safe side of an internal failure where nothing can be denied).
    ``rewrite``: a PreToolUse call may run as ``updated_input`` instead (Claude Code only: a Bash
    call whose output must pass through the redactor, see ``hooks.review.secret_reads``).
    """

    event: EventName | None
    action: Action
    reason: str = ""
    contexts: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    redacted_types: tuple[str, ...] = ()
    redacted_output: Any = None
    tool_name: str | None = None
    failure: bool = False
    updated_input: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class HookReply:
    """Exactly what the process emits: exit code, stdout (one JSON object or nothing), stderr."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""


class HookDialect(Protocol):
    """How one harness spells a verdict."""

    name: str

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for ``verdict``; must only ever use exit codes 0 and 2."""
        ...


FAIL_CLOSED_PREFIX: Final[str] = "dsh-policy failed closed"


def failure_verdict(event: EventName | None, message: str) -> HookVerdict:
    """The safe side of an internal error (bad pack, bad input, a bug), per event.

    PreToolUse and unreadable input deny; PostToolUse withholds the result; UserPromptSubmit
    rejects the prompt; SessionStart and Stop cannot refuse anything, so they halt the session
    (``continue: false``) instead of letting an unguarded session carry on.
    """
    reason = f"{FAIL_CLOSED_PREFIX}: {message}"
    if event is None or event == "PreToolUse":
        return HookVerdict(event, "deny", reason, failure=True)
    if event in ("PostToolUse", "UserPromptSubmit"):
        return HookVerdict(event, "block", reason, failure=True)
    return HookVerdict(event, "halt", reason, failure=True)


def json_line(document: Mapping[str, Any]) -> str:
    """One compact JSON object and a newline, as both harnesses read stdout. ASCII with escapes:
    text from the payload may hold lone surrogates, which no UTF-8 stream can encode."""
    return json.dumps(document, ensure_ascii=True, separators=(",", ":")) + "\n"


def deny_reply(reason: str) -> HookReply:
    """Exit 2 with the reason on stderr: the oldest, most widely honoured way to block.

    It needs no JSON parsing on the harness side, so a protocol change cannot turn it into an
    allow; both harnesses treat exit 2 with an *empty* stderr as a failed hook, hence the fallback.
    """
    text = reason.strip() or FAIL_CLOSED_PREFIX
    # stderr must be writable whatever the reason holds (lone surrogates from JSON escapes).
    return HookReply(EXIT_BLOCK, "", text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")


def render_safely(dialect: HookDialect, verdict: HookVerdict) -> HookReply:
    """``dialect.render(verdict)``, failing closed: a rendering bug becomes the event's safe
    answer, and an exit code other than 0 or 2 (a non-blocking error) becomes a refusal."""
    try:
        reply = dialect.render(verdict)
    except Exception as exc:
        failed = failure_verdict(verdict.event, f"{type(exc).__name__} while answering: {exc}")
        try:
            reply = dialect.render(failed)
        except Exception:
            reply = deny_reply(failed.reason)
    if reply.exit_code not in (EXIT_OK, EXIT_BLOCK):
        reply = deny_reply(f"{FAIL_CLOSED_PREFIX}: dialect produced exit code {reply.exit_code}")
    return reply


def joined_contexts(contexts: tuple[str, ...]) -> str:
    """Several context messages as one ``additionalContext`` string."""
    return "\n\n".join(text for text in contexts if text)


@dataclass(frozen=True, slots=True)
class RedactionNotice:
    """The message a dialect shows when it must withhold a redacted result it cannot rewrite."""

    types: tuple[str, ...] = field(default=())

    def text(self) -> str:
        """For a harness that replaces a blocked result with the reason (Codex)."""
        names = ", ".join(self.types) if self.types else "secret"
        return (
            f"dsh-policy withheld this tool output: it contained {names} material that policy "
            "redacts, and this harness cannot pass on a redacted copy."
        )

    def found_text(self) -> str:
        """For a harness that shows the output anyway (Claude Code's built-in tools): no claim
        that anything was withheld."""
        names = ", ".join(self.types) if self.types else "secret"
        return f"dsh-policy found {names} material that policy redacts in this tool output"
