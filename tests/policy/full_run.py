"""The same policy decided by the full run alone, for tests that compare the shortcuts with it."""

from __future__ import annotations

from typing import Any

from dsh_policy.policy.decide import Decider


def without_shortcuts(decider: Decider) -> Decider:
    """The same policy decided by the full run only (no lean path, no verdict for unnamed tools)."""
    plain = Decider(decider.policy)
    plain._pre_unruled = None
    plain._guard_unruled = None
    for stage in ("pre-execute", "guard"):
        stage_plans = plain._plans[stage]
        make = stage_plans._make

        def no_shortcut(tool: str, make: Any = make) -> Any:
            plan = make(tool)
            plan.fast = None
            return plan

        stage_plans._make = no_shortcut
    return plain
