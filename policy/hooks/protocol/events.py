"""From a validated hook payload to a gateway decision: the harness-neutral middle of a hook.

Each of the five events maps onto one call of the decision API (HOOKS.md's table):

| hook event        | decision API                     | verdict                                       |
|-------------------|----------------------------------|-----------------------------------------------|
| SessionStart      | (none: recorded)                 | pass, optionally with a context naming packs |
| UserPromptSubmit  | ``gate_step`` (prompt as a user message) | reject -> block; contexts -> context  |
| PreToolUse        | ``check_tool_call`` (pre-execute + guards) | deny / ask / pass                   |
| PostToolUse       | ``review_tool_result``            | block; redaction -> redact; contexts -> context |
| Stop              | (none in v1: recorded)            | pass                                          |

Tool calls are canonicalized first (:mod:`.vocabulary`), so the pack sees ``shell``/``read_file``
and ``tool.original_name`` keeps the harness's name. A hook process sees one event and no loop, so
``turn`` and ``step`` are 0 (rules on turn budgets cannot work through hooks).
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from dsh_policy.core.frozen import NotJsonError, freeze_json, thaw
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import (
    ResultVerdict,
    StepEvent,
    StepMessage,
    StepVerdict,
    ToolCallEvent,
    ToolCallVerdict,
    ToolResultEvent,
    with_rules,
)
from dsh_policy.policy.events import all_strings_text as response_text  # the hooks' name for it
from dsh_policy.policy.hooks.protocol.messages import (
    HookInput,
    HookVerdict,
    PostToolUseInput,
    PreToolUseInput,
    SessionStartInput,
    StopInput,
    UserPromptSubmitInput,
    failure_verdict,
)
from dsh_policy.policy.hooks.protocol.vocabulary import CanonicalCall, Harness, ToolInputError, canonicalize

PreToolReview: TypeAlias = Callable[
    [Policy, ToolCallEvent, CanonicalCall, HookVerdict, str | None, dict[str, object]], HookVerdict
]
"""A second look at a PreToolUse call policy let through (policy, event, call, verdict, cwd, tool
input -> verdict): how Claude Code's built-in tools are kept from printing a secret
(:func:`..review.secret_reads.secret_reads_review`). Handed in by the caller, so this module does
not import the review it serves."""

MAIN_AGENT: Final[str] = "main"

_REDACTION_LABEL = re.compile(r"\[REDACTED:([A-Za-z0-9_.\-]+)\]")

# What a harness's tool response says when the call failed (Claude Code sends failures to a
# separate PostToolUseFailure event; Codex and MCP results can carry an error flag).
_ERROR_FLAGS: Final[tuple[str, ...]] = ("is_error", "isError")


@dataclass(frozen=True, slots=True)
class HookDecision:
    """A verdict plus what was decided on, for the audit record: the decision API's own verdict
    (``None`` for recorded-only events and input failures) and the canonical call, if any."""

    verdict: HookVerdict
    decided: StepVerdict | ToolCallVerdict | ResultVerdict | None = None
    call: CanonicalCall | None = None
    step: StepEvent | None = None
    tool_event: ToolCallEvent | None = None


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What one hook invocation adds to the policy: text a SessionStart hook gives the model
    (``--announce-packs``), and the review of a call policy lets through (``hooks.review``'s
    secret reads: refusing Reads and Greps that would print a secret, routing Bash output through
    the redactor; None = the policy's verdict as it is)."""

    text: str | None = None
    pre_tool_review: PreToolReview | None = None


def announcement(policy: Policy) -> str:
    """The SessionStart context ``--announce-packs`` adds: which packs govern this session."""
    names = ", ".join(f"{pack.name} ({pack.digest[:19]})" for pack in policy.packs)
    return (
        f"Tool calls in this session are checked by dsh-policy rule packs: {names}. "
        "A refusal that names a policy rule is final; do not try to work around it."
    )


def decide_hook(
    policy: Policy, harness: Harness, payload: HookInput, session: SessionContext | None = None
) -> HookDecision:
    """Decide one validated payload. Never raises for bad input: it becomes a fail-closed verdict."""
    if isinstance(payload, PreToolUseInput):
        return _pre_tool_use(policy, harness, payload, session.pre_tool_review if session else None)
    if isinstance(payload, PostToolUseInput):
        return _post_tool_use(policy, harness, payload)
    if isinstance(payload, UserPromptSubmitInput):
        return _user_prompt(policy, payload)
    if isinstance(payload, SessionStartInput):
        text = session.text if session is not None else None
        return HookDecision(HookVerdict("SessionStart", "pass", contexts=(text,) if text else ()))
    if isinstance(payload, StopInput):
        return HookDecision(HookVerdict("Stop", "pass"))
    raise AssertionError(f"unhandled payload type {type(payload).__name__}")


def tool_call_event(payload: PreToolUseInput | PostToolUseInput, call: CanonicalCall) -> ToolCallEvent:
    """The decision API's view of a harness tool call."""
    call_id = payload.tool_use_id or _derived_call_id(payload)
    return ToolCallEvent(
        tool=call.name,
        args=call.args,
        call_id=call_id,
        root_call_id=call_id,
        nested=False,
        session_id=payload.session_id,
        agent_id=payload.agent_id or MAIN_AGENT,
        original_name=call.original_name,
        cwd=payload.cwd,
        now=datetime.datetime.now(datetime.UTC),  # pinned, so the audit record can name it
    )


