"""Re-deciding one recorded decision under a candidate policy, rule by rule.

For each enforced candidate rule of the decision's stage (the gate: pre-execute rules and guards)
the :class:`Replayer` picks one of three ways, and says which it could not take:

- reuse: the rule is unchanged since the record (same match fingerprint as the recording policy's)
  and the recorded verdict shows its outcome (:func:`.outcomes.recorded_statuses`);
- evaluate: the rule is new or changed (or ``evaluate="all"``) and reads only what the log holds
  faithfully; the decision path's own code (``Decider.trace_rules``) evaluates it on the recorded
  call, with ``now`` as recorded and the candidate's params and engine;
- try every outcome: the rule reads what the log holds only redacted or as a digest (tool output,
  redacted arguments, an entered step's messages) and its outcome cannot be reused.

An unchanged rule the recorded verdict hides (an ``ask`` rule under a recorded ``deny``) is
evaluated only if the decision depends on it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import orjson
import structlog
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.decide.later_calls import implied_lines, is_writer
from dsh_policy.policy.decide.tool_views import views
from dsh_policy.policy.events import StepEvent, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.fingerprint import rule_fingerprints
from dsh_policy.policy.review.outcomes import (
    RANKS,
    Outcome,
    RuleFacts,
    Status,
    combine_gate,
    combine_post,
    combine_step,
    possible_outcomes,
    recorded_statuses,
)
from dsh_policy.policy.review.records import GateEvidence, RecordedDecision, RecordedPolicy, RecordedVerdict
from dsh_policy.policy.review.report import EvaluateMode

__all__ = ["PlanEntry", "ReplayResult", "Replayer", "Verdict"]

_log = structlog.get_logger("dsh_policy.replay")

Verdict = Literal["unchanged", "changed", "undetermined", "skipped"]

_INTERNAL_FAILURE: Final = "policy evaluation failed ("
_SELF_PROTECTION: Final = "self-protection/"  # policy.self_protection.RULE_PREFIX
_OVERSIZED: Final = "tool output withheld by policy: more than "
_EVALUATIONS_KEPT: Final = 200_000


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """A candidate rule a decision involves: unchanged since the record or not, and the input it
    reads that the record does not hold faithfully (``blind``), if any."""

    facts: RuleFacts
    unchanged: bool
    blind: str | None  #: the unfaithful name it reads, if any


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """One decision re-decided: ``outcomes`` the candidate may give (one when determined; none
    when too many rules were unknown to try), the messages of the rules evaluated, the plan
    entries whose outcome stayed unknown, and why a decision was skipped."""

    verdict: Verdict
    outcomes: frozenset[Outcome] = frozenset()
    messages: Mapping[str, str] = field(default_factory=dict)
    unknown: tuple[PlanEntry, ...] = ()
    skip: str | None = None


class Replayer:
    """Re-decides recorded decisions under one candidate policy (``evaluate``: see the module).

    Reusable across logs; keeps counts of rules it evaluated and outcomes it reused."""

    def __init__(self, candidate: CompiledPolicy, *, evaluate: EvaluateMode = "changed") -> None:
        self.policy = candidate
        self.evaluate = evaluate
        self.decider = Decider(candidate)
        prints = rule_fingerprints(candidate)
        self.facts: dict[str, RuleFacts] = {
            rule.id: RuleFacts.of(rule, candidate.packs[rule.pack_index], prints[rule.id])
            for rule in candidate.rules
            if rule.enforced
        }
        self.order = tuple(rule.id for rule in candidate.rules)
        self.redacting = frozenset(rule.id for rule in candidate.rules if rule.redactions)
        self.rules_evaluated = 0
        self.evaluations_cached = 0
        self.outcomes_reused = 0
        self._evaluations: dict[tuple[Any, ...], tuple[Status, str | None]] = {}
        self._plans: dict[tuple[Any, ...], tuple[PlanEntry, ...]] = {}
        self._memo: dict[tuple[Any, ...], ReplayResult] = {}

    # -- plans: which candidate rules a decision involves, and what replay may do with each --

    def _plan(
        self, decision: RecordedDecision, recorded: RecordedPolicy | None
    ) -> tuple[tuple[Any, ...], tuple[PlanEntry, ...]]:
        tool = decision.call.tool if decision.call is not None else None
        unfaithful = decision.unfaithful
        key = (decision.policy_digest, decision.stage, tool, unfaithful)
        found = self._plans.get(key)
        if found is not None:
            return key, found
        same = decision.policy_digest == self.policy.digest
        prints = recorded.rules if recorded is not None else None
        entries: list[PlanEntry] = []
        stages = ("pre-execute", "guard") if decision.stage == "pre-execute" else (decision.stage,)
        for stage in stages:
            index = self.policy.stages[stage]
            rules = index.select_all().rules if tool is None else index.select(tool).rules
            for rule in rules:
                facts = self.facts.get(rule.id)
                if facts is None:
                    continue  # warn/audit: never changes an outcome
                unchanged = same or (prints is not None and prints.get(rule.id) == facts.fingerprint)
                blind = next((name for name in sorted(facts.reads & unfaithful)), None)
                entries.append(PlanEntry(facts, unchanged, blind))
        if len(self._plans) > 4096:
            self._plans.clear()
        plan = self._plans[key] = tuple(entries)
        return key, plan

    # -- one decision --

    def replay(self, decision: RecordedDecision, recorded: RecordedPolicy | None = None) -> ReplayResult:
        """Re-decide one recorded decision; ``recorded`` is what the log says about the policy that
        made it (its rule fingerprints), when known."""
        verdict = decision.verdict
        if not verdict.rules and (verdict.message or "").startswith(_INTERNAL_FAILURE):
            return ReplayResult("skipped", skip="failed-closed")
        if verdict.rules and all(rule.startswith(_SELF_PROTECTION) for rule in verdict.rules):
            # The deployment's own invariant decided, not a pack: a candidate pack cannot change it.
            return ReplayResult("skipped", skip="self-protection")
        if (
            decision.stage == "post-execute"
            and verdict.decision == "block"
            and not verdict.rules
            and (verdict.message or "").startswith(_OVERSIZED)
        ):
            return self._oversized(decision)
        recorded_call = decision.call
        if decision.stage == "pre-execute" and recorded_call is not None:
            # (the event is built only for such calls: thawing every call's arguments would read
            # a forged record's nesting that nothing else reads)
            viewed = views(recorded_call.tool, recorded_call.args) is not None
            if viewed or is_writer(recorded_call.tool):
                call = _event_for("pre-execute", decision, {})
                assert isinstance(call, ToolCallEvent)
                if viewed or any(implied_lines(call)):
                    return self._whole_call(call, verdict)
        key, plan = self._plan(decision, recorded)
        evidence: GateEvidence | RecordedVerdict = decision.gate if decision.gate is not None else verdict
        memo_key = (key, _evidence_key(evidence))
        memoized = self._memo.get(memo_key)
        if memoized is not None:
            self.outcomes_reused += len(plan)
            return memoized
        known: dict[str, Status] = {}
        unknown: dict[str, frozenset[Status]] = {}
        must: list[RuleFacts] = []
        deferred: list[RuleFacts] = []
        for entry in plan:
            rule = entry.facts
            if entry.blind is None and (self.evaluate == "all" or not entry.unchanged):
                must.append(rule)
            elif entry.unchanged:
                statuses = recorded_statuses(rule, decision.stage, evidence)
                if len(statuses) == 1:
                    known[rule.id] = next(iter(statuses))
                    self.outcomes_reused += 1
                else:
                    unknown[rule.id] = statuses
                    if entry.blind is None:
                        deferred.append(rule)  # hidden by a stronger decision: evaluate if needed
            else:
                unknown[rule.id] = rule.possible
        combine = self._combiner(decision, evidence)
        rules = [entry.facts for entry in plan]
        messages: dict[str, str] = {}
        events: dict[str, Any] = {}
        if must:
            for failed in self._evaluate(decision, must, known, messages, events):
                unknown[failed] = self.facts[failed].possible
        outcomes = possible_outcomes(rules, known, unknown, combine, RANKS[decision.stage])
        if deferred and (outcomes is None or len(outcomes) > 1):
            failures = self._evaluate(decision, deferred, known, messages, events)
            for rule in deferred:
                if rule.id not in failures:
                    unknown.pop(rule.id, None)
            outcomes = possible_outcomes(rules, known, unknown, combine, RANKS[decision.stage])
            deferred_used = True
        else:
            deferred_used = False
        still = tuple(entry for entry in plan if entry.facts.id in unknown)
        if outcomes is None:
            result = ReplayResult("undetermined", frozenset(), messages, still)
        else:
            recorded_outcome = Outcome(verdict.decision, frozenset(verdict.rules))
            if outcomes == {recorded_outcome}:
                kind: Verdict = "unchanged"
            elif recorded_outcome in outcomes:
                kind = "undetermined"
            else:
                kind = "changed"
            result = ReplayResult(kind, outcomes, messages, still)
        if not must and not deferred_used:
            if len(self._memo) > 65536:
                self._memo.clear()
            self._memo[memo_key] = result  # depends only on the plan and the recorded verdict
        return result

    def _whole_call(self, call: ToolCallEvent, verdict: RecordedVerdict) -> ReplayResult:
        """A write of a file that runs later is decided with the shell calls it implies
        (``decide.later_calls``), and a call its arguments describe as other calls with those
        (``decide.tool_views``), which no rule of the call itself records: such a decision is
        re-decided whole by the candidate, never combined from recorded rule outcomes."""
        whole = self.decider.check_tool_call(call)
        outcome = Outcome(whole.decision, frozenset(whole.rules))
        recorded = Outcome(verdict.decision, frozenset(verdict.rules))
        kind: Verdict = "unchanged" if outcome == recorded else "changed"
        return ReplayResult(kind, frozenset({outcome}))

    def _oversized(self, decision: RecordedDecision) -> ReplayResult:
        """Output too large to review is withheld whenever a post-execute rule applies to the tool."""
        assert decision.call is not None
        applies = bool(self.policy.stages["post-execute"].select(decision.call.tool).rules)
        outcome = Outcome("block", frozenset()) if applies else Outcome("accept", frozenset())
        kind: Verdict = "unchanged" if outcome.decision == decision.verdict.decision else "changed"
        return ReplayResult(kind, frozenset({outcome}))

    def _combiner(
        self, decision: RecordedDecision, evidence: GateEvidence | RecordedVerdict
    ) -> Callable[[Mapping[RuleFacts, Status]], Outcome]:
        if decision.stage == "pre-step":
            return combine_step
        if decision.stage == "post-execute":
            return combine_post
        assert isinstance(evidence, GateEvidence)
        reached = _guards_reached(evidence)
        default = self.policy.default_decision
        return lambda statuses: combine_gate(statuses, default, reached)

    def _evaluate(
        self,
        decision: RecordedDecision,
        rules: Sequence[RuleFacts],
        known: dict[str, Status],
        messages: dict[str, str],
        events: dict[str, Any],
    ) -> set[str]:
        """Evaluate ``rules`` on the recorded event; return the ids of those that could not be. A rule
        evaluated before on equal values of everything it reads (logs repeat: ``git status`` a
        thousand times) reuses that evaluation."""
        failed: set[str] = set()
        pending: dict[str, list[tuple[RuleFacts, tuple[Any, ...] | None]]] = {}
        for rule in rules:
            key = _inputs_key(rule, decision, events)
            hit = self._evaluations.get(key) if key is not None else None
            if hit is not None:
                known[rule.id], message = hit
                if message is not None:
                    messages[rule.id] = message
                self.evaluations_cached += 1
                continue
            pending.setdefault(rule.stage, []).append((rule, key))
        for stage, group in pending.items():
            try:
                event = _event_for(stage, decision, events)
                run = self.decider.trace_rules(stage, event, [rule.id for rule, _ in group])
            except Exception as error:  # a record no policy could decide on (only an unverified log)
                _log.error(
                    "replay could not evaluate rules", seq=decision.seq, stage=stage, error=repr(error)
                )
                failed.update(rule.id for rule, _ in group)
                continue
            traces = {entry.rule: entry for entry in run.trace}
            for rule, key in group:
                entry = traces.get(rule.id)
                status = rule.status_of(entry.outcome, entry.effect) if entry is not None else None
                known[rule.id] = status
                if key is not None and (entry is None or entry.error is None or "budget" not in entry.error):
                    if len(self._evaluations) >= _EVALUATIONS_KEPT:
                        self._evaluations.clear()
                    self._evaluations[key] = (status, run.messages.get(rule.id))
            messages.update(run.messages)
            self.rules_evaluated += len(group)
        return failed


def _inputs_key(
    rule: RuleFacts, decision: RecordedDecision, events: dict[str, Any]
) -> tuple[Any, ...] | None:
    """The values of everything ``rule`` reads on this decision (params are the candidate's, the
    same for every decision), or ``None`` when one of them has no cheap key."""
    values: list[Any] = [rule.id]
    for name in sorted(rule.inputs):
        if name == "params":
            continue
        if name == "args":
            if "args_key" not in events:
                args = decision.call.args if decision.call is not None else None
                try:
                    events["args_key"] = orjson.dumps(args, option=orjson.OPT_SORT_KEYS)
                except TypeError:
                    events["args_key"] = None
            value = events["args_key"]
            if value is None:
                return None
        elif name == "tool":
            call = decision.call
            value = (
                None
                if call is None
                else (call.tool, call.call_id, call.root_call_id, call.nested, call.original_name)
            )
        elif name in ("messages", "prompt"):
            value = tuple((m.role, m.text, m.source_kind, m.source_plugin) for m in decision.messages)
        elif name == "now":
            value = decision.now or decision.ts
        elif name in ("session", "agent", "turn", "step"):
            value = getattr(decision, name)
        else:
            return None  # (result: never evaluated here, the log holds only its digest)
        values.append(value)
    return tuple(values)


def _guards_reached(evidence: GateEvidence) -> Callable[[str], bool]:
    """Whether the guards would judge a call pre-execute gave a decision: always in a hook (the
    whole gate) and when the record shows the guards ran; a call refused at approval reaches them
    when no approval is needed any more; otherwise (refused by another plugin) only a denial, which
    the gateway explains with the guards' verdict."""
    if evidence.whole is not None or evidence.guard is not None:
        return lambda decision: True
    if evidence.denied_by == "approval":
        return lambda decision: decision in ("deny", "allow")
    return lambda decision: decision == "deny"


