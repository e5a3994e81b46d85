"""The events the decision API takes and the verdicts it gives: frozen dataclasses over plain data.

Values from ``core`` (``FrozenDict``, tuples) are accepted anywhere a JSON value is expected. Every
verdict carries the rule ids that decided it, a message, the trace of every rule evaluated, and the
digest of the compiled policy that made it, so an audit record can name the deciding policy.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dsh_policy.policy.patch_files import with_patch_paths

_EMPTY = ""
_ZERO = 0

# --- events ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepMessage:
    """A message claimed for a step (``source_kind``: user | plugin | model | tool)."""

    role: str
    text: str
    source_kind: str = "user"
    source_plugin: str | None = None


@dataclass(frozen=True, slots=True)
class StepEvent:
    """An ``agent/pre-step`` proposal. ``now`` defaults to the time of the decision."""

    session_id: str = ""
    agent_id: str | None = None
    turn: int = 0
    step: int = 0
    messages: tuple[StepMessage, ...] = ()
    now: datetime.datetime | None = None


@dataclass(frozen=True, init=False)
class ToolCallEvent:
    """A tool call. ``args`` is the (frozen or plain) JSON arguments; ``original_name`` is the
    harness's own tool name when a hook adapter canonicalized it (rules see ``tool.original_name``).

    Built once per tool call, so its construction is on every decision's path: the ``__init__``
    stores only the fields given a value other than their default (the rest read the class-level
    default), straight into the instance dict, and when every field past ``args`` is its default
    object it tests them by identity alone. The generated frozen ``__init__`` set all twelve
    fields through ``object.__setattr__``, which cost more than deciding the call."""

    tool: str
    args: Any = None
    call_id: str = ""
    root_call_id: str = ""
    nested: bool = False
    session_id: str = ""
    agent_id: str | None = None
    turn: int = 0
    step: int = 0
    original_name: str | None = None
    now: datetime.datetime | None = None
    # The working directory the call runs in (hook payloads carry it); relative paths in the call
    # resolve against it for self-protection. ``None``: the gateway process's own.
    cwd: str | None = None

    def __init__(
        self,
        tool: str,
        args: Any = None,
        call_id: str = "",
        root_call_id: str = "",
        nested: bool = False,
        session_id: str = "",
        agent_id: str | None = None,
        turn: int = 0,
        step: int = 0,
        original_name: str | None = None,
        now: datetime.datetime | None = None,
        cwd: str | None = None,
    ) -> None:
        # Frozen: written here once, through the instance dict (``__setattr__`` refuses).
        values = self.__dict__
        values["tool"] = tool
        if args is not None:
            # A patch given alone names its files in its headers: rules and guards read them
            # as ``paths`` (hook adapters list them; other entries may not).
            values["args"] = with_patch_paths(tool, args) if tool == "apply_patch" else args
        if (
            call_id is _EMPTY
            and root_call_id is _EMPTY
            and nested is False
            and session_id is _EMPTY
            and agent_id is None
            and turn is _ZERO
            and step is _ZERO
            and original_name is None
            and now is None
            and cwd is None
        ):
            # Every other field is its default object (the usual call: a tool and its
            # arguments): identity tests only, where the checks below compare values.
            return
        if call_id != "":
            values["call_id"] = call_id
        if root_call_id != "":
            values["root_call_id"] = root_call_id
        if nested is not False:
            values["nested"] = nested
        if session_id != "":
            values["session_id"] = session_id
        if agent_id is not None:
            values["agent_id"] = agent_id
        if turn != 0:
            values["turn"] = turn
        if step != 0:
            values["step"] = step
        if original_name is not None:
            values["original_name"] = original_name
        if now is not None:
            values["now"] = now
        if cwd is not None:
            values["cwd"] = cwd


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A normalized tool result for ``tools/post-execute``; ``text`` is the content text."""

    call: ToolCallEvent
    is_error: bool = False
    text: str = ""
    value: Any = None
    error_message: str | None = None
    error_code: str | None = None


# --- verdicts -------------------------------------------------------------------------------------

