"""The decision API the plugins, hook adapters, cases and explain share: stages, precedence,
modes, on_error, params/variables/defaults, redaction and failing closed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import structlog
from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy.cel import make_engine
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import StepEvent, StepMessage, ToolCallEvent, ToolResultEvent

MakePolicy = Callable[..., Policy]


def call(tool: str, **args: Any) -> ToolCallEvent:
    return ToolCallEvent(
        tool, freeze_json(args), call_id="c1", session_id="s1", agent_id="a1", turn=1, step=1
    )


def result(tool: str, text: str, value: Any = None, **args: Any) -> ToolResultEvent:
    return ToolResultEvent(call(tool, **args), text=text, value=freeze_json(value))


def prompt(text: str, turn: int = 1) -> StepEvent:
    return StepEvent("s1", "a1", turn, 1, (StepMessage("user", text),))


PRE_EXECUTE = """
rules:
  - {id: deny-rm, stage: pre-execute, match: {tools: [shell]}, when: 'args.command.startsWith("rm")',
     decision: deny, message: no rm}
  - {id: ask-curl, stage: pre-execute, match: {tools: [shell]}, when: 'args.command.contains("curl")',
     decision: ask}
  - {id: allow-ls, stage: pre-execute, match: {tools: [shell]}, when: 'args.command.contains("ls")',
     decision: allow}
  - {id: ask-http, stage: pre-execute, match: {tools: ["http_*"]}, decision: ask, message: egress}
"""


def test_pre_execute_precedence_is_deny_then_ask_then_allow(make_policy: MakePolicy) -> None:
    policy = make_policy(PRE_EXECUTE)
    verdict = policy.pre_execute(call("shell", command="rm x; curl y; ls"))
    assert (verdict.decision, verdict.rules, verdict.message) == ("deny", ("t/deny-rm",), "no rm")
    verdict = policy.pre_execute(call("shell", command="curl y; ls"))
    assert (verdict.decision, verdict.rules) == ("ask", ("t/ask-curl",))
    assert verdict.message == 'tool "shell" needs approval (policy rule t/ask-curl)'
    assert policy.pre_execute(call("shell", command="ls")).decision == "allow"
    nothing = policy.pre_execute(call("shell", command="pwd"))
    assert (nothing.decision, nothing.rules, nothing.message) == ("allow", (), None)


def test_tool_globs_and_exact_names_select_rules(make_policy: MakePolicy) -> None:
    policy = make_policy(PRE_EXECUTE)
    assert policy.pre_execute(call("http_get", url="x")).rules == ("t/ask-http",)
    assert policy.pre_execute(call("http", url="x")).rules == ()
    assert [entry.rule for entry in policy.pre_execute(call("read_file", path="x")).trace] == []


@pytest.mark.parametrize("default", ["deny", "ask"])
def test_defaults_decision_applies_when_no_rule_decides(make_policy: MakePolicy, default: str) -> None:
    policy = make_policy(
        f"""
        defaults: {{decision: {default}}}
        rules:
          - {{id: allow-read, stage: pre-execute, match: {{tools: [read_file]}}, decision: allow}}
        """
    )
    assert policy.pre_execute(call("read_file", path="a")).decision == "allow"
    verdict = policy.pre_execute(call("shell", command="ls"))
    assert (verdict.decision, verdict.rules) == (default, ())
    assert f"defaults.decision: {default}" in (verdict.message or "")


GUARDS = """
rules:
  - {id: allow-all, stage: pre-execute, decision: allow}
  - id: no-root
    stage: guard
    match: {tools: [shell]}
    when: shell.commands(args.command).exists(c, c[0] == "rm" && "/" in c)
    message: never delete the root
