"""Everything that can go wrong in a hook fails closed: never a crash, never an exit code that
the harness treats as a non-blocking error (which would let the tool call run)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from dsh_policy.policy.hooks.codex import dialect as hook_codex
from dsh_policy.policy.hooks.protocol.messages import FAIL_CLOSED_PREFIX, MAX_INPUT_BYTES
from hook_testkit import PACK, payload

HARNESSES = ("claude-code", "codex")
_PRE = b'{"hook_event_name": "PreToolUse", "session_id": "s", '


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize(
    ("stdin", "fragment"),
    [
        (b"", "empty hook input"),
        (b"  \n", "empty hook input"),
        (b"{not json", "not JSON"),
        (b"[1, 2]", "must be a JSON object, got an array"),
        (b'"PreToolUse"', "must be a JSON object, got a string"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"hook_event_name": "PreToolUse", "session_id": "s", "tool_input": {}}', "tool_name"),
        (
            b'{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": 3, "tool_input": {}}',
            "tool_name",
        ),
        (
            b'{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": "rm"}',
            "tool_input",
        ),
        (
            b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}',
            "session_id",
        ),
        (b'{"session_id": "s", "tool_name": "Bash", "tool_input": {}}', "hook_event_name"),
        (b'{"hook_event_name": "Bogus", "session_id": "s"}', "unsupported hook event 'Bogus'"),
        (b'{"hook_event_name": "PreToolUse", "hook_event_name": "Stop", "session_id": "s"}', "duplicate key"),
        (
            _PRE + b'"tool_name": "Bash", "tool_input": {"x": NaN}}',
            "not JSON",
        ),
        (
            b'{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {}}',
            "missing 'command'",
        ),
        (
            _PRE + b'"tool_name": "Bash", "tool_input": {"command": 1}}',
            "command",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),
    ],
)
def test_malformed_pre_tool_use_input_denies(run_hook, harness: str, stdin: bytes, fragment: str) -> None:
    run = run_hook(harness, stdin)
    assert run.code == 2
    assert run.stdout == ""
    assert run.stderr.startswith(FAIL_CLOSED_PREFIX)
    assert fragment in run.stderr


@pytest.mark.parametrize("harness", HARNESSES)
def test_oversized_input_denies_without_reading_it_all(run_hook, harness: str) -> None:
    run = run_hook(harness, b"{" + b" " * MAX_INPUT_BYTES + b"}")
    assert run.code == 2
    assert "larger than" in run.stderr


@pytest.mark.parametrize("harness", HARNESSES)
def test_wrongly_typed_post_tool_use_payload_withholds_the_result(run_hook, harness: str) -> None:
    document = payload(harness, "post_tool_use_bash_clean")
    del document["tool_response"]
    run = run_hook(harness, document)
    assert run.code == 0
    assert run.json["decision"] == "block"
    assert run.json["reason"].startswith(FAIL_CLOSED_PREFIX)
    assert "tool_response" in run.json["reason"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_wrongly_typed_prompt_blocks_the_prompt(run_hook, harness: str) -> None:
    document = payload(harness, "user_prompt_submit")
    document["prompt"] = ["not", "a", "string"]
    run = run_hook(harness, document)
    assert (run.code, run.json["decision"]) == (0, "block")


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize(
    "name",
    ["pre_tool_use_bash_ls", "post_tool_use_bash_clean", "user_prompt_submit", "session_start", "stop"],
)
def test_a_pack_that_does_not_load_fails_every_event_closed(
    run_hook, harness: str, name: str, tmp_path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: b}\n"
        "spec:\n  rules:\n    - id: x\n      wehn: true\n"
    )
    document = payload(harness, name)
    run = run_hook(harness, document, pack=broken)
    event = document["hook_event_name"]
    if event == "PreToolUse":
        assert run.code == 2
        assert "cannot load policy" in run.stderr
        assert "broken.yaml:" in run.stderr
        return
    assert run.code == 0
    answer = run.json
    if event in ("SessionStart", "Stop"):
        assert answer == {"continue": False, "stopReason": answer["stopReason"]}
        assert "cannot load policy" in answer["stopReason"]
    else:
        assert answer["decision"] == "block"
        assert "cannot load policy" in answer["reason"]
    if harness == "codex":
        hook_codex.check_known_fields(event, answer)


@pytest.mark.parametrize("harness", HARNESSES)
def test_no_pack_at_all_denies(run_hook, harness: str) -> None:
    run = run_hook(harness, payload(harness, "pre_tool_use_bash_ls"), pack=None)
    assert run.code == 2
    assert "no rule packs given" in run.stderr


def test_usage_errors_deny_with_exit_2(run_hook) -> None:
    run = run_hook("gemini", payload("codex", "pre_tool_use_bash_ls"))
    assert run.code == 2
    assert "invalid choice" in run.stderr


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_exception_inside_the_decision_fails_closed(run_hook, harness: str, monkeypatch) -> None:
    def explode(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    monkeypatch.setattr("dsh_policy.policy.hooks.in_process.adapter.decide_hook", explode)
    run = run_hook(harness, payload(harness, "pre_tool_use_bash_ls"))
    assert (run.code, run.stdout) == (2, "")
    assert "RuntimeError: boom" in run.stderr


def test_a_codex_rendering_bug_is_caught_and_fails_closed(run_hook, monkeypatch) -> None:
    monkeypatch.setitem(hook_codex.KNOWN_FIELDS, "PostToolUse", (frozenset(), frozenset()))
    run = run_hook("codex", payload("codex", "post_tool_use_bash_private_key"))
    assert (run.code, run.stdout) == (2, "")
    assert "UnknownCodexFieldError" in run.stderr


@pytest.mark.parametrize("harness", HARNESSES)
def test_unsupported_real_events_are_refused(run_hook, harness: str) -> None:
    run = run_hook(harness, payload("claude-code", "notification_unsupported"))
    assert run.code == 2
    assert "unsupported hook event 'Notification'" in run.stderr


@pytest.mark.parametrize(
    ("harness", "name", "expected_code"),
    [("claude-code", "pre_tool_use_bash_rm_root", 2), ("codex", "pre_tool_use_shell_argv_rm_root", 2)],
)
def test_console_script_end_to_end(harness: str, name: str, expected_code: int) -> None:
    script = f"{sys.prefix}/bin/dsh-policy"
    done = subprocess.run(
        [script, "hook", harness, "--pack", str(PACK)],
        input=json.dumps(payload(harness, name)).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == expected_code
    assert done.stdout == b""
    assert done.stderr.decode().strip().endswith("[policy: hook-guard/never-rm-root]")


def test_lone_surrogates_in_the_payload_cannot_break_the_json_answer(run_hook) -> None:
    # "\ud800" is valid JSON but no UTF-8 stream can carry it; the answers echo payload text.
    ask = _PRE + b'"tool_name": "mcp__fetch__fetch", "tool_input": {"url": "https://\\ud800.example/"}}'
    run = run_hook("claude-code", ask, "--engine", "python")
    assert run.code == 0
    assert run.stdout.isascii()
    answer = json.loads(run.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    assert answer["permissionDecisionReason"].startswith("egress to \ud800.example")


def test_lone_surrogates_in_a_denial_reason_reach_stderr_escaped(run_hook) -> None:
    deny = _PRE + b'"tool_name": "Write", "tool_input": {"file_path": "/etc/\\ud800", "content": ""}}'
    run = run_hook("claude-code", deny, "--engine", "python")
    assert run.code == 2
    assert "writing outside the workspace" in run.stderr
