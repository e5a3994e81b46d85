"""How a settled call reads on a terminal: the one word (``DENY``, ``ALLOW``, ...) and its rules.

``dsh-policy run`` and the framework examples (``examples/frameworks/``) print decisions the same
way, so the label and the deciding rules live here, outside the command line, where the framework
adapters' users can reach them without importing ``policy.cli``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dsh_policy.audit.terminal import Painter
from dsh_policy.policy.runtime.auditing import CallOutcome, PolicyFacts

__all__ = ["brief_args", "call_line", "deciding", "outcome_label", "plain", "redacted_args"]

_ARG_KEYS = ("command", "path", "url", "channel")
#: Labels of calls whose tool body ran (their context messages reached the model).
RAN = frozenset({"ALLOW", "ASK>OK", "REDACT"})


def plain(value: Any) -> Any:
    """JSON-ready copy of (possibly frozen) call arguments."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def redacted_args(policy: PolicyFacts, args: Any) -> Any:
    """A call's arguments as the audit log keeps them: redacted (the terminal is an exit too)."""
    redacted, _ = policy.redact_arguments(args)
    return plain(redacted)


def brief_args(redacted: Any) -> str:
    """One line for a call's (already redacted) arguments."""
    if isinstance(redacted, dict):
        for key in _ARG_KEYS:
            if isinstance(redacted.get(key), str):
                text = redacted[key]
                break
        else:
            text = json.dumps(redacted, ensure_ascii=False)
    else:
        text = json.dumps(redacted, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= 72 else text[:69] + "..."


def outcome_label(outcome: CallOutcome) -> str:
    """The one word a reader scans for: what happened to the call."""
    review = outcome.review
    if outcome.guard is not None and outcome.guard.denied:
        return "DENY"
    if outcome.denied_by == "approval":
        return "ASK>DENY"
    if outcome.denied_by is not None:
        return "DENY"
    if outcome.pre_execute is not None and outcome.pre_execute.decision == "ask":
        return "ASK>OK"
    if review is not None and review.decision == "block":
        return "BLOCK"
    if review is not None and review.redactions:
        return "REDACT"
    if outcome.result.is_error:
        return "ERROR"
    return "ALLOW"


def deciding(outcome: CallOutcome) -> tuple[list[str], str | None]:
    """The rules and message that explain the label."""
    if outcome.guard is not None and outcome.guard.denied:
        return list(outcome.guard.rules), outcome.guard.message
    review = outcome.review
    if review is not None and (review.decision == "block" or review.redactions):
        return list(review.rules), review.message or f"{review.redactions} redaction(s)"
    pre = outcome.pre_execute
    if pre is not None and (pre.decision != "allow" or pre.rules):
        return list(pre.rules), pre.message
    if outcome.result.is_error:
        return [], outcome.result.error_message
    return [], None


def call_line(
    outcome: CallOutcome,
    policy: PolicyFacts,
    paint: Painter | None = None,
    asked: Sequence[str] = (),
) -> str:
    """The lines ``dsh-policy run`` prints for one settled call (label, tool, arguments, approval
    answers, rules, message, context count)."""
    paint = paint or Painter(False)
    label = outcome_label(outcome)
    rules, message = deciding(outcome)
    args = redacted_args(policy, outcome.call.args)
    line = f"    {paint.decision(label, 8)} {outcome.call.tool:<12} {brief_args(args)}"
    for answer in asked:
        line += f"\n             {answer}"
    if rules:
        line += f"\n             rules: {paint.rules(rules)}"
    if message:
        line += f"\n             {message}"
    if outcome.review is not None and outcome.review.contexts and label in RAN:
        line += f"\n             + {len(outcome.review.contexts)} context message(s) for the model"
    return line
