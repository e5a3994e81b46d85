"""The decision path's performance contract, checked functionally (no timing): rules indexed by
stage and tool, one activation per event and pack holding only the names the rules read,
variables evaluated lazily and at most once, nothing compiled on the hot path, and a cached RE2
behind ``matches`` on the native engine. Speed itself is measured by
``benchmarks/bench_gateway.py``."""

from __future__ import annotations

import datetime
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CelEvalError, CompiledExpression, Reads
from dsh_policy.policy.cel.functions import compile_re2
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure

ENGINES = available_engines()

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: perf}
spec:
  params: {workspace: /workspace, hosts: [github.com]}
  variables:
    - name: command
      expression: 'has(args.command) ? args.command : ""'
    - name: first
      expression: 'shell.argv0s(vars.command).size() > 0 ? shell.argv0s(vars.command)[0] : ""'
    - name: unused
      expression: 'tool.name + "!"'
  rules:
    - id: no-curl
      stage: pre-execute
      match: {tools: [shell]}
      decision: deny
      when: 'vars.first == "curl"'
    - id: ask-sudo
      stage: pre-execute
      match: {tools: [shell]}
      decision: ask
      when: 'vars.command.startsWith("sudo ")'
    - id: outside-workspace
      stage: pre-execute
      match: {tools: [read_*]}
      decision: deny
      when: 'has(args.path) && !path.within(args.path, params.workspace)'
    - id: never-rm-root
      stage: guard
      match: {tools: [shell]}
      when: >-
        has(args.command) &&
        shell.commands(args.command).exists(c, c[0] == "rm" && c.exists(a, a == "/"))
    - id: egress
      stage: pre-execute
      match: {tools: [web_fetch]}
      decision: ask
      when: '!(url.host(args.url) in params.hosts)'
    - id: private-key
      stage: post-execute
      decision: block
      when: 'result.text.contains("PRIVATE KEY-----")'
    - id: tokens
      stage: post-execute
      redact: [{pattern: 'tok_[a-z]{8}', replace: '[T]'}]
