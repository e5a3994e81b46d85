"""Policy changes are visible: every change is recorded with what changed, weakening marked; a
deployment can refuse weakening changes; ``dsh-policy policy-log`` lists them from a verified log."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.config import policy_sources
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.runtime.deployment import AuditPlan, deploy
from dsh_policy.policy.runtime.policy_changes import diff_summaries

PACK = """apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: small, version: "1"}
spec:
  rules:
    - id: no-curl
      stage: guard
      match: {tools: [shell]}
      when: 'args.command.contains("curl")'
    - id: no-wget
      stage: guard
      match: {tools: [shell]}
      when: 'args.command.contains("wget")'
"""


def _deployment(tmp_path: Path, *, extra: str = "") -> Path:
    (tmp_path / "audit").mkdir(exist_ok=True)
    (tmp_path / "small.yaml").write_text(PACK)
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [small.yaml]\n"
        f"  audit: {{path: audit/log.jsonl, fail_closed: true}}\n{extra}"
    )
    return config


def _hook(monkeypatch: pytest.MonkeyPatch, config: Path, command: str) -> tuple[int, str]:
    payload = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": str(config.parent),
    }
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    return cli_main(["hook", "claude-code", "--config", str(config)]), ""


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_weakening_edit_between_hook_runs_is_recorded_and_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _deployment(tmp_path)
    assert _hook(monkeypatch, config, "curl x")[0] == 2
    config.write_text(config.read_text() + "  shadow: true\n")  # the operator (or a tamperer) weakens it
    assert _hook(monkeypatch, config, "curl x")[0] == 0  # shadow mode: recorded, not enforced
    log = tmp_path / "audit" / "log.jsonl"
    loaded = [r for r in _records(log) if r["kind"] == "policy_loaded"]
    assert len(loaded) == 2 and "changes" not in loaded[0]
    assert loaded[1]["changes"]["weakening"] is True
    assert "shadow mode on: no rule is enforced" in loaded[1]["changes"]["weakened"]
    capsys.readouterr()
    assert cli_main(["verify", str(log)]) == 0  # the chain is intact: the change is a fact, not tampering
    capsys.readouterr()
    assert cli_main(["policy-log", str(log)]) == 0
    listing = capsys.readouterr().out
    assert f"enforcement weakened at seq {loaded[1]['seq']}" in listing
    assert cli_main(["policy-log", str(log), "--strict", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["weakened_at"] == [loaded[1]["seq"]]


def test_a_deployment_can_refuse_weakening_changes_between_hook_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _deployment(tmp_path, extra="  reload: {refuse_weakening: true}\n")
    assert _hook(monkeypatch, config, "ls")[0] == 0
    (tmp_path / "small.yaml").write_text(PACK.split("    - id: no-wget")[0])  # a rule removed
    assert _hook(monkeypatch, config, "ls")[0] == 2  # fails closed: no earlier policy to keep
    log = tmp_path / "audit" / "log.jsonl"
    (refused,) = [r for r in _records(log) if r["kind"] == "policy_reload_refused"]
    assert "enforced rule small/no-wget removed" in refused["changes"]["weakened"]
    (tmp_path / "audit" / "log.jsonl.policy").unlink()  # the operator accepts the change
    assert _hook(monkeypatch, config, "ls")[0] == 0


def test_a_running_gateway_refuses_a_weakening_reload_and_records_it(tmp_path: Path) -> None:
    config = _deployment(tmp_path, extra="  reload: {refuse_weakening: true}\n")
    sources = policy_sources([], config=str(config))
    assert not isinstance(sources, list)
    deployment = deploy(sources, audit=AuditPlan(str(tmp_path / "audit" / "log.jsonl"), fail_closed=True))
    assert not isinstance(deployment, list)
    with deployment:
        policy = deployment.policy
        (tmp_path / "small.yaml").write_text(PACK.split("    - id: no-wget")[0])  # a rule removed
        assert policy.check_now() is False  # type: ignore[attr-defined]
        assert policy.guard(ToolCallEvent("shell", {"command": "wget x"})).denied  # the old policy decides
        (tmp_path / "small.yaml").write_text(
            PACK
            + """    - id: no-nc
      stage: guard
      match: {tools: [shell]}
      when: 'args.command.contains("nc ")'
"""
        )
        assert policy.check_now() is True  # type: ignore[attr-defined]  # a stricter edit goes through
    kinds = [r["kind"] for r in _records(tmp_path / "audit" / "log.jsonl")]
    assert kinds.count("policy_reload_refused") == 1 and kinds.count("policy_loaded") == 2
    loaded = [r for r in _records(tmp_path / "audit" / "log.jsonl") if r["kind"] == "policy_loaded"]
    assert loaded[1]["changes"]["added"] == ["small/no-nc"] and loaded[1]["changes"]["weakening"] is False


def _summary(**rules: str) -> dict[str, Any]:
    return {
        "digest": "d",
        "shadow": False,
        "engine": "python",
        "packs": {"p": {"params": "x"}},
        "rules": {rule: {"mode": mode, "on_error": "deny", "when": "w"} for rule, mode in rules.items()},
        "self_protection": {"enabled": True, "paths": ["a"]},
    }


def test_what_counts_as_weakening() -> None:
    before = _summary(a="enforce", b="enforce")
    assert diff_summaries(before, _summary(a="enforce", b="audit")).weakened == (
        "b no longer enforced (audit)",
    )
    assert diff_summaries(before, _summary(a="enforce")).weakened == ("enforced rule b removed",)
    assert not diff_summaries(before, _summary(a="enforce", b="enforce", c="enforce")).weakening
    off = {**_summary(a="enforce", b="enforce"), "self_protection": {"enabled": False, "paths": []}}
    assert "self-protection off" in diff_summaries(before, off).weakened
    shadow = {**_summary(a="enforce", b="enforce"), "shadow": True}
    assert diff_summaries(before, shadow).weakening
    changed = _summary(a="enforce", b="enforce")
    changed["rules"]["b"]["when"] = "other"
    assert diff_summaries(before, changed).weakened == ("b: when changed",)


def test_switching_self_protection_off_is_recorded_in_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _deployment(tmp_path)
    append = "echo '# note' >> gateway.yaml"
    assert _hook(monkeypatch, config, append)[0] == 2  # on by default
    config.write_text(config.read_text() + "  self_protection: {enabled: false}\n")  # the operator
    assert _hook(monkeypatch, config, append)[0] == 0
    records = _records(tmp_path / "audit" / "log.jsonl")
    latest = [r for r in records if r["kind"] not in ("segment_start", "checkpoint")][-2:]
    assert [r["policy"].get("self_protection") for r in latest] == ["off", "off"]
    capsys.readouterr()
    assert cli_main(["policy-log", str(tmp_path / "audit" / "log.jsonl")]) == 0
    assert "self-protection off" in capsys.readouterr().out
