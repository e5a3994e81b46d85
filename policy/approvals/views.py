"""The queue as people read it: rows for ``dsh-policy approvals`` and the web console.

Both show the same facts from the same functions: the call (tool and its command, path or URL),
the rules that asked and their message, and whether each stored decision or grant actually counts
(its signature checked against the approvers file now, not the status someone wrote).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from dsh_policy.policy.approvals.binding import call_subject
from dsh_policy.policy.approvals.queue import ApprovalQueue, iso

_DURATION: Final = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNITS: Final[Mapping[str, int]] = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int | None:
    """``90``, ``90s``, ``30m``, ``2h``, ``1d`` as seconds (None: not a duration)."""
    found = _DURATION.match(text)
    if found is None:
        return None
    seconds = int(found.group(1)) * _UNITS[found.group(2)]
    return seconds if seconds > 0 else None


def request_view(queue: ApprovalQueue, request: Mapping[str, Any], now: int) -> dict[str, Any]:
    """One request with its call, rules, message and each decision's standing."""
    binding = request.get("binding", {})
    state, approvers, _ = queue.effective(request, now)
    status = str(request.get("status"))
    if status == "pending" and now >= int(request.get("expires", 0)):
        status = "expired"
    return {
        "id": request.get("id"),
        "status": status,
        "counts": state,
        "approved_by": approvers,
        "created": iso(request.get("created")),
        "expires": iso(request.get("expires")),
        "harness": binding.get("harness"),
        "session": binding.get("session"),
        "agent": binding.get("agent"),
        "tool": binding.get("tool"),
        "call": call_subject(str(binding.get("tool")), binding.get("args")),
        "args": binding.get("args"),
        "rules": list(binding.get("rules", ())),
        "message": request.get("message"),
        "policy_digest": binding.get("policy_digest"),
        "binding": request.get("digest"),
        "why": request.get("why"),
        "decisions": [
            {
                "approver": decision.get("approver"),
                "verdict": decision.get("verdict"),
                "issued": iso(decision.get("issued")),
                "expires": iso(decision.get("expires")),
                "reason": decision.get("reason"),
                "counts": queue.decision_problem(decision, request, now) is None,
                "problem": queue.decision_problem(decision, request, now),
            }
            for decision in request.get("decisions", ())
            if isinstance(decision, Mapping)
        ],
    }


def grant_view(queue: ApprovalQueue, grant: Mapping[str, Any], now: int) -> dict[str, Any]:
    """One grant with its scope and whether it holds now."""
    problem = queue.grant_problem(grant, now)
    return {
        "id": grant.get("id"),
        "status": grant.get("status") if grant.get("status") != "active" or problem is None else "expired",
        "holds": problem is None,
        "problem": problem,
        "rules": list(grant.get("rules", ())),
        "session": grant.get("session"),
        "agent": grant.get("agent"),
        "tool": grant.get("tool"),
        "match": grant.get("match"),
        "approver": grant.get("approver"),
        "issued": iso(grant.get("issued")),
        "until": iso(grant.get("until")),
        "uses": grant.get("uses", 0),
        "reason": grant.get("reason") or None,
        "revoked_by": grant.get("revoked_by"),
    }


def queue_view(queue: ApprovalQueue, now: int, *, history: bool = False) -> dict[str, Any]:
    """Pending requests and holding grants (everything with ``history``), newest first."""
    document = queue.snapshot()
    requests = [request_view(queue, r, now) for r in document["requests"].values()]
    grants = [grant_view(queue, g, now) for g in document["grants"].values()]
    if not history:
        requests = [r for r in requests if r["status"] == "pending"]
        grants = [g for g in grants if g["holds"]]
    requests.sort(key=lambda r: str(r["created"]), reverse=True)
    grants.sort(key=lambda g: str(g["issued"]), reverse=True)
    return {"queue": str(queue.store.path), "requests": requests, "grants": grants}


def scope_text(grant: Mapping[str, Any]) -> str:
    """``rules vcs/* in session s1, tool shell, matching 'git push .*'``."""
    parts = [f"rules {', '.join(grant['rules'])}"]
    for field, label in (("session", "in session"), ("agent", "for agent"), ("tool", "tool")):
        if grant.get(field):
            parts.append(f"{label} {grant[field]}")
    if grant.get("match"):
        parts.append(f"matching {grant['match']!r}")
    return ", ".join(parts)
