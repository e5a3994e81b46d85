"""Every verdict, for every event, renders into a reply both harnesses accept: exit 0 or 2, one JSON
object that names the event that fired, and (Codex) only fields Codex honours."""

from __future__ import annotations

import json
import typing

import pytest
from dsh_policy.policy.hooks.claude_code.dialect import ClaudeCodeDialect
from dsh_policy.policy.hooks.codex.dialect import ASK_DEGRADED_SUFFIX, CodexDialect, check_known_fields
from dsh_policy.policy.hooks.protocol.messages import SUPPORTED_EVENTS, Action, HookVerdict, failure_verdict

ACTIONS = typing.get_args(Action)
DIALECTS = [ClaudeCodeDialect(), CodexDialect()]


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize("event", [*SUPPORTED_EVENTS, None])
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("reason", ["", "because policy", "  "])
def test_every_verdict_renders_to_a_valid_reply(dialect, event, action, reason: str) -> None:  # type: ignore[no-untyped-def]
    verdict = HookVerdict(
        event,
        action,
        reason,
        contexts=("be careful",),
        redacted_types=("aws-access-key",),
        redacted_output={"ok": "[REDACTED:aws-access-key]"},
        tool_name="mcp__vault__read",
    )
    reply = dialect.render(verdict)
    assert reply.exit_code in (0, 2)
    if reply.exit_code == 2:
        assert reply.stdout == ""
        assert reply.stderr.strip(), "exit 2 with an empty stderr is a failed (non-blocking) hook in Codex"
        return
    assert reply.stderr == ""
    if not reply.stdout:
        return
    document = json.loads(reply.stdout)
    specific = document.get("hookSpecificOutput")
    if specific is not None:
        assert specific["hookEventName"] == event
    if document.get("decision") == "block":
        assert document["reason"].strip()
    if dialect.name == "codex":
        assert event is not None
        check_known_fields(event, document)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_deny_is_exit_2_with_the_reason_on_stderr(dialect) -> None:  # type: ignore[no-untyped-def]
    reply = dialect.render(HookVerdict("PreToolUse", "deny", "no"))
    assert (reply.exit_code, reply.stdout, reply.stderr) == (2, "", "no\n")


def test_codex_cannot_ask_so_it_denies_and_says_so() -> None:
    reply = CodexDialect().render(HookVerdict("PreToolUse", "ask", "needs a human"))
    assert (reply.exit_code, reply.stderr) == (2, "needs a human" + ASK_DEGRADED_SUFFIX + "\n")


def test_claude_redaction_of_a_builtin_tool_replaces_its_output_in_the_tools_own_shape() -> None:
    redacted = {"stdout": "key [REDACTED:aws-access-key]", "stderr": "", "interrupted": False}
    verdict = HookVerdict("PostToolUse", "redact", redacted_output=redacted, tool_name="Bash")
    document = json.loads(ClaudeCodeDialect().render(verdict).stdout)
    assert document == {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": redacted}}


def test_claude_redaction_without_the_tools_shape_blocks_and_names_the_types() -> None:
    verdict = HookVerdict(
        "PostToolUse", "redact", redacted_types=("aws-access-key", "github-token"), tool_name="Read"
    )
    document = json.loads(ClaudeCodeDialect().render(verdict).stdout)
    assert document["decision"] == "block"
    assert "aws-access-key, github-token" in document["reason"]


@pytest.mark.parametrize("event", [*SUPPORTED_EVENTS, None])
def test_failure_verdicts_take_the_safe_side_of_each_event(event) -> None:  # type: ignore[no-untyped-def]
    expected = {
        None: "deny",
        "PreToolUse": "deny",
        "PostToolUse": "block",
        "UserPromptSubmit": "block",
        "SessionStart": "halt",
        "Stop": "halt",
    }[event]
    verdict = failure_verdict(event, "x")
    assert (verdict.action, verdict.failure) == (expected, True)