def _evidence_key(evidence: GateEvidence | RecordedVerdict) -> tuple[Any, ...]:
    def brief(verdict: RecordedVerdict | None) -> tuple[str, tuple[str, ...]] | None:
        return None if verdict is None else (verdict.decision, verdict.rules)

    if isinstance(evidence, GateEvidence):
        return (brief(evidence.pre), brief(evidence.guard), brief(evidence.whole), evidence.denied_by)
    return (brief(evidence),)


def _instant(decision: RecordedDecision) -> datetime.datetime | None:
    text = decision.now or decision.ts
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)


def _event_for(
    stage: str, decision: RecordedDecision, events: dict[str, Any]
) -> StepEvent | ToolCallEvent | ToolResultEvent:
    """The decide API's event for a recorded decision (one call event shared by pre-execute and
    guard, as in the gateway)."""
    if stage == "pre-step":
        return StepEvent(
            session_id=decision.session or "",
            agent_id=decision.agent,
            turn=decision.turn,
            step=decision.step,
            messages=decision.messages,
            now=_instant(decision),
        )
    call = events.get("call")
    if call is None:
        recorded = decision.call
        assert recorded is not None
        call = events["call"] = ToolCallEvent(
            tool=recorded.tool,
            args=thaw(recorded.args),
            call_id=recorded.call_id,
            root_call_id=recorded.root_call_id,
            nested=recorded.nested,
            session_id=decision.session or "",
            agent_id=decision.agent,
            turn=decision.turn,
            step=decision.step,
            original_name=recorded.original_name,
            now=_instant(decision),
        )
    if stage != "post-execute":
        return call
    result = decision.result or {}
    return ToolResultEvent(
        call=call,
        is_error=result.get("is_error") is True,
        text="",  # never recorded: rules that read it are not evaluated here
        error_message=result.get("error_message") if isinstance(result.get("error_message"), str) else None,
        error_code=result.get("error_code") if isinstance(result.get("error_code"), str) else None,
    )
