"""Small pieces every framework adapter needs: importing the framework with a useful error, and
turning a framework's tool output into the text rules see."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from dsh_policy.policy.runtime.auditing import canonical_domain

__all__ = [
    "MissingFrameworkError",
    "approval_outcome",
    "json_value",
    "missing",
    "text_of",
]


class MissingFrameworkError(ImportError):
    """The adapter's framework is not installed; the message names the extra that installs it."""


def missing(extra: str, error: ImportError) -> MissingFrameworkError:
    """The error an adapter module raises when its framework cannot be imported."""
    return MissingFrameworkError(
        f"this adapter needs the {extra!r} extra, which is not installed: "
        f"pip install 'dsh-policy[{extra}]' ({error})"
    )


def text_of(output: Any) -> str:
    """The text a rule's ``result.text`` sees for a framework output: a string as is; content
    blocks (``[{"type": "text", "text": ...}]``) joined by newlines; anything else as compact JSON
    (every string of it visible to secret scanning)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list | tuple) and output and all(_is_text_block(item) for item in output):
        return "\n".join(item if isinstance(item, str) else str(item["text"]) for item in output)
    return orjson.dumps(canonical_domain(output)).decode()


def _is_text_block(item: Any) -> bool:
    return isinstance(item, str) or (
        isinstance(item, Mapping) and item.get("type") == "text" and isinstance(item.get("text"), str)
    )


def json_value(output: Any) -> Any:
    """``output`` when it is a JSON value (what ``result.value`` may hold), else None."""
    try:
        orjson.dumps(output)
    except TypeError:
        return None
    return output


_APPROVE = frozenset({"approve", "approved", "allow", "allowed", "allowed-once", "yes", "accept"})
_REJECT = frozenset({"reject", "rejected", "deny", "denied", "no", "decline"})


def approval_outcome(answer: Any) -> str:
    """A human's answer in the shapes frameworks use (``True``/``False``, ``"approve"``, LangChain's
    ``{"type": "approve"}`` or ``{"decisions": [{"type": ...}]}``, ADK's ``{"confirmed": bool}``)
    as the harness's approval outcome. Anything unrecognised is ``unavailable``: it refuses."""
    if answer is True:
        return "allowed-once"
    if answer is False:
        return "rejected"
    if isinstance(answer, str):
        word = answer.strip().lower()
        return "allowed-once" if word in _APPROVE else "rejected" if word in _REJECT else "unavailable"
    if isinstance(answer, Mapping):
        decisions = answer.get("decisions")
        if isinstance(decisions, list | tuple) and len(decisions) == 1:
            return approval_outcome(decisions[0])
        if "type" in answer:
            return approval_outcome(answer["type"])
        if "confirmed" in answer:
            return approval_outcome(answer["confirmed"] is True)
        if "approved" in answer:
            return approval_outcome(answer["approved"] is True)
    return "unavailable"
