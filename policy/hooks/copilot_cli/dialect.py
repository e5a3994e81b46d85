"""How GitHub Copilot CLI reads a command hook's answer, and how we spell each verdict for it.

Copilot CLI loads ``.github/hooks/*.json``. Events configured with PascalCase names
(``PreToolUse``, ``PostToolUse``, ``SessionStart``) get Claude-style payloads: ``hook_event_name``,
``session_id``, ``tool_name`` (Claude's names: ``Bash``, ``Read``, ...) and ``tool_input`` (Copilot's
own argument fields: ``path``, ``file_text``, ``old_str``...); a PostToolUse carries
``tool_result: {result_type, text_result_for_llm}`` where Claude Code has ``tool_response``.
Measured in the real 1.0.102 binary, driven offline:

- ``deny``: ``permissionDecision: "deny"`` with ``permissionDecisionReason`` (the model reads
  "Denied by preToolUse hook: <reason>"). Exit 2 also denies, but stderr is ignored: the reason
  must be in stdout, so a deny is exit 2 *and* the JSON;
- ``ask``: ``permissionDecision: "ask"``: the TUI asks; a prompt-mode run (``-p``), with nobody
  to ask, refuses the call;
- ``rewrite``: ``modifiedArgs`` replaces the arguments (no ``permissionDecision``, so Copilot's
  own permission check still applies);
- ``redact`` is real: ``modifiedResult: {resultType, textResultForLlm}`` replaces the output the
  model sees (documented for SDK hooks only; the binary honours it for command hooks too);
- ``block`` after a call is ``decision: "block"`` ("Tool result blocked: <reason>");
- context after a call is a top-level ``additionalContext`` (appended to the result).

SessionStart and Stop answers cannot stop the session, so ``halt`` is a refusal that only shows in
Copilot's log; the tool-call events, which can refuse, are where the gateway's decisions land.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from dsh_policy.policy.hooks.protocol.messages import (
    EXIT_BLOCK,
    EXIT_OK,
    FAIL_CLOSED_PREFIX,
    HookReply,
    HookVerdict,
    RedactionNotice,
    joined_contexts,
    json_line,
)

#: The events ``init copilot-cli`` wires, in Copilot's PascalCase (which selects Claude-style
#: payloads); Copilot's own camelCase names would send a different payload.
WIRED_EVENTS: Final[tuple[str, ...]] = ("SessionStart", "PreToolUse", "PostToolUse")


def canonical_input(raw: bytes) -> bytes:
    """The payload with ``tool_result`` (PostToolUse) renamed to our ``tool_response``: the text
    the model would read (``text_result_for_llm``), else the whole result. Anything that is not a
    JSON object is returned unchanged, so the strict parser reports what is wrong with it."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(document, dict) or "tool_result" not in document or "tool_response" in document:
        return raw
    result = document.pop("tool_result")
    text = result.get("text_result_for_llm") if isinstance(result, Mapping) else None
    document["tool_response"] = text if isinstance(text, str) else result
    return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")


def output_text(output: Any) -> str:
    """What the model reads of a (redacted) tool response."""
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping) and isinstance(output.get("text_result_for_llm"), str):
        return str(output["text_result_for_llm"])
    return json.dumps(output, ensure_ascii=False)


def refusal(reason: str) -> HookReply:
    """Exit 2 with the reason both where Copilot reads it (stdout JSON) and on stderr. The JSON
    also says ``decision: "block"``, so the same answer withholds a result after a call."""
    text = reason.strip() or FAIL_CLOSED_PREFIX
    document = {
        "permissionDecision": "deny",
        "permissionDecisionReason": text,
        "decision": "block",
        "reason": text,
    }
    return HookReply(
        EXIT_BLOCK, json_line(document), text.encode("utf-8", "backslashreplace").decode() + "\n"
    )


class CopilotCliDialect:
    """Renders verdicts into Copilot CLI's command-hook protocol."""

    name = "copilot-cli"

    def canonical_input(self, raw: bytes) -> bytes:
        """See :func:`canonical_input`."""
        return canonical_input(raw)

    def render(self, verdict: HookVerdict) -> HookReply:
        """The reply for one verdict (exit code 0 or 2 only)."""
        event = verdict.event
        if event is None or verdict.action in ("deny", "halt"):
            return refusal(verdict.reason)
        if verdict.action == "ask" and event == "PreToolUse":
            reason = verdict.reason.strip() or "dsh-policy asks for approval"
            return _reply({"permissionDecision": "ask", "permissionDecisionReason": reason})
        if verdict.action == "rewrite" and event == "PreToolUse" and verdict.updated_input is not None:
            return _reply({"modifiedArgs": dict(verdict.updated_input)})
        if verdict.action == "redact" and event == "PostToolUse":
            text = (
                output_text(verdict.redacted_output)
                if verdict.redacted_output is not None
                else RedactionNotice(verdict.redacted_types).text()
            )
            return _reply({"modifiedResult": {"resultType": "success", "textResultForLlm": text}})
        if verdict.action == "block" and event == "PostToolUse":
            return _reply({"decision": "block", "reason": verdict.reason.strip() or "blocked by policy"})
        if verdict.action == "pass":
            text = joined_contexts(verdict.contexts)
            if text and event in ("SessionStart", "PostToolUse"):
                return _reply({"additionalContext": text})
            return HookReply(EXIT_OK)
        return refusal(verdict.reason or f"dsh-policy: {verdict.action} on {event}")


def _reply(document: dict[str, Any]) -> HookReply:
    return HookReply(EXIT_OK, json_line(document))
