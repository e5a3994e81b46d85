"""Replay of logs written by ``dsh-policy run`` (the real loop with the gateway installed)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.review import ReplayReport, replay_log
from replay_kit import (
    DEMO,
    SHIPPED,
    compiled,
    edited_packs,
    pack_flags,
    records,
    replay_cli,
    run_demo,
    without_rules,
)


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("demo") / "audit.jsonl"
    run_demo(log)
    return log


@pytest.fixture(scope="module")
def packs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("packs")


def _report(log: Path, packs: Any, evaluate: str = "changed") -> ReplayReport:
    report = replay_log([log], compiled(packs), evaluate=evaluate)  # type: ignore[arg-type]
    assert isinstance(report, ReplayReport), report
    return report


def _gate_refusals(log: Path) -> dict[int, str]:
    """seq -> the recorded gate decision, for every call the gate denied or asked about."""
    found = {}
    for record in records(log):
        decision = record.get("decision", {})
        if record["kind"] != "tool_result" or "pre_execute" not in decision:
            continue
        guard_denied = (decision.get("guard") or {}).get("denied") is True
        word = "deny" if guard_denied else decision["pre_execute"]["decision"]
        if word != "allow":
            found[record["seq"]] = word
    return found


@pytest.mark.parametrize("evaluate", ["changed", "all"])
def test_replay_under_the_policy_that_wrote_the_log_changes_nothing(demo_log: Path, evaluate: str) -> None:
    code, out = replay_cli(str(demo_log), *pack_flags(SHIPPED), "--param", "workspace=/workspace",
                           "--evaluate", evaluate, "--format", "json")
    document = json.loads(out)
    assert code == 0, document["changes"] + document["undetermined"]
    summary = document["summary"]
    decisions = sum(1 for r in records(demo_log) for stage in ("pre_execute", "post_execute")
                    if stage in r.get("decision", {}))
    steps = sum(1 for r in records(demo_log) if r["kind"] in ("step_entered", "step_rejected"))
    assert summary["replayed"] == decisions + steps
    assert summary["unchanged"] == summary["replayed"] and summary["changed"] == 0
    if evaluate == "all":
        assert summary["rules_evaluated"] > 0  # every rule really ran again, and agreed


def test_without_any_pre_execute_or_guard_rule_every_recorded_denial_flips_to_allow(
    demo_log: Path, packs_dir: Path
) -> None:
    gate_rule = without_rules(lambda r: r["stage"] in ("pre-execute", "guard"))
    candidate = edited_packs(packs_dir, "nogate", gate_rule)
    code, out = replay_cli(str(demo_log), *pack_flags(candidate), "--param", "workspace=/workspace",
                           "--format", "json")
    document = json.loads(out)
    assert code == 1
    refused = _gate_refusals(demo_log)
    assert "deny" in refused.values()
    changes = {c["seq"]: c for c in document["changes"] if c["stage"] == "pre-execute"}
    assert set(changes) == set(refused)  # every denial and every ask, nothing else
    for seq, change in changes.items():
        assert {"seq", "session", "stage", "tool", "args", "recorded", "replayed"} <= change.keys()
        assert change["recorded"]["decision"] == refused[seq]
        assert change["replayed"] == {"decision": "allow", "rules": []}
        assert change["direction"] == "looser"
    assert document["undetermined"] == []
    assert document["summary"]["by_direction"]["looser"] == len(refused)


@pytest.mark.parametrize("removed", ["secrets/redact-credentials-in-output",
                                     "injection/withhold-web-content-addressing-the-agent"])
def test_removing_one_post_execute_rule_lists_exactly_the_results_it_redacted_or_blocked(
    demo_log: Path, packs_dir: Path, removed: str
) -> None:
    pack, rule_id = removed.split("/")
    candidate = edited_packs(packs_dir, rule_id, lambda name, doc: without_rules(
        lambda r: name == pack and r["id"] == rule_id)(name, doc))
    report = _report(demo_log, candidate)
    used = {r["seq"] for r in records(demo_log)
            if removed in r.get("decision", {}).get("post_execute", {}).get("rules", [])}
    assert used, "the demo must exercise the rule"
    assert {c.recorded.seq for c in report.changes} == used
    assert all(c.recorded.stage == "post-execute" for c in report.changes)
    assert report.undetermined == ()
    # The log's policy_loaded record names every rule's fingerprint: the other post-execute rules
    # (which read the output, recorded as a digest) are known to be unchanged, so nothing is left open.
    assert [policy.knowledge for policy in report.recorded_policies] == ["fingerprints"]
    for change in report.changes:
        document = change.to_json()
        assert removed not in document["replayed"]["rules"]
        assert document["direction"] == "looser"
        assert document["replayed"]["decision"] == "accept"


def test_a_stricter_turn_budget_rejects_the_steps_it_would_have_stopped(demo_log: Path) -> None:
    report = replay_log([demo_log], compiled(SHIPPED, max_turns=1))
    assert isinstance(report, ReplayReport)
    later = [r for r in records(demo_log) if r["kind"] in ("step_entered", "step_rejected") and r["turn"] > 1]
    entered = {r["seq"] for r in later if r["kind"] == "step_entered"}
    rejected = {r["seq"]: set(r["decision"]["rules"]) for r in later if r["kind"] == "step_rejected"}
    assert entered and rejected
    changed = {c.recorded.seq: c for c in report.changes}
    assert set(changed) == entered | set(rejected)
    for seq, change in changed.items():
        (outcome,) = change.replayed
        if seq in entered:  # let through when recorded, stopped now
            assert (outcome.decision, set(outcome.rules)) == ("reject", {"baseline/turn-budget"})
            assert change.direction == "tighter"
            assert change.message == "turn budget of 1 turns exhausted"
        else:  # already rejected by another rule: the budget now rejects it too
            both = rejected[seq] | {"baseline/turn-budget"}
            assert (outcome.decision, set(outcome.rules)) == ("reject", both)
            assert change.direction == "same-decision"
    assert report.summary.by_rule["baseline/turn-budget"]["gained"] == len(changed)


def test_text_report_lists_each_change_and_the_summary(demo_log: Path, packs_dir: Path) -> None:
    unread = without_rules(lambda r: r["id"] == "deny-credential-file-reads")
    candidate = edited_packs(packs_dir, "text", unread)
    code, out = replay_cli(str(demo_log), *pack_flags(candidate), "--param", "workspace=/workspace")
    assert code == 1
    (seq,) = [r["seq"] for r in records(demo_log) if r.get("call", {}).get("name") == "read_file"
              and r["decision"]["pre_execute"]["decision"] == "deny"]
    assert f"CHANGED  seq {seq}  pre-execute  read_file  [looser]" in out
    assert "recorded  deny by baseline/deny-credential-file-reads" in out
    assert "replayed  allow (no rule decides)" in out
    assert "the call would now run" in out
    assert "baseline/deny-credential-file-reads: no longer decides 1" in out
    assert out.rstrip().endswith("(exit 1)")


def test_a_rotated_fail_closed_log_replays_across_its_segments(tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n"
        f"  packs: [{', '.join(str(pack) for pack in SHIPPED)}]\n"
        "  params: {workspace: /workspace}\n"
        "  audit: {path: audit.jsonl, fail_closed: true, rotate_bytes: 6000}\n"
    )
    from dsh_policy.policy.cli import main as cli_main

    with redirect_stdout(io.StringIO()):
        assert cli_main(["run", str(DEMO), "--config", str(config)]) == 0
    log = tmp_path / "audit.jsonl"
    segments = sorted(tmp_path.glob("audit.jsonl.0*"))
    assert len(segments) >= 2
    every = [json.loads(line) for path in [*segments, log] for line in path.read_text().splitlines()]
    assert any(r["kind"] == "tool_dispatch" for r in every)
    decisions = sum(1 for r in every for stage in ("pre_execute", "post_execute")
                    if stage in r.get("decision", {}))
    decisions += sum(1 for r in every if r["kind"] in ("step_entered", "step_rejected"))
    code, out = replay_cli(str(log), "--config", str(config), "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["summary"]["replayed"] == decisions
    assert len(document["log"]["files"]) == len(segments) + 1
