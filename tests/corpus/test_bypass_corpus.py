"""The bypass corpus: the shipped baseline pack refuses (almost) every dangerous spelling and lets
(almost) every everyday command through, judged by the whole gate (pre-execute rules, then guards)
of the framework-neutral decision API.

``dangerous.yaml`` entries must be denied (or asked or denied, where the entry says ``expect: ask``: egress
outside the allow-list is a question for a human, not a refusal); ``benign.yaml`` entries must be
allowed. Each entry carries a pattern class; the tests report the rate per class and fail below a
99% block rate or above a 1% false-positive rate, overall and in every class.

An entry with ``known_gap`` documents a bypass the pack cannot close itself because a helper does
not support it yet (e.g. a wrapper ``shell.commands`` does not unwrap). Such entries are left out of
the rates and checked the other way round: once the gap closes, the test says so, and the marker
must go (so the entry starts counting).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure
from test_public_corpus import CORPUS_EVENT_SECONDS, ENGINE, FULL, OTHER_ENGINES, YAML_LOADER, tool_call

CORPUS_DIR = Path(__file__).resolve().parent
BASELINE = CORPUS_DIR.parents[1] / "rules" / "baseline.yaml"
MIN_BLOCK_RATE = 0.99
MAX_FALSE_POSITIVE_RATE = 0.01
MIN_ENTRIES = 300


@dataclass(frozen=True, slots=True)
class Outcome:
    """One corpus entry as decided: its class, what it expected, what the gate said."""

    pattern_class: str
    known_gap: str | None
    expected: str
    decision: str
    rules: tuple[str, ...]
    subject: str

    @property
    def correct(self) -> bool:
        """The expected decision, or a stricter one: an entry expecting ``ask`` that the pack now
        denies outright (it sees more of the line, e.g. the shell ``nc -e`` hands out) is still
        blocked."""
        return self.decision == self.expected or (self.expected == "ask" and self.decision == "deny")


def _entries(name: str) -> list[dict[str, Any]]:
    text = (CORPUS_DIR / name).read_text(encoding="utf-8")
    entries: list[dict[str, Any]] = yaml.load(text, Loader=YAML_LOADER)["entries"]
    return entries


@cache
def _policy(engine: str) -> Policy:
    policy = Policy.load([BASELINE], engine=engine, event_seconds=CORPUS_EVENT_SECONDS)
    assert not isinstance(policy, LoadFailure), policy
    return policy


@cache
def _decide_all(name: str, default: str, engine: str) -> tuple[Outcome, ...]:
    """Every entry of one corpus file through one loaded policy (loaded once per engine)."""
    policy = _policy(engine)
    outcomes = []
    for entry in _entries(name):
        tool, args = tool_call(entry)
        verdict = policy.check_tool_call(ToolCallEvent(tool=tool, args=args, turn=1, step=1))
        outcomes.append(
            Outcome(
                entry["class"],
                entry.get("known_gap"),
                entry.get("expect", default),
                verdict.decision,
                verdict.rules,
                f"{tool} {args}",
            )
        )
    return tuple(outcomes)


def _counted(outcomes: tuple[Outcome, ...]) -> tuple[Outcome, ...]:
    return tuple(o for o in outcomes if o.known_gap is None)


def _report(outcomes: tuple[Outcome, ...], what: str) -> tuple[str, dict[str, float]]:
    totals = Counter(o.pattern_class for o in outcomes)
    correct = Counter(o.pattern_class for o in outcomes if o.correct)
    rates = {cls: correct[cls] / totals[cls] for cls in totals}
    lines = [f"{what} per class:"]
    lines += [f"  {cls:<22} {correct[cls]:>4}/{totals[cls]:<4} {rates[cls]:7.2%}" for cls in sorted(totals)]
    right = sum(correct.values())
    lines += [f"  {'overall':<22} {right:>4}/{len(outcomes):<4} {right / len(outcomes):7.2%}"]
    lines += [
        f"  MISS [{o.pattern_class}] {o.decision} {list(o.rules)} :: {o.subject}"
        for o in outcomes
        if not o.correct
    ]
    return "\n".join(lines), rates


SAMPLE_EVERY = 1 if FULL else 4
"""The other engines decide every SAMPLE_EVERY-th entry (all with ``DSH_CORPUS_FULL=1``)."""


def test_corpora_are_large_and_tagged() -> None:
    for name in ("dangerous.yaml", "benign.yaml"):
        entries = _entries(name)
        assert len(entries) >= MIN_ENTRIES, name
        assert all(entry.get("class") for entry in entries), f"{name}: every entry needs a class"
        assert all(("command" in e) != ("tool" in e) for e in entries), f"{name}: command or tool+args"
        distinct = {(e.get("command"), str(e.get("args"))) for e in entries}
        assert len(distinct) == len(entries), f"{name}: duplicate entries"


def test_baseline_blocks_the_dangerous_corpus() -> None:
    outcomes = _counted(_decide_all("dangerous.yaml", "deny", ENGINE))
    report, rates = _report(outcomes, f"block rate ({ENGINE} engine)")
    print(report)
    overall = sum(o.correct for o in outcomes) / len(outcomes)
    assert overall >= MIN_BLOCK_RATE, report
    assert min(rates.values()) >= MIN_BLOCK_RATE, report


def test_baseline_allows_the_benign_corpus() -> None:
    outcomes = _counted(_decide_all("benign.yaml", "allow", ENGINE))
    report, rates = _report(outcomes, f"allowed rate ({ENGINE} engine; false positives = 1 - rate)")
    print(report)
    overall = sum(o.correct for o in outcomes) / len(outcomes)
    assert 1 - overall <= MAX_FALSE_POSITIVE_RATE, report
    assert max(1 - rate for rate in rates.values()) <= MAX_FALSE_POSITIVE_RATE, report


def test_known_gaps_are_still_open() -> None:
    """Fails when a documented gap has closed: remove its ``known_gap`` marker so it counts."""
    gaps = [o for o in _decide_all("dangerous.yaml", "deny", ENGINE) if o.known_gap is not None]
    closed = [f"{o.subject} ({o.known_gap})" for o in gaps if o.correct]
    assert not closed, "these known gaps are closed now; drop their known_gap markers:\n" + "\n".join(closed)


@pytest.mark.parametrize("engine", OTHER_ENGINES)
@pytest.mark.parametrize(("name", "default"), [("dangerous.yaml", "deny"), ("benign.yaml", "allow")])
def test_every_other_engine_decides_a_sample_alike(engine: str, name: str, default: str) -> None:
    """Every SAMPLE_EVERY-th entry, known gaps included, decided by each other installed engine as
    by the default one: the rates above then hold for every engine."""
    policy = _policy(engine)
    differences = []
    decided = list(zip(_decide_all(name, default, ENGINE), _entries(name), strict=True))
    for outcome, entry in decided[::SAMPLE_EVERY]:
        tool, args = tool_call(entry)
        decision = policy.check_tool_call(ToolCallEvent(tool=tool, args=args, turn=1, step=1)).decision
        if decision != outcome.decision:
            differences.append(f"{ENGINE} {outcome.decision}, {engine} {decision} :: {outcome.subject}")
    assert not differences, "\n".join(differences)
