"""Compiling packs: CEL errors mapped to FILE:LINE:COL inside the expression, names checked per
stage, params overrides validated, and the digest covering packs, params and engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.compile import parse_param_flags
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.loading import LoadFailure

WritePack = Callable[..., Path]


def load_errors(path: Path, **options: object) -> list[str]:
    options.setdefault("engine", "python")
    result = Policy.load([path], **options)
    assert isinstance(result, LoadFailure), "expected the load to fail"
    return [f"{Path(e.file).name}:{e.line}:{e.col}: {e.message}" for e in result.errors]


def test_cel_syntax_error_in_a_folded_scalar_points_at_the_token(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: >-
              args.x == 1
                && args.y ==
        """
    )
    assert load_errors(path) == ["t.yaml:12:21: CEL: syntax error at '=='"]


def test_cel_errors_in_literal_and_quoted_scalars(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: literal
            stage: pre-execute
            decision: deny
            when: |
              args.command == "x" &&
              vars.nope
          - id: quoted
            stage: pre-execute
            decision: deny
            when: "path.normalise(args.p) == 1"
        """
    )
    assert load_errors(path) == [
        "t.yaml:12:14: unknown variable 'nope'",
        "t.yaml:16:19: CEL: unknown function path.normalise() (known: path.base, path.ext, "
        "path.later, path.later_risks, path.later_unread, path.normalize, path.within)",
    ]


def test_names_are_checked_against_the_stage(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: step
            stage: pre-step
            decision: reject
            when: args.command == "x"
          - id: typo
            stage: pre-execute
            decision: deny
            when: agrs.command == "x"
        """
    )
    assert load_errors(path) == [
        "t.yaml:10:13: 'args' is not available at stage pre-step (only pre-execute, guard, post-execute)",
        "t.yaml:14:13: unknown name 'agrs' (did you mean 'args'?)",
    ]


def test_constant_non_bool_when_is_refused(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: '"yes"'
        """
    )
    assert load_errors(path) == [
        "t.yaml:10:14: rule 'r': when must give a bool; this expression gives a string"
    ]


def test_variable_cycles_are_refused(write_pack: WritePack) -> None:
    path = write_pack(
        """
        variables:
          - {name: a, expression: 'vars.b + 1'}
          - {name: b, expression: 'vars.a + 1'}
        """
    )
    assert load_errors(path) == ["t.yaml:7:29: variable cycle: a -> b -> a"]


def test_param_overrides_must_be_declared_and_keep_their_type(write_pack: WritePack) -> None:
    path = write_pack("params: {max_turns: 5, hosts: [a]}")
    assert load_errors(path, params={"max_turn": 3}) == [
        "--param:0:0: param 'max_turn' is not declared by any loaded pack"
    ]
    assert load_errors(path, params={"max_turns": "ten"}) == [
        "--param:0:0: param 'max_turns': pack t declares an int (5); the override 'ten' is a string"
    ]


def test_param_flags_are_yaml_scalars() -> None:
    params, errors = parse_param_flags(["n=10", "hosts=[a.com, b.com]", "s='10'", "flag=true", "bad"])
    assert params == {"n": 10, "hosts": ["a.com", "b.com"], "s": "10", "flag": True}
    assert [str(e) for e in errors] == ["--param: 'bad': expected KEY=VALUE"]


def test_unknown_engine_is_an_error_value(write_pack: WritePack) -> None:
    path = write_pack("rules: []")
    assert load_errors(path, engine="quantum") == [
        "--engine:0:0: unknown CEL engine 'quantum'; choose auto, closure, python or native"
    ]


def test_digest_covers_pack_content_params_and_shadow(
    write_pack: WritePack, make_policy: Callable[..., Policy]
) -> None:
    body = "params: {n: 1}\nrules: [{id: r, stage: pre-step, when: 'turn > params.n', decision: reject}]"
    base = make_policy(body)
    assert base.digest.startswith("sha256:") and base.engine_name == "python"
    assert make_policy(body).digest == base.digest
    assert make_policy(body, params={"n": 2}).digest != base.digest
    assert make_policy(body, shadow=True).digest != base.digest
    assert make_policy(body.replace("turn >", "turn >=")).digest != base.digest


def test_pack_variables_are_found_on_the_parse_tree_not_in_string_literals(
    write_pack: WritePack, make_policy: Callable[..., Policy]
) -> None:
    body = """
        variables:
          - name: secret
            expression: '"s3cret"'
        rules:
          - id: quoted
            stage: pre-execute
            decision: deny
            when: 'args.command.contains("vars.secret") || args.command.contains("vars.nope")'
        """
    for engine in available_engines():
        policy = make_policy(body, engine=engine)  # a string literal spelling vars.nope reads nothing
        rule = policy.compiled.stages["pre-execute"].all_rules[0]
        assert rule.when is not None and rule.when.variables == (), engine


def test_unknown_pack_variables_are_reported_at_the_member_for_dot_and_index(write_pack: WritePack) -> None:
    path = write_pack(
        """
        variables:
          - name: known
            expression: '1'
        rules:
          - id: index
            stage: pre-execute
            decision: deny
            when: 'vars["nope"] == 1 && vars.known == 1'
          - id: dot
            stage: pre-execute
            decision: deny
            when: 'vars.known == 1 && vars.typo == 1'
        """
    )
    for engine in available_engines():
        assert load_errors(path, engine=engine) == [
            "t.yaml:13:20: unknown variable 'nope'",
            "t.yaml:17:38: unknown variable 'typo'",
        ], engine
