"""How the matches of one stage run combine into the stage's verdict (POLICY.md section 2).

pre-step: any enforced reject wins, else enter with the contexts of matching rules;
pre-execute: deny > ask > allow > ``defaults.decision``; guard: any match denies (the deployment's
self-protection denies whatever the rules say); post-execute: any block wins, else every
redaction applies in pack order and contexts are appended. Each function is a pure function of
the run (and the event it reviews), so a verdict built from plain true/false outcomes can be
memoized by which rules matched (``StagePlan.verdict``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from dsh_policy.policy.decide.stage_run import StageRun
from dsh_policy.policy.events import (
    GuardVerdict,
    PolicyStamp,
    ResultVerdict,
    RuleTrace,
    StepVerdict,
    ToolCallVerdict,
    ToolResultEvent,
)
from dsh_policy.policy.plans import Match
from dsh_policy.policy.redaction import redact_text, redact_value


def join_messages(matches: Sequence[Match]) -> str:
    """The verdict's message: each distinct match message once, in rule order."""
    return "; ".join(dict.fromkeys(match.message for match in matches))


def rule_ids(matches: Sequence[Match]) -> tuple[str, ...]:
    """The deciding rules: each id once, in rule order."""
    return tuple(dict.fromkeys(match.rule.id for match in matches))


def combine_step(run: StageRun, stamp: PolicyStamp) -> StepVerdict:
    """``agent/pre-step``: reject if any enforced rule rejects, else enter with contexts."""
    rejects = run.with_effect("reject")
    if rejects:
        return StepVerdict(
            "reject",
            rule_ids(rejects),
            join_messages(rejects),
            (),
            tuple(run.shadow),
            tuple(run.trace),
            policy=stamp,
        )
    added = [match for match in run.with_effect("enter") if match.rule.context]
    contexts = tuple(match.rule.context for match in added if match.rule.context)
    return StepVerdict(
        "enter",
        rule_ids(added),
        None,
        contexts,
        tuple(run.shadow),
        tuple(run.trace),
        policy=stamp,
    )


def combine_pre_execute(
    run: StageRun, tool: str, default: Literal["allow", "ask", "deny"], stamp: PolicyStamp
) -> ToolCallVerdict:
    """``tools/pre-execute``: deny > ask > allow > ``default`` (the policy's ``defaults.decision``)."""
    shadow, trace = tuple(run.shadow), tuple(run.trace)
    effects: tuple[Literal["deny", "ask", "allow"], ...] = ("deny", "ask", "allow")
    for effect in effects:
        found = run.with_effect(effect)
        if found:
            return ToolCallVerdict(effect, rule_ids(found), join_messages(found), shadow, trace, policy=stamp)
    message: str | None = None
    if default != "allow":
        verb = "allows" if default == "deny" else "decides"
        message = f'no policy rule {verb} tool "{tool}" (defaults.decision: {default})'
    return ToolCallVerdict(default, (), message, shadow, trace, policy=stamp)


def combine_guard(run: StageRun, stamp: PolicyStamp) -> GuardVerdict:
    """``ctx.tools.guard``: any matching guard denies (errors count as matches)."""
    denies = run.with_effect("deny")
    return GuardVerdict(
        bool(denies),
        rule_ids(denies),
        join_messages(denies) if denies else None,
        tuple(run.shadow),
        tuple(run.trace),
        policy=stamp,
    )


def combine_protected_guard(run: StageRun, protected: Any, stamp: PolicyStamp) -> GuardVerdict:
    """The guard when the deployment's self-protection refuses the call: the deployment's own
    invariant denies, whatever the rules say and in every mode. When a guard rule denies as well,
    its message stands and the trace shows both."""
    denies = run.with_effect("deny")
    rules, message = rule_ids(denies), join_messages(denies) if denies else None
    outcome = "shadow" if denies else "decided"
    entry = RuleTrace(protected.rule, "guard", "enforce", "deny", True, True, None, outcome)
    trace = (entry, *run.trace)
    if not denies:
        rules, message = (protected.rule,), protected.message
    return GuardVerdict(True, rules, message, tuple(run.shadow), trace, policy=stamp)


def combine_result(run: StageRun, event: ToolResultEvent, stamp: PolicyStamp) -> ResultVerdict:
    """``tools/post-execute``: block if any enforced rule blocks; else redact text and value with
    every matching redaction rule (pack order) and append contexts."""
    shadow = tuple(run.shadow)
    blocks = run.with_effect("block")
    if blocks:
        contexts = tuple(match.rule.context for match in blocks if match.rule.context)
        return ResultVerdict(
            "block",
            rule_ids(blocks),
            join_messages(blocks),
            None,
            None,
            False,
            0,
            contexts,
            shadow,
            tuple(run.trace),
            policy=stamp,
        )
    text, value = event.text, event.value
    text_changed = value_changed = False
    total = 0
    deciding: list[str] = []
    contexts_list: list[str] = []
    counts: dict[str, int] = {}
    for match in run.matches:
        rule = match.rule
        changed = False
        if rule.redactions:
            text, in_text = redact_text(text, rule.redactions)
            value, in_value = redact_value(value, rule.redactions)
            counts[rule.id] = counts.get(rule.id, 0) + in_text + in_value
            text_changed |= in_text > 0
            value_changed |= in_value > 0
            total += in_text + in_value
            changed = in_text + in_value > 0
        if rule.context:
            contexts_list.append(rule.context)
            changed = True
        if changed and rule.id not in deciding:
            deciding.append(rule.id)
    trace = tuple(
        replace(entry, redactions=counts[entry.rule]) if counts.get(entry.rule) else entry
        for entry in run.trace
    )
    return ResultVerdict(
        "accept",
        tuple(deciding),
        None,
        text if text_changed else None,
        value if value_changed else None,
        value_changed,
        total,
        tuple(contexts_list),
        shadow,
        trace,
        policy=stamp,
    )
