"""Type errors are load errors on every engine: ``dsh-policy check`` exits 2 with the error on the
right line and a caret under the column; warnings print but change the exit code only with
``--strict``; param overrides keep their declared type; the shipped packs check clean."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.celpy_ast import parse_checked
from dsh_policy.policy.cel.checker import CheckEnvironment
from dsh_policy.policy.cel.checker import check as type_check
from dsh_policy.policy.cli import main
from dsh_policy.policy.compile import STAGE_NAME_TYPES, CompiledPolicy, params_type
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import StepEvent
from dsh_policy.policy.loading import LoadFailure, build_policy
from dsh_policy.policy.pack import load_pack_file
from dsh_policy.policy.stages import EVENT_NAMES

WritePack = Callable[..., Path]
ENGINES = available_engines()
SHIPPED = sorted(
    p
    for p in (Path(__file__).resolve().parents[2] / "rules").glob("*.yaml")
    if not p.name.endswith(".cases.yaml")
)


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# Each pack is one of the kinds; ``line`` is where the error must be (1-based, in the file
# write_pack produces: the header is 5 lines, then the spec body).
ILL_TYPED: list[tuple[str, str, int, str]] = [
    (
        "concatenates an int param with a string",
        """
        params: {max_len: 100}
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: 'params.max_len + "x" == "100x"'
        """,
        11,
        "no matching overload for '+' applied to (int, string)",
    ),
    (
        "an int param as when",
        """
        params: {max_len: 100}
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: 'params.max_len'
        """,
        11,
        "rule 'r': when must give a bool; this expression gives an int",
    ),
    (
        "a misspelled param",
        """
        params: {hosts: [a.com]}
        rules:
          - id: r
            stage: pre-execute
            decision: ask
            when: >-
              has(args.url)
                && !params.hostz.exists(h, glob(url.host(args.url), h))
        """,
        13,
        "undeclared param 'hostz' (did you mean 'hosts'?)",
    ),
    (
        "result in a pre-execute rule",
        """
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: |
              args.command != ""
              && result.text.contains("x")
        """,
        12,
        "'result' is not available at stage pre-execute",
    ),
    (
        "a string method on an int param",
        """
        params: {max_turns: 50}
        rules:
          - id: r
            stage: pre-step
            decision: reject
            when: 'params.max_turns.startsWith("5")'
        """,
        11,
        "no matching overload for int.startsWith(string)",
    ),
    (
        "a variable typed from its expression",
        """
        variables:
          - {name: n, expression: 'size(args.items)'}
        rules:
          - id: r
            stage: guard
            when: 'vars.n.contains("1")'
        """,
        11,
        "no matching overload for int.contains(string)",
    ),
    (
        "a message_expression giving an int",
        """
        params: {limit: 3}
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            message_expression: 'params.limit + 1'
        """,
        11,
        "rule 'r': message_expression must give a string; this expression gives an int",
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "body", "line", "message"), ILL_TYPED, ids=[row[0] for row in ILL_TYPED])
def test_ill_typed_packs_exit_2_with_the_error_on_its_line(
    capsys: pytest.CaptureFixture[str],
    write_pack: WritePack,
    engine: str,
    name: str,
    body: str,
    line: int,
    message: str,
) -> None:
    path = write_pack(body)
    code, out, _ = check(capsys, str(path), "--engine", engine, "--format", "json")
    assert code == 2, name
    found = [(e["line"], e["message"]) for e in json.loads(out)["errors"]]
    assert any(at == line and message in text for at, text in found), found


def test_the_error_shows_its_source_line_and_a_caret(
    capsys: pytest.CaptureFixture[str], write_pack: WritePack
) -> None:
    path = write_pack(
        """
        params: {max_len: 100}
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: >-
              args.command == "x"
                && params.max_len + "x" == "100x" && tool.nmae == "y"
        """
    )
    code, _, err = check(capsys, str(path), "--engine", "python")
    assert code == 2
    assert err.splitlines() == [
        f"{path}:13:29: no matching overload for '+' applied to (int, string) "
        "(convert with string(...) first)",
        ' |           && params.max_len + "x" == "100x" && tool.nmae == "y"',
        " |                             ^",
        f"{path}:13:53: tool has no field 'nmae' (did you mean 'name'?) "
        "(fields: name, call_id, root_call_id, nested, original_name)",
        ' |           && params.max_len + "x" == "100x" && tool.nmae == "y"',
        " |                                                     ^",
        "2 errors",
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_both_engines_report_the_same_errors(
    capsys: pytest.CaptureFixture[str], write_pack: WritePack, engine: str
) -> None:
    """Even where the native engine's own checker refuses the expression first."""
    path = write_pack(
        """
        params: {hosts: [a]}
        rules:
          - id: r
            stage: pre-execute
            decision: deny
            when: 'size(params.hosts) > "2" && tool.nmae == "x"'
        """
    )
    code, out, _ = check(capsys, str(path), "--engine", engine, "--format", "json")
    assert code == 2
    assert [
        (e["col"], e["message"].split(" applied")[0].split(" (")[0]) for e in json.loads(out)["errors"]
    ] == [
        (33, "no matching overload for '>'"),
        (47, "tool has no field 'nmae'"),
    ]


