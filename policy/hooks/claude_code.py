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
- ``redact``: Claude Code can replace the output of MCP tools only (``updatedMCPToolOutput``); for
  built-in tools the output cannot be rewritten, so the result is blocked with a message naming the
  secret types. A PostToolUse block tells the model to disregard the output; the tool has run.
- ``halt`` is ``continue: false`` with ``stopReason`` (shown to the user).
"""

from __future__ import annotations

from typing import Any, Final

from dsh_policy.policy.hooks.protocol import (
    EXIT_OK,
    FAIL_CLOSED_PREFIX,
    HookReply,
    HookVerdict,
    RedactionNotice,
    deny_reply,
    joined_contexts,
    json_line,
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
        if verdict.action == "redact" and event == "PostToolUse":
            if verdict.tool_name is not None and verdict.tool_name.startswith("mcp__"):
                specific = {"hookEventName": event, "updatedMCPToolOutput": verdict.redacted_output}
                return _reply({"hookSpecificOutput": self._with_context(specific, verdict)})
            notice = RedactionNotice(verdict.redacted_types).text()
            return self._block(HookVerdict(event, "block", notice, verdict.contexts))
        if verdict.action == "block" and event in ("PostToolUse", "UserPromptSubmit"):
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


def _reply(document: dict[str, Any]) -> HookReply:
    return HookReply(EXIT_OK, json_line(document))
