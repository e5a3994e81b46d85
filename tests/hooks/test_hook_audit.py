"""Every hook decision lands in the audit log, the chain verifies, and no secret is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_policy.policy.cli import main as cli_main
from hook_testkit import PACK, PAYLOADS

HARNESSES = ("claude-code", "codex")


def _records(log: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_recorded_payload_is_audited_and_the_chain_verifies(run_hook, tmp_path, harness: str) -> None:
    log = tmp_path / "hooks.jsonl"
    paths = sorted((PAYLOADS / harness).glob("*.json"))
    for path in paths:
        run = run_hook(harness, path.read_bytes(), "--audit", str(log))
        assert run.code in (0, 2)
    run_hook(harness, b"not json", "--audit", str(log))
    assert cli_main(["verify", str(log)]) == 0
    records = _records(log)
    decisions = [r for r in records if r["kind"] not in ("segment_start", "checkpoint", "policy_loaded")]
    assert len(decisions) == len(paths) + 1
    # The policy is recorded once, by the first run (every later run decides with the same one).
    (loaded,) = [r for r in records if r["kind"] == "policy_loaded"]
    assert loaded["summary"]["digest"] == loaded["policy"]["digest"]
    text = log.read_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in text
    assert "PRIVATE KEY-----" not in text


def test_a_denied_call_is_a_tool_result_naming_the_guard_and_the_harness_tool(run_hook, tmp_path) -> None:
    log = tmp_path / "hooks.jsonl"
    run = run_hook(
        "codex",
        (PAYLOADS / "codex" / "pre_tool_use_shell_argv_rm_root.json").read_bytes(),
        "--audit",
        str(log),
    )
    assert run.code == 2
    (record,) = [r for r in _records(log) if r["kind"] == "tool_result"]
    assert record["decision"]["denied_by"] == "guard"
    assert record["decision"]["pre_execute"]["rules"] == ["hook-guard/never-rm-root"]
    assert record["call"]["name"] == "shell"
    assert record["call"]["original_name"] == "shell"
    assert record["call"]["args"]["command"] == "bash -lc 'rm -rf /'"
    assert record["result"]["is_error"] is True
    assert record["session"] == "019a2f4e-7c3b-7d21-9e8f-5a6b7c8d9e0f"


def test_a_redacted_result_is_recorded_without_its_secret(run_hook, tmp_path) -> None:
    log = tmp_path / "hooks.jsonl"
    run_hook(
        "claude-code",
        (PAYLOADS / "claude-code" / "post_tool_use_read_aws_key.json").read_bytes(),
        "--audit",
        str(log),
    )
    (record,) = [r for r in _records(log) if r["kind"] == "tool_result"]
    post = record["decision"]["post_execute"]
    # Claude Code takes the redacted response object as the Read's output (updatedToolOutput)
    assert (post["decision"], post["action"], post["redactions"]) == ("accept", "redact-value", 2)
    assert record["call"]["original_name"] == "Read"
    assert record["result"]["content_digest"].startswith("sha256:")


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_unwritable_audit_log_denies_even_a_harmless_call(run_hook, tmp_path, harness: str) -> None:
    (tmp_path / "not-a-dir").write_text("a file where the log's folder should be")
    log = tmp_path / "not-a-dir" / "hooks.jsonl"
    run = run_hook(
        harness, (PAYLOADS / harness / "pre_tool_use_bash_ls.json").read_bytes(), "--audit", str(log)
    )
    assert run.code == 2
    assert "audit log" in run.stderr


def test_a_deployment_that_does_not_fail_closed_lets_the_call_pass(run_hook, tmp_path) -> None:
    (tmp_path / "no-such-dir").write_text("a file where the log's folder should be")
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n"
        f"  packs: [{PACK}]\n"
        "  audit: {path: no-such-dir/hooks.jsonl, fail_closed: false}\n"
    )
    run = run_hook(
        "claude-code",
        (PAYLOADS / "claude-code" / "pre_tool_use_bash_ls.json").read_bytes(),
        "--config",
        str(config),
        pack=None,
    )
    assert (run.code, run.stdout) == (0, "")
    assert "audit record lost" in run.stderr  # fail-open, but the loss is never silent


def test_a_pack_that_does_not_load_is_still_recorded(run_hook, tmp_path) -> None:
    log = tmp_path / "hooks.jsonl"
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: RulePack\n")
    run = run_hook(
        "codex",
        (PAYLOADS / "codex" / "pre_tool_use_bash_ls.json").read_bytes(),
        "--audit",
        str(log),
        pack=broken,
    )
    assert run.code == 2
    (record,) = [r for r in _records(log) if r["kind"] == "hook_event"]
    assert record["policy"]["digest"] == "none"
    assert record["answer"]["failure"] is True


def test_records_name_the_harness_and_a_codex_ask_records_the_refusal(run_hook, tmp_path) -> None:
    log = tmp_path / "hooks.jsonl"
    run = run_hook(
        "codex",
        (PAYLOADS / "codex" / "pre_tool_use_mcp_fetch_unknown_host.json").read_bytes(),
        "--audit",
        str(log),
    )
    assert run.code in (0, 2)
    (asked,) = [r for r in _records(log) if r["kind"] == "hook_event"]
    assert asked["hook"]["harness"] == "codex"
    assert (asked["answer"]["action"], asked["answer"]["client"]) == ("ask", "deny")
    run_hook(
        "codex",
        (PAYLOADS / "codex" / "pre_tool_use_shell_argv_rm_root.json").read_bytes(),
        "--audit",
        str(log),
    )
    (denied,) = [r for r in _records(log) if r["kind"] == "tool_result"]
    assert denied["harness"] == "codex"
    claude = tmp_path / "claude.jsonl"
    run_hook(
        "claude-code",
        (PAYLOADS / "claude-code" / "post_tool_use_read_aws_key.json").read_bytes(),
        "--audit",
        str(claude),
    )
    (reviewed,) = [r for r in _records(claude) if r["kind"] == "tool_result"]
    assert reviewed["harness"] == "claude-code"