def test_a_variable_reading_a_later_stage_is_refused_where_a_rule_uses_it(write_pack: WritePack) -> None:
    path = write_pack(
        """
        variables:
          - {name: out, expression: 'result.text'}
        rules:
          - id: early
            stage: pre-execute
            decision: deny
            when: 'vars.out.contains("x")'
          - id: late
            stage: post-execute
            decision: block
            when: 'vars.out.contains("x")'
        """
    )
    failed = build_policy([path], engine="python")
    assert isinstance(failed, LoadFailure)
    assert [(e.line, e.message) for e in failed.errors] == [
        (12, "vars.out reads 'result', which is not available at stage pre-execute")
    ]


# -- warnings ------------------------------------------------------------------------------------

SUSPICIOUS = """
rules:
  - id: r
    stage: pre-execute
    match: {tools: [configure]}
    decision: deny
    when: 'args.mode == 1 || args.mode == "1"'
"""


def test_warnings_print_but_do_not_fail_unless_strict(
    capsys: pytest.CaptureFixture[str], write_pack: WritePack
) -> None:
    path = str(write_pack(SUSPICIOUS))
    code, out, err = check(capsys, path, "--engine", "python")
    assert code == 0
    assert "1 warning(s)" in out
    assert err.startswith(
        f"warning: {path}:11:32: args.mode is used as a string here but as a number in `args.mode == 1`; "
        "it cannot be both\n"
    )
    code, out, _ = check(capsys, path, "--engine", "python", "--strict", "--format", "json")
    report = json.loads(out)
    assert code == 2 and report["ok"] is False
    assert [(w["line"], w["col"]) for w in report["warnings"]] == [(11, 32)]


# -- params --------------------------------------------------------------------------------------


def test_an_override_of_another_type_fails_at_the_override(
    capsys: pytest.CaptureFixture[str], write_pack: WritePack, tmp_path: Path
) -> None:
    pack = write_pack("params: {hosts: [a.com], ratio: 0.5}")
    config = tmp_path / "gateway.yaml"
    config.write_text(
        f"apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [{pack}]\n  engine: python\n"
        "  params:\n    hosts: [1, 2]\n"
    )
    code, _, err = check(capsys, "--config", str(config))
    assert code == 2
    assert (
        f"{config}:7:5: param 'hosts': pack t declares a list(string) (['a.com']); "
        "the override [1, 2] is a list(int)"
    ) in err
    code, _, err = check(capsys, str(pack), "--param", "ratio=null", "--engine", "python")
    assert code == 2 and "the override None is null" in err