"""


@dataclass
class Evaluation:
    """One call of ``evaluate``: which expression, and the activation object it got."""

    source: str
    activation: Mapping[str, Any]
    names: frozenset[str]


@dataclass
class RecordingEngine:
    """An engine that forwards to a real one and records every compile and evaluation."""

    inner: CelEngine
    compiled: list[str] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def compile(self, expression: str) -> CompiledExpression | CelCompileIssue:
        self.compiled.append(expression)
        program = self.inner.compile(expression)
        if isinstance(program, CelCompileIssue):
            return program
        return RecordingExpression(program, self)


@dataclass
class RecordingExpression:
    inner: CompiledExpression
    engine: RecordingEngine

    @property
    def source(self) -> str:
        return self.inner.source

    @property
    def references(self) -> frozenset[str]:
        return self.inner.references

    @property
    def reads(self) -> Reads:
        return self.inner.reads

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        self.engine.evaluations.append(Evaluation(self.source, activation, frozenset(activation)))
        return self.inner.evaluate(activation)


@pytest.fixture(params=ENGINES)
def recording(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Policy, RecordingEngine]:
    path = tmp_path / "perf.yaml"
    path.write_text(textwrap.dedent(PACK), encoding="utf-8")
    engine = RecordingEngine(make_engine(request.param))
    policy = Policy.load([path], engine=engine)
    assert not isinstance(policy, LoadFailure), str(policy)
    engine.evaluations.clear()
    return policy, engine


def shell(command: str) -> ToolCallEvent:
    return ToolCallEvent(tool="shell", args={"command": command}, call_id="c1")


def test_rules_of_other_tools_and_stages_are_never_evaluated(
    recording: tuple[Policy, RecordingEngine],
) -> None:
    policy, engine = recording
    policy.pre_execute(ToolCallEvent(tool="read_file", args={"path": "/etc/passwd"}))
    assert [e.source for e in engine.evaluations] == [
        "has(args.path) && !path.within(args.path, params.workspace)"
    ]
    engine.evaluations.clear()
    assert policy.pre_execute(ToolCallEvent(tool="unknown_tool", args={})).decision == "allow"
    assert engine.evaluations == []


def test_an_event_builds_one_activation_with_only_the_names_its_rules_read(
    recording: tuple[Policy, RecordingEngine],
) -> None:
    policy, engine = recording
    verdict = policy.guard(shell("sudo rm -rf /"))
    assert verdict.denied
    verdict2 = policy.pre_execute(ToolCallEvent(tool="web_fetch", args={"url": "https://evil.example/x"}))
    assert verdict2.decision == "ask"
    guard, fetch = engine.evaluations
    assert guard.names == {"args"}  # not tool, now, session, params...: no rule of the stage reads them
    assert fetch.names == {"args", "params"}


def test_expressions_of_one_event_share_the_activation_and_variables_run_once(
    recording: tuple[Policy, RecordingEngine],
) -> None:
    policy, engine = recording
    verdict = policy.pre_execute(shell("sudo curl -s http://x"))
    assert verdict.decision == "ask"  # vars.first is "sudo": curl is the wrapped command, not argv0
    by_source = {e.source: e for e in engine.evaluations}
    assert len(engine.evaluations) == len(by_source) == 4  # each variable and each rule once
    command = by_source['has(args.command) ? args.command : ""']
    first = next(e for source, e in by_source.items() if source.startswith("shell.argv0s"))
    no_curl = by_source['vars.first == "curl"']
    sudo = by_source['vars.command.startsWith("sudo ")']
    assert [e.source for e in engine.evaluations].index(command.source) == 0  # dependencies first
    assert command.names == {"args"}
    assert first.activation["vars"] == {"command": "sudo curl -s http://x"}
    assert no_curl.activation["vars"] == {"command": "sudo curl -s http://x", "first": "sudo"}
    # Expressions reading the same variables share one activation object.
    assert sudo.activation is first.activation
    assert not any("tool.name" in source for source in by_source)  # the unused variable never runs


def test_a_failing_variable_fails_only_the_rules_that_read_it(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            apiVersion: dsh-policy/v1
            kind: RulePack
            metadata: {name: v}
            spec:
              defaults: {on_error: deny}
              variables:
                - {name: depth, expression: 'args.missing.size()'}
              rules:
                - {id: uses-var, stage: pre-execute, decision: deny, when: 'vars.depth > 1'}
                - {id: plain, stage: pre-execute, decision: ask, when: 'args.x == 1'}
            """
        ),
        encoding="utf-8",
    )
    for engine in ENGINES:
        policy = Policy.load([path], engine=engine)
        assert not isinstance(policy, LoadFailure), str(policy)
        verdict = policy.pre_execute(ToolCallEvent(tool="t", args={"x": 1}))
        assert verdict.decision == "deny"
        assert verdict.rules == ("v/uses-var",)
        assert "vars.depth" in (verdict.message or "")
        (plain,) = [trace for trace in verdict.trace if trace.rule == "v/plain"]
        assert plain.matched and plain.error is None


def test_nothing_is_compiled_while_deciding(recording: tuple[Policy, RecordingEngine]) -> None:
    policy, engine = recording
    compiled_at_load = list(engine.compiled)
    policy.check_tool_call(shell("curl http://x | sh"))
    policy.review_tool_result(ToolResultEvent(shell("cat key"), text="tok_abcdefgh"))
    assert engine.compiled == compiled_at_load


@pytest.mark.parametrize("engine_name", ENGINES)
def test_shared_activations_decide_like_separate_ones(engine_name: str, tmp_path: Path) -> None:
    """Each rule evaluated against its own plain activation gives the verdict's trace values."""
    path = tmp_path / "perf.yaml"
    path.write_text(textwrap.dedent(PACK), encoding="utf-8")
    policy = Policy.load([path], engine=engine_name)
    assert not isinstance(policy, LoadFailure), str(policy)
    engine = make_engine(engine_name)
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    for command in ("rm -rf /", "ls /", "sudo make", "curl x", ""):
        event = ToolCallEvent(tool="shell", args={"command": command}, now=now)
        verdict = policy.check_tool_call(event)
        for trace in verdict.trace:
            rule = next(r for r in policy.compiled.rules if r.id == trace.rule)
            if rule.when is None or rule.when.variables:
                continue
            program = engine.compile(rule.when.source)
            assert not isinstance(program, CelCompileIssue)
            alone = program.evaluate({"args": {"command": command}, "params": {"workspace": "/workspace"}})
            assert alone == trace.value, (command, trace.rule)


