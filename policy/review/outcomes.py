"""Rule outcomes and how a stage combines them, for replay (POLICY.md section 2).

Replay works rule by rule. Each enforced rule of the candidate has a *status* on a recorded event:
``None`` (it did not match, or matched without deciding anything) or the effect its match had
(``deny``, ``ask``, ``allow``, ``reject``, ``enter``, ``block``, ``accept``). A status is known when
replay evaluated the rule on faithfully recorded inputs, or when the rule is unchanged since the
record and the recorded verdict shows it (:func:`recorded_statuses`); otherwise it is a set of
possibilities. :func:`possible_outcomes` combines every assignment exactly as the decider does
(``decide/combine.py``; the tests hold the two to each other), so replay says "changed" only when no
possibility gives the recorded outcome and "unchanged" only when every one does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from dsh_policy.policy.compiled import CompiledPack, CompiledRule
from dsh_policy.policy.fingerprint import condition_reads
from dsh_policy.policy.review.records import GateEvidence, RecordedVerdict
from dsh_policy.policy.stages import STAGE_TABLE

__all__ = [
    "RANKS",
    "Outcome",
    "RuleFacts",
    "Status",
    "combine_gate",
    "combine_post",
    "combine_pre_execute",
    "combine_step",
    "possible_outcomes",
    "recorded_statuses",
]

Status = str | None

#: How restrictive each decision of a stage is (higher refuses more); "tighter" means up.
RANKS: Final[Mapping[str, Mapping[str, int]]] = {
    "pre-step": {"enter": 0, "reject": 1},
    "pre-execute": {"allow": 0, "ask": 1, "deny": 2},
    "post-execute": {"accept": 0, "block": 1},
}
_GATE_RANK: Final = RANKS["pre-execute"]
#: Assignments tried before a decision is called undetermined without trying the rest.
MAX_ASSIGNMENTS: Final = 4096


@dataclass(frozen=True, slots=True)
class Outcome:
    """A stage's decision and the set of rules that made it."""

    decision: str
    rules: frozenset[str]


@dataclass(frozen=True, slots=True, eq=False)  # one per rule: identity is equality (and cheap)
class RuleFacts:
    """What replay needs to know about one enforced candidate rule.

    ``effects``: the effects a deciding match of it can have (its own, and its stage's refusing
    effect when an evaluation error fails closed); a post-execute or pre-step rule that neither
    redacts nor adds a context decides nothing when it matches. ``reads``: what its outcome
    depends on (``result`` for every redaction: what it replaces depends on the text)."""

    id: str
    stage: str
    ordinal: int
    effects: frozenset[str]
    reads: frozenset[str]
    fingerprint: str
    #: Everything its evaluation reads, message included: equal values, equal evaluation.
    inputs: frozenset[str] = frozenset()

    @classmethod
    def of(cls, rule: CompiledRule, pack: CompiledPack, fingerprint: str) -> RuleFacts:
        """The facts of a compiled rule."""
        effects: set[str] = set()
        if rule.effect not in ("accept", "enter") or rule.context is not None or rule.redactions:
            effects.add(rule.effect)
        if rule.on_error == "deny" and rule.when is not None:
            effects.add(STAGE_TABLE[rule.stage].closed_effect)
        reads = condition_reads(rule, pack) | ({"result"} if rule.redactions else frozenset())
        return cls(
            rule.id,
            rule.stage,
            rule.ordinal,
            frozenset(effects),
            frozenset(reads),
            fingerprint,
            frozenset(reads | rule.reads),
        )

    @property
    def possible(self) -> frozenset[Status]:
        """Every status the rule could have on an event nothing is known about."""
        return frozenset({None, *self.effects})

    def status_of(self, outcome: str, effect: str) -> Status:
        """The status a trace entry (``RuleTrace.outcome``/``effect``) gives this rule."""
        if outcome in ("decided", "failed-closed") and effect in self.effects:
            return effect
        return None


# --- what a recorded verdict shows about an unchanged rule ------------------------------------------


def _deciding_status(rule: RuleFacts, effect: str) -> frozenset[Status]:
    """A rule the record lists as deciding with ``effect``: that, if the rule can give it at all.
    A record that lists a rule with an effect it cannot have contradicts the policy it names
    (forged, or written by another policy under the same digest): replay then trusts the rule,
    not the record, and treats its outcome as unknown."""
    return frozenset({effect}) if effect in rule.effects else rule.possible


def _pre_execute_status(rule: RuleFacts, verdict: RecordedVerdict) -> frozenset[Status]:
    """deny > ask > allow > default: every rule giving the winning effect is listed, so a listed
    rule matched with it and an unlisted one did not give it; a weaker effect stays hidden."""
    if rule.id in verdict.rules:
        return _deciding_status(rule, verdict.decision)
    if not verdict.rules:  # the default decision: no enforced rule matched at all
        return frozenset({None})
    top = _GATE_RANK.get(verdict.decision, 0)
    return frozenset({None, *(effect for effect in rule.effects if _GATE_RANK.get(effect, 0) < top)})


def _listed(rule: RuleFacts, verdict: RecordedVerdict, effect: str) -> frozenset[Status]:
    return _deciding_status(rule, effect) if rule.id in verdict.rules else frozenset({None})


