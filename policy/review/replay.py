"""Replay: what a candidate policy would have decided on every decision an audit log recorded.

``replay_log(paths, candidate)`` verifies the log first (a log that fails verification is refused
unless ``allow_unverified``, and the report then says so), then re-decides every recorded decision
(pre-step; pre-execute with the guards, as one gate; post-execute) under the candidate and reports
each one whose outcome changes. ``dsh-policy replay`` prints what this returns.

How a decision is re-decided, rule by rule (:mod:`.outcomes`):

- a rule of the candidate that is unchanged since the record (same match fingerprint as the policy
  that made it, :mod:`.fingerprint`) keeps the outcome the recorded verdict shows for it; with
  ``evaluate="all"`` it is evaluated again wherever the log holds its inputs faithfully;
- a new or changed rule is evaluated by the decision path's own code (``Decider.trace_rules``) on
  the recorded call: tool, arguments as recorded, session, agent, turn, step, and ``now`` as the
  record states it (the decision's own instant, else the record's ``ts``); ``params`` and the CEL
  engine are the candidate's;
- a rule whose inputs the log does not hold faithfully (tool output is a digest; arguments or
  messages that were redacted) is never evaluated on them: where unchanged, its recorded outcome
  stands; where new or changed, every outcome it could have is tried. A decision is *changed* when
  none of the possibilities gives the recorded outcome, *unchanged* when all do, and *undetermined*
  otherwise, naming the rules it could not see.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any, Final, Literal

from dsh_policy.audit.keys import KeyFileError
from dsh_policy.audit.verify import PublicKeySource, verify_log
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.fingerprint import rule_fingerprints
from dsh_policy.policy.review.outcomes import RANKS, Outcome
from dsh_policy.policy.review.records import (
    LogReader,
    RecordedDecision,
    RecordedPolicy,
    RecordedVerdict,
)
from dsh_policy.policy.review.replayer import PlanEntry, Replayer, ReplayResult
from dsh_policy.policy.review.report import (
    BlindRule,
    EvaluateMode,
    RecordedPolicySummary,
    ReplayedDecision,
    ReplayRefusal,
    ReplayReport,
    ReplaySummary,
    outcome_order,
)

__all__ = ["replay_log"]

_BLIND_WHY: Final = {
    "result": "reads the tool output, which the log holds only as a digest",
    "args": "reads arguments that were redacted in the record",
    "messages": "reads the step's messages, which the log holds redacted or only as digests",
    "prompt": "reads the prompt, which the log holds redacted or only as a digest",
}


def replay_log(
    paths: Sequence[str | PathLike[str]],
    candidate: CompiledPolicy | Policy,
    *,
    public_key: PublicKeySource | None = None,
    anchor: str | PathLike[str] | None = None,
    allow_unverified: bool = False,
    live: bool = False,
    evaluate: EvaluateMode = "changed",
    recorded: Sequence[CompiledPolicy] = (),
    progress: Callable[[int], None] | None = None,
) -> ReplayReport | ReplayRefusal:
    """Verify the log at ``paths`` (as ``dsh-policy verify`` does, with ``public_key``, ``anchor``
    and ``live``), then replay every decision in it under ``candidate``. A log that fails
    verification is refused unless ``allow_unverified``.

    ``recorded`` names policies the log was written under, for logs that do not record their rule
    fingerprints (hook logs, logs from before fingerprints): a decision whose policy digest is one
    of theirs reuses the outcomes of the rules the candidate left alone, as a native log's would.
    ``progress`` is called now and then with the number of decisions replayed so far."""
    compiled = candidate.compiled if isinstance(candidate, Policy) else candidate
    try:
        verification = verify_log(paths, public_key=public_key, anchor=anchor, live=live)
    except KeyFileError as error:
        return ReplayRefusal(f"cannot load the verification key: {error}", None)
    if verification.unreadable:
        return ReplayRefusal("cannot read the log: " + "; ".join(verification.unreadable), verification)
    if not verification.intact and not allow_unverified:
        first = verification.first_error
        where = f" (first: {first.reason.value} at seq {first.seq}: {first.message})" if first else ""
        return ReplayRefusal(
            f"the log failed verification{where}; nothing was replayed. Pass allow_unverified "
            "(--allow-unverified) to replay it anyway: its decisions may then be forged",
            verification,
        )
    reader = LogReader([Path(file) for file in verification.files])  # exactly the segments verified
    replayer = Replayer(compiled, evaluate=evaluate)
    run = _Run(replayer)
    given = {policy.digest: _as_recorded(policy) for policy in recorded}
    try:
        for number, decision in enumerate(reader.decisions(), start=1):
            digest = decision.policy_digest
            known = reader.policies.get(digest)
            if known is None or known.rules is None:
                known = given.get(digest, known)
            run.add(decision, known)
            if progress is not None and number % 5000 == 0:
                progress(number)
    except OSError as error:
        return ReplayRefusal(f"cannot read the log: {error}", verification)
    summary = run.summary
    summary.records = reader.records
    summary.skipped.update(reader.skipped)
    summary.told = reader.other.get("hook_told", 0)
    changes, undetermined = _with_told(run.changes, reader), _with_told(run.undetermined, reader)
    summary.rules_evaluated = replayer.rules_evaluated
    summary.evaluations_cached = replayer.evaluations_cached
    summary.outcomes_reused = replayer.outcomes_reused
    policies = tuple(
        _policy_summary(
            digest, count, run.engines.get(digest), reader.policies.get(digest), given.get(digest), compiled
        )
        for digest, count in run.digests.items()
    )
    unused = [digest for digest in given if digest not in run.digests]
    return ReplayReport(
        files=tuple(str(path) for path in reader.files),
        verification=verification,
        replayed_unverified=not verification.intact,
        candidate=compiled,
        evaluate=evaluate,
        recorded_policies=policies,
        summary=summary,
        changes=changes,
        undetermined=undetermined,
        limits=_limits(summary, policies, compiled, reader)
        + tuple(
            f"the recorded policy given as {digest} made none of the replayed decisions (its packs, "
            "params or engine differ from the ones that wrote the log)"
            for digest in unused
        ),
    )


def _with_told(found: list[ReplayedDecision], reader: LogReader) -> tuple[ReplayedDecision, ...]:
    """Each decision, with what the agent was told instead when a ``hook_told`` record names its
    request (the record itself was never compared: the recorded decision is the policy's)."""
    told = reader.told
    if not told:
        return tuple(found)
    return tuple(
        replace(item, told=told[item.recorded.request])
        if item.recorded.request is not None and item.recorded.request in told
        else item
        for item in found
    )


def _as_recorded(policy: CompiledPolicy) -> RecordedPolicy:
    """What a ``policy_loaded`` record would have said about ``policy``."""
    return RecordedPolicy(
        digest=policy.digest,
        engine=policy.engine_name,
        packs=tuple(pack.name for pack in policy.packs),
        rules=rule_fingerprints(policy),
        params={pack.name: thaw(pack.activation_params) for pack in policy.packs},
    )


@dataclass(slots=True)
class _Run:
    """Accumulates one replay's results, decision by decision."""

    replayer: Replayer
    summary: ReplaySummary = field(default_factory=ReplaySummary)
    changes: list[ReplayedDecision] = field(default_factory=list)
    undetermined: list[ReplayedDecision] = field(default_factory=list)
    digests: Counter[str] = field(default_factory=Counter)
    engines: dict[str, str | None] = field(default_factory=dict)
    gate_denied: dict[int, bool] = field(default_factory=dict)  #: seq -> the replayed gate refuses

    def add(self, decision: RecordedDecision, recorded: RecordedPolicy | None) -> None:
        result = self.replayer.replay(decision, recorded)
        summary = self.summary
        if result.verdict == "skipped":
            summary.skipped[result.skip or "failed-closed"] += 1
            return
        self.digests[decision.policy_digest] += 1
        self.engines.setdefault(decision.policy_digest, decision.engine)
        summary.replayed += 1
        summary.in_process += decision.in_process
        summary.now_from["record" if decision.now is not None else "ts"] += 1
        if "args" in decision.unfaithful:
            summary.redacted_arguments += 1
        if decision.stage == "post-execute":
            summary.digest_only_results += 1
        if decision.stage == "pre-step" and not decision.messages_faithful:
            summary.digest_only_messages += 1
        stage = summary.by_stage[decision.stage]
        stage["replayed"] += 1
        stage[result.verdict] += 1
        if result.verdict == "unchanged":
            summary.unchanged += 1
        if decision.stage == "pre-execute" and result.outcomes:
            self.gate_denied[decision.seq] = all(o.decision == "deny" for o in result.outcomes)
        if result.verdict == "unchanged":
            return
        item = self._describe(decision, result)
        if result.verdict != "changed":
            summary.undetermined += 1
            self.undetermined.append(item)
            return
        summary.changed += 1
        self.changes.append(item)
        summary.by_direction[item.direction] += 1
        if result.outcomes:
            deciding = frozenset(decision.verdict.rules)
            certain = frozenset.intersection(*(o.rules for o in result.outcomes))
            possible = frozenset.union(*(o.rules for o in result.outcomes))
            for rule in certain - deciding:
                summary.by_rule.setdefault(rule, Counter())["gained"] += 1
            for rule in deciding - possible:
                summary.by_rule.setdefault(rule, Counter())["lost"] += 1

    def _describe(self, decision: RecordedDecision, result: ReplayResult) -> ReplayedDecision:
        replayer = self.replayer
        outcomes = tuple(sorted(result.outcomes, key=outcome_order(decision.stage)))
        recorded = Outcome(decision.verdict.decision, frozenset(decision.verdict.rules))
        message = redactions = None
        if len(outcomes) == 1:
            (only,) = outcomes
            message = _message(only, recorded, decision.verdict, result.messages, replayer.order)
            if decision.stage == "post-execute":
                if only.rules == recorded.rules:
                    redactions = decision.redactions
                elif not only.rules & replayer.redacting:
                    redactions = 0
        return ReplayedDecision(
            recorded=decision,
            verdict="changed" if result.verdict == "changed" else "undetermined",
            replayed=outcomes,
            rule_order=replayer.order,
            direction=_direction(decision.stage, recorded, outcomes),
            message=message,
            redactions=redactions,
            blind=tuple(_blind(entry, replayer.redacting) for entry in result.unknown),
            notes=self._notes(decision, recorded, outcomes, result),
        )

    def _notes(
        self,
        decision: RecordedDecision,
        recorded: Outcome,
        outcomes: tuple[Outcome, ...],
        result: ReplayResult,
    ) -> tuple[str, ...]:
        notes: list[str] = []
        if decision.stage == "pre-execute" and outcomes:
            refused = all(o.decision == "deny" for o in outcomes)
            if recorded.decision == "deny" and not any(o.decision == "deny" for o in outcomes):
                notes.append(
                    "the call would now run: it was refused when recorded, so its result was never "
                    "seen and no post-execute rule was replayed for it"
                )
            elif refused and recorded.decision != "deny":
                notes.append("the call would now be refused before it runs")
            if any(o.decision == "ask" for o in outcomes) and recorded.decision != "ask":
                notes.append("approval would be asked; how a person would answer is not known")
        if decision.stage == "post-execute" and self.gate_denied.get(decision.seq):
            notes.append("moot: the replayed gate refuses this call, so this review would not happen")
        if decision.call is not None and not decision.call.args_faithful:
            notes.append(
                "arguments were redacted when recorded; rules reading them kept their recorded "
                "outcome where unchanged"
            )
        if not result.outcomes:
            notes.append("too many rules could not be seen to try every combination")
        return tuple(notes)


def _message(
    outcome: Outcome,
    recorded: Outcome,
    verdict: RecordedVerdict,
    messages: Mapping[str, str],
    order: Sequence[str],
) -> str | None:
    if outcome == recorded:
        return verdict.message
    deciding = [rule for rule in order if rule in outcome.rules]
    if not deciding or not all(rule in messages for rule in deciding):
        return None
    return "; ".join(dict.fromkeys(messages[rule] for rule in deciding))


def _direction(stage: str, recorded: Outcome, outcomes: Sequence[Outcome]) -> str:
    ranks = RANKS[stage]
    found: set[str] = set()
    for outcome in outcomes:
        if outcome == recorded:
            continue
        before, after = ranks.get(recorded.decision, 0), ranks.get(outcome.decision, 0)
        if after > before:
            found.add("tighter")
        elif after < before:
            found.add("looser")
        elif stage == "post-execute" and outcome.rules < recorded.rules:
            found.add("looser")  # fewer redactions or contexts
        elif stage == "post-execute" and outcome.rules > recorded.rules:
            found.add("tighter")
        else:
            found.add("same-decision")
    return found.pop() if len(found) == 1 else "uncertain"


def _blind(entry: PlanEntry, redacting: frozenset[str]) -> BlindRule:
    rule = entry.facts
    if entry.blind is None:
        return BlindRule(rule.id, "its outcome could not be determined")
    why = _BLIND_WHY.get(entry.blind, f"reads {entry.blind}, which the log does not hold")
    if entry.blind == "result" and rule.id in redacting:
        why = "redacts the tool output, which the log holds only as a digest"
    head = (
        "unchanged, but the recorded decision hides its outcome, and it"
        if entry.unchanged
        else "new or changed since the record, and it"
    )
    return BlindRule(rule.id, f"{head} {why}")


def _policy_summary(
    digest: str,
    decisions: int,
    engine: str | None,
    logged: RecordedPolicy | None,
    given: RecordedPolicy | None,
    candidate: CompiledPolicy,
) -> RecordedPolicySummary:
    recorded = logged if logged is not None and logged.rules is not None else given or logged
    if digest == candidate.digest:
        knowledge: Literal["same", "fingerprints", "given", "none"] = "same"
    elif logged is not None and logged.rules is not None:
        knowledge = "fingerprints"
    elif given is not None:
        knowledge = "given"
    else:
        knowledge = "none"
    changed: list[tuple[str, Any, Any]] = []
    if recorded is not None and recorded.params is not None:
        for pack in candidate.packs:
            old = recorded.params.get(pack.name)
            if not isinstance(old, dict):
                continue
            new = thaw(pack.activation_params)
            for key in sorted(set(old) | set(new)):
                if old.get(key) != new.get(key):
                    changed.append((f"{pack.name}.{key}", old.get(key), new.get(key)))
    return RecordedPolicySummary(
        digest, engine or (recorded.engine if recorded else None), decisions, knowledge, tuple(changed)
    )


def _limits(
    summary: ReplaySummary,
    policies: Sequence[RecordedPolicySummary],
    candidate: CompiledPolicy,
    reader: LogReader,
) -> tuple[str, ...]:
    """What this replay could not see, stated with counts (only what applies to this log)."""
    limits: list[str] = []
    if summary.digest_only_results:
        limits.append(
            f"{summary.digest_only_results} post-execute decision(s): tool output is recorded only as a "
            "digest, so rules that read it or redact it keep their recorded outcome where unchanged and "
            "are undetermined where new or changed"
        )
    if summary.redacted_arguments:
        limits.append(
            f"{summary.redacted_arguments} decision(s) had arguments redacted in the record: rules that read "
            "arguments keep their recorded outcome there where unchanged, and are undetermined where new "
            "or changed"
        )
    if summary.digest_only_messages:
        limits.append(
            f"{summary.digest_only_messages} pre-step decision(s) hold their messages redacted or only as "
            "digests: rules on messages or prompt are treated like rules on tool output"
        )
    if summary.now_from.get("ts"):
        limits.append(
            f"now: {summary.now_from['ts']} decision(s) recorded no instant of their own; their record's ts "
            "(written just after the decision) stood in for it"
        )
    unknown = [policy for policy in policies if policy.knowledge == "none"]
    if unknown:
        count = sum(policy.decisions for policy in unknown)
        limits.append(
            f"{count} decision(s) were made by a policy whose rule fingerprints the log does not hold "
            "(hook logs record none): every candidate rule was evaluated where the record allows, and "
            "rules on what it holds only as digests are undetermined; name the policy that wrote it "
            "(recorded=..., --recorded-pack/--recorded-config) to reuse the outcomes of unchanged rules"
        )
    engines = sorted(
        {policy.engine for policy in policies if policy.engine and policy.engine != candidate.engine_name}
    )
    if engines:
        limits.append(
            f"recorded with engine {', '.join(engines)}; replayed with the candidate's "
            f"{candidate.engine_name} engine"
        )
    changed_params = [entry for policy in policies for entry in policy.params_changed]
    if changed_params:
        names = ", ".join(sorted({name for name, _, _ in changed_params}))
        limits.append(f"params are the candidate's; these differ from the recorded ones: {names}")
    if reader.unreadable_lines:
        limits.append(f"{reader.unreadable_lines} line(s) could not be parsed and were not replayed")
    return tuple(limits)
