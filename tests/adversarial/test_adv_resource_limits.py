"""Liveness under pathological rules and inputs: nothing a rule author or a model can write hangs
the gateway. Wall-clock bounds are generous (a shared 2-core machine): these prove termination and
the absence of super-linear blow-ups, they are not speed targets (those live in benchmarks/)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from adv_kit import ENGINES, SHIPPED_PACKS, load
from dsh_policy.policy.cel.python_engine import PythonCelEngine
from dsh_policy.policy.decide import DEFAULT_MAX_SCAN_BYTES, Policy
from dsh_policy.policy.detectors import find
from dsh_policy.policy.events import ToolCallEvent, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.reload import ReloadingPolicy

LIVENESS_SECONDS = 10.0


@contextmanager
def finishes_within(seconds: float = LIVENESS_SECONDS) -> Iterator[None]:
    started = time.monotonic()
    yield
    elapsed = time.monotonic() - started
    assert elapsed < seconds, f"took {elapsed:.1f} s (bound {seconds} s)"


def pack(tmp_path: Path, rules: str, name: str = "limits") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\n"
        f"metadata: {{name: {name}, version: '1'}}\nspec:\n  rules:\n{rules}"
    )
    return path


def policy(tmp_path: Path, rules: str, engine: Any = "python") -> Policy:
    loaded = Policy.load([pack(tmp_path, rules)], engine=engine)
    assert not isinstance(loaded, LoadFailure), str(loaded)
    return loaded


CATASTROPHIC_REGEX = """\
    - id: backtracking-bait
      stage: pre-execute
      when: >-
        args.command.matches("^(a+)+$") || args.command.matches("(x+x+)+y")
        || args.command.matches("(a|aa)*c")
      decision: deny
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_a_catastrophic_backtracking_regex_runs_in_linear_time(tmp_path: Path, engine: str) -> None:
    """``matches`` is RE2: the classic exponential patterns on 1 MiB of near-miss input finish."""
    gate = policy(tmp_path, CATASTROPHIC_REGEX, engine)
    for subject in ("a" * ((1 << 20) - 2) + "!", "x" * ((1 << 20) - 1)):  # under the 1 MiB argument cap
        with finishes_within():
            verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={"command": subject}))
        assert verdict.decision == "allow" and verdict.internal_error is None


_FORTY = "[" + ",".join(str(n) for n in range(25)) + "]"
#: 25^4 = 390,625 iterations at the deepest nesting a pack may use (4 levels, see below).
EXPONENTIAL = (
    "    - id: exponential\n"
    "      stage: {stage}\n"
    f"      when: '{_FORTY}.map(a, {_FORTY}.map(b, {_FORTY}.map(c, {_FORTY}.map(d, a + b + c + d))))"
    ".size() == 0'\n"
    "      {extra}\n"
)


def quick_python() -> PythonCelEngine:
    """The python engine with a short time budget, where the default 2 s would only slow CI."""
    return PythonCelEngine(time_budget=0.3)


@pytest.mark.parametrize(
    ("engine", "stage", "extra", "closed"),
    [
        ("python", "pre-execute", "decision: deny", "deny"),  # the default budget: 200k steps or 2 s
        ("native", "pre-execute", "decision: deny", "deny"),  # 10k comprehension iterations
        ("quick-python", "guard", "message: never", "deny"),
        ("native", "guard", "message: never", "deny"),
    ],
)
def test_an_exponential_comprehension_hits_the_budget_and_fails_closed(
    tmp_path: Path, engine: Any, stage: str, extra: str, closed: str
) -> None:
    """Millions of iterations: the step budget (python) or iteration budget (native) stops
    it, the evaluation error counts as a match, and the call is denied with the reason."""
    engine = quick_python() if engine == "quick-python" else engine
    gate = policy(tmp_path, EXPONENTIAL.format(stage=stage, extra=extra), engine)
    with finishes_within():
        verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={}))
    assert verdict.decision == closed
    assert verdict.rules == ("limits/exponential",)
    assert "could not be evaluated" in (verdict.message or "")
    assert "budget" in (verdict.message or "").lower()