"""


def test_guard_beats_every_pre_execute_outcome(make_policy: MakePolicy) -> None:
    policy = make_policy(GUARDS)
    event = call("shell", command="sudo rm -rf /")
    assert policy.pre_execute(event).decision == "allow"
    guard = policy.guard(event)
    assert (guard.denied, guard.rules, guard.message) == (True, ("t/no-root",), "never delete the root")
    whole = policy.check_tool_call(event)
    assert (whole.decision, whole.rules, whole.guard) == ("deny", ("t/no-root",), True)
    assert [entry.rule for entry in whole.trace] == ["t/allow-all", "t/no-root"]
    assert policy.check_tool_call(call("shell", command="ls /")).decision == "allow"


def test_guards_fail_closed_on_evaluation_errors(make_policy: MakePolicy) -> None:
    policy = make_policy(GUARDS)
    guard = policy.guard(call("shell", note="no command key"))
    assert guard.denied and guard.rules == ("t/no-root",)
    assert "could not be evaluated" in (guard.message or "") and "failing closed" in (guard.message or "")
    assert guard.trace[0].outcome == "failed-closed" and guard.trace[0].error


@pytest.mark.parametrize(("on_error", "decision"), [("deny", "deny"), ("ignore", "allow")])
def test_on_error_decides_what_an_evaluation_error_means(
    make_policy: MakePolicy, on_error: str, decision: str
) -> None:
    policy = make_policy(
        f"""
        defaults: {{on_error: {on_error}}}
        rules:
          - {{id: allow-x, stage: pre-execute, when: 'args.x == 1', decision: allow}}
        """
    )
    verdict = policy.pre_execute(call("tool"))
    assert verdict.decision == decision
    assert verdict.trace[0].error is not None
    if on_error == "deny":
        # even an allow rule fails closed: the error denies, and the message says why
        assert verdict.rules == ("t/allow-x",)
        assert "t/allow-x could not be evaluated" in (verdict.message or "")


def test_non_bool_when_counts_as_an_evaluation_error(make_policy: MakePolicy) -> None:
    policy = make_policy("rules: [{id: r, stage: pre-execute, when: 'args.x', decision: deny}]")
    verdict = policy.pre_execute(call("tool", x="yes"))
    assert verdict.decision == "deny"
    assert "when must be a bool" in (verdict.trace[0].error or "")


def test_warn_and_audit_rules_are_recorded_but_change_nothing(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        rules:
          - {id: warned, stage: pre-execute, mode: warn, decision: deny}
          - {id: audited, stage: pre-execute, mode: audit, decision: deny}
        """
    )
    with structlog.testing.capture_logs() as logs:
        verdict = policy.pre_execute(call("shell", command="ls"))
    assert (verdict.decision, verdict.rules) == ("allow", ())
    assert verdict.shadow_rules == ("t/warned", "t/audited")
    assert [entry.outcome for entry in verdict.trace] == ["shadow", "shadow"]
    assert [(log["event"], log["rule"]) for log in logs if log["log_level"] == "warning"] == [
        ("policy rule matched in warn mode", "t/warned")
    ]


def test_pack_default_mode_applies_but_guards_stay_enforced(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        defaults: {mode: audit}
        rules:
          - {id: d, stage: pre-execute, decision: deny}
          - {id: g, stage: guard}
        """
    )
    verdict = policy.check_tool_call(call("shell"))
    assert (verdict.decision, verdict.rules, verdict.shadow_rules) == ("deny", ("t/g",), ("t/d",))


def test_gateway_shadow_mode_evaluates_everything_in_audit_mode(make_policy: MakePolicy) -> None:
    body = """
    rules:
      - {id: d, stage: pre-execute, decision: deny}
      - {id: g, stage: guard}
      - {id: r, stage: pre-step, decision: reject}
      - {id: b, stage: post-execute, decision: block}
    """
    policy = make_policy(body, shadow=True)
    whole = policy.check_tool_call(call("shell"))
    assert (whole.decision, whole.shadow_rules) == ("allow", ("t/d", "t/g"))
    step = policy.gate_step(prompt("hi"))
    assert (step.decision, step.shadow_rules) == ("enter", ("t/r",))
    assert policy.review_tool_result(result("shell", "out")).decision == "accept"


def test_pre_step_reject_wins_and_contexts_are_added_on_enter(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        params: {max_turns: 3}
        rules:
          - {id: budget, stage: pre-step, when: turn > params.max_turns, decision: reject,
             message: turn budget exhausted}
          - {id: ticket, stage: pre-step, when: prompt.contains("deploy"),
             context: Deployments need a ticket.}
          - {id: plugin-only, stage: pre-step, when: 'messages.exists(m, m.source.kind == "plugin")',
             decision: reject}
        """
    )
    rejected = policy.gate_step(prompt("deploy", turn=4))
    assert (rejected.decision, rejected.rules, rejected.message, rejected.contexts) == (
        "reject",
        ("t/budget",),
        "turn budget exhausted",
        (),
    )
    entered = policy.gate_step(prompt("deploy now"))
    assert (entered.decision, entered.rules, entered.contexts) == (
        "enter",
        ("t/ticket",),
        ("Deployments need a ticket.",),
    )
    plugin = StepEvent(messages=(StepMessage("user", "x", "plugin", "memory"),))
    assert policy.gate_step(plugin).decision == "reject"


