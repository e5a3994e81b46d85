"""The real Claude Code CLI (``claude -p``) calling MCP tools through ``dsh-policy mcp proxy``,
offline against a scripted model on 127.0.0.1 (:mod:`fake_anthropic`).

Opt in with ``DSH_TEST_REALCLIENT=1`` (marker ``realclient``); needs ``claude`` on PATH (as
/work/shared/realclient/run.sh installs it). Claude Code starts the proxy from an ``--mcp-config``
file (``--strict-mcp-config``: no other server), the proxy starts the SDK-built demo server, and
each scenario is one conversation in which the model calls one MCP tool:

- deny: ``mcp__demo__echo`` with text a rule forbids: the refusal reaches the model, the server
  never sees the call;
- allow: the same tool with harmless text runs and its result reaches the model;
- redact: ``mcp__demo__leak_text`` returns a (fake) AWS key: no request to the model carries it.

The audit log the proxy wrote must verify. Everything runs in the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from dsh_policy.audit import verify_log
from fake_anthropic import FakeModel
from mcp_kit import proxy_argv

pytestmark = [
    pytest.mark.realclient,
    pytest.mark.skipif(
        os.environ.get("DSH_TEST_REALCLIENT") != "1",
        reason="drives the real Claude Code CLI (minutes): opt in with DSH_TEST_REALCLIENT=1",
    ),
]
pytest.importorskip("mcp", reason="the demo server needs the SDK: pip install 'dsh-policy[mcp]'")

FAKE_ACCESS_KEY = "AKIA" + "QWERTYUIOPASDFGH"
TOOLS = "mcp__demo__echo,mcp__demo__leak_text"


def test_claude_code_through_the_mcp_proxy(tmp_path: Path) -> None:
    claude = shutil.which("claude")
    if claude is None:
        pytest.skip("claude is not installed (bash /work/shared/realclient/run.sh installs it)")
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    marker, audit = tmp_path / "marker", tmp_path / "audit.jsonl"
    argv = proxy_argv(audit)
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "demo": {"command": argv[0], "args": argv[1:], "env": {"DEMO_MARKER": str(marker)}}
                }
            }
        )
    )
    with FakeModel() as model:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "dummy",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ENABLE_TOOL_SEARCH": "false",  # offer the MCP tools to the model directly, not deferred
            # In -p mode Claude Code (2.1.197) connects --mcp-config servers in the background and
            # sends the first request without them, or waits 5 s at most with this set to false:
            # the proxy and the SDK server start in more than that on a loaded machine.
            "MCP_CONNECTION_NONBLOCKING": "false",
            "MCP_CONNECT_TIMEOUT_MS": "120000",
        }
        runs = {}
        for scenario in ("deny", "allow", "redact"):
            command = [
                claude,
                "-p",
                f"scenario={scenario}",
                "--mcp-config",
                str(config),
                "--strict-mcp-config",
            ]
            command += ["--allowedTools", TOOLS, "--output-format", "json"]
            runs[scenario] = subprocess.run(
                command, cwd=project, env=env, capture_output=True, timeout=300, stdin=subprocess.DEVNULL
            )
        offered = {tool for tools in model.tools_offered for tool in tools}
        results, bodies = model.tool_results, list(model.bodies)

    detail = {name: (run.returncode, run.stderr[-1000:]) for name, run in runs.items()}
    assert "mcp__demo__echo" in offered, (sorted(offered), detail)
    assert "mcp__demo__delete_everything" not in offered  # denied outright: hidden from the model
    assert results.get("deny") and results["deny"][0]["is_error"], (results, detail)
    assert "that text is forbidden [policy: mcp-test/no-forbidden-echo]" in results["deny"][0]["text"]
    assert results.get("allow") and "hello from claude" in results["allow"][0]["text"], (results, detail)
    assert marker.read_text().splitlines() == ["echo hello from claude"]  # the denied call never arrived
    assert results.get("redact") and "[REDACTED:aws-access-key]" in results["redact"][0]["text"], results
    assert not any(FAKE_ACCESS_KEY in body for body in bodies)  # the secret never reached the model
    report = verify_log([audit])
    assert report.intact, report.verdict
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    calls = [r["call"]["name"] for r in records if r["kind"] == "tool_result"]
    assert calls.count("mcp__demo__echo") == 2 and calls.count("mcp__demo__leak_text") == 1