#: How strict each pre-execute decision is, to take the strictest of several (a call and what it
#: implies or amounts to; packs' default decisions). An unknown decision counts as a deny.
DECISION_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class RuleTrace:
    """How one rule fared on one event. ``value`` is the value of ``when`` (True when absent),
    ``error`` an evaluation error; ``outcome`` says what the match did: ``decided`` (changed the
    verdict), ``shadow`` (warn/audit: recorded only), ``no-match``, or ``failed-closed``
    (evaluation error counted as a match)."""

    rule: str
    stage: str
    mode: str
    effect: str
    matched: bool
    value: Any
    error: str | None
    outcome: str
    redactions: int = 0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for ``explain`` and audit."""
        out: dict[str, Any] = {
            "rule": self.rule,
            "stage": self.stage,
            "mode": self.mode,
            "effect": self.effect,
            "matched": self.matched,
            "value": _json_safe(self.value),
            "error": self.error,
            "outcome": self.outcome,
        }
        if self.redactions:
            out["redactions"] = self.redactions
        return out


@dataclass(frozen=True, slots=True)
class PolicyStamp:
    """Which compiled policy made a verdict: its digest (packs, params, engine, shadow) and engine."""

    digest: str = ""
    engine: str = ""
    # The deployment switched its self-protection off (every record it decides says so).
    unprotected: bool = False


UNSTAMPED = PolicyStamp()


class _Stamped:
    """What every verdict shares: the stamp of the policy that made it, and its digest."""

    __slots__ = ()
    policy: PolicyStamp

    @property
    def policy_digest(self) -> str:
        """``CompiledPolicy.digest`` of the deciding policy ("" when unstamped)."""
        return self.policy.digest


@dataclass(frozen=True, slots=True)
class StepVerdict(_Stamped):
    """Outcome of ``agent/pre-step``: ``enter`` (with extra ``contexts``) or ``reject``."""

    decision: Literal["enter", "reject"]
    rules: tuple[str, ...] = ()
    message: str | None = None
    contexts: tuple[str, ...] = ()
    shadow_rules: tuple[str, ...] = ()
    trace: tuple[RuleTrace, ...] = ()
    internal_error: str | None = None
    #: The compiled policy that decided (unstamped when built by hand, as tests do).
    policy: PolicyStamp = UNSTAMPED


@dataclass(frozen=True, slots=True)
class ToolCallVerdict(_Stamped):
    """Outcome of ``tools/pre-execute`` (or of the whole gate, see :meth:`Decider.check_tool_call`)."""

    decision: Literal["allow", "deny", "ask"]
    rules: tuple[str, ...] = ()
    message: str | None = None
    shadow_rules: tuple[str, ...] = ()
    trace: tuple[RuleTrace, ...] = ()
    internal_error: str | None = None
    guard: bool = False
    #: The compiled policy that decided (unstamped when built by hand, as tests do).
    policy: PolicyStamp = UNSTAMPED


@dataclass(frozen=True, slots=True)
class GuardVerdict(_Stamped):
    """Outcome of the ``ctx.tools.guard`` invariants: ``denied`` with the guard rules' message."""

    denied: bool
    rules: tuple[str, ...] = ()
    message: str | None = None
    shadow_rules: tuple[str, ...] = ()
    trace: tuple[RuleTrace, ...] = ()
    internal_error: str | None = None
    #: The compiled policy that decided (unstamped when built by hand, as tests do).
    policy: PolicyStamp = UNSTAMPED


@dataclass(frozen=True, slots=True)
class ResultVerdict(_Stamped):
    """Outcome of ``tools/post-execute``. On ``accept``, ``redacted_text``/``redacted_value`` are
    the replacements (None = unchanged; the value is plain JSON) and ``redactions`` their count."""

    decision: Literal["accept", "block"]
    rules: tuple[str, ...] = ()
    message: str | None = None
    redacted_text: str | None = None
    redacted_value: Any = None
    value_redacted: bool = False
    redactions: int = 0
    contexts: tuple[str, ...] = ()
    shadow_rules: tuple[str, ...] = ()
    trace: tuple[RuleTrace, ...] = ()
    internal_error: str | None = None
    #: The compiled policy that decided (unstamped when built by hand, as tests do).
    policy: PolicyStamp = UNSTAMPED


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    return str(value)


# --- wording every adapter shares -----------------------------------------------------------------


def with_rules(message: str, rules: tuple[str, ...]) -> str:
    """A refusal names the rules that made it, so the model and the user can see it is policy. The
    hooks and the MCP proxy word every refusal so: one wording, whichever adapter refused."""
    return f"{message} [policy: {', '.join(rules)}]" if rules else message


def all_strings_text(value: Any) -> str:
    """Every string in a JSON value, in document order, one per line (a string is itself): the text
    a rule's ``result.text`` sees of a structured result (a hook's tool response, an MCP tool's
    definition), so a secret or an injection anywhere in it is visible."""
    if isinstance(value, str):
        return value
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return "\n".join(parts)