def test_an_int_override_of_a_double_param_stays_a_double(write_pack: WritePack) -> None:
    path = write_pack(
        """
        params: {ratio: 0.5}
        rules:
          - id: r
            stage: pre-step
            decision: reject
            when: 'params.ratio * 2.0 > 1.5'
        """
    )
    policy = Policy.load([path], engine="python", params={"ratio": 1})
    assert not isinstance(policy, LoadFailure), str(policy)
    verdict = policy.gate_step(StepEvent(messages=()))
    assert verdict.decision == "reject", verdict.trace


def test_an_empty_list_param_takes_a_list_of_any_element_type(write_pack: WritePack) -> None:
    """A pack ships an allow list empty (nothing approved yet); a deployment fills it."""
    path = write_pack(
        """
        params: {approved: []}
        rules:
          - id: r
            stage: pre-step
            decision: reject
            when: 'params.approved.exists(a, a == "x")'
        """
    )
    policy = Policy.load([path], engine="python", params={"approved": ["x"]})
    assert not isinstance(policy, LoadFailure), str(policy)
    assert policy.gate_step(StepEvent(messages=())).decision == "reject"
    assert isinstance(Policy.load([path], engine="python", params={"approved": "x"}), LoadFailure)


# -- what must keep loading ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> dict[str, CompiledPolicy]:
    policies: dict[str, CompiledPolicy] = {}
    for engine in ENGINES:
        policy = build_policy(SHIPPED, engine=engine)
        assert not isinstance(policy, LoadFailure), str(policy)
        policies[engine] = policy
    return policies


def test_shipped_packs_load_without_errors_or_warnings(shipped: dict[str, CompiledPolicy]) -> None:
    assert [policy.warnings for policy in shipped.values()] == [()] * len(ENGINES)


def test_every_engine_tree_checks_alike(shipped: dict[str, CompiledPolicy]) -> None:
    """The checker reads whichever tree the engine hands it (collapsed by the python engine, as
    parsed by the native one, or parsed afresh): every shipped expression checks the same on
    each. The python engine keeps its tree to evaluate; the native engine's is freed once checked."""
    engines = {name: make_engine(name) for name in ENGINES}  # type: ignore[arg-type]
    policy = next(iter(shipped.values()))
    for index, pack in enumerate(policy.packs):
        declared = load_pack_file(pack.path)
        assert not isinstance(declared, list)
        env = CheckEnvironment(
            {**STAGE_NAME_TYPES, "params": params_type(declared.model.spec.params)}, EVENT_NAMES, None
        )
        sources = [expr.source for expr in pack.variables.values()]
        sources += [
            rule.when.source for rule in policy.rules if rule.when is not None and rule.pack_index == index
        ]
        for source in sources:
            programs = [engine.compile(source) for engine in engines.values()]  # held: trees stay alive
            trees = [parse_checked(source), *(program.take_parse_tree() for program in programs)]
            results = {repr(type_check(tree, source, env)) for tree in trees if tree is not None}
            assert len(results) == 1, source
    if "native" in shipped:
        assert all(
            rule.when.program.take_parse_tree() is None  # type: ignore[attr-defined]
            for rule in shipped["native"].rules
            if rule.when
        )


@pytest.mark.skipif("native" not in ENGINES, reason="the native engine is not installed")
def test_syntax_only_the_native_engine_parses_still_gets_its_names_checked(write_pack: WritePack) -> None:
    path = write_pack(
        """
        rules:
          - {id: ok, stage: pre-execute, decision: deny, when: 'args.?x.orValue("") == "a"'}
          - {id: bad, stage: pre-step, decision: reject, when: 'args.?x.orValue("") == "a"'}
        """
    )
    failed = build_policy([path], engine="native")
    assert isinstance(failed, LoadFailure)
    assert [(e.line, e.message) for e in failed.errors] == [(8, "'args' is not available at stage pre-step")]
