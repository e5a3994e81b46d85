"""How a refusal reads: the pseudo-rule id (``self-protection/<kind>``), the message, and the
limit beyond which a call is refused unread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from dsh_policy.policy.self_protection.locations import Protected

RULE_PREFIX: Final[str] = "self-protection"

KIND_TEXT: Final[Mapping[str, str]] = {
    "pack": "a rule pack this gateway enforces",
    "deployment": "this gateway's deployment file",
    "audit-log": "this gateway's audit log",
    "signing-key": "the audit log's signing key",
    "harness-settings": "the harness hook settings that run this gateway",
    "gateway-package": "the installed gateway itself",
    "gateway-runtime": "the resident gateway's runtime folder (its sockets, locks and token)",
    "policy-cache": "the compiled-policy cache (a policy kept there decides in place of the packs)",
    "operator": "a path the operator protected",
}

#: Most path-like strings examined in one call's arguments (beyond it, the call is refused).
MAX_CHECKED_WORDS: Final[int] = 20_000


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call was refused: the pseudo-rule id (``self-protection/<kind>``) and the message."""

    rule: str
    message: str


def message(action: str, what: str) -> str:
    return (
        f"dsh-policy self-protection: {action} ({what}). The agent may not change the gateway "
        "that guards it; an operator can, from outside the agent's session."
    )


def refusal(entry: Protected, action: str) -> Refusal:
    return Refusal(f"{RULE_PREFIX}/{entry.kind}", message(action, f"{entry.path}: {KIND_TEXT[entry.kind]}"))


def limit_message(tool: str) -> str:
    return (
        f"dsh-policy self-protection: {tool} names more than {MAX_CHECKED_WORDS} paths, "
        "too many to check; refusing"
    )
