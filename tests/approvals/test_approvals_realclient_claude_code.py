"""The real Claude Code (``claude -p``) hits an ``ask`` rule in a headless run; the request shows
in the queue; an approver approves it; the resumed session's same call runs exactly once; the
audit log verifies and names the approver. Offline: a scripted model on 127.0.0.1, a Bash call
that writes one line into the test's own folder, hook settings calling ``dsh-policy hook``.

Opt in (needs ``claude`` on PATH, or its path in ``DSH_CLAUDE``; the Claude Code npm package):

    DSH_TEST_REALCLIENT=1 .venv/bin/python -m pytest -n 0 \
        tests/approvals/test_approvals_realclient_claude_code.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from approval_kit import make_deployment
from dsh_policy.audit import verify_log
from dsh_policy.policy.cli import main as cli

pytestmark = [
    pytest.mark.realclient,
    pytest.mark.skipif(
        os.environ.get("DSH_TEST_REALCLIENT") != "1",
        reason="drives the real Claude Code CLI: opt in with DSH_TEST_REALCLIENT=1",
    ),
]

TESTS = Path(__file__).parents[1]
sys.path.insert(0, str(TESTS / "mcp_proxy"))
DSH_POLICY = Path(sys.executable).parent / "dsh-policy"
TOOL = "Bash"

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: release, version: "1.0.0"}
spec:
  defaults: {mode: enforce, on_error: deny, decision: allow}
  rules:
    - id: deploys-need-a-person
      stage: pre-execute
      match: {tools: [shell]}
      when: 'args.command.contains("deploy")'
      decision: ask
      message: deploying needs a person's approval
"""


def scripted_model(marker: Path) -> Any:
    from fake_anthropic import FakeModel

    arguments = {"command": f"echo deploy-to-staging >> {marker}", "description": "deploy"}

    class EveryPromptCallsTheTool(FakeModel):
        """Each new prompt (a resumed session's too) makes the same tool call; a tool result
        gets a plain answer and is kept."""

        def answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
            messages = body.get("messages") or []
            turns = [m for m in messages if m.get("role") in ("user", "assistant")]
            last = turns[-1] if turns else {}
            content = last.get("content")
            results = (
                [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
            )
            if results:
                with self.lock:
                    self.tool_results.setdefault("run", []).extend(
                        {"is_error": bool(r.get("is_error")), "text": json.dumps(r.get("content"))}
                        for r in results
                    )
                return [{"type": "text", "text": "Noted."}], "end_turn"
            tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
            if TOOL not in tools:
                return [{"type": "text", "text": "ok"}], "end_turn"
            call = {
                "type": "tool_use",
                "id": f"toolu_fake_{next(self.ids):04d}",
                "name": TOOL,
                "input": arguments,
            }
            return [call], "tool_use"

    return EveryPromptCallsTheTool()


@pytest.mark.parametrize("path", ["gateway", "in-process"])
def test_a_headless_ask_is_approved_from_the_queue_and_the_resumed_call_runs_once(
    tmp_path: Path, path: str
) -> None:
    """Through the resident gateway, and with the hook deciding in its own process (the fallback
    when no gateway answers): the same queue, the same single use, the same records."""
    claude = os.environ.get("DSH_CLAUDE") or shutil.which("claude")
    if claude is None:
        pytest.skip("claude is not installed (npm install @anthropic-ai/claude-code)")
    deployment = make_deployment(tmp_path)
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    (tmp_path / "release.yaml").write_text(PACK)
    audit, marker = tmp_path / "audit.jsonl", tmp_path / "marker"
    config = tmp_path / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nspec:\n  packs: [release.yaml]\n"
        "  audit: {path: audit.jsonl, fsync: always}\n"
        "  approvals: {folder: queue, approvers: approvers.yaml, wait_seconds: 1}\n"
    )
    hook = f"{DSH_POLICY} hook claude-code --config {config} || exit 2"
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": hook, "timeout": 60}]}]
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    session = str(uuid.uuid4())

    with scripted_model(marker) as model:
        env = {
            "PATH": f"{DSH_POLICY.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "dummy",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ENABLE_TOOL_SEARCH": "false",
            "DSH_POLICY_RUNTIME_DIR": os.environ["DSH_POLICY_RUNTIME_DIR"],  # the suite's own gateways
            "DSH_POLICY_HOOK_TIMEOUT": "50",  # a loaded machine: starting the gateway takes a while
        }
        if path == "in-process":
            env["DSH_POLICY_GATEWAY"] = "off"

        def run(*extra: str) -> subprocess.CompletedProcess[str]:
            command = [claude, "-p", "please deploy", *extra, "--strict-mcp-config"]
            command += ["--allowedTools", TOOL, "--output-format", "json"]
            return subprocess.run(
                command,
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )

        first = run("--session-id", session)
        refused = model.tool_results.get("run", [])
        assert refused and refused[0]["is_error"], (refused, first.stdout[-1000:])
        found = re.search(r"request (apr-[0-9a-f]+)", refused[0]["text"])
        assert found, refused
        request = found.group(1)
        assert not marker.exists()  # the asked call did not run

        queue = ["--queue", str(tmp_path / "queue"), "--approvers", str(deployment.approvers_file)]
        assert cli(["approvals", "list", *queue]) == 0
        key = str(tmp_path / "alice.key")
        assert cli(["approvals", "approve", request, *queue, "--as", "alice", "--key", key]) == 0

        second = run("--resume", session)
        third = run("--resume", session)
        results = model.tool_results.get("run", [])

    detail = (second.stderr[-2000:], third.stderr[-2000:], results)
    assert len(results) == 3, detail
    assert not results[1]["is_error"], detail
    assert results[2]["is_error"] and request not in results[2]["text"], detail  # used up: a new request
    assert marker.read_text().splitlines() == ["deploy-to-staging"]  # ran exactly once
    report = verify_log([audit])
    assert report.intact, report.verdict
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    decided = [r for r in records if r["kind"] == "approval_decided"]
    assert [(r["request"], r["approver"]) for r in decided] == [(request, "alice")]
    used = [r for r in records if r["kind"] == "approval_used"]
    assert [(r["request"], r["approvers"]) for r in used] == [(request, ["alice"])]
    admitted = [r for r in records if r["kind"] == "hook_event" and r["answer"].get("approval")]
    assert [r["answer"]["approval"] for r in admitted] == [f"approved:{request}"]
    refusals = [r["decision"]["approval"] for r in records if r["kind"] == "tool_result"]
    assert len(refusals) == 2 and all(a.startswith("pending:apr-") for a in refusals)
