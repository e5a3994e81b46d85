"""PolicyHooks without the SDK: the answers a Claude Agent SDK callback returns, and that a
failure inside the gateway is the event's safe answer (the real CLI is driven in
tests/adapters/test_claude_agent_sdk_adapter.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy import LoadFailure, Policy
from dsh_policy.policy.hooks.in_process.agent_sdk import PolicyHooks, sdk_answer
from dsh_policy.policy.hooks.protocol.messages import HookReply

ROOT = Path(__file__).resolve().parents[2]
#: Data for the policy engine only, never run (written with the file editor).
ROOT_WIPE = "sudo rm -rf /"


def _event(name: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": name,
            **fields}


@pytest.fixture(scope="module")
def hooks() -> PolicyHooks:
    policy = Policy.load([ROOT / "rules" / "baseline.yaml", ROOT / "rules" / "secrets.yaml"])
    assert not isinstance(policy, LoadFailure), str(policy)
    return PolicyHooks(policy)


def test_a_pre_tool_use_deny_is_a_permission_decision(hooks: PolicyHooks) -> None:
    answer = hooks.answer(_event("PreToolUse", tool_name="Bash", tool_input={"command": ROOT_WIPE},
                                 tool_use_id="t1"))
    specific = answer["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny" and "baseline/" in specific["permissionDecisionReason"]


def test_an_allowed_call_gets_no_objection(hooks: PolicyHooks) -> None:
    assert hooks.answer(_event("PreToolUse", tool_name="Bash", tool_input={"command": "pytest -q"},
                               tool_use_id="t2")) == {}


def test_a_secret_in_any_tool_output_is_replaced_before_the_model_reads_it(hooks: PolicyHooks) -> None:
    secret = "AKIA" + "QWERTYUIOPASDFGH"
    answer = hooks.answer(_event("PostToolUse", tool_name="Bash", tool_input={"command": "cat .env"},
                                 tool_use_id="t3", tool_response={"stdout": f"KEY={secret}", "stderr": ""}))
    replaced = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert secret not in str(replaced) and "[REDACTED:aws-access-key]" in replaced["stdout"]


class _Broken:
    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("compiled policy unavailable")


@pytest.mark.parametrize(
    ("event", "fields", "expected"),
    [
        ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t"},
         lambda a: a["hookSpecificOutput"]["permissionDecision"] == "deny"),
        ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t",
                         "tool_response": {"stdout": "x"}}, lambda a: a["decision"] == "block"),
        ("UserPromptSubmit", {"prompt": "hi"}, lambda a: a["decision"] == "block"),
    ],
)
def test_a_failure_inside_the_gateway_is_the_safe_answer(event: str, fields: dict[str, Any],
                                                         expected: Any) -> None:
    answer = PolicyHooks(_Broken()).answer(_event(event, **fields))  # type: ignore[arg-type]
    assert expected(answer), answer


def test_unreadable_input_is_refused(hooks: PolicyHooks) -> None:
    answer = hooks.answer({"hook_event_name": "PreToolUse", "tool_name": 7})
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_command_hook_reply_maps_onto_the_callback_answer() -> None:
    assert sdk_answer(HookReply(2, "", "no\n"), "PostToolUse") == {"decision": "block", "reason": "no"}
    assert sdk_answer(HookReply(2, "", "stop\n"), "Stop") == {"continue_": False, "stopReason": "stop"}
    assert sdk_answer(HookReply(0, '{"continue":false,"stopReason":"x"}\n'), "Stop") == {
        "continue_": False, "stopReason": "x"}
    assert sdk_answer(HookReply(0), "PreToolUse") == {}
