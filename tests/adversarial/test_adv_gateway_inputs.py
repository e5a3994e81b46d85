"""Hostile tool arguments through the live gateway and the decide API: whatever a model sends, the
pipeline returns a result, the loop never raises, every call gets an audit record, and the log
verifies. Covers any JSON (hypothesis), huge strings, deep nesting, lone surrogates, odd keys."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from adv_kit import (
    ENGINES,
    SHIPPED_PACKS,
    TEST_PACKS,
    TOOL_NAMES,
    GatewayRig,
    fuzz_settings,
    hostile_arguments,
    load,
    nested,
    records,
)
from dsh_policy.audit.verify import verify_log
from dsh_policy.core import Harness, Message, ScriptedModel, ToolResult, reply
from dsh_policy.core.frozen import freeze_json
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent, ToolResultEvent
from dsh_policy.policy.runtime.auditing import DEPTH_MARKER, digest_json
from hypothesis import given
from hypothesis import strategies as st

PACKS = (*SHIPPED_PACKS, TEST_PACKS[0])
_POLICIES: dict[str, Policy] = {}


def policy_for(engine: str) -> Policy:
    if engine not in _POLICIES:
        _POLICIES[engine] = load(PACKS, engine)
    return _POLICIES[engine]


def assert_log_intact(log: Path, calls: int) -> None:
    assert len(records(log, "tool_result")) == calls, "a call was not audited"
    report = verify_log([log])
    assert report.records_invalid == 0 and report.intact, report


# --- fuzzing --------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_any_arguments_through_the_live_gateway_get_a_result_and_a_verifying_record(engine: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        rig = GatewayRig(policy_for(engine), Path(scratch) / "audit.jsonl")
        calls = 0

        @fuzz_settings(60)
        @given(tool=st.sampled_from(TOOL_NAMES), arguments=hostile_arguments)
        def one(tool: str, arguments: Any) -> None:
            nonlocal calls
            result = anyio.run(rig.call, tool, arguments)
            calls += 1
            assert isinstance(result, ToolResult)
            assert isinstance(result.text, str)

        try:
            one()
        finally:
            rig.close()
        assert_log_intact(rig.log, calls)
        assert rig.gateway._calls == {}, "per-call state must not outlive the call (memory)"


@pytest.mark.parametrize("engine", ENGINES)
@fuzz_settings(60)
@given(tool=st.sampled_from(TOOL_NAMES), arguments=hostile_arguments, output=hostile_arguments)
def test_the_decide_api_answers_every_input_with_a_verdict(
    engine: str, tool: str, arguments: Any, output: Any
) -> None:
    policy = policy_for(engine)
    call = ToolCallEvent(tool=tool, args=arguments, call_id="c")
    assert policy.check_tool_call(call).decision in ("allow", "deny", "ask")
    text = output if isinstance(output, str) else json.dumps(output, default=str)
    review = policy.review_tool_result(ToolResultEvent(call=call, text=text, value=output))
    assert review.decision in ("accept", "block")
    redacted, count = policy.redact_arguments(arguments)
    assert count >= 0
    assert digest_json(arguments).startswith("sha256:")
    del redacted


# --- regressions found by the fuzzing -----------------------------------------------------------------


@pytest.mark.parametrize("fail_closed", [False, True])
def test_a_lone_surrogate_in_the_arguments_is_still_audited(tmp_path: Path, fail_closed: bool) -> None:
    """Was: orjson refused the surrogate, the record was silently lost (fail-open ran the call
    unaudited; fail-closed refused it with a generic listener failure)."""
    rig = GatewayRig(load([TEST_PACKS[0]]), tmp_path / "audit.jsonl", fail_closed=fail_closed)
    arguments = json.loads('{"command": "ls \\ud800", "\\udc00": ["AKIAIOSFODNN7EXAMPLE\\udfff"]}')
    result = anyio.run(rig.call, "shell", arguments)
    rig.close()
    assert result.is_error is False and rig.ran  # this pack has no rule that fails on it
    (record,) = records(rig.log, "tool_result")
    assert record["call"]["args"] == {"command": "ls \ufffd", "\ufffd": ["[REDACTED:aws-access-key]\ufffd"]}
    assert record["call"]["args_digest"] == digest_json(arguments)
    assert_log_intact(rig.log, 1)


def test_lone_surrogates_give_distinct_digests_that_never_collide_with_plain_text() -> None:
    assert digest_json("\ud800") != digest_json("\udc00")
    assert digest_json("\ud800") != digest_json("\\ud800")
    assert digest_json("\ud800") != digest_json("\ufffd")
    assert digest_json({"a": 1.5}) == digest_json({"a": "1.5"})  # the fast path is unchanged


@pytest.mark.parametrize("depth", [300, 990, 5000])
def test_deeply_nested_arguments_fail_closed_and_are_audited(tmp_path: Path, depth: int) -> None:
    """Was: 300 levels broke the digest (orjson's 255 limit) and lost the record; 5000 levels
    raised RecursionError out of ``ToolRegistry.execute``, which must never raise."""
    rig = GatewayRig(policy_for("python"), tmp_path / "audit.jsonl")
    result = anyio.run(rig.call, "shell", {"command": nested(depth)})
    rig.close()
    assert result.is_error is True
    assert rig.ran == []
    (record,) = records(rig.log, "tool_result")
    assert record["result"]["is_error"] is True
    assert_log_intact(rig.log, 1)


def test_the_record_keeps_sixty_four_levels_and_the_digest_covers_the_rest(tmp_path: Path) -> None:
    rig = GatewayRig(load([TEST_PACKS[1]], "python"), tmp_path / "audit.jsonl")
    deep = {"command": nested(200)}
    anyio.run(rig.call, "mystery", deep)
    rig.close()
    (record,) = records(rig.log, "tool_result")
    assert DEPTH_MARKER in json.dumps(record["call"]["args"])
    assert record["call"]["args_digest"] == digest_json(deep) != digest_json({"command": nested(199)})


def test_freezing_arguments_too_deep_for_the_stack_is_a_not_json_error() -> None:
    with pytest.raises(ValueError, match="nests too deeply"):
        freeze_json(nested(100_000))


async def _model_session(payload: str) -> list[Any]:
    harness = Harness()
    rig_policy = policy_for("python")
    from dsh_policy.policy.runtime.gateway import PolicyGateway

    harness.plugin(PolicyGateway(rig_policy))
    model = ScriptedModel([reply(tool_calls=[("shell", payload)]), reply("done")])
    agent = await harness.create_agent(model=model)
    agent.followup(Message.user("go"))
    await agent.wait_idle()
    return [fact for fact in agent.session.facts if fact.type in ("tool/result", "turn/end")]


@pytest.mark.parametrize(
    "payload",
    [
        '{"command":' + "[" * 995 + "]" * 995 + "}",  # just inside json's own recursion limit
        "[" * 50_000,  # beyond it: kept as the raw string, then invalid arguments
        '{"command": "' + "A" * (4 << 20) + '"}',  # 4 MiB string
        '{"\\ud800": "\\udfff", "": {"": []}}',
    ],
    ids=["deep-995", "deep-50000-unclosed", "4MiB", "surrogate-keys"],
)
def test_the_agent_loop_survives_hostile_model_json(payload: str) -> None:
    facts = anyio.run(_model_session, payload)
    (result,) = [f for f in facts if f.type == "tool/result"]
    (end,) = [f for f in facts if f.type == "turn/end"]
    assert end.data["reason"] == "completed"
    assert isinstance(result.data["is_error"], bool)


def test_megabyte_strings_are_decided_redacted_and_audited(tmp_path: Path) -> None:
    rig = GatewayRig(policy_for("python"), tmp_path / "audit.jsonl")
    secret = "AKIAIOSFODNN7EXAMPLE"
    # Just under the 1 MiB of text that reaches CEL and the record: decided, redacted, recorded.
    arguments = {"content": ("x" * ((1 << 20) - 64)) + " " + secret, "path": "notes.txt"}
    result = anyio.run(rig.call, "write_file", arguments)
    # Over it: refused unread, and the record keeps a digest, not the text.
    anyio.run(rig.call, "write_file", {"content": ("x" * (2 << 20)) + " " + secret, "path": "big.txt"})
    rig.close()
    assert isinstance(result, ToolResult)
    small, big = records(rig.log, "tool_result")
    assert secret not in rig.log.read_text()
    assert small["call"]["args"]["content"].endswith("[REDACTED:aws-access-key]")
    assert big["call"]["args"].startswith("[WITHHELD: more than 1 MiB") and big["call"]["args_digest"]
    assert big["decision"]["denied_by"] == "tools/pre-execute"
    assert_log_intact(rig.log, 2)


MESSAGE_PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: quoting, version: "1"}
spec:
  rules:
    - id: deny-fetch
      stage: pre-execute
      match: {tools: [web_fetch]}
      decision: deny
      message_expression: '"fetching " + args.url + " is not allowed"'
"""


def test_a_message_expression_quoting_a_secret_is_redacted_in_the_log(tmp_path: Path) -> None:
    """Was: the verdict message went to the record unredacted, secret and all."""
    pack = tmp_path / "quoting.yaml"
    pack.write_text(MESSAGE_PACK)
    rig = GatewayRig(load([pack]), tmp_path / "audit.jsonl")
    result = anyio.run(rig.call, "web_fetch", {"url": "https://x.example/?k=AKIAIOSFODNN7EXAMPLE\ud800"})
    rig.close()
    assert result.is_error and "fetching" in result.text
    (record,) = records(rig.log, "tool_result")
    assert "AKIAIOSFODNN7EXAMPLE" not in rig.log.read_text()
    assert record["decision"]["pre_execute"]["message"] == (
        "fetching https://x.example/?k=[REDACTED:aws-access-key]\ufffd is not allowed"
    )
    assert_log_intact(rig.log, 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_any_tool_output_is_reviewed_audited_and_verifies(engine: str) -> None:
    """The other attacker-fed input: what a tool returns (a web page, a file) of any shape."""
    with tempfile.TemporaryDirectory() as scratch:
        rig = GatewayRig(policy_for(engine), Path(scratch) / "audit.jsonl")
        calls = 0

        @fuzz_settings(40)
        @given(tool=st.sampled_from(TOOL_NAMES), output=hostile_arguments)
        def one(tool: str, output: Any) -> None:
            nonlocal calls
            rig.outputs[tool] = output
            result = anyio.run(rig.call, tool, {"path": "x", "url": "https://example.com", "command": "ls"})
            calls += 1
            assert isinstance(result, ToolResult)
            text = result.text
            assert "AKIAIOSFODNN7EXAMPLE" not in text, "a known secret reached the model"

        try:
            one()
        finally:
            rig.close()
        assert_log_intact(rig.log, calls)