def test_comprehensions_nested_five_deep_are_refused_at_load(tmp_path: Path) -> None:
    five = EXPONENTIAL.replace("map(d, a + b + c + d)", f"map(d, {_FORTY}.map(e, a + e))")
    loaded = Policy.load([pack(tmp_path, five.format(stage="guard", extra="message: x"))], engine="python")
    assert isinstance(loaded, LoadFailure)
    assert "nest deeper than 4" in str(loaded)


def test_an_exponential_comprehension_with_on_error_ignore_does_not_match(tmp_path: Path) -> None:
    """The author's explicit choice: ``on_error: ignore`` makes a budget hit a non-match (and the
    trace still says why). Documented in the threat model as the author's risk."""
    rules = EXPONENTIAL.format(stage="pre-execute", extra="decision: deny\n      on_error: ignore")
    gate = policy(tmp_path, rules, quick_python())
    with finishes_within():
        verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={}))
    assert verdict.decision == "allow"
    (trace,) = verdict.trace
    assert trace.error is not None and "budget" in trace.error


@pytest.mark.parametrize("engine", ENGINES)
def test_a_shell_line_over_256_kib_fails_closed_quickly(engine: str) -> None:
    gate = load(SHIPPED_PACKS, engine)
    command = "echo " + "a" * (300 << 10)
    with finishes_within():
        verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={"command": command}))
    assert verdict.decision == "deny"
    assert "could not be evaluated" in (verdict.message or "")


@pytest.mark.parametrize("engine", ENGINES)
def test_many_secrets_in_a_large_output_are_redacted_in_linear_time(engine: str) -> None:
    """Was: the detectors' overlap check compared every match with every accepted one, so 1 MiB of
    output holding 63,550 key-shaped tokens took 129 s (python) to review: an attacker-fed DoS."""
    gate = load(SHIPPED_PACKS, engine)
    text = "lorem ipsum AKIAIOSFODNN7EXAMPLE " * ((1 << 20) // 33)
    call = ToolCallEvent(tool="read_file", args={"path": "big.txt"})
    with finishes_within():
        verdict = gate.review_tool_result(ToolResultEvent(call=call, text=text))
    assert verdict.decision == "accept"
    assert verdict.redactions == text.count("AKIA")
    assert "AKIAIOSFODNN7EXAMPLE" not in (verdict.redacted_text or "AKIA")


def test_detector_overlap_resolution_is_linear_and_keeps_priority() -> None:
    token = "sk-ant-" + "a1" * 20  # an Anthropic key also matches the OpenAI pattern
    text = (token + " ") * 40_000
    with finishes_within():
        found = find(text)
    assert len(found) == 40_000
    assert {match.name for match in found} == {"anthropic-key"}
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


def test_the_per_tool_rule_index_stays_bounded_whatever_names_the_model_invents() -> None:
    """The index is the compiled stage's, whatever the engine: the default one decides the calls."""
    gate = load(SHIPPED_PACKS, "auto")
    index = gate.compiled.stages["pre-execute"]
    for number in range(6000):
        gate.check_tool_call(ToolCallEvent(tool=f"tool-{number}", args={}))
    assert len(index._memo) <= 4096


def _slow_rules(count: int) -> str:
    """``count`` rules that each run until the time budget stops them."""
    body = EXPONENTIAL.format(stage="pre-execute", extra="decision: deny")
    return "".join(body.replace("id: exponential", f"id: slow-{n}") for n in range(count))


def test_one_stage_of_one_event_is_bounded_by_one_time_budget(tmp_path: Path) -> None:
    """Was: each rule had only its own budget, so N pathological rules cost N budgets (shipped
    packs + a 200 KiB 'a;a;...' shell line: ~33 s python / ~10 s native per call). Now the
    rules still unevaluated when the stage's budget runs out fail closed without running."""
    engine = PythonCelEngine(step_budget=10**9, time_budget=0.2)
    gate = Policy.load([pack(tmp_path, _slow_rules(5))], engine=engine, event_seconds=0.3)
    assert not isinstance(gate, LoadFailure)
    started = time.monotonic()
    verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={}))
    elapsed = time.monotonic() - started
    assert verdict.decision == "deny"
    assert elapsed < 0.85, f"5 rules x 0.2 s under a 0.3 s stage budget took {elapsed:.2f} s"
    late = [entry for entry in verdict.trace if entry.error and "evaluation budget of 0.3 s" in entry.error]
    assert late and all(entry.outcome == "failed-closed" for entry in late)


