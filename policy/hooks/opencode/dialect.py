"""How our OpenCode plugin reads an answer, and how we spell each verdict for it.

OpenCode has no command hooks: its plugins' ``tool.execute.before``/``tool.execute.after``
functions see every tool call (MCP tools included) and may throw (the call is refused, the error
is what the model sees), rewrite the arguments, or rewrite the output. Our plugin
(``dsh-policy.js``) sends each one to ``dsh-policy hook opencode`` as a ``PreToolUse`` /
``PostToolUse`` payload and applies the answer; anything it cannot read fails closed (it throws,
or replaces the output with the failure). So this dialect spells the plain subset:

- ``deny`` is exit 2 with the reason on stderr;
- ``ask`` is a denial that says a person must approve: a plugin cannot open OpenCode's
  permission prompt from ``tool.execute.before`` (the prompt belongs to OpenCode's own
  ``permission`` settings, which ``init opencode`` leaves to the user);
- ``redact`` is real: ``hookSpecificOutput.updatedToolOutput`` replaces the output the model sees;
- ``block`` is ``decision: "block"`` (the output is replaced by the reason); ``halt`` is
  ``continue: false``; ``rewrite`` is ``updatedInput``.
"""

from __future__ import annotations

import json
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

ASK_DEGRADED_SUFFIX: Final[str] = (
    " (policy asks for human approval, which an OpenCode plugin cannot request; the call is denied)"
)


class OpenCodeDialect:
    """Renders verdicts for the dsh-policy OpenCode plugin."""

    name = "opencode"

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for one verdict (exit code 0 or 2 only)."""
        event = verdict.event
        if event is None or verdict.action == "deny":
            return deny_reply(verdict.reason)
        if verdict.action == "ask":
            return deny_reply((verdict.reason or "approval required") + ASK_DEGRADED_SUFFIX)
        if verdict.action == "halt":
            return _reply({"continue": False, "stopReason": verdict.reason.strip() or FAIL_CLOSED_PREFIX})
        if verdict.action == "rewrite" and event == "PreToolUse" and verdict.updated_input is not None:
            return _reply(
                {"hookSpecificOutput": {"hookEventName": event, "updatedInput": dict(verdict.updated_input)}}
            )
        if verdict.action == "redact" and event == "PostToolUse":
            text = (
                _text(verdict.redacted_output)
                if verdict.redacted_output is not None
                else (RedactionNotice(verdict.redacted_types).text())
            )
            return _reply({"hookSpecificOutput": {"hookEventName": event, "updatedToolOutput": text}})
        if verdict.action == "block" and event in ("PostToolUse", "UserPromptSubmit"):
            return _reply({"decision": "block", "reason": verdict.reason.strip() or "blocked by policy"})
        if verdict.action == "pass":
            text = joined_contexts(verdict.contexts)
            if text and event == "PostToolUse":
                return _reply({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
            return HookReply(EXIT_OK)
        return deny_reply(verdict.reason or f"dsh-policy: {verdict.action} on {event}")


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("output"), str):
        return str(output["output"])
    return json.dumps(output, ensure_ascii=False)


def _reply(document: dict[str, Any]) -> HookReply:
    return HookReply(EXIT_OK, json_line(document))
