"""What a replay reports: each changed or undetermined decision, the summary, and the refusal.

Plain frozen values with ``to_json`` (the JSON of ``dsh-policy replay --format json``); the text
rendering lives with the command (``policy/cli/replay.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from dsh_policy.audit.verify import VerificationReport
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.review.outcomes import RANKS, Outcome
from dsh_policy.policy.review.records import SKIP_REASONS, RecordedDecision, ToldRecord

__all__ = [
    "DIRECTIONS",
    "BlindRule",
    "RecordedPolicySummary",
    "ReplayRefusal",
    "ReplayReport",
    "ReplaySummary",
    "ReplayedDecision",
    "outcome_order",
]

EvaluateMode = Literal["changed", "all"]
_STAGES: Final = ("pre-step", "pre-execute", "post-execute")
_VERDICT_COUNTS: Final = ("replayed", "unchanged", "changed", "undetermined")
#: How a change moves a decision: up the stage's ranks, down, sideways, or not one way for sure.
DIRECTIONS: Final = ("tighter", "looser", "same-decision", "uncertain")


@dataclass(frozen=True, slots=True)
class BlindRule:
    """A rule whose outcome on a recorded decision replay could not see, and why."""

    rule: str
    why: str

    def to_json(self) -> dict[str, str]:
        """Plain JSON."""
        return {"rule": self.rule, "why": self.why}


@dataclass(frozen=True, slots=True)
class ReplayedDecision:
    """A recorded decision the candidate changes (``changed``) or may change (``undetermined``).

    ``replayed`` holds every outcome the candidate may give (exactly one when determined), rules in
    candidate order; ``message`` and ``redactions`` are the replayed ones where known."""

    recorded: RecordedDecision
    verdict: Literal["changed", "undetermined"]
    replayed: tuple[Outcome, ...]
    rule_order: tuple[str, ...]
    direction: str
    message: str | None
    redactions: int | None
    blind: tuple[BlindRule, ...]
    notes: tuple[str, ...]
    #: The log says the agent was told something else than this decision (``hook_told``).
    told: ToldRecord | None = None

    def _rules(self, rules: Iterable[str]) -> list[str]:
        chosen = set(rules)
        ordered = [rule for rule in self.rule_order if rule in chosen]
        return ordered + sorted(chosen - set(ordered))

    def to_json(self) -> dict[str, Any]:
        """The issue's change shape: where, what was recorded, what the candidate decides."""
        record = self.recorded
        document: dict[str, Any] = {
            "seq": record.seq,
            "ts": record.ts,
            "session": record.session,
            "agent": record.agent,
            "turn": record.turn,
            "step": record.step,
            "stage": record.stage,
            "tool": record.call.tool if record.call is not None else None,
        }
        if record.call is not None:
            document["args"] = record.call.args
            if not record.call.args_faithful:
                document["args_redacted"] = True
        else:
            document["messages"] = [dict(row) for row in record.messages_recorded]
        recorded: dict[str, Any] = {
            "decision": record.verdict.decision,
            "rules": list(record.verdict.rules),
            "message": record.verdict.message,
        }
        if record.stage == "post-execute":
            recorded["redactions"] = record.redactions
        document["recorded"] = recorded
        if len(self.replayed) == 1:
            (only,) = self.replayed
            replayed: dict[str, Any] = {"decision": only.decision, "rules": self._rules(only.rules)}
            if self.message is not None:
                replayed["message"] = self.message
            if record.stage == "post-execute":
                replayed["redactions"] = self.redactions
        else:
            decisions = sorted(
                {outcome.decision for outcome in self.replayed},
                key=lambda word: RANKS[record.stage].get(word, 0),
            )
            certain = frozenset.intersection(*(outcome.rules for outcome in self.replayed))
            replayed = {
                "decision": decisions[0] if len(decisions) == 1 else None,
                "rules": self._rules(certain),
                "possible": [
                    {"decision": outcome.decision, "rules": self._rules(outcome.rules)}
                    for outcome in sorted(self.replayed, key=outcome_order(record.stage))
                ],
            }
        document["replayed"] = replayed
        document["verdict"] = self.verdict
        document["direction"] = self.direction
        if self.blind:
            document["blind_rules"] = [rule.to_json() for rule in self.blind]
        if self.notes:
            document["notes"] = list(self.notes)
        if self.told is not None:
            document["told"] = self.told.to_json()
        return document


def outcome_order(stage: str) -> Callable[[Outcome], tuple[int, list[str]]]:
    ranks = RANKS[stage]
    return lambda outcome: (ranks.get(outcome.decision, 0), sorted(outcome.rules))


