"""From policy options to a ready gate: the one place the MCP proxy meets the deployment.

The proxy records through the deployment's own auditor (:func:`~dsh_policy.policy.runtime.deployment.deploy`),
so its decisions, policy loads and reloads land in the same hash-chained log, with the same
``--audit`` meaning as ``dsh-policy hook``: the flag names the log and makes a failed write refuse;
a deployment file's ``audit:`` block supplies the rest. What cannot be set up becomes the gate's
``unavailable`` reason: the proxy still answers its client, and refuses every call with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.mcp.gate import McpGate
from dsh_policy.policy.mcp.listing import qualified_name
from dsh_policy.policy.mcp.pins import PinBook, pin_file_for
from dsh_policy.policy.redaction import all_detector_redactions, redact_value
from dsh_policy.policy.runtime.audit_plan import AuditPlan, audit_plan, open_audit_writer
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from dsh_policy.policy.runtime.deployment import Deployment, deploy

_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a server in ``mcp__<server>__<tool>``, or None."""
    if not _SERVER_NAME.fullmatch(name) or "__" in name:
        return f"server name {name!r}: use letters, digits, '-' and single '_' (it becomes mcp__{name}__TOOL)"
    return None


def audit_target(flag: str | None, sources: PolicySources) -> AuditPlan | None:
    """``--audit LOG`` names the log and makes a failed write refuse (the operator asked for a
    record of every decision); a deployment file's ``audit:`` supplies the rest."""
    return audit_plan(sources, path=flag, fail_closed=True if flag is not None else None)


def pins_path(explicit: str | None, plan: AuditPlan | None) -> Path | None:
    """The pin file: ``--pins``, else beside the audit log, else none (session-only pins)."""
    if explicit is not None:
        return Path(explicit)
    return pin_file_for(plan.path) if plan is not None else None


@dataclass(slots=True)
class ProxySetup:
    """A gate and the deployment behind it (None when the policy is unavailable)."""

    gate: McpGate
    deployment: Deployment | None

    def close(self) -> None:
        if self.deployment is not None:
            self.deployment.close()


def _first(errors: Sequence[PolicyError]) -> str:
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{errors[0]}{more}" if errors else "unknown error"


def open_gate(
    server: str,
    sources: PolicySources | Sequence[PolicyError],
    *,
    audit: str | None = None,
    pins: str | None = None,
    watch: bool = True,
) -> ProxySetup:
    """The gate for ``server``. Never raises for bad policy or an unwritable log: those make a
    gate that refuses every call and says why (fail closed, and the client is told)."""
    if not isinstance(sources, PolicySources):
        book = PinBook(server, Path(pins) if pins else None)
        return ProxySetup(McpGate(server, None, None, book, unavailable=_first(sources)), None)
    plan = audit_target(audit, sources)
    book = PinBook(server, pins_path(pins, plan))
    deployed = deploy(sources, audit=plan, watch=watch)
    if not isinstance(deployed, Deployment):
        return ProxySetup(McpGate(server, None, None, book, unavailable=_first(deployed)), None)
    gate = McpGate(server, deployed.policy, deployed.auditor, book)
    if sources.config is not None and sources.config.approvals is not None:
        gate.approvals = ApprovalChannel(sources.config.approvals)
    return ProxySetup(gate, deployed)


class _OperatorFacts:
    """The policy facts of a record an operator's command writes (no policy decided it)."""

    digest = "none"
    engine_name = "none"

    def redact_arguments(self, args: Any) -> tuple[Any, int]:
        return redact_value(args, all_detector_redactions())


def record_approval(plan: AuditPlan, server: str, tool: str, old: str | None, new: str) -> None:
    """An ``mcp_tool`` record of an operator's approval, in the log the proxy writes to (the
    writer's OS lock makes this safe while a proxy holds the log open)."""
    writer = open_audit_writer(plan)
    try:
        DecisionAuditor(writer, _OperatorFacts(), fail_closed=True).adapter_event(
            "mcp_tool",
            {
                "server": server,
                "tool": qualified_name(server, tool),
                "event": "approved",
                "digest": new,
                "pinned_digest": old,
            },
        )
    finally:
        writer.close()
