"""Inline rule examples: decided at load time by the rule alone, in the stage's decision words; a
rule whose examples fail does not load. And the pack schema (editor completion) stays in step
with the models and with the cases schema its example events copy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.pack import EXAMPLE_WORDS, RuleSpec
from dsh_policy.policy.source.schema import _packaged_schema, rulepack_schema

WritePack = Callable[..., Path]


def load(path: Path) -> Policy | LoadFailure:
    return Policy.load([path], engine="python")


def errors(path: Path) -> list[str]:
    failed = load(path)
    assert isinstance(failed, LoadFailure), "expected the load to fail"
    return [f"{e.line}:{e.col}: {e.message}" for e in failed.errors]


GUARD = """
rules:
  - id: no-rm
    stage: guard
    match: {tools: [shell, Bash]}
    when: 'has(args.command) && shell.argv0s(args.command).exists(p, p == "rm")'
    examples:
      deny: ["rm -rf /", {name: sudo, args: {command: "sudo rm x"}}, {tool: Bash, args: {command: rm}}]
      allow: ["ls", "echo rm", {args: {path: rm}}]
"""


def test_examples_that_hold_load(write_pack: WritePack) -> None:
    assert not isinstance(load(write_pack(GUARD)), LoadFailure)


def test_a_failing_example_is_a_load_error_at_the_example(write_pack: WritePack) -> None:
    path = write_pack(
        GUARD.replace('"echo rm"', '"echo rm", "rm x"').replace('"rm -rf /"', '"rm -rf /", "rmdir x"')
    )
    assert errors(path) == [
        "12:28: rule 'no-rm': example 'rmdir x' should be deny, but the rule does not match it",
        "13:34: rule 'no-rm': example 'rm x' should be allow, but the rule matches it (deny)",
    ]


def test_an_example_that_errors_fails_whatever_on_error_says(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            on_error: ignore
            when: 'args.command.startsWith("x")'
            examples:
              allow: [{args: {path: /x}}]
        """
    )
    assert errors(path) == [
        '13:17: rule \'r\': example {"args":{"path":"/x"}} could not be evaluated: '
        "no such member in mapping: 'command'"
    ]


def test_words_are_the_stages_and_events_are_checked_like_cases(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: 'true'
            examples:
              block: [x]
              deny: [{prompt: hi}, {tol: shell}]
        """
    )
    assert errors(path) == ["13:31: spec.rules[0].examples.deny[1]: unknown key 'tol' (did you mean 'tool'?)"]
    path.write_text(path.read_text().replace(", {tol: shell}", ""))
    assert errors(path) == [
        "12:9: rule 'r': examples.block does not fit stage pre-execute (allowed: allow | ask | deny)"
    ]
    path.write_text(path.read_text().replace("      block: [x]\n", ""))
    assert errors(path) == [
        '12:19: rule \'r\': example {"prompt":"hi"}: prompt is only used at stage pre-step'
    ]


@pytest.mark.parametrize(
    ("rule", "examples"),
    [
        (  # pre-step: a string is the prompt
            "{id: r, stage: pre-step, decision: reject, when: 'prompt.contains(\"rm\") && turn > 1'}",
            "{reject: [{turn: 2, prompt: rm it}], enter: [rm it, {turn: 2, prompt: ok}]}",
        ),
        (  # a pre-step context rule matches under its own word
            "{id: r, stage: pre-step, context: be careful, when: 'prompt == \"x\"'}",
            "{enter: [x], reject: [y]}",
        ),
        (  # post-execute redaction: accept means it redacted something
            "{id: r, stage: post-execute, redact: [{pattern: 'k[0-9]+'}]}",
            "{accept: [{tool: read_file, result: {text: 'key k123'}}]}",
        ),
        (  # a string at post-execute is a shell call
            "{id: r, stage: post-execute, decision: block, when: 'result.text.contains(\"PRIVATE\")'}",
            "{block: [{result: {text: PRIVATE}}], accept: [ls]}",
        ),
        (  # an allow rule: allow means it matches, another word that it does not
            "{id: r, stage: pre-execute, decision: allow, when: 'args.command == \"ls\"'}",
            "{allow: [ls], ask: [pwd]}",
        ),
    ],
)
def test_every_stage_reads_its_words(write_pack: WritePack, rule: str, examples: str) -> None:
    path = write_pack(f"rules:\n  - {rule[:-1]}, examples: {examples}}}")
    loaded = load(path)
    assert not isinstance(loaded, LoadFailure), str(loaded)


def test_a_redaction_that_changes_nothing_fails_its_accept_example(write_pack: WritePack) -> None:
    path = write_pack(
        "rules:\n  - {id: r, stage: post-execute, redact: [{pattern: 'k[0-9]+'}],"
        " examples: {accept: [{tool: read_file, result: {text: nothing}}]}}"
    )
    assert errors(path) == [
        '7:88: rule \'r\': example {"tool":"read_file","result":{"text":"nothing"}} should be accept, '
        "but the rule matches it and gives accept (changes nothing)"
    ]


def test_examples_use_the_params_the_pack_declares(write_pack: WritePack) -> None:
    path = write_pack(
        """
        params: {limit: 3}
        rules:
          - id: r
            stage: pre-step
            decision: reject
            when: turn > params.limit
            examples: {reject: [{turn: 4, prompt: x}]}
        """
    )
    assert not isinstance(load(path), LoadFailure)
    deployed = Policy.load([path], engine="python", params={"limit": 10})  # a deployment's choice
    assert not isinstance(deployed, LoadFailure), str(deployed)
    path.write_text(path.read_text().replace("limit: 3", "limit: 5"))
    assert "should be reject, but the rule does not match it" in str(load(path))


# -- the schema stays in step --------------------------------------------------------------------


def test_rule_schema_and_model_name_the_same_fields() -> None:
    schema = rulepack_schema()["$defs"]["rule"]["properties"]
    assert set(schema) == {field.alias or name for name, field in RuleSpec.model_fields.items()}
    assert list(schema["examples"]["properties"]) == list(EXAMPLE_WORDS)


def test_example_events_are_case_events_without_stage_and_expect() -> None:
    cases: dict[str, Any] = _packaged_schema("cases.schema.json")["$defs"]["event"]["properties"]
    examples: dict[str, Any] = rulepack_schema()["$defs"]["example_event"]["properties"]
    # client is the cases files' alone: check maps it with the hooks' vocabulary, which the pack
    # loader (a layer below the hooks) cannot reach, so inline examples are canonical calls.
    expected = {key: value for key, value in cases.items() if key not in ("stage", "expect", "client")}
    assert set(examples) == set(expected)
    for key, value in expected.items():
        if key != "now":  # its description says "the load", not "the run"
            assert examples[key] == value, key
