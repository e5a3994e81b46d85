"""``dsh-policy init ... --mcp`` puts configured MCP servers behind the proxy (and back), and
``doctor`` checks each wrapped server end to end.

The configured server is the SDK-built demo server; doctor starts the wrapped line exactly as the
client would (its env and cwd) and lists its tools through the proxy.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.hooks.install import doctor_mcp
from dsh_policy.policy.hooks.install.mcp_servers import edit_codex
from mcp_kit import DEMO_SERVER, TEST_PACK

pytest.importorskip("mcp", reason="the demo server needs the SDK: pip install 'dsh-policy[mcp]'")


def _claude_project(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    project = tmp_path / "project"
    (project / "srv").mkdir(parents=True)
    original = {
        "mcpServers": {
            "demo": {
                "command": sys.executable,
                "args": [str(DEMO_SERVER)],
                "env": {"DEMO_MARKER": str(tmp_path / "marker")},
                "cwd": str(project / "srv"),
            },
            "remote": {"type": "http", "url": "https://mcp.example.com/mcp"},
        },
        "other": {"kept": True},
    }
    (project / ".mcp.json").write_text(json.dumps(original, indent=2) + "\n")
    return project, original


def test_init_wraps_claude_code_servers_idempotently_and_doctor_lists_their_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, original = _claude_project(tmp_path)
    init = ["init", "claude-code", "--project", str(project), "--pack", str(TEST_PACK), "--mcp"]
    assert cli_main(init) == 0
    wrapped = json.loads((project / ".mcp.json").read_text())
    demo = wrapped["mcpServers"]["demo"]
    deployment = str(project / ".dsh" / "gateway.yaml")
    assert demo["command"] == "dsh-policy"
    assert demo["args"] == [
        "mcp", "proxy", "--config", deployment, "--name", "demo", "--", sys.executable, str(DEMO_SERVER),
    ]  # fmt: skip
    assert demo["env"] == original["mcpServers"]["demo"]["env"]  # type: ignore[index]
    assert demo["cwd"] == str(project / "srv")
    assert wrapped["mcpServers"]["remote"] == {"type": "http", "url": "https://mcp.example.com/mcp"}
    assert wrapped["other"] == {"kept": True}
    out = capsys.readouterr().out
    assert "wrapped" in out and "remote (an HTTP server" in out

    text = (project / ".mcp.json").read_text()
    assert cli_main(init) == 0
    assert (project / ".mcp.json").read_text() == text  # idempotent
    assert "already behind the proxy" in capsys.readouterr().out

    # doctor: the wrapped line starts the proxy (the test's python has dsh-policy importable, the
    # console script may not be on PATH, so the check runs the same line through this python).
    servers = doctor_mcp.claude_code_servers(str(project))
    servers["demo"]["command"] = sys.executable
    servers["demo"]["args"] = ["-m", "dsh_policy.policy.cli", *servers["demo"]["args"]]
    findings = list(doctor_mcp.check_servers(servers, str(project)))
    assert [f.level for f in findings] == ["ok", "warn"], findings
    assert "proxy started and listed" in findings[0].message
    listed = int(findings[0].message.split("listed ")[1].split()[0])
    assert listed >= 5  # the demo's tools minus the one the pack denies outright

    assert cli_main([*init[:-1], "--mcp", "unwrap"]) == 0
    assert json.loads((project / ".mcp.json").read_text()) == original  # reversible


def test_doctor_reports_a_wrapped_server_that_cannot_start(tmp_path: Path) -> None:
    proxy = ["-m", "dsh_policy.policy.cli", "mcp", "proxy", "--name", "x", "--pack", str(TEST_PACK)]
    entry = {"command": sys.executable, "args": [*proxy, "--", str(tmp_path / "missing")]}
    findings = list(doctor_mcp.check_servers({"x": entry, "plain": {"command": "srv"}}, str(tmp_path)))
    assert [f.level for f in findings] == ["fail", "warn"]
    assert "not behind the proxy" in findings[1].message


CODEX_CONFIG = """\
# my codex settings
model = "o4"

[mcp_servers.demo]
# the demo server
command = "python3"
args = [
  "demo_server.py",  # the script
  "--verbose",
]
env = { DEMO_MARKER = "/tmp/x" }
cwd = "/srv"

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"

[other]
kept = true
"""


def test_codex_servers_are_wrapped_in_place_and_back() -> None:
    wrapped = edit_codex(CODEX_CONFIG, "/etc/dsh/gateway.yaml")
    assert wrapped.changed == ["demo"] and "remote" in wrapped.skipped
    parsed = tomllib.loads(wrapped.text)
    demo = parsed["mcp_servers"]["demo"]
    assert demo["command"] == "dsh-policy"
    assert demo["args"] == [
        "mcp", "proxy", "--config", "/etc/dsh/gateway.yaml", "--name", "demo", "--",
        "python3", "demo_server.py", "--verbose",
    ]  # fmt: skip
    assert demo["env"] == {"DEMO_MARKER": "/tmp/x"} and demo["cwd"] == "/srv"
    assert "# my codex settings" in wrapped.text and "# the demo server" in wrapped.text
    assert parsed["other"] == {"kept": True} and parsed["model"] == "o4"
    assert edit_codex(wrapped.text, "/etc/dsh/gateway.yaml").changed == []  # idempotent

    restored = edit_codex(wrapped.text, "/etc/dsh/gateway.yaml", wrap=False)
    assert restored.changed == ["demo"]
    assert tomllib.loads(restored.text) == tomllib.loads(CODEX_CONFIG)