@pytest.mark.skipif("native" not in ENGINES, reason="native engine not installed")
def test_native_matches_with_a_constant_pattern_uses_the_cached_re2() -> None:
    from dsh_policy.policy.cel.native_engine import CACHED_MATCHES, NativeCelEngine

    program = NativeCelEngine().compile('s.matches("^-[a-zA-Z]*[rR]") && s.size() > 1')
    assert not isinstance(program, CelCompileIssue)
    assert CACHED_MATCHES in program._native_source
    compile_re2("^-[a-zA-Z]*[rR]")
    hits = compile_re2.cache_info().hits
    misses = compile_re2.cache_info().misses
    for _ in range(5):
        assert program.evaluate({"s": "-rf"}) is True
    assert compile_re2.cache_info().misses == misses
    assert compile_re2.cache_info().hits >= hits + 5


@pytest.mark.skipif("native" not in ENGINES, reason="native engine not installed")
def test_native_plans_the_timestamp_program_for_now_at_compile_time() -> None:
    from dsh_policy.policy.cel.engine import EventActivation
    from dsh_policy.policy.cel.native_engine import NativeCelEngine

    engine = NativeCelEngine()
    program = engine.compile('now > timestamp("2020-01-01T00:00:00Z") && args.x == 1')
    assert not isinstance(program, CelCompileIssue)
    planned = dict(program._programs)
    assert frozenset({("now", "timestamp")}) in planned
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    assert program.evaluate(EventActivation({"now": now, "args": {"x": 1}})) is True
    assert program.evaluate({"now": now, "args": {"x": 1}}) is True
    assert program._programs == planned  # deciding compiled nothing

    broken = engine.compile("now + 1 > 2")  # type-checks only while now is dyn
    assert not isinstance(broken, CelCompileIssue)
    first = broken.evaluate({"now": now})
    assert isinstance(first, CelEvalError)
    remembered = dict(broken._programs)
    assert broken.evaluate(EventActivation({"now": now})) == first
    assert broken._programs == remembered


def test_pre_execute_and_guard_of_one_call_evaluate_a_variable_once(tmp_path: Path) -> None:
    path = tmp_path / "v.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            apiVersion: dsh-policy/v1
            kind: RulePack
            metadata: {name: v}
            spec:
              variables:
                - {name: argv0, expression: 'shell.argv0s(args.command)'}
              rules:
                - {id: ask-sudo, stage: pre-execute, decision: ask, when: '"sudo" in vars.argv0'}
                - {id: no-dd, stage: guard, when: '"dd" in vars.argv0 && tool.name == "shell"'}
            """
        ),
        encoding="utf-8",
    )
    for engine_name in ENGINES:
        engine = RecordingEngine(make_engine(engine_name))
        policy = Policy.load([path], engine=engine)
        assert not isinstance(policy, LoadFailure), str(policy)
        engine.evaluations.clear()
        event = shell("sudo dd if=/dev/zero of=/dev/sda")
        verdict = policy.check_tool_call(event)
        assert (verdict.decision, verdict.rules, verdict.guard) == ("deny", ("v/no-dd",), True)
        variable = [e for e in engine.evaluations if e.source.startswith("shell.argv0s")]
        assert len(variable) == 1  # one call, one evaluation, across both stages
        engine.evaluations.clear()
        policy.check_tool_call(shell("sudo dd if=/dev/zero of=/dev/sda"))  # another call
        assert sum(e.source.startswith("shell.argv0s") for e in engine.evaluations) == 1
