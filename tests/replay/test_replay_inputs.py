"""What replay takes from the record and what it cannot see: redacted arguments, ``now``, logs
that fail verification, records that hold no decision."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from dsh_policy.audit.keys import write_key_pair
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.review import ReplayRefusal, ReplayReport, replay_log
from replay_kit import (
    DEMO,
    HOOK_PACK,
    SHIPPED,
    compiled,
    edited_packs,
    pack_flags,
    records,
    replay_cli,
    run_demo,
    run_hooks,
    stdin_bytes,
)

CLOCK_PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: clock}
spec:
  rules:
    - id: even-milliseconds
      stage: pre-execute
      match: {tools: [read_file, list_dir, web_fetch]}
      when: now.getMilliseconds() % 2 == 0
      decision: ask
      message: asked on an even millisecond
    - id: even-milliseconds-output
      stage: post-execute
      when: now.getMilliseconds() % 2 == 0
      context: reviewed on an even millisecond
"""


BROKEN_PACK = "apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: x}\nspec: {rules: [{id: a}]}\n"


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("demo") / "audit.jsonl"
    run_demo(log)
    return log


def test_a_changed_rule_on_redacted_arguments_is_undetermined_and_named(
    demo_log: Path, tmp_path: Path
) -> None:
    def edit(name: str, document: dict) -> None:  # type: ignore[type-arg]
        for rule in document["spec"]["rules"]:
            if name == "secrets" and rule["id"] == "deny-secrets-in-outbound-calls":
                rule["when"] = "size(secrets.scan(args)) > 0"

    candidate = edited_packs(tmp_path, "scan", edit)
    code, out = replay_cli(str(demo_log), *pack_flags(candidate), "--param", "workspace=/workspace",
                           "--format", "json")
    document = json.loads(out)
    assert code == 1
    redacted = [r for r in records(demo_log) if r.get("call", {}).get("name") == "send_message"]
    assert redacted and "[REDACTED:" in json.dumps(redacted[0]["call"]["args"])
    assert document["changes"] == []
    (item,) = [i for i in document["undetermined"] if i["stage"] == "pre-execute"]
    assert item["seq"] == redacted[0]["seq"] and item["args_redacted"] is True
    assert item["recorded"]["rules"] == ["secrets/deny-secrets-in-outbound-calls"]
    blind = {entry["rule"]: entry["why"] for entry in item["blind_rules"]}
    assert blind["secrets/deny-secrets-in-outbound-calls"].startswith("new or changed")
    assert all("arguments that were redacted" in why for why in blind.values())
    # An unchanged ask rule the recorded deny hid is as blind: it reads the same arguments.
    assert {p["decision"] for p in item["replayed"]["possible"]} >= {"allow", "deny"}
    assert any("redacted in the record" in limit for limit in document["limits"])


def test_rules_on_now_see_the_instant_the_decision_recorded(tmp_path: Path) -> None:
    pack = tmp_path / "clock.yaml"
    pack.write_text(CLOCK_PACK)
    log = tmp_path / "audit.jsonl"
    run_demo(log, [pack])
    calls = [r for r in records(log) if r["kind"] == "tool_result"]
    assert all("now" in r["decision"]["pre_execute"] for r in calls)
    assert all("now" in r["decision"]["post_execute"] for r in calls)
    report = replay_log([log], compiled([pack]), evaluate="all")
    assert isinstance(report, ReplayReport)
    assert report.exit_code == 0, [c.to_json() for c in report.changes]
    assert report.summary.rules_evaluated >= len(calls)
    assert report.summary.now_from["record"] == report.summary.replayed


