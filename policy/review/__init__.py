"""Reviewing a policy change before it ships: replay an audit log's decisions, diff two policies.

The functions ``dsh-policy replay`` and ``dsh-policy diff`` call, for embedders::

    from dsh_policy.policy.review import diff_policies, load_policy_file, replay_log

    candidate = load_policy_file("gateway.yaml")          # a pack or a deployment file
    report = replay_log(["audit.jsonl"], candidate)      # verifies the log first
    for change in report.changes:                        # (a ReplayRefusal if it fails)
        print(change.to_json())

Names import lazily (PEP 562), so importing this package costs nothing until a name is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_policy.policy.fingerprint import rule_fingerprints

    from .diff import PolicyDiff, RuleChange, diff_policies, load_policy_file
    from .records import LogReader, RecordedDecision
    from .replay import replay_log
    from .replayer import Replayer
    from .report import BlindRule, ReplayedDecision, ReplayRefusal, ReplayReport, ReplaySummary

_HOMES = {
    "PolicyDiff": "diff",
    "RuleChange": "diff",
    "diff_policies": "diff",
    "load_policy_file": "diff",
    "rule_fingerprints": "dsh_policy.policy.fingerprint",
    "LogReader": "records",
    "RecordedDecision": "records",
    "replay_log": "replay",
    "Replayer": "replayer",
    "BlindRule": "report",
    "ReplayedDecision": "report",
    "ReplayRefusal": "report",
    "ReplayReport": "report",
    "ReplaySummary": "report",
}

__all__ = [
    "BlindRule",
    "LogReader",
    "PolicyDiff",
    "RecordedDecision",
    "ReplayRefusal",
    "ReplayReport",
    "ReplaySummary",
    "ReplayedDecision",
    "Replayer",
    "RuleChange",
    "diff_policies",
    "load_policy_file",
    "replay_log",
    "rule_fingerprints",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = home if home.startswith("dsh_policy.") else f"{__name__}.{home}"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
