"""One stage run: a stage's rules evaluated in order against one event's scope.

Every rule is evaluated (the trace and shadow rules need all of them), except one whose
``match.programs`` the event's shell line does not run. The common outcomes (plain true, plain
false) append objects the plan prepared (:mod:`~dsh_policy.policy.plans`); an evaluation error, a
non-bool, a shadow match or a ``message_expression`` are handled one by one, as the rule's
``on_error`` and ``mode`` say. How the collected matches combine into a verdict is
:mod:`.combine`'s job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dsh_policy.cmdline.deadline import stage_deadline
from dsh_policy.policy.cel.engine import CelEvalError
from dsh_policy.policy.compiled import CompiledRule
from dsh_policy.policy.decide.scope import EventScope
from dsh_policy.policy.events import RuleTrace
from dsh_policy.policy.plans import Match, RulePlan, StagePlan, plan_rule
from dsh_policy.policy.stages import STAGE_TABLE


@dataclass(frozen=True, slots=True)
class RuleRun:
    """Rules of one stage evaluated on one event but not combined (:meth:`Decider.trace_rules`):
    the trace of each, and the message of each enforced match by rule id."""

    trace: tuple[RuleTrace, ...]
    messages: Mapping[str, str]


class StageRun:
    """Evaluates the rules of one stage against one event and collects matches and trace. The
    common outcomes append objects the plan prepared; ``signature`` stays the tuple of which
    rules matched while every outcome was one of those, else None (the verdict is then built
    fresh rather than memoized). ``tool`` names the subject (None: the step)."""

    __slots__ = ("matches", "scope", "shadow", "signature", "tool", "trace")

    def __init__(self, scope: EventScope, tool: str | None) -> None:
        self.scope = scope
        self.tool = tool
        self.matches: list[Match] = []
        self.shadow: list[str] = []
        self.trace: list[RuleTrace] = []
        self.signature: list[bool | None] | None = []

    @property
    def subject(self) -> str:
        """How messages name what is decided: ``tool "x"`` or ``step``."""
        return "step" if self.tool is None else f'tool "{self.tool}"'

    def run(self, plan: StagePlan | Sequence[CompiledRule]) -> None:
        """Evaluate every rule, in order (all of them: the trace and shadow rules need it),
        except those whose ``match.programs`` the shell line does not run. The stage's deadline is
        visible to helpers (``cmdline.deadline``), so one slow helper call on attacker-sized input
        cannot outlast the budget either."""
        scope = self.scope
        scope.start_clock()
        with stage_deadline(scope.seconds):
            self._run_plans(plan)

    def _run_plans(self, plan: StagePlan | Sequence[CompiledRule]) -> None:
        scope = self.scope
        plans = plan.rules if isinstance(plan, StagePlan) else [plan_rule(r, self._static(r)) for r in plan]
        trace = self.trace
        signature = self.signature
        for rule_plan in plans:
            programs = rule_plan.rule.programs
            if programs is not None and not scope.runs_program(programs):
                if signature is not None:
                    signature.append(None)  # not evaluated: the line runs none of its programs
                continue
            when = rule_plan.when
            if when is None:
                value: Any = True
            elif rule_plan.simple:
                value = scope.evaluate_simple(when, rule_plan.rule.pack_index)
            elif rule_plan.empty_over is not None and scope.empty_list(
                rule_plan.empty_over, rule_plan.rule.pack_index
            ):
                value = False  # ``vars.X.exists(...)`` over an empty list: false, not evaluated
            else:
                value = scope.evaluate(when, rule_plan.rule.pack_index)
            if value is False:
                trace.append(rule_plan.no_match)
                if signature is not None:
                    signature.append(False)
            elif value is True and rule_plan.match is not None:
                self.matches.append(rule_plan.match)
                trace.append(rule_plan.matched)
                if signature is not None:
                    signature.append(True)
            else:
                self.signature = signature = None
                self._one(rule_plan, value)

    def _static(self, rule: CompiledRule) -> str:
        return rule.message or rule.description or default_message(rule, rule.effect, self.subject)

    def _one(self, plan: RulePlan, value: Any) -> None:
        rule = plan.rule
        error: str | None = None
        if isinstance(value, CelEvalError):
            error, value = value.message, None
        elif not isinstance(value, bool):
            error = f"when must be a bool, got {type(value).__name__} {value!r}"
        if error is not None:
            matched = rule.on_error == "deny"
            effect = STAGE_TABLE[rule.stage].closed_effect if matched else rule.effect
        else:
            matched = value is True
            effect = rule.effect
        if not matched:
            self.trace.append(_trace(rule, effect, False, value, error, "no-match"))
            return
        if not rule.enforced:
            self.shadow.append(rule.id)
            if rule.mode == "warn":
                _warn(
                    "policy rule matched in warn mode",
                    rule=rule.id,
                    stage=rule.stage,
                    subject=self.subject,
                    error=error,
                )
            self.trace.append(_trace(rule, effect, True, value, error, "shadow"))
            return
        outcome = "failed-closed" if error is not None else "decided"
        self.matches.append(Match(rule, effect, self._message(rule, effect, error)))
        self.trace.append(_trace(rule, effect, True, value, error, outcome))

    def _message(self, rule: CompiledRule, effect: str, error: str | None) -> str:
        if error is not None:
            return f"policy rule {rule.id} could not be evaluated ({error}); failing closed"
        if rule.message_expression is not None:
            text = self.scope.evaluate(rule.message_expression, rule.pack_index)
            if isinstance(text, str):
                return text
            why = text.message if isinstance(text, CelEvalError) else f"gave {type(text).__name__}"
            fallback = rule.message or rule.description or default_message(rule, effect, self.subject)
            return f"{fallback} (message_expression failed: {why})"
        return rule.message or rule.description or default_message(rule, effect, self.subject)

    def with_effect(self, *effects: str) -> list[Match]:
        """Enforced matches that give one of ``effects``."""
        return [match for match in self.matches if match.effect in effects]

    def key(self) -> tuple[bool | None, ...] | None:
        """Which rules matched (None: skipped by ``match.programs``), when every outcome was a
        plain true/false (see class doc)."""
        return tuple(self.signature) if self.signature is not None else None


def _trace(
    rule: CompiledRule, effect: str, matched: bool, value: Any, error: str | None, outcome: str
) -> RuleTrace:
    return RuleTrace(rule.id, rule.stage, rule.mode, effect, matched, value, error, outcome)


def default_message(rule: CompiledRule, effect: str, subject: str) -> str:
    if effect == "reject":
        return f"step rejected by policy rule {rule.id}"
    if rule.stage == "guard":
        return f"{subject} blocked by policy guard {rule.id}"
    if effect == "deny":
        return f"{subject} denied by policy rule {rule.id}"
    if effect == "ask":
        return f"{subject} needs approval (policy rule {rule.id})"
    if effect == "block":
        return f"output of {subject} withheld by policy rule {rule.id}"
    return f"{subject} allowed by policy rule {rule.id}"


def _warn(message: str, **fields: object) -> None:
    # structlog is imported on the first warn-mode match, not with the decider: importing it
    # (it pulls in rich) cost more CPU than loading the shipped packs.
    import structlog

    structlog.get_logger("dsh_policy.policy").warning(message, **fields)
