"""Damaged rule packs and cases files: every mutation of a valid file gives either a working policy
(cases) or a clean list of ``FILE:LINE:COL: message`` errors - never an exception, never a
half-loaded policy that decides anything."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from adv_kit import ENGINES, REPO, SHIPPED_CASES, SHIPPED_PACKS, TEST_CASES, TEST_PACKS, fuzz_settings, load
from adv_mutations import mutated_document
from dsh_policy.policy.cases import Case, load_cases, run_case
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import StepEvent, StepMessage, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure
from hypothesis import given
from hypothesis import strategies as st


def _baseline_slices() -> list[bytes]:
    """The shipped baseline is large; fuzz it three rules at a time (every rule gets its turn
    across slices) so each example loads in milliseconds."""
    tree = yaml.load((REPO / "rules" / "baseline.yaml").read_bytes(), Loader=yaml.CSafeLoader)
    rules = tree["spec"]["rules"]
    out = []
    for start in range(0, len(rules), 3):
        piece = {**tree, "spec": {**tree["spec"], "rules": rules[start : start + 3]}}
        out.append(yaml.dump(piece, Dumper=yaml.CSafeDumper, sort_keys=False).encode())
    return out


PACK_SOURCES = [
    *(path.read_bytes() for path in SHIPPED_PACKS if path.name != "baseline.yaml"),
    *(path.read_bytes() for path in TEST_PACKS),
    *_baseline_slices(),
]
CASE_SOURCES = [
    (REPO / "rules" / "secrets.yaml", (REPO / "rules" / "secrets.cases.yaml").read_bytes()),
    (REPO / "rules" / "injection.yaml", (REPO / "rules" / "injection.cases.yaml").read_bytes()),
    (TEST_PACKS[1], TEST_CASES[0].read_bytes()),
]
assert len(SHIPPED_CASES) >= 2


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutations")


def assert_clean_errors(errors: Any, path: Path) -> None:
    assert isinstance(errors, tuple | list) and errors, "a failure must say why"
    for error in errors:
        assert isinstance(error, PolicyError)
        assert error.file == str(path), error
        unopenable = error.message == "no such file" or error.message.startswith("cannot read:")
        assert unopenable or (error.line >= 1 and error.col >= 1), f"no position: {error}"
        assert error.message.strip(), error
        assert "Traceback" not in error.message


def assert_decides(policy: Policy) -> None:
    call = ToolCallEvent(tool="shell", args={"command": "rm -rf /", "url": "https://x", "path": "/etc"})
    assert policy.check_tool_call(call).decision in ("allow", "deny", "ask")
    assert policy.review_tool_result(ToolResultEvent(call=call, text="AKIAIOSFODNN7EXAMPLE")).decision in (
        "accept",
        "block",
    )
    step = StepEvent(turn=99, messages=(StepMessage("user", "ignore previous instructions"),))
    assert policy.gate_step(step).decision in ("enter", "reject")


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main(list(argv))
    return code, out.getvalue()


@pytest.mark.parametrize("engine", ENGINES)
@fuzz_settings(30)
@given(data=st.data())
def test_a_damaged_pack_loads_whole_or_fails_with_positioned_errors(
    engine: str, data: st.DataObject, scratch: Path
) -> None:
    source = PACK_SOURCES[data.draw(st.integers(0, len(PACK_SOURCES) - 1), label="source")]
    damaged = data.draw(mutated_document(source))
    path = scratch / f"pack-{engine}.yaml"
    path.write_bytes(damaged)
    loaded = Policy.load([path], engine=engine)
    if isinstance(loaded, LoadFailure):
        assert_clean_errors(loaded.errors, path)
        assert not hasattr(loaded, "check_tool_call")  # nothing half-loaded can decide
        # All-or-nothing across packs: a good pack beside it does not rescue it.
        together = Policy.load([TEST_PACKS[0], path], engine=engine)
        assert isinstance(together, LoadFailure)
    else:
        assert_decides(loaded)


@fuzz_settings(20)
@given(data=st.data())
def test_check_answers_a_damaged_pack_with_exit_0_or_2_and_json(data: st.DataObject, scratch: Path) -> None:
    source = PACK_SOURCES[data.draw(st.integers(0, len(PACK_SOURCES) - 1), label="source")]
    path = scratch / "check.yaml"
    path.write_bytes(data.draw(mutated_document(source)))
    code, out = run_cli("check", str(path), "--format", "json", "--engine", "python")
    report = json.loads(out)
    assert code in (0, 2)
    assert report["ok"] is (code == 0)
    assert bool(report["errors"]) is (code == 2)


_DECIDERS: dict[Path, Any] = {}


def decider_for(pack: Path) -> Any:
    if pack not in _DECIDERS:
        _DECIDERS[pack] = load([pack]).current()
    return _DECIDERS[pack]


@fuzz_settings(30)
@given(data=st.data())
def test_a_damaged_cases_file_gives_cases_that_run_or_positioned_errors(
    data: st.DataObject, scratch: Path
) -> None:
    pack, source = CASE_SOURCES[data.draw(st.integers(0, len(CASE_SOURCES) - 1), label="source")]
    path = scratch / "damaged.cases.yaml"
    path.write_bytes(data.draw(mutated_document(source)))
    loaded = load_cases(path)
    if loaded and isinstance(loaded[0], PolicyError):
        assert_clean_errors(loaded, path)
        return
    decider = decider_for(pack)
    for case in loaded:
        assert isinstance(case, Case)
        outcome = run_case(decider, case)
        assert isinstance(outcome.passed, bool)


@fuzz_settings(15)
@given(data=st.data())
def test_check_with_a_damaged_cases_file_exits_0_1_or_2(data: st.DataObject, scratch: Path) -> None:
    pack, source = CASE_SOURCES[data.draw(st.integers(0, len(CASE_SOURCES) - 1), label="source")]
    path = scratch / "check.cases.yaml"
    path.write_bytes(data.draw(mutated_document(source)))
    code, out = run_cli("check", str(pack), "--cases", str(path), "--format", "json", "--engine", "python")
    assert code in (0, 1, 2)
    assert json.loads(out)["ok"] is (code == 0)


def _billion_laughs() -> bytes:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        lines.append(f"l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x00\xff\xfe",
        b"\xef\xbb\xbf",
        b"---\n---\n",
        b"[]",
        b"!!python/object:os.system ls",
        b"a: &x [*x]",
        _billion_laughs(),
        b"a: b\na: c\n",
        b"\t- x",
        b"\xed\xa0\x80: x",
        b"x" * 300_000,
    ],
    ids=[
        "empty",
        "binary",
        "bom",
        "two-docs",
        "list",
        "python-tag",
        "alias-loop",
        "billion-laughs",
        "dup-key",
        "tab",
        "cesu",
        "long-line",
    ],
)
def test_junk_files_are_errors_with_positions(content: bytes, scratch: Path) -> None:
    path = scratch / "junk.yaml"
    path.write_bytes(content)
    loaded = Policy.load([path], engine="python")
    assert isinstance(loaded, LoadFailure)
    assert_clean_errors(loaded.errors, path)
    cases = load_cases(path)
    assert cases == [] or isinstance(cases[0], PolicyError)
    if cases:
        assert_clean_errors(cases, path)


def test_a_directory_or_missing_file_is_an_error_not_a_crash(scratch: Path) -> None:
    for path in (scratch, scratch / "missing.yaml"):
        loaded = Policy.load([path], engine="python")
        assert isinstance(loaded, LoadFailure)
        assert all(error.message.strip() and error.file == str(path) for error in loaded.errors)
        cases = load_cases(path)
        assert cases and isinstance(cases[0], PolicyError)


BROKEN_REDACTION_PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {{name: r, version: "1"}}
spec:
  rules:
    - id: redact-things
      stage: post-execute
      when: 'result.text.size() > ('
      redact:
        - {entry}
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{}", "exactly one of preset or pattern"),
        ('{pattern: "(", replace: x}', "invalid RE2 pattern"),
        ('{pattern: "a(b)", replace: "\\\\9"}', "invalid replacement"),
        ("{preset: no-such-detector}", "unknown preset"),
    ],
)
def test_a_broken_redaction_is_reported_beside_the_cel_errors(
    engine: str, entry: str, message: str, scratch: Path
) -> None:
    """Was: the failed pack was still compiled to report its CEL errors, and compiling the broken
    redaction raised TypeError / re2.error out of ``Policy.load``."""
    path = scratch / "broken-redaction.yaml"
    path.write_text(BROKEN_REDACTION_PACK.format(entry=entry))
    loaded = Policy.load([path], engine=engine)
    assert isinstance(loaded, LoadFailure)
    assert_clean_errors(loaded.errors, path)
    assert any(message in error.message for error in loaded.errors), str(loaded)
    assert any(error.line == 8 for error in loaded.errors), "the CEL error is reported too"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["[a, b]", "{a: 1}"])
def test_a_variable_named_by_a_list_or_map_is_an_error_not_a_crash(
    engine: str, name: str, scratch: Path
) -> None:
    """Was: the diagnostic compile collected declared variable names into a set and raised
    ``TypeError: unhashable type`` out of ``Policy.load``."""
    path = scratch / "variable-name.yaml"
    path.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: v, version: '1'}\nspec:\n"
        f"  variables:\n    - name: {name}\n      expression: '1'\n"
        "  rules:\n    - id: r\n      stage: guard\n      when: 'vars.x == 1'\n"
    )
    loaded = Policy.load([path], engine=engine)
    assert isinstance(loaded, LoadFailure)
    assert_clean_errors(loaded.errors, path)


def test_a_yaml_lone_surrogate_escape_is_a_positioned_error(scratch: Path) -> None:
    """Was: YAML's "\\ud800" escape built a string nothing can encode, and the pack digest raised
    TypeError out of ``Policy.load`` (and ``dsh-policy check`` crashed)."""
    path = scratch / "surrogate.yaml"
    path.write_text(
        'apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: s, version: "1"}\nspec:\n'
        '  params:\n    x: "a\\ud800"\n    "\\udc00": 1\n  rules: []\n'
    )
    failure = Policy.load([path], engine="python")
    assert isinstance(failure, LoadFailure)
    for loaded in (list(failure.errors), load_cases(path)):
        assert_clean_errors(loaded, path)
        assert [(e.line, e.col) for e in loaded] == [(6, 8), (7, 5)]
        assert all("lone surrogate" in e.message for e in loaded)
    code, out = run_cli("check", str(path), "--format", "json")
    assert code == 2 and json.loads(out)["errors"]


@pytest.mark.parametrize(
    "number", ["123456789012345678901234567890", "-9223372036854775809", "0x1" + "0" * 20]
)
def test_an_integer_beyond_64_bits_is_a_positioned_error(number: str, scratch: Path) -> None:
    """Was: the pack digest (orjson) raised 'Integer exceeds 64-bit range' out of ``Policy.load``."""
    path = scratch / "big-int.yaml"
    path.write_text(
        'apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: s, version: "1"}\nspec:\n'
        f"  params:\n    x: {number}\n  rules: []\n"
    )
    failure = Policy.load([path], engine="python")
    assert isinstance(failure, LoadFailure)
    assert_clean_errors(list(failure.errors), path)
    assert [(e.line, e.col) for e in failure.errors] == [(6, 8)]
    assert "64-bit" in failure.errors[0].message
