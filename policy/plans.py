"""Per-decision work done once: what a stage does with each rule, planned per tool.

Deciding a tool call should cost what its rules cost. Everything about a rule that does not
depend on the event is prepared here, once per (stage, tool) and reused for every event: the
rule's compiled condition, its trace entries for the two common outcomes (condition false,
condition true), its static message and its match record. A stage run then appends prepared
objects and builds new ones only for the rare outcomes (an evaluation error, a non-bool, a
``message_expression``). Because every common outcome is a prepared object, a verdict is a pure
function of which rules matched, so :class:`StagePlan` also memoizes verdicts by that signature.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dsh_policy.policy.compiled import CompiledExpr, CompiledRule, RuleSelection
from dsh_policy.policy.events import RuleTrace

MAX_PLANS_PER_STAGE = 4096
"""Tool names are chosen by the model: plans (and their verdicts) are kept for this many."""

MAX_VERDICTS_PER_PLAN = 64
"""Distinct outcome signatures remembered per plan (each is one verdict object)."""


@dataclass(slots=True)
class Match:
    """A rule whose condition held (or failed closed), with its message."""

    rule: CompiledRule
    effect: str
    message: str


@dataclass(frozen=True, slots=True)
class RulePlan:
    """One rule as a stage evaluates it, with the objects its common outcomes produce."""

    rule: CompiledRule
    when: CompiledExpr | None
    simple: bool
    """The condition reads no pack variables: it evaluates against the pack's base activation."""
    no_match: RuleTrace
    matched: RuleTrace
    match: Match | None
    """The match record of an enforced match with the static message; None for a shadow rule or
    a rule whose message comes from a ``message_expression``."""
    empty_over: str | None = None
    """The pack variable whose being an empty list makes the condition false (``exists_over``
    of :class:`CompiledExpr`): the stage run then need not evaluate it."""


@dataclass(slots=True)
class StagePlan:
    """The rules one stage applies to one tool, planned, and verdicts already built for them."""

    rules: tuple[RulePlan, ...]
    reads: Any  # Mapping[int, frozenset[str]]: activation names per pack
    verdicts: dict[tuple[bool | None, ...], Any] = field(default_factory=dict)
    fast: Callable[[Any], Any] | None = None
    """The decider's shortcut for this plan (see ``policy/decide/fast_path.py``): the memoized verdict
    when every condition gives a plain true or false, else None (then the full run decides)."""

    def verdict(self, signature: tuple[bool | None, ...] | None, build: Callable[[], Any]) -> Any:
        """The verdict for ``signature`` (which rules matched), built once; None signature: an
        outcome that was not a plain true/false, built fresh every time."""
        if signature is None:
            return build()
        found = self.verdicts.get(signature)
        if found is None:
            found = build()
            if len(self.verdicts) < MAX_VERDICTS_PER_PLAN:
                self.verdicts[signature] = found
        return found


def plan_rule(rule: CompiledRule, static_message: str) -> RulePlan:
    """Prepare one rule; ``static_message`` is what an enforced match says without an error."""
    when = rule.when
    simple = when is None or (not when.variables and "vars" not in when.names)
    no_match = RuleTrace(rule.id, rule.stage, rule.mode, rule.effect, False, False, None, "no-match")
    outcome = "decided" if rule.enforced else "shadow"
    matched = RuleTrace(rule.id, rule.stage, rule.mode, rule.effect, True, True, None, outcome)
    match = (
        Match(rule, rule.effect, static_message)
        if rule.enforced and rule.message_expression is None
        else None
    )
    empty_over = None
    if when is not None and not simple and when.exists_over in when.variables:
        empty_over = when.exists_over
    return RulePlan(rule, when, simple, no_match, matched, match, empty_over)


class StagePlans:
    """Plans of one stage by tool name (or one plan for a stage without tools), built on first
    use and kept for :data:`MAX_PLANS_PER_STAGE` names."""

    __slots__ = ("_lock", "_make", "plans")

    def __init__(self, make: Callable[[str], StagePlan]) -> None:
        self._make = make
        self.plans: dict[str, StagePlan] = {}
        """The plans built so far, by tool: a decider reads it first (one dict lookup), then
        calls :meth:`get` for a tool not planned yet."""
        self._lock = threading.Lock()

    def get(self, tool: str) -> StagePlan:
        """The plan for ``tool``."""
        found = self.plans.get(tool)
        if found is not None:
            return found
        with self._lock:
            found = self.plans.get(tool)
            if found is None:
                found = self._make(tool)
                if len(self.plans) < MAX_PLANS_PER_STAGE:
                    self.plans[tool] = found
        return found


def plan_selection(selection: RuleSelection, message_for: Callable[[CompiledRule], str]) -> StagePlan:
    """A :class:`StagePlan` for the rules ``selection`` holds."""
    return StagePlan(tuple(plan_rule(rule, message_for(rule)) for rule in selection.rules), selection.reads)
