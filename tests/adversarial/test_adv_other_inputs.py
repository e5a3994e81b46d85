"""The remaining files users hand the gateway - deployment files, session scripts, explain events -
damaged the same way as packs: a value or positioned errors, never an exception."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from adv_kit import REPO, TEST_PACKS, fuzz_settings
from adv_mutations import mutated_document
from dsh_policy.policy.cases import Case, load_event
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.config import load_gateway_config
from dsh_policy.policy.demo.script import load_session_script
from dsh_policy.policy.errors import PolicyError
from hypothesis import given
from hypothesis import strategies as st

DEPLOYMENTS = [(REPO / "examples" / "gateway.yaml").read_bytes(),
               (REPO / "examples" / "hooks" / "gateway.yaml").read_bytes()]
SESSION = (REPO / "examples" / "sessions" / "demo.yaml").read_bytes()
EVENTS = [
    b"stage: pre-execute\ntool: shell\nargs: {command: 'sudo rm -rf /'}\n",
    b"stage: post-execute\ntool: read_file\nargs: {path: .env}\n"
    b"result: {text: 'AWS_KEY=AKIAIOSFODNN7EXAMPLE'}\n",
    b"stage: pre-step\nturn: 51\nprompt: hello\n",
]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("other-inputs")


def assert_positioned(errors: list[PolicyError], path: Path) -> None:
    assert errors
    for error in errors:
        assert isinstance(error, PolicyError) and error.message.strip()
        if error.file == str(path) and not error.message.startswith(("no such file", "cannot read")):
            assert error.line >= 1 and error.col >= 1, str(error)


@fuzz_settings(30)
@given(data=st.data())
def test_a_damaged_deployment_file_gives_a_config_or_positioned_errors(
    data: st.DataObject, scratch: Path
) -> None:
    source = DEPLOYMENTS[data.draw(st.integers(0, len(DEPLOYMENTS) - 1), label="source")]
    path = scratch / "gateway.yaml"
    path.write_bytes(data.draw(mutated_document(source)))
    loaded = load_gateway_config(path)
    if isinstance(loaded, list):
        assert_positioned(loaded, path)


@fuzz_settings(30)
@given(data=st.data())
def test_a_damaged_session_script_gives_a_script_or_positioned_errors(
    data: st.DataObject, scratch: Path
) -> None:
    path = scratch / "session.yaml"
    path.write_bytes(data.draw(mutated_document(SESSION)))
    loaded = load_session_script(path)
    if isinstance(loaded, list):
        assert_positioned(loaded, path)


@fuzz_settings(30)
@given(data=st.data())
def test_a_damaged_explain_event_gives_an_event_or_positioned_errors(
    data: st.DataObject, scratch: Path
) -> None:
    source = EVENTS[data.draw(st.integers(0, len(EVENTS) - 1), label="source")]
    path = scratch / "event.yaml"
    path.write_bytes(data.draw(mutated_document(source)))
    loaded = load_event(path)
    if isinstance(loaded, list):
        assert_positioned(loaded, path)
    else:
        assert isinstance(loaded, Case)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main(["explain", str(TEST_PACKS[1]), "--event", str(path), "--format", "json",
                         "--engine", "python"])
    assert code in (0, 2)
    assert json.loads(out.getvalue())
