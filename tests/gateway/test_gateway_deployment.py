"""deploy(): one call from flags or a deployment file to a gateway whose policy follows its files,
with every load and failed reload recorded in the same audit log as the decisions."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
from dsh_policy.audit.verify import verify_log
from dsh_policy.core import Harness, Message, ScriptedModel, define_tool, reply
from dsh_policy.policy.config import policy_sources
from dsh_policy.policy.runtime.audit_plan import audit_plan, open_audit_writer
from dsh_policy.policy.runtime.deployment import Deployment, deploy
from dsh_policy.policy.runtime.reload import ReloadingPolicy

PACK = """apiVersion: dsh-policy/v1
kind: RulePack
metadata: {{name: live}}
spec:
  rules:
    - id: deny-word
      stage: pre-execute
      match: {{tools: [shell]}}
      when: 'has(args.command) && args.command.contains("{word}")'
      decision: deny
      message: no {word}
"""


def write_pack(path: Path, word: str) -> None:
    path.write_text(PACK.format(word=word))


def start(tmp_path: Path, *, fail_closed: bool = False) -> Deployment:
    pack = tmp_path / "live.yaml"
    write_pack(pack, "curl")
    sources = policy_sources([str(pack)], engine="python")
    assert not isinstance(sources, list)
    plan = audit_plan(sources, path=str(tmp_path / "audit.jsonl"), fsync="off", fail_closed=fail_closed)
    deployment = deploy(sources, audit=plan)
    assert isinstance(deployment, Deployment), deployment
    return deployment


def run_call(deployment: Deployment, command: str) -> bool:
    """Run one shell call through a fresh harness; True when the body ran."""
    ran: list[str] = []

    async def session() -> None:
        harness = Harness()
        harness.tools.register(define_tool("shell", description="s", execute=lambda a, r: ran.append("x")))
        harness.plugin(deployment.gateway)
        model = ScriptedModel([reply(tool_calls=[("shell", json.dumps({"command": command}))]), reply("ok")])
        agent = await harness.create_agent(model=model)
        agent.followup(Message.user("go"))
        await agent.wait_idle()

    anyio.run(session)
    return bool(ran)


def kinds(log: Path) -> list[str]:
    return [json.loads(line)["kind"] for line in log.read_text().splitlines()]


def test_an_edited_pack_decides_the_next_call(tmp_path: Path) -> None:
    deployment = start(tmp_path)
    assert isinstance(deployment.policy, ReloadingPolicy)
    assert run_call(deployment, "wget https://x") is True
    write_pack(tmp_path / "live.yaml", "wget")
    assert deployment.policy.check_now() is True
    assert run_call(deployment, "wget https://x") is False
    deployment.close()
    assert kinds(tmp_path / "audit.jsonl").count("policy_loaded") == 2
    assert verify_log([tmp_path / "audit.jsonl"]).intact


def test_an_edit_takes_effect_within_a_second_without_being_asked(tmp_path: Path) -> None:
    deployment = start(tmp_path)
    write_pack(tmp_path / "live.yaml", "wget")
    deadline = time.monotonic() + 1.0
    while run_call(deployment, "wget https://x") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run_call(deployment, "wget https://x") is False
    deployment.close()


def test_a_broken_edit_keeps_the_last_good_policy_and_is_recorded(tmp_path: Path) -> None:
    deployment = start(tmp_path)
    digest = deployment.policy.digest
    (tmp_path / "live.yaml").write_text("apiVersion: dsh-policy/v1\nkind: RulePack\nspec: {rulez: []}\n")
    assert deployment.policy.check_now() is False
    assert deployment.policy.digest == digest
    assert run_call(deployment, "curl https://x") is False  # the old rule still denies
    deployment.close()
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    (failed,) = [r for r in records if r["kind"] == "policy_reload_failed"]
    assert any("rulez" in error for error in failed["errors"])
    assert failed["policy"]["digest"] == digest
    assert verify_log([tmp_path / "audit.jsonl"]).intact


def test_a_deleted_pack_keeps_the_last_good_policy(tmp_path: Path) -> None:
    deployment = start(tmp_path)
    (tmp_path / "live.yaml").unlink()
    assert deployment.policy.check_now() is False
    assert run_call(deployment, "curl https://x") is False
    deployment.close()
    assert "policy_reload_failed" in kinds(tmp_path / "audit.jsonl")


def test_a_log_that_cannot_be_opened_is_an_error_not_a_gateway_without_audit(tmp_path: Path) -> None:
    pack = tmp_path / "live.yaml"
    write_pack(pack, "curl")
    (tmp_path / "blocker").write_text("a file where a directory should be")
    sources = policy_sources([str(pack)], engine="python")
    assert not isinstance(sources, list)
    plan = audit_plan(sources, path=str(tmp_path / "blocker" / "audit.jsonl"))
    result = deploy(sources, audit=plan)
    assert isinstance(result, list)
    assert "cannot" in result[0].message


def test_a_missing_log_directory_is_created_and_an_impossible_one_is_named(tmp_path: Path) -> None:
    # Issue 16: a deployment file naming ``audit/hooks.jsonl`` must work in a fresh project.
    pack = tmp_path / "live.yaml"
    write_pack(pack, "curl")
    sources = policy_sources([str(pack)], engine="python")
    assert not isinstance(sources, list)
    created = deploy(sources, audit=audit_plan(sources, path=str(tmp_path / "new" / "audit.jsonl")))
    assert not isinstance(created, list)
    created.close()
    assert (tmp_path / "new" / "audit.jsonl").is_file()
    (tmp_path / "afile").write_text("a file, not a folder")
    result = deploy(sources, audit=audit_plan(sources, path=str(tmp_path / "afile" / "audit.jsonl")))
    assert isinstance(result, list)
    assert any("afile: cannot create the audit log's folder" in str(error) for error in result)


def test_the_deployment_file_drives_packs_params_and_audit(tmp_path: Path) -> None:
    write_pack(tmp_path / "live.yaml", "curl")
    (tmp_path / "logs").mkdir()
    (tmp_path / "gateway.yaml").write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [live.yaml]\n  engine: python\n"
        "  audit: {path: logs/audit.jsonl, fsync: 'off', fail_closed: true}\n"
    )
    sources = policy_sources([], config=str(tmp_path / "gateway.yaml"))
    assert not isinstance(sources, list)
    plan = audit_plan(sources)
    assert plan is not None and plan.fail_closed and plan.path == str(tmp_path / "logs" / "audit.jsonl")
    deployment = deploy(sources, audit=plan)
    assert isinstance(deployment, Deployment)
    assert run_call(deployment, "curl https://x") is False
    write_pack(tmp_path / "live.yaml", "wget")
    assert deployment.policy.check_now() is True  # the file's packs are watched through the file
    assert run_call(deployment, "curl https://x") is True
    deployment.close()
    assert verify_log([tmp_path / "logs" / "audit.jsonl"]).intact


def _audit_sources(tmp_path: Path, audit: str) -> Any:
    """The sources of a deployment file holding one pack and the ``audit:`` flow mapping given."""
    write_pack(tmp_path / "live.yaml", "curl")
    (tmp_path / "gateway.yaml").write_text(
        f"apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [live.yaml]\n  audit: {audit}\n"
    )
    return policy_sources([], config=str(tmp_path / "gateway.yaml"))


def test_the_deployment_file_sets_rotation_by_size_and_age(tmp_path: Path) -> None:
    sources = _audit_sources(tmp_path, "{path: audit.jsonl, rotate_bytes: 4096, rotate_seconds: 86400}")
    assert not isinstance(sources, list)
    plan = audit_plan(sources)
    assert plan is not None and (plan.rotate_bytes, plan.rotate_seconds) == (4096, 86400)


def test_the_deployment_file_chooses_a_new_logs_format_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    sources = _audit_sources(tmp_path, "{path: audit.jsonl, format: 3}")
    assert not isinstance(sources, list)
    plan = audit_plan(sources)
    assert plan is not None and plan.format_version == 3
    with open_audit_writer(plan) as writer:
        writer.append("tool_result", {"call": {"tool": "shell"}})
    assert {json.loads(line)["v"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()} == {3}
    assert verify_log([tmp_path / "audit.jsonl"]).intact
    failures = _audit_sources(tmp_path, "{path: audit.jsonl, format: 4}")
    assert isinstance(failures, list) and "format" in str(failures[0])
