"""How Codex reads a command hook's answer, and how we spell each verdict for it.

Codex (developers.openai.com/codex/hooks and ``codex-rs/hooks``): exit 2 with a non-empty stderr
blocks a PreToolUse call (an empty stderr is a *failed* hook and the call runs); exit 0 with empty
stdout is no opinion; exit 0 JSON is parsed against a closed schema per event, where an unknown
field, ``permissionDecision: allow`` without ``updatedInput``, ``permissionDecision: ask``,
``decision: approve``, a ``reason`` without a ``decision``, or ``continue``/``stopReason``/
``suppressOutput`` on PreToolUse each make the hook count as *failed*, and a failed hook lets the
call run. PostToolUse ``updatedMCPToolOutput`` is parsed but not applied.

So this dialect emits only fields Codex honours for the event that fired, degrades ``ask`` to a
denial that says why, and degrades ``redact`` to a block (Codex replaces a blocked result with the
reason, so the secret does not reach the model). Every document is checked against
:data:`KNOWN_FIELDS` before it is printed; a mismatch is a bug and fails closed upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh_policy.policy.hooks.protocol.messages import (
    EXIT_OK,
    FAIL_CLOSED_PREFIX,
    HookReply,
    HookVerdict,
    RedactionNotice,
    deny_reply,
    joined_contexts,
    json_line,
)

# Per event: (top-level fields, hookSpecificOutput fields) that Codex accepts *and* honours.
KNOWN_FIELDS: Final[Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "PreToolUse": (
        frozenset({"systemMessage", "hookSpecificOutput"}),
        frozenset({"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"}),
    ),
    "PostToolUse": (
        frozenset({"continue", "stopReason", "systemMessage", "decision", "reason", "hookSpecificOutput"}),
        frozenset({"hookEventName", "additionalContext"}),
    ),
    "UserPromptSubmit": (
        frozenset({"continue", "stopReason", "systemMessage", "decision", "reason", "hookSpecificOutput"}),
        frozenset({"hookEventName", "additionalContext"}),
    ),
    "SessionStart": (
        frozenset({"continue", "stopReason", "systemMessage", "hookSpecificOutput"}),
        frozenset({"hookEventName", "additionalContext"}),
    ),
    "Stop": (
        frozenset({"continue", "stopReason", "systemMessage", "decision", "reason"}),
        frozenset(),
    ),
}

ASK_DEGRADED_SUFFIX: Final[str] = (
    " (policy asks for human approval, which Codex hooks cannot request; the call is denied)"
)


class UnknownCodexFieldError(AssertionError):
    """The dialect built a document Codex would reject as a failed hook: a bug in this module."""


class CodexDialect:
    """Renders verdicts into Codex's command-hook protocol."""

    name = "codex"

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for one verdict (exit code 0 or 2 only)."""
        event = verdict.event
        if event is None or verdict.action == "deny":
            return deny_reply(verdict.reason)
        if verdict.action == "ask":
            return deny_reply((verdict.reason or "approval required") + ASK_DEGRADED_SUFFIX)
        if verdict.action == "halt" and event in ("SessionStart", "Stop", "UserPromptSubmit", "PostToolUse"):
            return _reply(
                event, {"continue": False, "stopReason": verdict.reason.strip() or FAIL_CLOSED_PREFIX}
            )
        if verdict.action == "redact" and event == "PostToolUse":
            notice = RedactionNotice(verdict.redacted_types).text()
            return _block(HookVerdict(event, "block", notice, verdict.contexts))
        if verdict.action == "block" and event in ("PostToolUse", "UserPromptSubmit"):
            return _block(verdict)
        if verdict.action == "pass":
            fields = KNOWN_FIELDS[event][1]
            text = joined_contexts(verdict.contexts)
            if text and "additionalContext" in fields:
                return _reply(
                    event, {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
                )
            return HookReply(EXIT_OK)
        return deny_reply(verdict.reason or f"dsh-policy: {verdict.action} on {event}")


def _block(verdict: HookVerdict) -> HookReply:
    assert verdict.event is not None
    # Codex rejects decision:block without a non-empty reason as a failed hook (= no block).
    document: dict[str, Any] = {"decision": "block", "reason": verdict.reason.strip() or "blocked by policy"}
    text = joined_contexts(verdict.contexts)
    if text:
        document["hookSpecificOutput"] = {"hookEventName": verdict.event, "additionalContext": text}
    return _reply(verdict.event, document)


def _reply(event: str, document: dict[str, Any]) -> HookReply:
    check_known_fields(event, document)
    return HookReply(EXIT_OK, json_line(document))


def check_known_fields(event: str, document: Mapping[str, Any]) -> None:
    """Raise :class:`UnknownCodexFieldError` if Codex would not honour every field of ``document``."""
    top, specific = KNOWN_FIELDS[event]
    extra = set(document) - top
    if extra:
        raise UnknownCodexFieldError(f"{event}: fields Codex does not honour: {sorted(extra)}")
    nested = document.get("hookSpecificOutput")
    if nested is not None:
        if nested.get("hookEventName") != event:
            raise UnknownCodexFieldError(f"{event}: hookSpecificOutput names another event")
        extra = set(nested) - specific
        if extra:
            raise UnknownCodexFieldError(
                f"{event}: hookSpecificOutput fields Codex does not honour: {sorted(extra)}"
            )