def test_params_are_merged_with_overrides(make_policy: MakePolicy) -> None:
    body = """
    params: {max_turns: 3}
    rules: [{id: b, stage: pre-step, when: turn > params.max_turns, decision: reject}]
    """
    assert make_policy(body).gate_step(prompt("x", turn=5)).decision == "reject"
    assert make_policy(body, params={"max_turns": 10}).gate_step(prompt("x", turn=5)).decision == "enter"


class CountingEngine:
    """Wraps the python engine and counts evaluations of each expression source."""

    def __init__(self) -> None:
        self.inner = make_engine("python")
        self.name = "python"
        self.counts: dict[str, int] = {}

    def compile(self, expression: str) -> Any:
        compiled = self.inner.compile(expression)
        if not hasattr(compiled, "evaluate"):
            return compiled
        counts = self.counts

        class Counted:
            source = compiled.source
            references = compiled.references
            reads = compiled.reads

            def evaluate(self, activation: Any) -> Any:
                counts[expression] = counts.get(expression, 0) + 1
                return compiled.evaluate(activation)

        return Counted()


def test_variables_are_lazy_and_evaluated_at_most_once_per_event(make_policy: MakePolicy) -> None:
    engine = CountingEngine()
    policy = make_policy(
        """
        variables:
          - {name: cmd, expression: 'has(args.command) ? args.command : ""'}
          - {name: unused, expression: 'args.size() > 0'}
        rules:
          - {id: a, stage: pre-execute, when: 'vars.cmd.contains("a")', decision: deny}
          - {id: b, stage: pre-execute, when: 'vars.cmd.contains("b")', decision: deny}
        """,
        engine=engine,
    )
    verdict = policy.pre_execute(call("shell", command="ab"))
    assert verdict.rules == ("t/a", "t/b")
    assert engine.counts['has(args.command) ? args.command : ""'] == 1
    assert "args.size() > 0" not in engine.counts


def test_failing_variable_is_named_in_the_error(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        variables: [{name: host, expression: 'url.host(args.url)'}]
        rules: [{id: r, stage: pre-execute, when: 'vars.host == "x"', decision: deny}]
        """
    )
    verdict = policy.pre_execute(call("web_fetch"))
    assert verdict.decision == "deny"
    assert "vars.host:" in (verdict.trace[0].error or "")


def test_message_expression_and_its_fallback(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        rules:
          - {id: r, stage: pre-execute, decision: deny, description: Egress is reviewed.,
             message_expression: '"egress to " + args.url'}
        """
    )
    assert policy.pre_execute(call("web_fetch", url="http://x")).message == "egress to http://x"
    fallback = policy.pre_execute(call("web_fetch")).message or ""
    assert fallback.startswith("Egress is reviewed. (message_expression failed:")


REVIEW = """
rules:
  - id: keys
    stage: post-execute
    redact:
      - {preset: aws-access-key}
      - {pattern: 'tok_([a-z]+)', replace: 'tok_<\\1>'}
  - {id: web, stage: post-execute, match: {tools: [web_fetch]}, context: Untrusted web content.}
  - {id: pk, stage: post-execute, when: 'result.text.contains("PRIVATE KEY-----")', decision: block,
     context: A private key was withheld.}
"""


