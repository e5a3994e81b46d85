"""How rules of several packs and modes combine into one verdict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import StepEvent, StepMessage, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure

WritePack = Callable[..., Path]


def load(*paths: Path, **options: object) -> Policy:
    options.setdefault("engine", "python")
    policy = Policy.load(list(paths), **options)
    assert not isinstance(policy, LoadFailure), str(policy)
    return policy


def test_deny_in_any_pack_beats_allow_in_another(write_pack: WritePack) -> None:
    permissive = write_pack("rules: [{id: ok, stage: pre-execute, decision: allow}]", name="permissive")
    strict = write_pack(
        "rules: [{id: nope, stage: pre-execute, when: 'args.x == 1', decision: deny,\n"
        "         message: strict says no}]",
        name="strict",
    )
    policy = load(permissive, strict)
    verdict = policy.pre_execute(ToolCallEvent("t", {"x": 1}))
    assert (verdict.decision, verdict.rules, verdict.message) == ("deny", ("strict/nope",), "strict says no")
    assert policy.pre_execute(ToolCallEvent("t", {"x": 2})).rules == ("permissive/ok",)


def test_the_most_restrictive_default_decision_applies(write_pack: WritePack) -> None:
    lenient = write_pack("defaults: {decision: allow}\nrules: []", name="lenient")
    lockdown = write_pack(
        "defaults: {decision: deny}\nrules: [{id: reads, stage: pre-execute, match: {tools: [read_file]}, "
        "decision: allow}]",
        name="lockdown",
    )
    policy = load(lenient, lockdown)
    assert policy.pre_execute(ToolCallEvent("shell", {})).decision == "deny"
    assert policy.pre_execute(ToolCallEvent("read_file", {})).decision == "allow"


def test_several_denials_carry_every_rule_and_message(write_pack: WritePack) -> None:
    policy = load(
        write_pack(
            """
            rules:
              - {id: a, stage: pre-execute, decision: deny, message: first}
              - {id: b, stage: pre-execute, decision: deny, message: second}
              - {id: c, stage: pre-execute, decision: deny, message: first}
            """
        )
    )
    verdict = policy.pre_execute(ToolCallEvent("t", {}))
    assert verdict.rules == ("t/a", "t/b", "t/c")
    assert verdict.message == "first; second"


def test_redactions_of_several_packs_apply_in_pack_order(write_pack: WritePack) -> None:
    first = write_pack(
        "rules: [{id: r, stage: post-execute, redact: [{pattern: 'secret-[0-9]+', replace: 'X-1'}]}]",
        name="one",
    )
    second = write_pack(
        "rules: [{id: r, stage: post-execute, redact: [{pattern: 'X-1', replace: 'Y'}]}]", name="two"
    )
    verdict = load(first, second).review_tool_result(
        ToolResultEvent(ToolCallEvent("t", {}), text="secret-42")
    )
    assert (verdict.redacted_text, verdict.rules, verdict.redactions) == ("Y", ("one/r", "two/r"), 2)


def test_a_warn_redaction_redacts_nothing_but_is_recorded(write_pack: WritePack) -> None:
    policy = load(
        write_pack("rules: [{id: r, stage: post-execute, mode: warn, redact: [{preset: aws-access-key}]}]")
    )
    verdict = policy.review_tool_result(ToolResultEvent(ToolCallEvent("t", {}), text="AKIAIOSFODNN7EXAMPLE"))
    assert (verdict.decision, verdict.redacted_text, verdict.shadow_rules) == ("accept", None, ("t/r",))


def test_audit_mode_context_is_not_added(write_pack: WritePack) -> None:
    policy = load(write_pack("rules: [{id: c, stage: pre-step, mode: audit, context: hello}]"))
    verdict = policy.gate_step(StepEvent(messages=(StepMessage("user", "x"),)))
    assert (verdict.decision, verdict.contexts, verdict.shadow_rules) == ("enter", (), ("t/c",))


def test_reject_message_expression_sees_the_prompt(write_pack: WritePack) -> None:
    policy = load(
        write_pack(
            """
            rules:
              - id: r
                stage: pre-step
                when: prompt.contains("rm -rf")
                decision: reject
                message_expression: '"refused: " + prompt'
            """
        )
    )
    verdict = policy.gate_step(StepEvent(messages=(StepMessage("user", "please rm -rf /"),)))
    assert (verdict.decision, verdict.message) == ("reject", "refused: please rm -rf /")
    # Only user-sourced messages make up the prompt.
    plugin_only = StepEvent(messages=(StepMessage("user", "rm -rf /", "plugin", "memory"),))
    assert policy.gate_step(plugin_only).decision == "enter"


def test_variables_of_a_pack_read_that_packs_params(write_pack: WritePack) -> None:
    one = write_pack(
        "params: {limit: 1}\nvariables: [{name: over, expression: 'turn > params.limit'}]\n"
        "rules: [{id: r, stage: pre-step, when: vars.over, decision: reject}]",
        name="one",
    )
    two = write_pack("params: {limit: 5}\nrules: []", name="two")
    policy = load(one, two, params={"limit": 3})
    assert policy.gate_step(StepEvent(turn=3)).decision == "enter"
    assert policy.gate_step(StepEvent(turn=4)).rules == ("one/r",)
