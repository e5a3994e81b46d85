"""The proxy over Streamable HTTP, between the official SDK's client and a server built with the SDK.

Real parts on both sides: ``demo_server.py --http PORT`` serves the SDK's Streamable HTTP app
(uvicorn, 127.0.0.1), ``dsh-policy mcp proxy --upstream URL --listen 127.0.0.1:0`` runs as its own
process, and ``mcp.Client(URL)`` talks to the proxy in both protocol revisions (the stateless
2026-07-28 with ``Mcp-Method``/``Mcp-Name`` headers, and the 2025-11-25 handshake with
``Mcp-Session-Id``). Each test reads what the client got and what the audit log recorded.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from dsh_policy.audit import verify_log
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.mcp.proxy import open_gate
from dsh_policy.policy.mcp.streamable_http import HttpProxy, listen_address, origin_allowed
from mcp_kit import DEMO_SERVER, SHIPPED, TEST_PACK

mcp = pytest.importorskip(
    "mcp", reason="the MCP integration tests need the SDK: pip install 'dsh-policy[mcp]'"
)
from dsh_policy.policy.config import policy_sources  # noqa: E402
from mcp import Client, MCPError  # noqa: E402

FAKE_ACCESS_KEY = "AKIA" + "QWERTYUIOPASDFGH"
_SERVING = re.compile(r"serving http://([\d.]+):(\d+)/")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited before it listened"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Upstream:
    """The demo server on 127.0.0.1 over Streamable HTTP."""

    def __init__(self, marker: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {**os.environ, "DEMO_MARKER": str(marker)}
        self.process = subprocess.Popen(
            [sys.executable, str(DEMO_SERVER), "--http", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self.process)


class Proxy:
    """``dsh-policy mcp proxy --upstream URL --listen 127.0.0.1:0`` as its own process."""

    def __init__(
        self,
        upstream: str,
        audit: Path | None,
        extra: list[str] | None = None,
        packs: list[Path] | None = None,
    ) -> None:
        argv = [sys.executable, "-m", "dsh_policy.policy.cli", "mcp", "proxy", "--name", "demo"]
        argv += ["--pack", *map(str, packs if packs is not None else [TEST_PACK, *SHIPPED])]
        argv += ["--audit", str(audit)] if audit is not None else []
        argv += ["--upstream", upstream, "--listen", "127.0.0.1:0", *(extra or [])]
        self.process = subprocess.Popen(argv, stderr=subprocess.PIPE)
        assert self.process.stderr is not None
        line = self.process.stderr.readline().decode()
        found = _SERVING.search(line)
        assert found is not None, line
        self.port = int(found.group(2))
        self.url = f"http://127.0.0.1:{self.port}/mcp"


@pytest.fixture
def servers(tmp_path: Path, audit_log: Path) -> Iterator[tuple[Upstream, Proxy]]:
    upstream = Upstream(tmp_path / "marker")
    try:
        proxy = Proxy(upstream.url, audit_log)
        try:
            yield upstream, proxy
        finally:
            _stop(proxy.process)
    finally:
        _stop(upstream.process)


def _drive(url: str, scenario: Callable[[Client], Awaitable[Any]], mode: str = "auto") -> Any:
    async def run() -> Any:
        with anyio.fail_after(60):
            async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
                return await scenario(client)

    return anyio.run(run)


def _verified(log: Path) -> list[dict[str, Any]]:
    report = verify_log([log])
    assert report.intact, report.verdict
    return [json.loads(line) for line in log.read_text("utf-8").splitlines()]


def _calls(log: Path, tool: str) -> list[dict[str, Any]]:
    return [r for r in _verified(log) if r["kind"] == "tool_result" and r["call"]["name"] == tool]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_allow_deny_hide_and_redact_over_http(
    servers: tuple[Upstream, Proxy], tmp_path: Path, audit_log: Path, mode: str
) -> None:
    _, proxy = servers

    async def scenario(client: Client) -> tuple[Any, ...]:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        return (
            listed,
            await client.call_tool("echo", {"text": "hello"}),
            await client.call_tool("echo", {"text": "say forbidden"}),
            await client.call_tool("delete_everything", {}),
            await client.call_tool("leak_text", {}),
            await client.call_tool("leak_structured", {}),
        )

    listed, allowed, denied, unlisted, text, structured = _drive(proxy.url, scenario, mode)
    assert "echo" in listed and "delete_everything" not in listed
    assert not allowed.is_error and _text(allowed) == "hello"
    assert denied.is_error and "[policy: mcp-test/no-forbidden-echo]" in _text(denied)
    assert unlisted.is_error and "mcp-test/never-delete-everything" in _text(unlisted)
    assert (tmp_path / "marker").read_text().splitlines() == ["echo hello"]  # refusals never reached it
    assert FAKE_ACCESS_KEY not in _text(text) and "[REDACTED:aws-access-key]" in _text(text)
    assert structured.structured_content == {"user": "deploy", "access_key": "[REDACTED:aws-access-key]"}
    assert FAKE_ACCESS_KEY not in audit_log.read_text("utf-8")
    echo = _calls(audit_log, "mcp__demo__echo")
    assert [r["decision"]["pre_execute"]["decision"] for r in echo] == ["allow", "deny"]
    leak = _calls(audit_log, "mcp__demo__leak_structured")[0]
    assert leak["decision"]["post_execute"]["action"] == "redact-value"


def test_a_rug_pull_over_http_is_quarantined(servers: tuple[Upstream, Proxy], audit_log: Path) -> None:
    _, proxy = servers

    async def pull(client: Client) -> tuple[list[str], Any]:
        await client.list_tools()
        await client.call_tool("rug_pull", {})
        listed = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
        return listed, await client.call_tool("weather", {"city": "Rome"})

    listed, refused = _drive(proxy.url, pull)
    assert "weather" not in listed
    assert refused.is_error and "quarantined" in _text(refused)
    pins = [r for r in _verified(audit_log) if r["kind"] == "mcp_tool" and r["tool"] == "mcp__demo__weather"]
    assert [r["event"] for r in pins] == ["pinned", "flagged"]
    assert _calls(audit_log, "mcp__demo__weather")[0]["decision"]["denied_by"] == "mcp/quarantine"


def test_an_upstream_that_dies_is_an_error_for_each_call(
    servers: tuple[Upstream, Proxy], audit_log: Path
) -> None:
    upstream, proxy = servers

    async def scenario(client: Client) -> list[str]:
        errors = []
        for name in ("crash", "echo"):
            try:
                await client.call_tool(name, {"text": "x"} if name == "echo" else {})
            except MCPError as error:
                errors.append(error.error.message)
        return errors

    errors = _drive(proxy.url, scenario, mode="2026-07-28")
    assert upstream.process.wait(timeout=10) == 3
    assert len(errors) == 2 and all("is not available" in message for message in errors), errors
    assert "could not be reached" in errors[1]
    assert _calls(audit_log, "mcp__demo__crash")[0]["result"]["is_error"] is True
    assert _calls(audit_log, "mcp__demo__echo")[0]["result"]["is_error"] is True


def test_a_10_mib_result_over_http(tmp_path: Path, audit_log: Path) -> None:
    """The SDK client (stateless revision, a JSON answer) gets a 10 MiB result through the proxy
    whole, in about a second and a half. (In the 2025-11-25 revision the server answers on an SSE
    stream, and the SDK client refuses any event over 1 MiB, directly to the server too.) Only the
    test pack: the secrets pack would withhold a result over its 1 MiB scan limit."""
    upstream = Upstream(tmp_path / "marker")
    try:
        proxy = Proxy(upstream.url, audit_log, packs=[TEST_PACK])
        try:
            size = 10 * 1024 * 1024

            async def scenario(client: Client) -> Any:
                return await client.call_tool("big", {"size": size})

            result = _drive(proxy.url, scenario, mode="2026-07-28")
        finally:
            _stop(proxy.process)
    finally:
        _stop(upstream.process)
    assert not result.is_error and _text(result) == "x" * size
    assert result.structured_content == {"result": "x" * size}
    record = _calls(audit_log, "mcp__demo__big")[0]
    assert record["result"]["is_error"] is False and record["decision"]["post_execute"]["action"] == "accept"


def _post(port: int, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        payload = json.dumps(body).encode()
        connection.request(
            "POST", "/mcp", body=payload, headers={"Content-Type": "application/json", **headers}
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


class _Recorder(BaseHTTPRequestHandler):
    """An upstream that records the headers it was sent and answers every POST with a tool result."""

    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({name.lower(): value for name, value in self.headers.items()})
        answer = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {"content": []}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", "upstream=secret")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def test_origin_host_and_credentials(tmp_path: Path) -> None:
    """A foreign Origin or Host is refused before anything is relayed; the client's credentials and
    cookies never reach the upstream server, nor its cookies the client; routing headers that
    disagree with the body are refused."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    sources = policy_sources([str(TEST_PACK)])
    setup = open_gate("demo", sources, audit=str(tmp_path / "audit.jsonl"))
    proxy = HttpProxy(setup.gate, f"http://127.0.0.1:{upstream.server_address[1]}/mcp", ("127.0.0.1", 0))
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    port = proxy.address[1]
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "a"}},
    }
    try:
        status, answer = _post(port, call, {"Origin": "http://evil.example"})
        assert (status, answer["error"]["message"]) == (403, "Origin not allowed")
        status, answer = _post(port, call, {"Host": "evil.example:80"})
        assert (status, answer["error"]["message"]) == (403, "Host must name the loopback")
        assert _Recorder.seen == []

        status, answer = _post(
            port,
            call,
            {
                "Origin": f"http://localhost:{port}",
                "Authorization": "Bearer client-token",
                "Cookie": "session=client",
                "Mcp-Session-Id": "s-1",
                "Mcp-Name": "echo",
                "Mcp-Method": "tools/call",
            },
        )
        assert status == 200 and answer["result"] == {"content": []}
        sent = _Recorder.seen[-1]
        assert "authorization" not in sent and "cookie" not in sent
        assert sent["mcp-session-id"] == "s-1" and sent["mcp-name"] == "echo"

        status, answer = _post(port, call, {"Mcp-Name": "weather"})
        assert status == 400 and answer["error"]["code"] == -32020
        assert len(_Recorder.seen) == 1  # the mismatched request was not relayed
    finally:
        proxy.shutdown()
        upstream.shutdown()
        upstream.server_close()
        setup.close()


