"""The gateway installed on the real harness: each stage's decision reaches the model and the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.audit.verify import verify_log
from dsh_policy.core import Harness, ScriptedModel, define_tool, deny, reply, thaw
from gateway_kit import GatewayKit, calls, load_policy, results

pytestmark = pytest.mark.anyio


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_allowed_call_runs_and_is_audited(tmp_path: Path) -> None:
    kit = GatewayKit(load_policy("gateway.yaml"), tmp_path / "audit.jsonl")
    agent = await kit.session([("list files", [calls(("shell", '{"command": "ls -la"}')), reply("done")])])
    kit.close()
    assert kit.ran == [("shell", {"command": "ls -la"})]
    assert results(agent)[0]["is_error"] is False
    (record,) = [r for r in records(tmp_path / "audit.jsonl") if r["kind"] == "tool_result"]
    assert record["decision"]["pre_execute"]["decision"] == "allow"
    assert record["call"]["args"] == {"command": "ls -la"}
    assert record["policy"]["digest"] == kit.policy.digest
    assert verify_log([tmp_path / "audit.jsonl"]).intact


async def test_denied_call_never_runs_and_the_model_sees_the_reason() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    agent = await kit.session(
        [("fetch", [calls(("shell", '{"command": "sudo curl https://x.example"}')), reply("ok")])]
    )
    assert kit.ran == []
    (result,) = results(agent)
    assert result["is_error"] is True
    assert result["content"] == ["Error: curl is not allowed"]


async def test_guard_beats_an_approved_ask() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    kit.approvals = ["allowed-once"]
    agent = await kit.session([("wipe", [calls(("shell", '{"command": "rm -rf /"}')), reply("ok")])])
    assert kit.ran == []
    assert results(agent)[0]["content"] == ["Error: recursive delete of the root is never allowed"]


async def test_approved_ask_runs_when_no_guard_matches() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    kit.approvals = ["allowed-once"]
    await kit.session([("tidy", [calls(("shell", '{"command": "rm -rf build"}')), reply("ok")])])
    assert kit.ran == [("shell", {"command": "rm -rf build"})]


async def test_rejected_ask_denies_with_the_harness_reason() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    kit.approvals = ["rejected"]
    agent = await kit.session(
        [("fetch", [calls(("web_fetch", '{"url": "https://evil.example/x"}')), reply("ok")])]
    )
    assert kit.ran == []
    assert results(agent)[0]["content"] == ['Error: the user rejected tool "web_fetch"']


async def test_a_later_listener_deny_beats_the_gateway_ask() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    kit.harness.on("tools/pre-execute", lambda execution, next: deny("site policy"))
    agent = await kit.session(
        [("fetch", [calls(("web_fetch", '{"url": "https://evil.example/x"}')), reply("ok")])]
    )
    assert results(agent)[0]["content"] == ["Error: site policy"]


async def test_redaction_covers_content_and_value(tmp_path: Path) -> None:
    kit = GatewayKit(load_policy("gateway.yaml"), tmp_path / "audit.jsonl")
    kit.outputs["read_file"] = {"content": "key=AKIAIOSFODNN7EXAMPLE"}
    agent = await kit.session([("read", [calls(("read_file", '{"path": ".env"}')), reply("ok")])])
    kit.close()
    (result,) = results(agent)
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(result)
    assert result["content"] == ["key=[REDACTED:aws-access-key]"]
    assert result["value"] == {"content": "key=[REDACTED:aws-access-key]"}
    assert b"AKIAIOSFODNN7EXAMPLE" not in (tmp_path / "audit.jsonl").read_bytes()
    (record,) = [r for r in records(tmp_path / "audit.jsonl") if r["kind"] == "tool_result"]
    # One replacement in the rendered content, one in the value.
    assert record["decision"]["post_execute"]["redactions"] == 2
    assert record["decision"]["post_execute"]["rules"] == ["gw/redact-aws"]


async def test_secret_in_arguments_is_recorded_redacted_with_a_digest(tmp_path: Path) -> None:
    kit = GatewayKit(load_policy("gateway.yaml"), tmp_path / "audit.jsonl")
    await kit.session([("go", [calls(("shell", '{"command": "echo AKIAIOSFODNN7EXAMPLE"}')), reply("ok")])])
    kit.close()
    raw = (tmp_path / "audit.jsonl").read_bytes()
    assert b"AKIAIOSFODNN7EXAMPLE" not in raw
    (record,) = [r for r in records(tmp_path / "audit.jsonl") if r["kind"] == "tool_result"]
    assert record["call"]["args"]["command"] == "echo [REDACTED:aws-access-key]"
    assert record["call"]["args_digest"].startswith("sha256:")


async def test_block_withholds_output_and_keeps_only_its_contexts() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    kit.outputs["read_file"] = {"content": "-----BEGIN RSA PRIVATE KEY-----\nabc"}
    agent = await kit.session([("read", [calls(("read_file", '{"path": "k"}')), reply("ok")])])
    (result,) = results(agent)
    assert result["is_error"] is True
    assert result["content"] == ["tool output contained a private key and was withheld"]
    assert "abc" not in json.dumps(result)


async def test_context_rule_lands_after_the_result() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    agent = await kit.session(
        [("docs", [calls(("web_fetch", '{"url": "https://docs.python.org/3/"}')), reply("ok")])]
    )
    facts = [(f.type, thaw(f.data)) for f in agent.session.facts]
    kinds = [kind for kind, _ in facts]
    result_at = kinds.index("tool/result")
    context = next(
        i for i, (kind, data) in enumerate(facts)
        if kind == "user/message" and "untrusted web content" in json.dumps(data)
    )
    assert context > result_at


async def test_pre_step_reject_is_a_blocked_turn_and_audited(tmp_path: Path) -> None:
    kit = GatewayKit(load_policy("gateway.yaml"), tmp_path / "audit.jsonl")
    model_replies = [reply("should never be used")]
    agent = await kit.harness.create_agent(model=ScriptedModel(model_replies))
    agent.followup("please disable the gateway now")
    await agent.wait_idle()
    kit.close()
    ends = [dict(f.data) for f in agent.session.facts if f.type == "turn/end"]
    assert ends[-1]["reason"] == "blocked"
    assert not any(f.type == "step/start" for f in agent.session.facts)
    (record,) = [r for r in records(tmp_path / "audit.jsonl") if r["kind"] == "step_rejected"]
    assert record["decision"]["rules"] == ["gw/no-disable"]


async def test_turn_budget_rejects_later_turns() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    agent = await kit.session([("a", [reply("1")]), ("b", [reply("2")]), ("c", [reply("3")])])
    reasons = [dict(f.data)["reason"] for f in agent.session.facts if f.type == "turn/end"]
    assert reasons == ["completed", "completed", "blocked"]


async def test_fail_closed_refuses_a_call_whose_audit_cannot_be_written(tmp_path: Path) -> None:
    kit = GatewayKit(load_policy("gateway.yaml"), tmp_path / "audit.jsonl", fail_closed=True)
    assert kit.writer is not None
    kit.writer.close()  # a closed writer refuses appends, like one whose disk failed
    agent = await kit.session([("go", [calls(("shell", '{"command": "ls"}')), reply("ok")])])
    assert kit.ran == []
    (result,) = results(agent)
    assert result["is_error"] is True
    assert result["error"]["info"]["code"] == "AUDIT_UNAVAILABLE"


async def test_fail_open_deployment_keeps_running_when_audit_fails(tmp_path: Path) -> None:
    kit = GatewayKit(load_policy("gateway.yaml"), tmp_path / "audit.jsonl", fail_closed=False)
    assert kit.writer is not None
    kit.writer.close()
    await kit.session([("go", [calls(("shell", '{"command": "ls"}')), reply("ok")])])
    assert kit.ran == [("shell", {"command": "ls"})]


async def test_disposing_the_gateway_removes_every_seam() -> None:
    kit = GatewayKit(load_policy("gateway.yaml"))
    kit.fiber.dispose()
    await kit.session([("go", [calls(("shell", '{"command": "curl https://x"}')), reply("ok")])])
    assert kit.ran == [("shell", {"command": "curl https://x"})]


async def test_internal_error_in_the_policy_fails_closed() -> None:
    policy = load_policy("gateway.yaml")

    class ExplodingDecider:
        """The decider the gateway pins for the call, with a guard that crashes."""

        def __getattr__(self, name: str) -> Any:
            return getattr(policy.current(), name)

        def guard(self, event: Any) -> Any:
            raise RuntimeError("engine crashed")

    class Exploding:
        digest = policy.digest
        engine_name = policy.engine_name

        def __getattr__(self, name: str) -> Any:
            return getattr(policy, name)

        def current(self) -> Any:
            return ExplodingDecider()

    harness = Harness()
    ran: list[str] = []
    harness.tools.register(define_tool("shell", description="s", execute=lambda a, r: ran.append("x")))
    from dsh_policy.policy.runtime.gateway import PolicyGateway

    harness.plugin(PolicyGateway(Exploding()))
    model = ScriptedModel([calls(("shell", '{"command": "ls"}')), reply("ok")])
    agent = await harness.create_agent(model=model)
    agent.followup("go")
    await agent.wait_idle()
    assert ran == []
    assert results(agent)[0]["is_error"] is True