@dataclass(slots=True)
class ReplaySummary:
    """Counts over the whole replay (the JSON ``summary``)."""

    records: int = 0
    replayed: int = 0
    unchanged: int = 0
    changed: int = 0
    undetermined: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    by_stage: dict[str, Counter[str]] = field(default_factory=lambda: {stage: Counter() for stage in _STAGES})
    by_direction: Counter[str] = field(default_factory=Counter)
    by_rule: dict[str, Counter[str]] = field(default_factory=dict)
    rules_evaluated: int = 0
    evaluations_cached: int = 0
    outcomes_reused: int = 0
    now_from: Counter[str] = field(default_factory=Counter)
    redacted_arguments: int = 0
    digest_only_results: int = 0
    digest_only_messages: int = 0
    #: ``hook_told`` records: the agent was told a safe answer instead of the decision recorded for
    #: that request (which is the one replayed); counted here, never replayed themselves.
    told: int = 0
    in_process: int = 0  #: replayed decisions a hook made itself because its gateway did not answer

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, zero counts included, so CI can read any field."""
        return {
            "records": self.records,
            "replayed": self.replayed,
            "unchanged": self.unchanged,
            "changed": self.changed,
            "undetermined": self.undetermined,
            "skipped": sum(self.skipped.values()),
            "skipped_by_reason": {reason: self.skipped.get(reason, 0) for reason in SKIP_REASONS},
            "by_stage": {
                stage: {key: counts.get(key, 0) for key in _VERDICT_COUNTS}
                for stage, counts in self.by_stage.items()
            },
            "by_direction": {key: self.by_direction.get(key, 0) for key in DIRECTIONS},
            "by_rule": {
                rule: {"gained": counts.get("gained", 0), "lost": counts.get("lost", 0)}
                for rule, counts in sorted(self.by_rule.items())
            },
            "rules_evaluated": self.rules_evaluated,
            "evaluations_cached": self.evaluations_cached,
            "outcomes_reused": self.outcomes_reused,
            "now_from": {"record": self.now_from.get("record", 0), "ts": self.now_from.get("ts", 0)},
            "told": self.told,
            "in_process": self.in_process,
        }


@dataclass(frozen=True, slots=True)
class RecordedPolicySummary:
    """A policy the replayed decisions were recorded under, and what replay knew about it."""

    digest: str
    engine: str | None
    decisions: int
    knowledge: Literal["same", "fingerprints", "given", "none"]
    params_changed: tuple[tuple[str, Any, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "digest": self.digest,
            "engine": self.engine,
            "decisions": self.decisions,
            "rules_known": {
                "same": "same policy as the candidate",
                "fingerprints": "rule fingerprints recorded",
                "given": "rule fingerprints from the recorded policy given",
                "none": "no rule fingerprints in the log",
            }[self.knowledge],
            "params_changed": [
                {"param": name, "recorded": old, "candidate": new} for name, old, new in self.params_changed
            ],
        }


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """Everything a replay found; ``exit_code`` is what ``dsh-policy replay`` exits with."""

    files: tuple[str, ...]
    verification: VerificationReport
    replayed_unverified: bool
    candidate: CompiledPolicy
    evaluate: EvaluateMode
    recorded_policies: tuple[RecordedPolicySummary, ...]
    summary: ReplaySummary
    changes: tuple[ReplayedDecision, ...]
    undetermined: tuple[ReplayedDecision, ...]
    limits: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        """0 nothing changed, 1 something changed or may have (undetermined decisions count: a
        CI gate must not pass what it could not check)."""
        return 1 if self.changes or self.undetermined else 0

    def to_json(self) -> dict[str, Any]:
        """The JSON document of ``dsh-policy replay --format json``."""
        verification = self.verification
        return {
            "log": {
                "files": list(self.files),
                "intact": verification.intact,
                "records_checked": verification.records_checked,
                "signatures": verification.signature_mode,
                "first_error": verification.first_error.to_json() if verification.first_error else None,
                "replayed_unverified": self.replayed_unverified,
            },
            "candidate": {
                "digest": self.candidate.digest,
                "engine": self.candidate.engine_name,
                "packs": [
                    {"name": pack.name, "path": pack.path, "digest": pack.digest}
                    for pack in self.candidate.packs
                ],
            },
            "recorded_policies": [policy.to_json() for policy in self.recorded_policies],
            "inputs": {
                "evaluate": self.evaluate,
                "now": "the decision's recorded instant, else the record's ts",
                "params": "candidate",
                "engine": self.candidate.engine_name,
            },
            "summary": self.summary.to_json(),
            "changes": [change.to_json() for change in self.changes],
            "undetermined": [item.to_json() for item in self.undetermined],
            "limits": list(self.limits),
        }


@dataclass(frozen=True, slots=True)
class ReplayRefusal:
    """Why nothing was replayed: the log failed verification (and ``allow_unverified`` was not
    given), could not be read, or the verification key could not be loaded."""

    reason: str
    verification: VerificationReport | None

    exit_code = 2

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "refused": self.reason,
            "verification": self.verification.to_json() if self.verification is not None else None,
        }