def test_the_shipped_packs_decide_a_pathological_shell_line_within_the_liveness_bound() -> None:
    """25,600 commands in one line: every shell rule runs into its budget; one stage budget caps
    the sum (python engine, 50 KiB: ~4 s here, where each rule used to spend its own 2 s)."""
    gate = load(SHIPPED_PACKS, "python")
    command = "echo " + "a;" * (50 << 9)
    with finishes_within():
        verdict = gate.check_tool_call(ToolCallEvent(tool="shell", args={"command": command}))
    assert verdict.decision == "deny"


REDACT_ALL = """\
    - id: redact
      stage: post-execute
      redact:
        - {preset: aws-access-key}
"""


def test_an_output_over_the_scan_cap_is_withheld_with_a_clear_message(tmp_path: Path) -> None:
    """Default cap 1 MiB: at the cap the output is reviewed, one byte over it is withheld."""
    gate = policy(tmp_path, REDACT_ALL)
    call = ToolCallEvent(tool="read_file", args={"path": "huge.bin"})
    at_cap = gate.review_tool_result(ToolResultEvent(call=call, text="x" * DEFAULT_MAX_SCAN_BYTES))
    assert at_cap.decision == "accept"
    with finishes_within():
        over = gate.review_tool_result(ToolResultEvent(call=call, text="x" * (DEFAULT_MAX_SCAN_BYTES + 1)))
    assert over.decision == "block"
    assert "1 MiB" in (over.message or "") and "too large" in (over.message or "")
    deep_value = {"pages": [["y" * 1000] * 600, ["z" * 1000] * 600]}  # 1.2 MB of strings in the value
    assert gate.review_tool_result(ToolResultEvent(call=call, text="", value=deep_value)).decision == "block"


def test_the_scan_cap_is_a_policy_option_and_survives_reloads(tmp_path: Path) -> None:
    path = pack(tmp_path, REDACT_ALL)
    call = ToolCallEvent(tool="read_file", args={})
    small = Policy.load([path], engine="python", max_scan_bytes=100)
    assert not isinstance(small, LoadFailure)
    assert small.review_tool_result(ToolResultEvent(call=call, text="x" * 101)).decision == "block"
    reloading = ReloadingPolicy.load([path], engine="python", max_scan_bytes=100)
    assert isinstance(reloading, ReloadingPolicy)
    path.write_text(path.read_text().replace("id: redact", "id: redact-again"))
    assert reloading.check_now() is True
    assert reloading.review_tool_result(ToolResultEvent(call=call, text="x" * 101)).decision == "block"


def test_a_tool_no_post_execute_rule_reviews_is_not_capped(tmp_path: Path) -> None:
    web_only = REDACT_ALL.replace("stage: post-execute", "stage: post-execute\n      match: {tools: [x]}")
    gate = policy(tmp_path, web_only)
    call = ToolCallEvent(tool="read_file", args={})
    verdict = gate.review_tool_result(ToolResultEvent(call=call, text="x" * (2 << 20)))
    assert verdict.decision == "accept"
