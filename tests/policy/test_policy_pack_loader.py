"""Loading packs: every class of invalid input is reported as FILE:LINE:COL, nothing half-loads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.pack import load_pack_text, load_packs
from dsh_policy.policy.source.schema import rulepack_schema

PACKS = Path(__file__).parent / "packs"

WritePack = Callable[..., Path]


def errors_of(paths: list[Path]) -> list[str]:
    result = load_packs(paths)
    assert not result.packs, "a pack with errors must not load"
    return [f"{Path(e.file).name}:{e.line}:{e.col}: {e.message}" for e in result.errors]


def test_the_test_baseline_pack_loads_with_typed_rules() -> None:
    result = load_packs([PACKS / "baseline.yaml"])
    assert result.ok, result.errors
    (pack,) = result.packs
    assert pack.name == "baseline"
    assert pack.digest.startswith("sha256:")
    rule = pack.model.spec.rules[0]
    assert (rule.id, rule.stage, rule.match.tools if rule.match else None) == (
        "never-rm-root",
        "guard",
        ("shell", "bash"),
    )


def test_misspelled_key_is_an_error_at_the_key_with_a_suggestion(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            wehn: 'true'
            decision: deny
        """
    )
    assert errors_of([path]) == ["t.yaml:9:7: spec.rules[0]: unknown key 'wehn' (did you mean 'when'?)"]


def test_duplicate_yaml_keys_are_errors(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            when: 'true'
            when: 'false'
            decision: deny
        """
    )
    assert errors_of([path]) == ["t.yaml:10:7: duplicate key 'when' (first given on line 9)"]


def test_duplicate_rule_ids_and_every_error_of_a_pack_are_reported(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            decision: block
          - id: r
            stage: guard
            mode: warn
          - id: s
            stage: pre-execute
            decision: deny
            message: a
            message_expression: '"b"'
        """
    )
    assert errors_of([path]) == [
        "t.yaml:9:17: rule 'r': decision 'block' does not fit stage pre-execute "
        "(allowed: allow | ask | deny)",
        "t.yaml:10:11: duplicate rule id 'r' (first on line 7)",
        "t.yaml:12:13: rule 'r': mode 'warn' is not allowed on a guard: guards are always enforced",
        "t.yaml:17:7: rule 's': give either message or message_expression, not both",
    ]


def test_audit_mode_and_ignore_on_error_are_refused_on_guards(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: g
            stage: guard
            mode: audit
            on_error: ignore
        """
    )
    assert errors_of([path]) == [
        "t.yaml:9:13: rule 'g': mode 'audit' is not allowed on a guard: guards are always enforced",
        "t.yaml:10:17: rule 'g': on_error 'ignore' is not allowed on a guard: guards always fail closed",
    ]


def test_invalid_regex_and_unknown_preset_point_at_the_entry(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: post-execute
            redact:
              - {preset: aws-acess-key}
              - {pattern: 'ab(c', replace: x}
              - {pattern: 'x', preset: jwt}
        """
    )
    assert errors_of([path]) == [
        "t.yaml:10:20: unknown preset 'aws-acess-key' (did you mean 'aws-access-key'?)",
        "t.yaml:11:21: invalid RE2 pattern: missing ): ab(c",
        "t.yaml:12:11: rule 'r': a redaction needs exactly one of preset or pattern",
    ]


def test_replacement_referring_to_a_missing_group_is_refused(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: post-execute
            redact: [{pattern: 'key=([a-z]+)', replace: 'key=\\2'}]
        """
    )
    assert errors_of([path]) == [
        "t.yaml:9:51: invalid replacement: group \\2 does not exist (the pattern has 1)"
    ]


def test_stage_misfits_are_reported(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: a
            stage: pre-step
            match: {tools: [shell]}
            decision: reject
          - id: b
            stage: pre-execute
            redact: [{preset: jwt}]
            decision: deny
          - id: c
            stage: post-execute
            when: 'true'
          - id: d
            stage: pre-execute
        """
    )
    assert errors_of([path]) == [
        "t.yaml:9:7: rule 'a': match applies to tool stages only; a pre-step has no tool",
        "t.yaml:13:7: rule 'b': redact applies to post-execute rules only, not pre-execute",
        "t.yaml:15:7: rule 'c': a post-execute rule needs decision: block, redact or context",
        "t.yaml:18:7: rule 'd': a pre-execute rule needs decision: deny | ask | allow",
    ]


def test_schema_errors_name_the_field_and_suggest(write_pack: WritePack) -> None:
    path = write_pack(
        """
        defaults: {mode: enforce, decison: allow}
        rules:
          - id: r
            stage: pre-exec
            when: true
        """
    )
    assert errors_of([path]) == [
        "t.yaml:6:29: spec.defaults: unknown key 'decison' (did you mean 'decision'?)",
        "t.yaml:9:14: spec.rules[0].stage: 'pre-exec' is not one of pre-step, pre-execute, guard, "
        "post-execute (did you mean 'pre-execute'?)",
        "t.yaml:10:13: spec.rules[0].when: expected a string, got a boolean; "
        "quote the value to make it a string",
    ]


def test_missing_required_keys_and_wrong_api_version() -> None:
    errors = load_pack_text("apiVersion: v1\nkind: RulePack\nmetadata: {}\n", "p.yaml")
    assert isinstance(errors, list)
    assert [str(e) for e in errors] == [
        "p.yaml:1:1: document: missing required key 'spec'",
        "p.yaml:1:13: apiVersion: expected 'dsh-policy/v1', got 'v1'",
        "p.yaml:3:11: metadata: missing required key 'name'",
    ]


def test_yaml_syntax_errors_carry_positions() -> None:
    errors = load_pack_text("spec:\n  rules: [1, 2\n", "p.yaml")
    assert isinstance(errors, list) and len(errors) == 1
    assert errors[0].file == "p.yaml" and errors[0].line == 3
    assert errors[0].message.startswith("invalid YAML:")


def test_duplicate_pack_names_across_packs_fail_the_whole_load(write_pack: WritePack) -> None:
    first = write_pack("rules: []", name="same", file="one.yaml")
    second = write_pack("rules: []", name="same", file="two.yaml")
    result = load_packs([first, second])
    assert result.packs == ()
    assert [(Path(e.file).name, e.line, e.col) for e in result.errors] == [("two.yaml", 4, 9)]
    assert "duplicate pack name 'same'" in result.errors[0].message


def test_errors_of_several_packs_are_all_reported(write_pack: WritePack) -> None:
    bad_one = write_pack("rules: [{id: a, stage: guard, wehn: x}]", name="one")
    bad_two = write_pack("rules: [{id: b, stage: nowhere}]", name="two")
    files = {Path(e.file).name for e in load_packs([bad_one, bad_two]).errors}
    assert files == {"one.yaml", "two.yaml"}


def test_missing_file_is_an_error_value(tmp_path: Path) -> None:
    result = load_packs([tmp_path / "nope.yaml"])
    assert result.errors == (PolicyError(str(tmp_path / "nope.yaml"), 0, 0, "no such file"),)
    assert str(result.errors[0]).endswith("nope.yaml: no such file")


def test_shipped_schema_is_package_data() -> None:
    schema = rulepack_schema()
    assert schema["properties"]["kind"] == {"const": "RulePack"}
