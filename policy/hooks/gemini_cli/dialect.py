"""How Gemini CLI reads a command hook's answer, and how we spell each verdict for it.

Gemini CLI (hooks reference, and its hook runner in the 0.61 bundle): the hook gets one JSON object
on stdin, named ``BeforeTool``/``AfterTool``/``BeforeAgent``/``AfterAgent``/``SessionStart``; its
stdout, when it parses as a JSON object, is the answer *whatever the exit code*; otherwise exit 2
turns stderr into ``decision: "deny"``, exit 1 is a warning (the call runs), and any other non-zero
exit also denies. A hook that times out or cannot be spawned counts as no answer: the call runs.

- ``deny`` is exit 2 with the reason on stderr (``Tool execution blocked: <reason>`` to the model).
- ``ask`` is ``decision: "ask"``: the client asks the user (``ask_user``); headless runs, which
  cannot ask, refuse the call.
- ``redact`` is real: on ``AfterTool``, ``decision: "deny"`` *replaces* the tool result the model
  sees with ``reason``, so the reason is the redacted output itself.
- ``block`` on ``AfterTool``/``BeforeAgent`` is ``decision: "deny"`` (result replaced / prompt
  dropped); ``halt`` is ``continue: false``.

:func:`canonical_input` renames Gemini CLI's events to the ones :mod:`..protocol.messages` knows,
so the same decision code serves every harness.
"""

from __future__ import annotations

import json
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

#: Gemini CLI's event name -> ours. Events not listed are refused (exit 2) if ever wired.
EVENTS: Final[Mapping[str, str]] = {
    "SessionStart": "SessionStart",
    "BeforeAgent": "UserPromptSubmit",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "AfterAgent": "Stop",
}
OWN_NAMES: Final[Mapping[str, str]] = {ours: theirs for theirs, ours in EVENTS.items()}


def canonical_input(raw: bytes) -> bytes:
    """The payload with Gemini CLI's event name replaced by ours (``AfterAgent``'s
    ``prompt_response`` becomes ``last_assistant_message``). Input that is not a JSON object with a
    known event is returned unchanged, so the strict parser reports what is wrong with it."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(document, dict) or document.get("hook_event_name") not in EVENTS:
        return raw
    document["hook_event_name"] = EVENTS[document["hook_event_name"]]
    if document["hook_event_name"] == "Stop" and "prompt_response" in document:
        document.setdefault("last_assistant_message", document.get("prompt_response"))
    return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")


def output_text(output: Any) -> str:
    """What the model would read of a (redacted) tool response: its ``llmContent`` when it is
    text, else the whole value as JSON."""
    if isinstance(output, Mapping) and isinstance(output.get("llmContent"), str):
        return str(output["llmContent"])
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False)


class GeminiCliDialect:
    """Renders verdicts into Gemini CLI's command-hook protocol."""

    name = "gemini-cli"

    def canonical_input(self, raw: bytes) -> bytes:
        """See :func:`canonical_input`."""
        return canonical_input(raw)

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for one verdict (exit code 0 or 2 only)."""
        event = verdict.event
        if event is None or verdict.action == "deny":
            return deny_reply(verdict.reason)
        if verdict.action == "ask" and event == "PreToolUse":
            return _reply(
                {
                    "decision": "ask",
                    "reason": verdict.reason.strip() or "dsh-policy asks for approval",
                    "systemMessage": verdict.reason.strip() or "dsh-policy asks for approval",
                }
            )
        if verdict.action == "halt":
            return _reply({"continue": False, "stopReason": verdict.reason.strip() or FAIL_CLOSED_PREFIX})
        if verdict.action == "redact" and event == "PostToolUse":
            names = ", ".join(verdict.redacted_types) or "secret"
            text = (
                output_text(verdict.redacted_output)
                if verdict.redacted_output is not None
                else (RedactionNotice(verdict.redacted_types).text())
            )
            return _reply(
                {
                    "decision": "deny",
                    "reason": text,
                    "systemMessage": f"dsh-policy redacted {names} material from this tool output",
                }
            )
        if verdict.action == "block" and event in ("PostToolUse", "UserPromptSubmit"):
            return _reply({"decision": "deny", "reason": verdict.reason.strip() or "blocked by policy"})
        if verdict.action == "pass":
            text = joined_contexts(verdict.contexts)
            if text and event in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
                return _reply(
                    {"hookSpecificOutput": {"hookEventName": OWN_NAMES[event], "additionalContext": text}}
                )
            return HookReply(EXIT_OK)
        return deny_reply(verdict.reason or f"dsh-policy: {verdict.action} on {event}")


def _reply(document: dict[str, Any]) -> HookReply:
    return HookReply(EXIT_OK, json_line(document))
