"""The MCP proxy waits the same way: an asked ``tools/call`` is refused naming its request, and
the same call after an approval is forwarded to the server once."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from approval_kit import Deployment
from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.config import ApprovalSettings
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.mcp import jsonrpc
from dsh_policy.policy.mcp.gate import McpGate, Route
from dsh_policy.policy.mcp.pins import PinBook

PACK = Path(__file__).parents[1] / "hooks" / "packs" / "hook-guard.yaml"


def fetch(gate: McpGate, number: int, url: str = "https://paste.example.net/x") -> tuple[bytes, Route]:
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": "fetch", "arguments": {"url": url}},
        }
    ).encode()
    message = jsonrpc.parse(line)
    assert not isinstance(message, jsonrpc.FramingError)
    return line, gate.from_client(message, line)


def test_an_asked_mcp_call_waits_for_an_approval_and_runs_once(deployment: Deployment) -> None:
    policy = Policy.load([PACK])
    assert isinstance(policy, Policy)
    gate = McpGate("fetch", policy, None, PinBook("fetch", None))
    gate.approvals = ApprovalChannel(
        ApprovalSettings(
            folder=str(deployment.folder / "queue"), approvers=str(deployment.approvers_file), wait_seconds=0
        )
    )
    _, first = fetch(gate, 1)
    assert not first.to_server
    text = json.loads(first.to_client[0])["result"]["content"][0]["text"]
    request = re.search(r"request (apr-[0-9a-f]+)", text)
    assert request, text
    deployment.clock.now = time.time()
    decided = deployment.queue().decide(request.group(1), "alice", deployment.keys["alice"], "approve")
    assert isinstance(decided, dict)
    _, other = fetch(gate, 2, url="https://paste.example.net/other")
    assert not other.to_server
    line, approved = fetch(gate, 3)
    assert approved.to_server == [line]
    _, again = fetch(gate, 4)
    assert not again.to_server
