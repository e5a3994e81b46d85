"""The shipped packs, loaded once per test process, and one call decided by them: shared by the
tool-view tests of this folder."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

RULES = Path(__file__).resolve().parents[2] / "rules"


@cache
def shipped() -> Policy:
    policy = Policy.load(sorted(p for p in RULES.glob("*.yaml") if not p.name.endswith(".cases.yaml")))
    assert not isinstance(policy, LoadFailure), policy
    return policy


def decision(tool: str, **args: Any) -> str:
    """What the shipped packs decide for one call of ``tool`` with ``args``."""
    return shipped().check_tool_call(ToolCallEvent(tool, freeze_json(args), turn=1, step=1)).decision
