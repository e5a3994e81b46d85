"""Reviewing tool output *before* the harness sees it: the post-execute stage on a stream.

Claude Code cannot let a hook replace what a built-in tool returned, so a PostToolUse redaction
comes too late. A Bash call that is known to print a secret is therefore rewritten in PreToolUse
(:mod:`.secret_reads`) so that its output flows through ``dsh-policy redact-output``, which sends
it here chunk by chunk. Each chunk gets the same post-execute review a PostToolUse event would,
as the output of the call it belongs to:

- redactions: the chunk with every secret replaced (``[REDACTED:<type>]``) and a notice line;
- a block (say a private key, which the secrets pack withholds whole): the chunk is replaced by
  a notice that says it was withheld and why;
- nothing: the chunk unchanged.

Chunks that changed are recorded in the audit log (digests only, never the output).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock
from typing import Final

from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ResultVerdict, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.hooks.protocol.events import MAIN_AGENT, redacted_types, with_rules
from dsh_policy.policy.runtime.auditing import AuditUnavailableError, DecisionAuditor, sha256_digest

OUTPUT_EVENT: Final[str] = "RedactOutput"
NOTICE_PREFIX: Final[str] = "[dsh-policy"


@dataclass(frozen=True, slots=True)
class ReviewedChunk:
    """What replaces one chunk of output, and what the review found."""

    text: str
    action: str  # "pass", "redact" or "block"
    types: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()


class PendingCalls:
    """Calls whose output is being filtered, by call id (bounded: the oldest are forgotten), so
    a chunk is reviewed as the output of the call that printed it."""

    def __init__(self, limit: int = 1024) -> None:
        self._calls: OrderedDict[str, ToolCallEvent] = OrderedDict()
        self._limit = limit
        self._lock = Lock()

    def remember(self, event: ToolCallEvent) -> None:
        with self._lock:
            self._calls[event.call_id] = event
            self._calls.move_to_end(event.call_id)
            while len(self._calls) > self._limit:
                self._calls.popitem(last=False)

    def find(self, call_id: str, session_id: str) -> ToolCallEvent:
        """The remembered call, or a stand-in shell call with unknown arguments."""
        with self._lock:
            event = self._calls.get(call_id)
        if event is not None:
            return event
        return ToolCallEvent(
            tool="shell",
            args={"command": ""},
            call_id=call_id,
            root_call_id=call_id,
            session_id=session_id,
            agent_id=MAIN_AGENT,
            original_name="Bash",
        )


def review_chunk(policy: Policy, call: ToolCallEvent, text: str) -> tuple[ReviewedChunk, ResultVerdict]:
    """The post-execute review of one chunk of ``call``'s output."""
    # A stream has text only: value=None also keeps each secret counted once (not in text and value).
    verdict = policy.review_tool_result(ToolResultEvent(call=call, is_error=False, text=text, value=None))
    if verdict.decision == "block":
        reason = with_rules(verdict.message or "tool output withheld by policy", verdict.rules)
        size = len(text.encode("utf-8", "replace"))
        notice = f"{NOTICE_PREFIX} withheld {size} bytes of this output: {reason}]\n"
        return ReviewedChunk(notice, "block", rules=verdict.rules), verdict
    if verdict.redactions and verdict.redacted_text is not None:
        types = redacted_types(text, verdict.redacted_text) or ("secret",)
        count = verdict.redactions
        notice = (
            f"{NOTICE_PREFIX} withheld {count} secret{'s' if count != 1 else ''} ({', '.join(types)}) "
            "from this output, replaced in place]\n"
        )
        body = verdict.redacted_text
        if body and not body.endswith("\n"):
            body += "\n"
        return ReviewedChunk(body + notice, "redact", types, verdict.rules), verdict
    return ReviewedChunk(text, "pass", rules=verdict.rules), verdict


def record_chunk(
    auditor: DecisionAuditor, harness: str, call: ToolCallEvent, text: str, reviewed: ReviewedChunk
) -> None:
    """Record a chunk the review changed (raises AuditUnavailableError when fail-closed)."""
    auditor.hook_event(
        {
            "session": call.session_id,
            "agent": call.agent_id or MAIN_AGENT,
            "turn": 0,
            "step": 0,
            "hook": {"harness": harness, "event": OUTPUT_EVENT},
            "call": auditor.call_fields(call),
            "answer": {
                "action": reviewed.action,
                "rules": list(reviewed.rules),
                "types": list(reviewed.types),
            },
            "output_digest": sha256_digest(text.encode("utf-8", "replace")),
            "output_bytes": len(text.encode("utf-8", "replace")),
        }
    )


def withheld_notice(size: int, why: str) -> str:
    """What replaces output that could not be reviewed at all."""
    return f"{NOTICE_PREFIX} withheld {size} bytes of this output: it could not be reviewed ({why})]\n"


__all__ = [
    "OUTPUT_EVENT",
    "AuditUnavailableError",
    "PendingCalls",
    "ReviewedChunk",
    "record_chunk",
    "review_chunk",
    "withheld_notice",
]