def test_a_log_that_fails_verification_is_refused_unless_told_otherwise(
    demo_log: Path, tmp_path: Path
) -> None:
    tampered = tmp_path / "tampered.jsonl"
    lines = demo_log.read_text().splitlines(keepends=True)
    (index,) = [i for i, line in enumerate(lines) if '"send_message"' in line and '"tool_result"' in line]
    lines[index] = lines[index].replace('"decision":"deny"', '"decision":"allow"', 1)
    tampered.write_text("".join(lines))
    refusal = replay_log([tampered], compiled(SHIPPED))
    assert isinstance(refusal, ReplayRefusal)
    assert "failed verification" in refusal.reason and refusal.exit_code == 2
    code, out = replay_cli(str(tampered), *pack_flags(SHIPPED), "--param", "workspace=/workspace")
    assert code == 2 and out == ""
    code, out = replay_cli(str(tampered), *pack_flags(SHIPPED), "--param", "workspace=/workspace",
                           "--allow-unverified")
    assert "FAILED VERIFICATION" in out and "replayed anyway" in out
    assert code == 1  # the forged allow does not match what the policy decides
    code, out = replay_cli(str(tampered), *pack_flags(SHIPPED), "--param", "workspace=/workspace",
                           "--allow-unverified", "--format", "json")
    assert json.loads(out)["log"]["replayed_unverified"] is True


def test_invalid_input_exits_2(demo_log: Path, tmp_path: Path) -> None:
    flags = [*pack_flags(SHIPPED), "--param", "workspace=/workspace"]
    assert replay_cli(str(tmp_path / "missing.jsonl"), *flags)[0] == 2
    assert replay_cli(str(demo_log), str(SHIPPED[0]), *flags)[0] == 2  # a pack where a log goes
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN_PACK)
    assert replay_cli(str(demo_log), "--pack", str(broken))[0] == 2
    assert replay_cli(str(demo_log), *flags, "--key", str(tmp_path / "no.pub"))[0] == 2
    assert replay_cli(str(demo_log))[0] == 2  # no policy


def test_records_without_a_decision_are_skipped_with_a_count(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    run_hooks(log, [("claude-code", "session_start"), ("claude-code", "pre_tool_use_bash_ls")])
    from dsh_policy.policy.cli import main as cli_main

    with stdin_bytes(b"{not json"):
        assert cli_main(["hook", "claude-code", "--pack", str(HOOK_PACK), "--audit", str(log)]) == 2
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN_PACK)
    run_hooks(log, [("claude-code", "pre_tool_use_bash_ls")], pack=broken)  # the policy failed to load
    report = replay_log([log], compiled([HOOK_PACK]))
    assert isinstance(report, ReplayReport)
    assert report.summary.replayed == 1 and report.exit_code == 0
    assert dict(report.summary.skipped) == {"no-decision": 1, "input-error": 1, "no-policy": 1}


def test_a_forged_record_no_policy_can_read_is_reported_not_fatal(demo_log: Path, tmp_path: Path) -> None:
    """--allow-unverified reads whatever the file holds: arguments nested far past what the writer
    records (it caps nesting at 64) no longer hash to their digest, so they count as redacted."""
    forged = tmp_path / "forged.jsonl"
    lines = demo_log.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if '"tool_result"' in line and '"read_file"' in line)
    deep = "[" * 1000 + '"x"' + "]" * 1000
    lines[index] = re.sub(r'"args":\{"path":"[^"]*"\}', '"args":{"path":' + deep + "}", lines[index], count=1)
    forged.write_text("".join(lines))
    report = replay_log([forged], compiled(SHIPPED), allow_unverified=True, evaluate="all")
    assert isinstance(report, ReplayReport) and report.replayed_unverified
    assert report.summary.replayed > 0 and report.summary.redacted_arguments >= 3  # 2 real + the forged


def test_with_a_key_the_log_must_be_signed_by_it(tmp_path: Path) -> None:
    signer, stranger = write_key_pair(str(tmp_path / "signer")), write_key_pair(str(tmp_path / "stranger"))
    log = tmp_path / "audit.jsonl"
    with redirect_stdout(io.StringIO()):
        assert cli_main(["run", str(DEMO), *pack_flags(SHIPPED), "--param", "workspace=/workspace",
                         "--audit", str(log), "--signing-key", str(signer.private_path)]) == 0
    flags = [*pack_flags(SHIPPED), "--param", "workspace=/workspace"]
    code, out = replay_cli(str(log), *flags, "--key", str(signer.public_path), "--format", "json")
    assert code == 0 and json.loads(out)["log"]["signatures"] == "signature-verified"
    assert replay_cli(str(log), *flags, "--key", str(stranger.public_path))[0] == 2
