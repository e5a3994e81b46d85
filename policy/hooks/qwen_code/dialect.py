"""How Qwen Code reads a command hook's answer, and how we spell each verdict for it.

Qwen Code (a Gemini CLI fork) took Claude Code's hook protocol: the same event names and payload
fields, exit 2 blocks with stderr as the reason, any other non-zero exit is a non-blocking error
(the call runs), and exit 0 stdout is one JSON object. Measured in the real 0.24 binary:

- ``deny`` is exit 2 with the reason on stderr (the call does not run);
- ``ask`` is ``permissionDecision: "ask"``: the TUI asks the user; headless runs, which cannot
  ask, refuse the call;
- ``redact`` is not possible: a PostToolUse answer cannot change what the model sees (neither
  ``decision: "block"`` nor exit 2 withholds the output, and there is no ``updatedToolOutput``).
  The Claude Code workaround is sent (a shell call naming a file that holds a secret is
  rewritten with ``updatedInput`` to stream its output through our redactor), but 0.24.4 does not
  apply ``updatedInput`` at all (measured with and without ``permissionDecision: "allow"``), so
  the output reaches the model; the block after the fact says so.
  A ``read_file`` of a file that holds a secret is refused before it runs.
"""

from __future__ import annotations

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
    "dsh-policy could not withhold this output: Qwen Code passes a tool's output to the model "
    "whatever a PostToolUse hook answers, so it has already reached you; do not repeat, store or "
    "send what policy flagged."
)


class QwenCodeDialect:
    """Renders verdicts into Qwen Code's command-hook protocol."""

    name = "qwen-code"

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for one verdict (exit code 0 or 2 only)."""
        event = verdict.event
        if event is None or verdict.action == "deny":
            return deny_reply(verdict.reason)
        if verdict.action == "ask" and event == "PreToolUse":
            reason = verdict.reason.strip() or "dsh-policy asks for approval"
            return _reply(
                {
                    "hookSpecificOutput": {
                        "hookEventName": event,
                        "permissionDecision": "ask",
                        "permissionDecisionReason": reason,
                    }
                }
            )
        if verdict.action == "halt":
            return _reply({"continue": False, "stopReason": verdict.reason.strip() or FAIL_CLOSED_PREFIX})
        if verdict.action == "rewrite" and event == "PreToolUse" and verdict.updated_input is not None:
            return _reply(
                {"hookSpecificOutput": {"hookEventName": event, "updatedInput": dict(verdict.updated_input)}}
            )
        if verdict.action == "redact" and event == "PostToolUse":
            found = RedactionNotice(verdict.redacted_types).found_text()
            return _reply({"decision": "block", "reason": f"{found}. {ALREADY_SEEN_NOTE}"})
        if verdict.action == "block" and event == "PostToolUse":
            return _reply({"decision": "block", "reason": f"{verdict.reason.strip()}. {ALREADY_SEEN_NOTE}"})
        if verdict.action == "block" and event == "UserPromptSubmit":
            return _reply({"decision": "block", "reason": verdict.reason.strip() or "blocked by policy"})
        if verdict.action == "pass":
            text = joined_contexts(verdict.contexts)
            if text and event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"):
                return _reply({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
            return HookReply(EXIT_OK)
        return deny_reply(verdict.reason or f"dsh-policy: {verdict.action} on {event}")


def _reply(document: dict[str, Any]) -> HookReply:
    return HookReply(EXIT_OK, json_line(document))
