"""Through the hook: a tool no vocabulary table maps (an MCP server's, another client's) is judged
by what its arguments do, so the pack written once against the canonical tools guards it too
(policy/decide/tool_views.py; docs/rules.md, "Tool calls judged by what they do")."""

from __future__ import annotations

from typing import Any

from hook_testkit import payload


def _pre_tool_use(tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    event = payload("claude-code", "pre_tool_use_write_outside_workspace")
    return {**event, "tool_name": tool_name, "tool_input": tool_input, "tool_use_id": "toolu_views"}


def test_an_mcp_servers_write_is_judged_as_a_write(run_hook) -> None:
    run = run_hook(
        "claude-code",
        _pre_tool_use("mcp__notes__save_note", {"filepath": "/etc/profile.d/x.sh", "contents": "echo hi\n"}),
    )
    assert run.code == 2
    assert 'tool "mcp__notes__save_note" judged as write_file /etc/profile.d/x.sh' in run.stderr
    assert "hook-guard/writes-stay-in-workspace" in run.stderr
    inside = _pre_tool_use("mcp__notes__save_note", {"filepath": "/work/app/notes.md", "contents": "hi\n"})
    assert run_hook("claude-code", inside).code == 0


def test_a_delete_tool_reaches_the_shell_guard(run_hook) -> None:
    run = run_hook(
        "claude-code", _pre_tool_use("mcp__files__delete_directory", {"path": "/", "recursive": True})
    )
    assert run.code == 2
    assert "hook-guard/never-rm-root" in run.stderr
    assert "judged as shell rm -rf -- /" in run.stderr


def test_a_browser_navigation_is_a_fetch(run_hook) -> None:
    run = run_hook(
        "claude-code", _pre_tool_use("mcp__browser__navigate", {"url": "https://pypi.org/project/x/"})
    )
    assert run.code == 0
    run = run_hook(
        "claude-code", _pre_tool_use("mcp__browser__navigate", {"url": "https://elsewhere.example/"})
    )
    assert "egress to elsewhere.example needs approval" in run.stdout + run.stderr
