"""Replay of logs written by the hook adapters (``dsh-policy hook claude-code|codex --audit LOG``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_policy.policy.review import ReplayReport, replay_log
from replay_kit import HOOK_PACK, compiled, edited_packs, records, replay_cli, run_hooks, without_rules

EVENTS = [
    ("claude-code", "session_start"),
    ("claude-code", "user_prompt_submit"),
    ("claude-code", "user_prompt_submit_injection"),
    ("claude-code", "pre_tool_use_bash_ls"),
    ("claude-code", "pre_tool_use_bash_rm_root"),
    ("claude-code", "pre_tool_use_webfetch_unknown_host"),
    ("claude-code", "pre_tool_use_write_outside_workspace"),
    ("claude-code", "post_tool_use_read_aws_key"),
    ("claude-code", "post_tool_use_bash_private_key"),
    ("claude-code", "post_tool_use_bash_clean"),
    ("claude-code", "post_tool_use_mcp_aws_key"),
    ("claude-code", "stop"),
    ("codex", "pre_tool_use_bash_rm_root"),
    ("codex", "pre_tool_use_shell_argv_rm_root"),
    ("codex", "post_tool_use_bash_aws_key"),
    ("codex", "post_tool_use_bash_private_key"),
    ("codex", "user_prompt_submit_injection"),
]


@pytest.fixture(scope="module")
def hook_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("hooks") / "hooks.jsonl"
    codes = run_hooks(log, EVENTS)
    assert 2 in codes and 0 in codes  # some refused, some let through
    return log


@pytest.mark.parametrize("evaluate", ["changed", "all"])
def test_replay_under_the_hook_policy_changes_nothing(hook_log: Path, evaluate: str) -> None:
    code, out = replay_cli(str(hook_log), "--pack", str(HOOK_PACK), "--evaluate", evaluate,
                           "--format", "json")
    document = json.loads(out)
    assert code == 0, document["changes"] + document["undetermined"]
    summary = document["summary"]
    by_stage = summary["by_stage"]
    assert by_stage["pre-step"]["replayed"] >= 3  # prompts passed and rejected
    assert by_stage["pre-execute"]["replayed"] >= 5  # calls passed, asked and denied
    assert by_stage["post-execute"]["replayed"] >= 5
    # SessionStart and Stop decide nothing: counted, not replayed.
    assert summary["skipped_by_reason"]["no-decision"] == 2


def _redacted_by(log: Path, rule: str) -> set[int]:
    return {r["seq"] for r in records(log)
            if rule in r.get("decision", {}).get("post_execute", {}).get("rules", [])}


def test_removing_the_redaction_with_the_recording_policy_named_lists_exactly_what_it_redacted(
    hook_log: Path, tmp_path: Path
) -> None:
    (candidate,) = edited_packs(tmp_path, "noredact", without_rules(lambda r: r["id"] == "redact-aws-keys"),
                                (HOOK_PACK,))
    used = _redacted_by(hook_log, "hook-guard/redact-aws-keys")
    assert len(used) >= 3
    report = replay_log([hook_log], compiled([candidate]), recorded=[compiled([HOOK_PACK])])
    assert isinstance(report, ReplayReport)
    assert {c.recorded.seq for c in report.changes} == used
    assert report.undetermined == ()
    for change in report.changes:
        (outcome,) = change.replayed
        assert (outcome.decision, outcome.rules) == ("accept", frozenset())
        assert change.redactions == 0
    # The first hook run recorded its policy (policy_loaded, with fingerprints): the log itself
    # says which rules the recording policy had, named policy or not.
    assert [p.knowledge for p in report.recorded_policies] == ["fingerprints"]


def test_without_the_recording_policy_a_hook_log_names_its_own(hook_log: Path, tmp_path: Path) -> None:
    """Each hook log records the policy its first run decided with (``policy_loaded``, with rule
    fingerprints), so replay knows the unchanged block rule is unchanged even unnamed: the removed
    redaction is the only change, and nothing stays blind."""
    (candidate,) = edited_packs(tmp_path, "noredact", without_rules(lambda r: r["id"] == "redact-aws-keys"),
                                (HOOK_PACK,))
    report = replay_log([hook_log], compiled([candidate]))
    assert isinstance(report, ReplayReport)
    used = _redacted_by(hook_log, "hook-guard/redact-aws-keys")
    assert {c.recorded.seq for c in report.changes} == used
    for change in report.changes:
        assert {o.decision for o in change.replayed} == {"accept"}
        assert change.blind == ()
    assert [p.knowledge for p in report.recorded_policies] == ["fingerprints"]


def test_a_changed_rule_on_tool_output_is_undetermined_where_it_could_matter(
    hook_log: Path, tmp_path: Path
) -> None:
    def edit(_: str, document: dict) -> None:  # type: ignore[type-arg]
        for rule in document["spec"]["rules"]:
            if rule["id"] == "withhold-private-keys":
                rule["when"] = 'result.text.contains("PRIVATE KEY")'

    (candidate,) = edited_packs(tmp_path, "key", edit, (HOOK_PACK,))
    code, out = replay_cli(str(hook_log), "--pack", str(candidate), "--recorded-pack", str(HOOK_PACK),
                           "--format", "json")
    document = json.loads(out)
    assert code == 1
    assert document["changes"] == []
    post = [r for r in records(hook_log) if "post_execute" in r.get("decision", {})]
    assert {item["seq"] for item in document["undetermined"]} == {r["seq"] for r in post}
    for item in document["undetermined"]:
        assert {b["rule"] for b in item["blind_rules"]} >= {"hook-guard/withhold-private-keys"}
        assert {p["decision"] for p in item["replayed"]["possible"]} == {"accept", "block"}