def _derived_call_id(payload: PreToolUseInput | PostToolUseInput) -> str:
    # Older harness builds omit tool_use_id; a digest of the call keeps pre and post events of the
    # same call paired in the audit log without inventing randomness.
    basis = f"{payload.session_id}\0{payload.turn_id or ''}\0{payload.tool_name}\0{payload.tool_input!r}"
    return "hook-" + hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _canonical(harness: Harness, payload: PreToolUseInput | PostToolUseInput) -> CanonicalCall | str:
    call = canonicalize(harness, payload.tool_name, payload.tool_input)
    if isinstance(call, ToolInputError):
        return str(call)
    return call


def _pre_tool_use(
    policy: Policy, harness: Harness, payload: PreToolUseInput, review: PreToolReview | None
) -> HookDecision:
    call = _canonical(harness, payload)
    if isinstance(call, str):
        return HookDecision(failure_verdict("PreToolUse", call))
    event = tool_call_event(payload, call)
    verdict = policy.check_tool_call(event)
    reason = verdict.message or ""
    if verdict.decision == "deny":
        mapped = HookVerdict(
            "PreToolUse",
            "deny",
            with_rules(reason or "denied by policy", verdict.rules),
            rules=verdict.rules,
            tool_name=payload.tool_name,
            failure=verdict.internal_error is not None,
        )
    elif verdict.decision == "ask":
        mapped = HookVerdict(
            "PreToolUse",
            "ask",
            with_rules(reason or "policy asks for approval", verdict.rules),
            rules=verdict.rules,
            tool_name=payload.tool_name,
        )
    else:
        mapped = HookVerdict("PreToolUse", "pass", rules=verdict.rules, tool_name=payload.tool_name)
        if review is not None:
            mapped = review(policy, event, call, mapped, payload.cwd, dict(payload.tool_input))
    return HookDecision(mapped, verdict, call, tool_event=event)


def _is_error(response: Any) -> bool:
    return isinstance(response, Mapping) and any(response.get(flag) is True for flag in _ERROR_FLAGS)


def _post_tool_use(policy: Policy, harness: Harness, payload: PostToolUseInput) -> HookDecision:
    call = _canonical(harness, payload)
    if isinstance(call, str):
        return HookDecision(failure_verdict("PostToolUse", call))
    try:
        value = freeze_json(payload.tool_response)
    except NotJsonError as error:
        return HookDecision(failure_verdict("PostToolUse", f"tool_response is not JSON: {error}"), call=call)
    event = tool_call_event(payload, call)
    text = response_text(payload.tool_response)
    is_error = _is_error(payload.tool_response)
    verdict = policy.review_tool_result(
        ToolResultEvent(
            call=event,
            is_error=is_error,
            text=text,
            value=value,
            error_message=text if is_error else None,
        )
    )
    rules, contexts, tool = verdict.rules, verdict.contexts, payload.tool_name
    if verdict.decision == "block":
        reason = with_rules(verdict.message or "tool output withheld by policy", verdict.rules)
        failed = verdict.internal_error is not None
        mapped = HookVerdict("PostToolUse", "block", reason, contexts, rules, tool_name=tool, failure=failed)
    elif verdict.redactions:
        redacted = verdict.redacted_value if verdict.value_redacted else thaw(value)
        types = redacted_types(text, verdict.redacted_text) or redacted_types(text, response_text(redacted))
        mapped = HookVerdict(
            "PostToolUse",
            "redact",
            contexts=contexts,
            rules=rules,
            redacted_types=types,
            redacted_output=redacted,
            tool_name=tool,
        )
    else:
        mapped = HookVerdict("PostToolUse", "pass", contexts=contexts, rules=rules, tool_name=tool)
    return HookDecision(mapped, verdict, call, tool_event=event)


def redacted_types(before: str, after: str | None) -> tuple[str, ...]:
    """The ``[REDACTED:<type>]`` labels redaction introduced (those not already in ``before``)."""
    if not after:
        return ()
    existing = set(_REDACTION_LABEL.findall(before))
    found = [label for label in _REDACTION_LABEL.findall(after) if label not in existing]
    return tuple(dict.fromkeys(found))


def _user_prompt(policy: Policy, payload: UserPromptSubmitInput) -> HookDecision:
    step = StepEvent(
        session_id=payload.session_id,
        agent_id=payload.agent_id or MAIN_AGENT,
        messages=(StepMessage("user", payload.prompt, "user", None),),
        now=datetime.datetime.now(datetime.UTC),
    )
    verdict = policy.gate_step(step)
    if verdict.decision == "reject":
        mapped = HookVerdict(
            "UserPromptSubmit",
            "block",
            with_rules(verdict.message or "prompt rejected by policy", verdict.rules),
            rules=verdict.rules,
            failure=verdict.internal_error is not None,
        )
    else:
        mapped = HookVerdict("UserPromptSubmit", "pass", contexts=verdict.contexts, rules=verdict.rules)
    return HookDecision(mapped, verdict, step=step)
