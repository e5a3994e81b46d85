"""Rule packs (YAML + CEL) compiled into harness decisions: the API embedders import.

Everything an embedder needs is importable from here; the modules behind it are free to move.
Names are imported on first use (PEP 562), so ``import dsh_policy.policy`` costs nothing and a
hook client that only needs one corner never pays for the rest. Embedding the gateway::

    from dsh_policy.audit import AuditWriter
    from dsh_policy.core import Harness
    from dsh_policy.policy import DecisionAuditor, LoadFailure, Policy, PolicyGateway

    policy = Policy.load(["rules/baseline.yaml", "rules/secrets.yaml"])    # or a LoadFailure
    assert not isinstance(policy, LoadFailure), str(policy)
    writer = AuditWriter.open("audit.jsonl", fsync="batch")
    harness = Harness()
    harness.plugin(PolicyGateway(policy, auditor=DecisionAuditor(writer, policy)))

Deciding without a harness (any tool-calling loop)::

    from dsh_policy.policy import Policy, ToolCallEvent

    decider = policy.current()                 # one compiled policy for the whole call
    verdict = decider.check_tool_call(ToolCallEvent("shell", {"command": "rm -rf /"}))
    verdict.decision, verdict.rules, verdict.policy_digest

Layout: ``source/`` (YAML with positions, the shipped JSON Schemas), ``pack``/``compile``/``cel/``
(loading and compiling rules), ``stages`` (the stage table), ``events``/``decide`` (the decision
API), ``self_protection/`` (what the agent may not change, and the check of every call),
``runtime/`` (gateway plugins, auditing, reload, deployment), ``hooks/`` (Claude Code and
Codex command hooks), ``demo/`` (the scripted demo sandbox) and ``cli/`` (one module per command).
"""

from __future__ import annotations

import importlib

# Not ``from typing import ...``: typing imports re, enum and collections, which is most of what a
# hook event would pay for importing this package (hooks/gateway/client.py runs on every tool call).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_EXPORTS: dict[str, str] = {
    # loading and the decision API
    "Policy": ".decide",
    "Decider": ".decide",
    "DEFAULT_EVENT_SECONDS": ".decide",
    "DEFAULT_MAX_SCAN_BYTES": ".decide",
    "LoadFailure": ".loading",
    "PackInfo": ".loading",
    "build_policy": ".loading",
    "CompiledPolicy": ".compiled",
    "PolicyError": ".errors",
    # events and verdicts
    "StepEvent": ".events",
    "StepMessage": ".events",
    "ToolCallEvent": ".events",
    "ToolResultEvent": ".events",
    "StepVerdict": ".events",
    "ToolCallVerdict": ".events",
    "GuardVerdict": ".events",
    "ResultVerdict": ".events",
    "RuleTrace": ".events",
    "PolicyStamp": ".events",
    # stages
    "STAGE_TABLE": ".stages",
    "StageSpec": ".stages",
    # deployment files and the gateway runtime
    "PolicySources": ".config",
    "GatewayConfig": ".config",
    "load_gateway_config": ".config",
    "policy_sources": ".config",
    "PolicyGateway": ".runtime.gateway",
    "GatewayObserver": ".runtime.gateway",
    "DecisionAuditor": ".runtime.auditing",
    "CallOutcome": ".runtime.auditing",
    "ResultFacts": ".runtime.auditing",
    "AuditUnavailableError": ".runtime.auditing",
    "ReloadingPolicy": ".runtime.reload",
    "AuditPlan": ".runtime.audit_plan",
    "audit_plan": ".runtime.audit_plan",
    "Deployment": ".runtime.deployment",
    "deploy": ".runtime.deployment",
    # CEL engines
    "available_engines": ".cel",
    "make_engine": ".cel",
    # reviewing a policy change: replay an audit log, diff two policies
    "replay_log": ".review.replay",
    "ReplayReport": ".review.report",
    "ReplayRefusal": ".review.report",
    "diff_policies": ".review.diff",
    "load_policy_file": ".review.diff",
    "PolicyDiff": ".review.diff",
}

if TYPE_CHECKING:  # the names as static tools see them
    from .cel import available_engines, make_engine
    from .compiled import CompiledPolicy
    from .config import GatewayConfig, PolicySources, load_gateway_config, policy_sources
    from .decide import DEFAULT_EVENT_SECONDS, DEFAULT_MAX_SCAN_BYTES, Decider, Policy
    from .errors import PolicyError
    from .events import (
        GuardVerdict,
        PolicyStamp,
        ResultVerdict,
        RuleTrace,
        StepEvent,
        StepMessage,
        StepVerdict,
        ToolCallEvent,
        ToolCallVerdict,
        ToolResultEvent,
    )
    from .loading import LoadFailure, PackInfo, build_policy
    from .review.diff import PolicyDiff, diff_policies, load_policy_file
    from .review.replay import replay_log
    from .review.report import ReplayRefusal, ReplayReport
    from .runtime.audit_plan import AuditPlan, audit_plan
    from .runtime.auditing import AuditUnavailableError, CallOutcome, DecisionAuditor, ResultFacts
    from .runtime.deployment import Deployment, deploy
    from .runtime.gateway import GatewayObserver, PolicyGateway
    from .runtime.reload import ReloadingPolicy
    from .stages import STAGE_TABLE, StageSpec


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "DEFAULT_EVENT_SECONDS",
    "DEFAULT_MAX_SCAN_BYTES",
    "STAGE_TABLE",
    "AuditPlan",
    "AuditUnavailableError",
    "CallOutcome",
    "CompiledPolicy",
    "Decider",
    "DecisionAuditor",
    "Deployment",
    "GatewayConfig",
    "GatewayObserver",
    "GuardVerdict",
    "LoadFailure",
    "PackInfo",
    "Policy",
    "PolicyDiff",
    "PolicyError",
    "PolicyGateway",
    "PolicySources",
    "PolicyStamp",
    "ReloadingPolicy",
    "ReplayRefusal",
    "ReplayReport",
    "ResultFacts",
    "ResultVerdict",
    "RuleTrace",
    "StageSpec",
    "StepEvent",
    "StepMessage",
    "StepVerdict",
    "ToolCallEvent",
    "ToolCallVerdict",
    "ToolResultEvent",
    "audit_plan",
    "available_engines",
    "build_policy",
    "deploy",
    "diff_policies",
    "load_gateway_config",
    "load_policy_file",
    "make_engine",
    "policy_sources",
    "replay_log",
]