def test_post_execute_redacts_text_and_every_string_of_the_value(make_policy: MakePolicy) -> None:
    policy = make_policy(REVIEW)
    value = {"env": ["AWS=AKIAIOSFODNN7EXAMPLE", 3, {"t": "tok_abc"}], "AKIAIOSFODNN7EXAMPLE": True}
    verdict = policy.review_tool_result(result("read_file", "AWS=AKIAIOSFODNN7EXAMPLE tok_xyz", value))
    assert verdict.decision == "accept" and verdict.rules == ("t/keys",)
    assert verdict.redacted_text == "AWS=[REDACTED:aws-access-key] tok_<xyz>"
    assert verdict.value_redacted
    assert verdict.redacted_value == {
        "env": ["AWS=[REDACTED:aws-access-key]", 3, {"t": "tok_<abc>"}],
        "AKIAIOSFODNN7EXAMPLE": True,
    }
    assert verdict.redactions == 4 and verdict.trace[0].redactions == 4


def test_post_execute_leaves_clean_results_alone_and_appends_contexts(make_policy: MakePolicy) -> None:
    verdict = make_policy(REVIEW).review_tool_result(result("web_fetch", "hello", {"a": "b"}, url="u"))
    assert (verdict.decision, verdict.redacted_text, verdict.redacted_value, verdict.value_redacted) == (
        "accept",
        None,
        None,
        False,
    )
    assert (verdict.rules, verdict.contexts) == (("t/web",), ("Untrusted web content.",))


def test_post_execute_block_wins_and_keeps_only_its_contexts(make_policy: MakePolicy) -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\nAKIAIOSFODNN7EXAMPLE"
    verdict = make_policy(REVIEW).review_tool_result(result("web_fetch", text))
    assert (verdict.decision, verdict.rules, verdict.contexts) == (
        "block",
        ("t/pk",),
        ("A private key was withheld.",),
    )
    assert verdict.redacted_text is None
    assert verdict.message == 'output of tool "web_fetch" withheld by policy rule t/pk'


def test_redact_arguments_uses_policy_rules_and_every_detector(make_policy: MakePolicy) -> None:
    policy = make_policy(REVIEW)
    args = freeze_json({"cmd": "echo tok_abc ghp_" + "a" * 36, "n": 1})
    redacted, count = policy.redact_arguments(args)
    assert redacted == {"cmd": "echo tok_<abc> [REDACTED:github-token]", "n": 1}
    assert count == 2


class RaisingEngine(CountingEngine):
    """An engine whose programs raise, as a buggy engine might despite its contract."""

    def compile(self, expression: str) -> Any:
        compiled = self.inner.compile(expression)

        class Raising:
            source = compiled.source
            references = compiled.references
            reads = compiled.reads

            def evaluate(self, activation: Any) -> Any:
                raise RuntimeError("boom")

        return Raising()


def test_any_internal_exception_fails_closed(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        rules:
          - {id: a, stage: pre-execute, when: 'args.x', decision: allow}
          - {id: s, stage: pre-step, when: 'turn > 0', context: hi}
          - {id: p, stage: post-execute, when: 'result.is_error', context: hi}
        """,
        engine=RaisingEngine(),
    )
    with structlog.testing.capture_logs() as logs:
        pre = policy.pre_execute(call("x"))
    assert (pre.decision, pre.internal_error) == ("deny", pre.message)
    assert pre.message == "policy evaluation failed (RuntimeError: boom); failing closed"
    assert any(log["log_level"] == "error" for log in logs)
    assert policy.gate_step(prompt("x")).decision == "reject"
    assert policy.review_tool_result(result("x", "t")).decision == "block"
    assert policy.check_tool_call(call("x")).decision == "deny"


def test_activation_exposes_the_documented_names(make_policy: MakePolicy) -> None:
    policy = make_policy(
        """
        rules:
          - id: all
            stage: post-execute
            decision: block
            when: >-
              session.id == "s1" && agent.id == "a1" && turn == 1 && step == 1
              && tool.name == "read_file" && tool.call_id == "c1" && tool.root_call_id == "c1"
              && !tool.nested && args.path == "p" && result.text == "t" && !result.is_error
              && result.value.k == 1 && result.error.code == "" && now > timestamp("2020-01-01T00:00:00Z")
        """
    )
    verdict = policy.review_tool_result(result("read_file", "t", {"k": 1}, path="p"))
    assert verdict.decision == "block", verdict.trace
