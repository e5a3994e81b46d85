"""How Claude Code reads a command hook's answer, and how we spell each verdict for it.

Claude Code (hooks reference): exit 2 blocks and feeds stderr to the model (PreToolUse: the call
does not run); exit 0 lets it parse one JSON object from stdout, where ``hookSpecificOutput`` counts
only when its ``hookEventName`` equals the event that fired. JSON is ignored on exit 2.

Choices made here:

- ``deny`` is exit 2 + stderr, not a JSON ``permissionDecision: deny``: it needs no JSON parsing, so
  a change in the output schema can never turn a denial into a silent pass.
- ``pass`` prints nothing (or only ``additionalContext``): a pack's ``allow`` means "policy does
  not object", not "skip the user's own permission prompts"; emitting ``permissionDecision:
  allow`` would widen what the user configured, and a guard must only ever narrow it.
- ``ask`` is ``permissionDecision: ask`` with the reason shown in the prompt.
- ``redact`` replaces the output: ``updatedMCPToolOutput`` for MCP tools, ``updatedToolOutput``
  for built-in tools. Measured in the real 2.1.332: ``updatedToolOutput`` is honoured for Bash,
  Read and Grep when it has the tool's own response shape (the redacted ``tool_response``), and
  silently ignored when it is a string, so a redaction without that shape still blocks and says
  the output could not be withheld (:data:`ALREADY_SEEN_NOTE`). The PreToolUse workarounds
  (``hooks.review.secret_reads``) stay: they also keep secrets out of Claude Code's own
  transcript on disk, which no PostToolUse answer reaches, and out of older clients that ignore
  the field.
- ``rewrite`` is ``updatedInput`` with no ``permissionDecision``: the call runs as rewritten and
  still goes through the user's own permission rules.
- ``halt`` is ``continue: false`` with ``stopReason`` (shown to the user).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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

ALREADY_SEEN_NOTE: Final[str] = (
    "dsh-policy could not withhold this output: Claude Code passes a built-in tool's output to the "
    "model before PostToolUse hooks run and lets no hook take it back, so it has already reached "
    "you; do not repeat, store or send what policy flagged."
)

# Events whose hookSpecificOutput accepts additionalContext.
_CONTEXT_EVENTS: Final[frozenset[str]] = frozenset(
    {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
)


class ClaudeCodeDialect:
    """Renders verdicts into Claude Code's command-hook protocol."""

    name = "claude-code"

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for one verdict (exit code 0 or 2 only)."""
        event = verdict.event
        if event is None or verdict.action == "deny":
            return deny_reply(verdict.reason)
        if verdict.action == "ask" and event == "PreToolUse":
            specific: dict[str, Any] = {
                "hookEventName": event,
                "permissionDecision": "ask",
                "permissionDecisionReason": verdict.reason.strip() or "dsh-policy asks for approval",
            }
            return _reply({"hookSpecificOutput": self._with_context(specific, verdict)})
        if verdict.action == "halt":
            return _reply({"continue": False, "stopReason": verdict.reason.strip() or FAIL_CLOSED_PREFIX})
        if verdict.action == "rewrite" and event == "PreToolUse" and verdict.updated_input is not None:
            specific = {"hookEventName": event, "updatedInput": dict(verdict.updated_input)}
            return _reply({"hookSpecificOutput": self._with_context(specific, verdict)})
        if verdict.action == "redact" and event == "PostToolUse":
            if verdict.tool_name is not None and verdict.tool_name.startswith("mcp__"):
                specific = {"hookEventName": event, "updatedMCPToolOutput": verdict.redacted_output}
                return _reply({"hookSpecificOutput": self._with_context(specific, verdict)})
            if isinstance(verdict.redacted_output, Mapping):
                # The tool's own response shape, redacted: the only form the client applies.
                specific = {"hookEventName": event, "updatedToolOutput": dict(verdict.redacted_output)}
                return _reply({"hookSpecificOutput": self._with_context(specific, verdict)})
            notice = already_seen(RedactionNotice(verdict.redacted_types).found_text())
            return self._block(HookVerdict(event, "block", notice, verdict.contexts))
        if verdict.action == "block" and event == "PostToolUse":
            return self._block(replace(verdict, reason=already_seen(verdict.reason)))
        if verdict.action == "block" and event == "UserPromptSubmit":
            return self._block(verdict)
        if verdict.action == "pass":
            if verdict.contexts and event in _CONTEXT_EVENTS:
                specific = self._with_context({"hookEventName": event}, verdict)
                return _reply({"hookSpecificOutput": specific})
            return HookReply(EXIT_OK)
        # An action this event cannot express (e.g. "ask" after the fact): refuse rather than pass.
        return deny_reply(verdict.reason or f"dsh-policy: {verdict.action} on {event}")

    def _block(self, verdict: HookVerdict) -> HookReply:
        document: dict[str, Any] = {
            "decision": "block",
            "reason": verdict.reason.strip() or "blocked by policy",
        }
        if verdict.contexts and verdict.event == "PostToolUse":
            document["hookSpecificOutput"] = self._with_context({"hookEventName": verdict.event}, verdict)
        return _reply(document)

    @staticmethod
    def _with_context(specific: dict[str, Any], verdict: HookVerdict) -> dict[str, Any]:
        text = joined_contexts(verdict.contexts)
        if text:
            specific["additionalContext"] = text
        return specific


def already_seen(reason: str) -> str:
    """A PostToolUse refusal as it must read under Claude Code: what policy decided, then what
    actually happened to the output."""
    text = reason.strip() or "blocked by policy"
    return text if ALREADY_SEEN_NOTE in text else f"{text}. {ALREADY_SEEN_NOTE}"


def _reply(document: dict[str, Any]) -> HookReply:
    return HookReply(EXIT_OK, json_line(document))
