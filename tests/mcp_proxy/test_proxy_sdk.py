"""The proxy between the official MCP SDK's client and a server built with the same SDK, over stdio.

Real parts on both sides: ``mcp.Client`` launches ``dsh-policy mcp proxy`` as its server command,
and the proxy launches ``demo_server.py`` (``MCPServer``). Each test reads what the client got and
what the audit log recorded; every log must verify.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_policy.audit import verify_log
from dsh_policy.policy.cli import main as cli_main
from mcp_kit import TEST_PACK, proxy_argv

_SDK_MISSING = "the MCP integration tests need the SDK: pip install 'dsh-policy[mcp]'"
mcp = pytest.importorskip("mcp", reason=_SDK_MISSING)
from mcp import Client, MCPError, StdioServerParameters  # noqa: E402

FAKE_ACCESS_KEY = "AKIA" + "QWERTYUIOPASDFGH"


def _drive(
    argv: list[str],
    scenario: Callable[[Client], Awaitable[Any]],
    *,
    env: dict[str, str] | None = None,
    mode: str = "auto",
) -> Any:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)

    async def run() -> Any:
        with anyio.fail_after(60):
            async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
                return await scenario(client)

    return anyio.run(run)


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text("utf-8").splitlines()]


def _verified(log: Path) -> list[dict[str, Any]]:
    report = verify_log([log])
    assert report.intact, report.verdict
    return _records(log)


def _calls(log: Path, tool: str) -> list[dict[str, Any]]:
    return [r for r in _verified(log) if r["kind"] == "tool_result" and r["call"]["name"] == tool]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_allow_deny_and_hide_in_both_protocol_revisions(tmp_path: Path, audit_log: Path, mode: str) -> None:
    marker = tmp_path / "marker"

    async def scenario(client: Client) -> tuple[list[str], Any, Any, Any]:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        allowed = await client.call_tool("echo", {"text": "hello"})
        denied = await client.call_tool("echo", {"text": "say forbidden"})
        unlisted = await client.call_tool("delete_everything", {})
        return listed, allowed, denied, unlisted

    listed, allowed, denied, unlisted = _drive(
        proxy_argv(audit_log), scenario, env={"DEMO_MARKER": str(marker)}, mode=mode
    )
    assert "echo" in listed and "delete_everything" not in listed  # denied outright: hidden
    assert not allowed.is_error and _text(allowed) == "hello"
    assert denied.is_error and "that text is forbidden [policy: mcp-test/no-forbidden-echo]" in _text(denied)
    assert unlisted.is_error and "mcp-test/never-delete-everything" in _text(unlisted)
    assert marker.read_text().splitlines() == ["echo hello"]  # refused calls never reached the server
    echo = _calls(audit_log, "mcp__demo__echo")
    assert [r["decision"]["pre_execute"]["decision"] for r in echo] == ["allow", "deny"]
    assert echo[1]["decision"]["denied_by"] == "tools/pre-execute"
    deleted = _calls(audit_log, "mcp__demo__delete_everything")[0]
    assert deleted["decision"]["denied_by"] == "tools/pre-execute"


def test_ask_redaction_and_an_unreadable_server_line_in_one_session(audit_log: Path) -> None:
    """One session (each costs a server start): ask refused with the reason; a secret redacted in
    text and in structured output; a line from the server that is not JSON-RPC dropped."""

    async def scenario(client: Client) -> tuple[Any, ...]:
        return (
            await client.call_tool("weather", {"city": "Paris"}),
            await client.call_tool("leak_text", {}),
            await client.call_tool("leak_structured", {}),
            await client.call_tool("garbage", {}),
            await client.call_tool("echo", {"text": "still here"}),
        )

    asked, text, structured, garbage, echo = _drive(proxy_argv(audit_log), scenario)
    assert asked.is_error and _text(asked).startswith("approval needed: weather for Paris needs approval")
    record = _calls(audit_log, "mcp__demo__weather")[0]
    assert (record["decision"]["denied_by"], record["decision"]["approval"]) == ("approval", "no-service")

    assert FAKE_ACCESS_KEY not in _text(text) and "[REDACTED:aws-access-key]" in _text(text)
    assert structured.structured_content == {"user": "deploy", "access_key": "[REDACTED:aws-access-key]"}
    assert FAKE_ACCESS_KEY not in _text(structured)
    assert FAKE_ACCESS_KEY not in audit_log.read_text("utf-8")
    record = _calls(audit_log, "mcp__demo__leak_structured")[0]
    assert record["decision"]["post_execute"]["action"] == "redact-value"
    assert record["decision"]["post_execute"]["rules"] == ["secrets/redact-credentials-in-output"]

    assert _text(garbage) == "ok" and _text(echo) == "still here"


def test_a_rug_pull_is_quarantined_until_an_operator_approves_it(audit_log: Path) -> None:
    async def pull(client: Client) -> tuple[list[str], Any]:
        await client.list_tools()
        await client.call_tool("rug_pull", {})
        listed = [tool.name for tool in (await client.list_tools()).tools]
        return listed, await client.call_tool("weather", {"city": "Rome"})

    listed, refused = _drive(proxy_argv(audit_log), pull)
    assert "weather" not in listed
    assert refused.is_error and "quarantined" in _text(refused)
    assert "dsh-policy mcp approve --name demo --tool weather" in _text(refused)
    pins = [r for r in _verified(audit_log) if r["kind"] == "mcp_tool" and r["tool"] == "mcp__demo__weather"]
    assert [r["event"] for r in pins] == ["pinned", "flagged"]
    assert pins[1]["pinned_digest"] == pins[0]["digest"] != pins[1]["digest"]  # both digests recorded
    assert _calls(audit_log, "mcp__demo__weather")[0]["decision"]["denied_by"] == "mcp/quarantine"

    # A new session of the same server sees the pin file: the first definition is trusted, the
    # poisoned one waits. The operator approves it (recorded), and the tool works again.
    assert cli_main(["mcp", "approve", "--name", "demo", "--tool", "weather", "--audit", str(audit_log)]) == 0
    approved = [r for r in _verified(audit_log) if r["kind"] == "mcp_tool" and r["event"] == "approved"]
    assert approved[0]["digest"] == pins[1]["digest"] and approved[0]["pinned_digest"] == pins[0]["digest"]
    assert cli_main(["mcp", "approve", "--name", "demo", "--tool", "weather", "--audit", str(audit_log)]) == 1

    listed, again = _drive(proxy_argv(audit_log), pull)
    assert "weather" in listed and not again.is_error  # the approved definition is the pin now


def test_a_changed_definition_is_quarantined_even_when_it_looks_harmless(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"

    async def listing(client: Client) -> list[str]:
        return [tool.name for tool in (await client.list_tools()).tools]

    base = proxy_argv(None, packs=[TEST_PACK], extra=["--pins", str(pins)])
    assert "weather" in _drive(base, listing)
    document = json.loads(pins.read_text())
    document["servers"]["demo"]["weather"]["digest"] = "sha256:" + "0" * 64  # as if pinned earlier
    pins.write_text(json.dumps(document))
    assert "weather" not in _drive(base, listing)
    waiting = json.loads(pins.read_text())["servers"]["demo"]["weather"]["pending"]
    assert waiting["reason"] == "the definition changed since it was pinned"


def test_a_server_crash_is_an_error_for_this_and_every_later_call(audit_log: Path) -> None:
    async def scenario(client: Client) -> list[str]:
        errors = []
        for name in ("crash", "echo"):
            try:
                await client.call_tool(name, {"text": "x"} if name == "echo" else {})
            except MCPError as error:
                errors.append(error.error.message)
        return errors

    errors = _drive(proxy_argv(audit_log), scenario)
    assert len(errors) == 2 and all("is not running" in message for message in errors)
    assert "exited with status 3" in errors[0]
    crash = _calls(audit_log, "mcp__demo__crash")[0]
    assert crash["result"]["is_error"] is True


def test_a_10_mib_result_is_relayed_intact(tmp_path: Path, audit_log: Path) -> None:
    """Raw JSON-RPC on the proxy's pipes, not the SDK client: the SDK's stdio reader joins its
    whole buffer again for every 64 KiB it reads (3.6 s of client CPU for 10 MiB, the same
    directly to the server), which would time the SDK. The proxy's own handling is linear
    (benchmarks: about 5 ms per MiB); over HTTP the SDK client reads it whole
    (``test_proxy_http.py``)."""
    import subprocess

    size = 10 * 1024 * 1024
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "big",
            "arguments": {"size": size},
            "_meta": {  # the stateless revision: no handshake before the call
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    proxy = subprocess.Popen(
        proxy_argv(audit_log, packs=[TEST_PACK]),  # no post-execute rule applies: relayed whole
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    try:
        proxy.stdin.write(json.dumps(call).encode() + b"\n")
        proxy.stdin.flush()
        answer = json.loads(proxy.stdout.readline())
    finally:
        proxy.stdin.close()
        proxy.wait(timeout=60)
    assert answer["id"] == 1 and answer["result"]["isError"] is False
    assert answer["result"]["content"] == [{"type": "text", "text": "x" * size}]
    assert answer["result"]["structuredContent"] == {"result": "x" * size}
    record = _calls(audit_log, "mcp__demo__big")[0]
    assert record["result"]["is_error"] is False and record["decision"]["post_execute"]["action"] == "accept"


def test_a_policy_that_cannot_load_refuses_every_call_and_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: x}\nspec: {rules: [{}]}\n")
    marker = tmp_path / "marker"

    async def scenario(client: Client) -> Any:
        return await client.call_tool("echo", {"text": "hello"})

    result = _drive(proxy_argv(None, packs=[broken]), scenario, env={"DEMO_MARKER": str(marker)})
    assert result.is_error and "the policy is unavailable" in _text(result)
    assert not marker.exists()


def test_an_audit_log_that_cannot_be_written_refuses_calls(tmp_path: Path) -> None:
    async def scenario(client: Client) -> Any:
        return await client.call_tool("echo", {"text": "hello"})

    not_a_folder = tmp_path / "plain-file"
    not_a_folder.write_text("")  # the log's folder is a file: not even root can create the log
    result = _drive(proxy_argv(not_a_folder / "audit.jsonl"), scenario)
    assert result.is_error and "policy is unavailable" in _text(result)
    assert "audit log" in _text(result)


def test_bad_json_rpc_from_the_client_is_answered_and_never_forwarded(
    tmp_path: Path, audit_log: Path
) -> None:
    """Raw lines, as a broken client would send them: each gets its JSON-RPC error, the relay
    goes on, and a request after them is answered by the server."""
    import subprocess

    lines = [
        b"this is not JSON\n",
        b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "delete_everything"}}]\n',
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {}}}\n',
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call",'
        b' "params": {"name": "echo", "arguments": [1]}}\n',
        b'{"jsonrpc": "1.0", "id": 4, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}\n',
    ]
    marker = tmp_path / "marker"
    proxy = subprocess.Popen(
        proxy_argv(audit_log),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "DEMO_MARKER": str(marker)},
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    try:
        proxy.stdin.write(b"".join(lines))
        proxy.stdin.flush()
        received = [proxy.stdout.readline() for _ in lines]  # every line is answered
    finally:
        proxy.stdin.close()
        proxy.wait(timeout=60)
    answers = [json.loads(line) for line in received]
    assert [answer.get("id") for answer in answers] == [None, None, 2, 3, 4, 5]
    assert [answer["error"]["code"] for answer in answers[:5]] == [-32700, -32600, -32602, -32602, -32600]
    assert "batches are not supported" in answers[1]["error"]["message"]
    assert answers[5]["result"] is not None  # the server answered the ping after all that
    assert not marker.exists()
    _verified(audit_log)