def recorded_statuses(
    rule: RuleFacts, stage: str, evidence: GateEvidence | RecordedVerdict
) -> frozenset[Status]:
    """The statuses an *unchanged* rule may have had, given what the record shows (``stage`` is
    the decision's stage; ``rule.stage`` is ``guard`` for a guard of the gate)."""
    if isinstance(evidence, GateEvidence):
        return _gate_status(rule, evidence)
    verdict = evidence
    if stage == "pre-step":
        if verdict.decision == "reject":
            if rule.id in verdict.rules:
                return _deciding_status(rule, "reject")
            return frozenset({None, *(effect for effect in rule.effects if effect == "enter")})
        return _listed(rule, verdict, "enter")
    # post-execute: any block wins and lists every blocking rule; an accept lists every rule that
    # redacted something or added a context.
    if verdict.decision == "block":
        if rule.id in verdict.rules:
            return _deciding_status(rule, "block")
        return frozenset({None, *(effect for effect in rule.effects if effect == "accept")})
    return _listed(rule, verdict, "accept")


def _gate_status(rule: RuleFacts, evidence: GateEvidence) -> frozenset[Status]:
    if evidence.whole is not None:
        whole = evidence.whole
        if rule.stage == "guard":
            return _listed(rule, whole, "deny") if evidence.by_guard else frozenset({None})
        if evidence.by_guard:  # a guard's denial hides what pre-execute said
            return rule.possible
        return _pre_execute_status(rule, whole)
    if rule.stage == "guard":
        if evidence.guard is None:  # the call never reached the guards
            return rule.possible
        return _listed(rule, evidence.guard, "deny")
    assert evidence.pre is not None
    return _pre_execute_status(rule, evidence.pre)


# --- combining, exactly as the decider does ------------------------------------------------------


def _deciding(statuses: Mapping[RuleFacts, Status], effect: str) -> frozenset[str]:
    return frozenset(rule.id for rule, status in statuses.items() if status == effect)


def combine_step(statuses: Mapping[RuleFacts, Status]) -> Outcome:
    """pre-step: any reject wins; else enter, with the rules that added a context."""
    rejects = _deciding(statuses, "reject")
    return Outcome("reject", rejects) if rejects else Outcome("enter", _deciding(statuses, "enter"))


def combine_pre_execute(statuses: Mapping[RuleFacts, Status], default: str) -> Outcome:
    """pre-execute: deny > ask > allow > the policy's default decision."""
    for effect in ("deny", "ask", "allow"):
        found = _deciding(statuses, effect)
        if found:
            return Outcome(effect, found)
    return Outcome(default, frozenset())


def combine_gate(
    statuses: Mapping[RuleFacts, Status], default: str, guards_reached: Callable[[str], bool]
) -> Outcome:
    """The gate: pre-execute, then the guards (when the call gets that far), whose denial beats
    every pre-execute outcome."""
    pre = {rule: status for rule, status in statuses.items() if rule.stage != "guard"}
    outcome = combine_pre_execute(pre, default)
    if guards_reached(outcome.decision):
        denied = frozenset(
            rule.id for rule, status in statuses.items() if rule.stage == "guard" and status == "deny"
        )
        if denied:
            return Outcome("deny", denied)
    return outcome


def combine_post(statuses: Mapping[RuleFacts, Status]) -> Outcome:
    """post-execute: any block wins; else accept, with every rule that redacted or added context."""
    blocks = _deciding(statuses, "block")
    return Outcome("block", blocks) if blocks else Outcome("accept", _deciding(statuses, "accept"))


def possible_outcomes(
    rules: Sequence[RuleFacts],
    known: Mapping[str, Status],
    unknown: Mapping[str, frozenset[Status]],
    combine: Callable[[Mapping[RuleFacts, Status]], Outcome],
    ranks: Mapping[str, int],
) -> frozenset[Outcome] | None:
    """Every outcome ``combine`` gives over the assignments of the unknown statuses; ``None`` when
    there are more than :data:`MAX_ASSIGNMENTS` of them.

    ``ranks`` orders the stage's effects (the strongest decides, with every rule giving it): an
    unknown rule whose every possible effect is weaker than one a known rule of the same kind
    (guard or not) already has cannot change the outcome, and is not tried."""
    top: dict[bool, int] = {}
    for rule in rules:
        status = known.get(rule.id)
        if status is not None and rule.id not in unknown:
            group = rule.stage == "guard"
            top[group] = max(top.get(group, -1), ranks.get(status, -1))
    choices: list[tuple[RuleFacts, list[Status]]] = []
    for rule in rules:
        options = unknown.get(rule.id)
        if options is None:
            continue
        strongest = max((ranks.get(option, -1) for option in options if option is not None), default=-1)
        if strongest < top.get(rule.stage == "guard", -1):
            continue  # dominated: whatever it did, a stronger known match decides
        choices.append((rule, sorted(options, key=str)))
    total = 1
    for _, tried in choices:
        total *= len(tried)
    if total > MAX_ASSIGNMENTS:
        return None
    fixed = {rule: (None if rule.id in unknown else known.get(rule.id)) for rule in rules}
    if not choices:
        return frozenset({combine(fixed)})
    found: set[Outcome] = set()
    for assignment in itertools.product(*(tried for _, tried in choices)):
        statuses = dict(fixed)
        statuses.update(zip((rule for rule, _ in choices), assignment, strict=True))
        found.add(combine(statuses))
    return frozenset(found)