class _KeepAlive(BaseHTTPRequestHandler):
    """An HTTP/1.1 upstream that notes the client port of each POST (one port: one connection) and
    closes the connection after an answer when told to."""

    protocol_version = "HTTP/1.1"
    ports: ClassVar[list[int]] = []
    close_after: ClassVar[set[int]] = set()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).ports.append(self.client_address[1])
        answer = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {"content": []}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        if len(type(self).ports) in type(self).close_after:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(answer)


def test_the_upstream_connection_is_kept_alive_only_while_it_can_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POSTs of one client connection share one upstream connection; one the server closed, or
    one idle too long, is replaced before the next POST (never retried after it was sent)."""
    from dsh_policy.policy.mcp import streamable_http

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _KeepAlive)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    setup = open_gate("demo", policy_sources([str(TEST_PACK)]), audit=str(tmp_path / "audit.jsonl"))
    proxy = HttpProxy(setup.gate, f"http://127.0.0.1:{upstream.server_address[1]}/mcp", ("127.0.0.1", 0))
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    _KeepAlive.close_after = {3}  # the third answer closes its connection
    client = http.client.HTTPConnection("127.0.0.1", proxy.address[1], timeout=30)
    try:
        for number in range(1, 6):
            if number == 5:
                monkeypatch.setattr(streamable_http, "UPSTREAM_IDLE_SECONDS", 0.0)
            body = {"jsonrpc": "2.0", "id": number, "method": "ping"}
            client.request(
                "POST", "/mcp", body=json.dumps(body), headers={"Content-Type": "application/json"}
            )
            response = client.getresponse()
            assert response.status == 200 and json.loads(response.read())["id"] == number
    finally:
        client.close()
        proxy.shutdown()
        upstream.shutdown()
        upstream.server_close()
        setup.close()
    ports = _KeepAlive.ports
    assert ports[0] == ports[1] == ports[2]  # kept alive
    assert ports[3] != ports[2]  # the server closed it after the third: a new one
    assert ports[4] != ports[3]  # idle longer than allowed: a new one


def test_listen_is_loopback_only() -> None:
    assert listen_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert listen_address("[::1]:8765") == ("::1", 8765)
    assert listen_address("localhost:0") == ("127.0.0.1", 0)
    assert "loopback" in str(listen_address("0.0.0.0:8765"))
    assert "loopback" in str(listen_address("192.168.1.2:8765"))
    assert cli_main(["mcp", "proxy", "--name", "demo", "--upstream", "http://127.0.0.1:1/mcp",
                     "--listen", "0.0.0.0:0"]) == 2  # fmt: skip
    assert cli_main(["mcp", "proxy", "--name", "demo", "--upstream", "http://127.0.0.1:1/mcp"]) == 2
    assert origin_allowed(None, []) and origin_allowed("http://127.0.0.1:3000", [])
    assert not origin_allowed("http://127.0.0.1.evil.example", [])
    assert origin_allowed("https://app.example", ["https://app.example"])
