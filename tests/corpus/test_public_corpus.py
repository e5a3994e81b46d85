"""The public corpus: dangerous and everyday commands written for this project from public sources
(open-source guards' test suites, GTFOBins-style references, offensive-security cheat sheets,
incident reports, tool documentation), judged by every shipped pack together with default params,
the way a deployment of the recommended set sees them.

``public/dangerous/<category>.yaml`` entries must be blocked (deny or ask); ``public/benign/<category>
.yaml`` entries must be allowed. Every entry names its source (a key of the file's ``sources``). An
entry marked ``debatable`` (with the reason) is decided and reported but not counted: reasonable
guards disagree about it, and forcing a label would only tune the packs to our own opinion.

The bars are the issue's: at least 95% of the dangerous entries blocked and no category below 90%;
at most 2% of the benign ones blocked overall (and no benign category above 5%). The whole corpus is
also checked on the original bypass corpus (``dangerous.yaml``/``benign.yaml``) with every pack
loaded: adding packs must not block an everyday command there, nor let a dangerous one through.

Run with ``-s`` to see the per-category table and every miss.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

CORPUS = Path(__file__).resolve().parent
PUBLIC = CORPUS / "public"
RULES = CORPUS.parents[1] / "rules"
SHIPPED = sorted(p for p in RULES.glob("*.yaml") if not p.name.endswith(".cases.yaml"))
MIN_BLOCKED = 0.95
MIN_BLOCKED_PER_CATEGORY = 0.90
MAX_FALSE_POSITIVES = 0.02
MAX_FALSE_POSITIVES_PER_CATEGORY = 0.05
ENGINE = "auto"
"""The engine the whole corpus runs on: the one a deployment runs by default (the closure compiler,
with the native runtime for what only it compiles). Every other installed engine decides a sample
alike (``test_every_other_engine_decides_a_sample_alike``)."""
OTHER_ENGINES = [name for name in available_engines() if name != "closure"]
FULL = os.environ.get("DSH_CORPUS_FULL", "") not in ("", "0")
"""``DSH_CORPUS_FULL=1``: every other engine on every entry and the bypass corpus in full; by
default both take a deterministic sample (every SAMPLE_EVERY-th entry) to keep CI fast."""
SAMPLE_EVERY = 1 if FULL else 8
YAML_LOADER = yaml.CSafeLoader
"""libyaml (PyYAML's wheels ship it): the corpora are thousands of entries, read by every worker."""


@dataclass(frozen=True, slots=True)
class Entry:
    side: str  # "dangerous" | "benign"
    category: str
    tool: str
    args: dict[str, Any]
    source: str
    debatable: str | None

    @property
    def subject(self) -> str:
        # A harness's own ``shell`` tool may carry other arguments (the OpenAI Agents ``commands``).
        if self.tool == "shell" and isinstance(self.args.get("command"), str):
            return self.args["command"]
        return f"{self.tool} {self.args}"


def tool_call(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A corpus entry's call: ``command`` is a shell call, else its ``tool`` and ``args``."""
    return ("shell", {"command": raw["command"]}) if "command" in raw else (raw["tool"], raw["args"])


def load_entries(side: str, root: Path = PUBLIC) -> list[Entry]:
    """Every entry of one side of a corpus folder, each checked for a known source."""
    found = []
    for path in sorted((root / side).glob("*.yaml")):
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=YAML_LOADER)
        sources = document["sources"]
        for raw in document["entries"]:
            assert raw["source"] in sources or "/" in raw["source"], f"{path.name}: unknown source {raw}"
            tool, args = tool_call(raw)
            found.append(Entry(side, path.stem, tool, args, raw["source"], raw.get("debatable")))
    return found


CORPUS_EVENT_SECONDS = 30.0
"""The corpora measure what is decided, not how fast (speed lives in ``benchmarks/``): the python
engine's slowest event costs about 0.4 s of CPU, and on a host busy with other jobs the default
2 s budget once ran out and failed an event closed, a flake unrelated to what the corpus tests."""


@cache
def shipped_policy(engine: str) -> Policy:
    policy = Policy.load(SHIPPED, engine=engine, event_seconds=CORPUS_EVENT_SECONDS)
    assert not isinstance(policy, LoadFailure), policy
    return policy


def decide(entry: Entry, engine: str) -> tuple[str, tuple[str, ...]]:
    verdict = shipped_policy(engine).check_tool_call(
        ToolCallEvent(tool=entry.tool, args=entry.args, turn=1, step=1)
    )
    return verdict.decision, verdict.rules


@cache
def outcomes(side: str, engine: str, root: Path = PUBLIC) -> tuple[tuple[Entry, str, tuple[str, ...]], ...]:
    return tuple((entry, *decide(entry, engine)) for entry in load_entries(side, root))


def correct(entry: Entry, decision: str) -> bool:
    return decision in ("deny", "ask") if entry.side == "dangerous" else decision == "allow"


def report(side: str, engine: str, root: Path = PUBLIC) -> tuple[str, dict[str, float], float]:
    """The per-category table (counted entries only), the misses and the debatable ones."""
    totals: Counter[str] = Counter()
    right: Counter[str] = Counter()
    misses: dict[str, list[str]] = defaultdict(list)
    debatable: list[str] = []
    for entry, decision, rules in outcomes(side, engine, root):
        if entry.debatable is not None:
            debatable.append(f"  DEBATABLE [{entry.category}] {decision} {list(rules)} :: {entry.subject}")
            continue
        totals[entry.category] += 1
        if correct(entry, decision):
            right[entry.category] += 1
        else:
            misses[entry.category].append(
                f"  MISS [{entry.category}] {decision} {list(rules)} :: {entry.subject}"
            )
    rates = {category: right[category] / totals[category] for category in totals}
    overall = sum(right.values()) / sum(totals.values())
    what = "blocked" if side == "dangerous" else "allowed"
    lines = [f"{side} corpus, {what} per category ({engine} engine):"]
    lines += [f"  {c:<22} {right[c]:>4}/{totals[c]:<4} {rates[c]:7.1%}" for c in sorted(totals)]
    lines += [f"  {'overall':<22} {sum(right.values()):>4}/{sum(totals.values()):<4} {overall:7.1%}"]
    lines += [line for category in sorted(misses) for line in misses[category]] + debatable
    return "\n".join(lines), rates, overall


def test_every_entry_is_sourced_unique_and_categorised() -> None:
    for side in ("dangerous", "benign"):
        entries = load_entries(side)
        assert len(entries) >= 300, side
        subjects = [(e.tool, str(e.args)) for e in entries]
        duplicates = [s for s, n in Counter(subjects).items() if n > 1]
        assert not duplicates, f"{side}: duplicate entries {duplicates}"
    categories = {e.category for e in load_entries("dangerous")}
    assert len(categories) >= 8


def test_shipped_packs_block_the_public_dangerous_corpus() -> None:
    text, rates, overall = report("dangerous", ENGINE)
    print(text)
    assert overall >= MIN_BLOCKED, text
    assert min(rates.values()) >= MIN_BLOCKED_PER_CATEGORY, text


def test_shipped_packs_allow_the_public_benign_corpus() -> None:
    text, rates, overall = report("benign", ENGINE)
    print(text)
    assert 1 - overall <= MAX_FALSE_POSITIVES, text
    assert max(1 - rate for rate in rates.values()) <= MAX_FALSE_POSITIVES_PER_CATEGORY, text


def _bypass_entries(name: str) -> list[dict[str, Any]]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    entries: list[dict[str, Any]] = yaml.load(text, Loader=YAML_LOADER)["entries"]
    return [entry for entry in entries if "known_gap" not in entry]


@pytest.mark.parametrize("engine", OTHER_ENGINES)
def test_every_other_engine_decides_a_sample_alike(engine: str) -> None:
    """Every SAMPLE_EVERY-th entry of both sides decided by each other installed engine as by the
    default one (the whole corpus on the python engine would cost a minute of CI; the engines'
    agreement is the point)."""
    differences = []
    for side in ("dangerous", "benign"):
        for entry, decision, _rules in outcomes(side, ENGINE)[::SAMPLE_EVERY]:
            other, _ = decide(entry, engine)
            if other != decision:
                differences.append(f"{side}: {ENGINE} {decision}, {engine} {other} :: {entry.subject}")
    assert not differences, "\n".join(differences)


def test_adding_packs_keeps_the_bypass_corpus() -> None:
    """With every pack loaded, the original corpus keeps its outcome: dangerous entries stay
    blocked (an entry expecting ask may now be denied, never allowed), benign ones allowed
    (every third entry by default, all with DSH_CORPUS_FULL=1)."""
    engine = ENGINE
    regressions = []
    for name, blocked in (("dangerous.yaml", True), ("benign.yaml", False)):
        for raw in _bypass_entries(name)[:: 1 if FULL else 3]:
            tool, args = tool_call(raw)
            entry = Entry("dangerous" if blocked else "benign", raw["class"], tool, args, name, None)
            decision, rules = decide(entry, engine)
            if not correct(entry, decision):
                regressions.append(f"{name} [{raw['class']}] {decision} {list(rules)} :: {entry.subject}")
    assert not regressions, "\n".join(regressions)
