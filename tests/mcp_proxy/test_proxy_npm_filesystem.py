"""The npm reference filesystem server (``@modelcontextprotocol/server-filesystem``) behind the stdio
proxy, driven by the official SDK's client, under the shipped baseline and secrets packs.

Opt in with ``DSH_TEST_NPM=1`` (marker ``npm``): the first run installs the server with npm into
``$DSH_NPM_CACHE`` (default ``/tmp/dsh-policy-npm-cache``), later runs reuse it. The server is
given only a throwaway folder under the test's temporary directory; the baseline's workspace is a
subfolder of it, so a write the server itself would accept (inside its folder, outside the
workspace) shows the refusal is the proxy's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_policy.audit import verify_log
from mcp_kit import ROOT, proxy_argv

pytestmark = [
    pytest.mark.npm,
    pytest.mark.skipif(
        os.environ.get("DSH_TEST_NPM") != "1", reason="installs an npm package: opt in with DSH_TEST_NPM=1"
    ),
]
mcp = pytest.importorskip(
    "mcp", reason="the MCP integration tests need the SDK: pip install 'dsh-policy[mcp]'"
)
from mcp import Client, StdioServerParameters  # noqa: E402

PACKAGE = "@modelcontextprotocol/server-filesystem"
FAKE_ACCESS_KEY = "AKIA" + "QWERTYUIOPASDFGH"


def _installed_server() -> Path:
    """The server's entry point, installed with npm into the cache folder on first use."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm and node are not installed: the reference filesystem server needs them")
    cache = Path(os.environ.get("DSH_NPM_CACHE", "/tmp/dsh-policy-npm-cache"))
    entry = cache / "node_modules" / PACKAGE / "dist" / "index.js"
    if not entry.exists():
        cache.mkdir(parents=True, exist_ok=True)
        installed = subprocess.run(
            ["npm", "install", "--prefix", str(cache), "--no-audit", "--no-fund", PACKAGE],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if installed.returncode != 0:
            pytest.fail(f"npm install {PACKAGE} failed:\n{installed.stderr[-2000:]}")
    return entry


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def test_the_reference_filesystem_server_under_the_shipped_packs(tmp_path: Path) -> None:
    entry = _installed_server()
    served = tmp_path / "served"
    workspace = served / "work"
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("plain notes\n")
    (workspace / "app.ini").write_text(f"region = eu-west-1\naws_access_key_id = {FAKE_ACCESS_KEY}\n")
    audit = tmp_path / "audit.jsonl"
    argv = proxy_argv(
        audit,
        packs=[ROOT / "rules" / "baseline.yaml", ROOT / "rules" / "secrets.yaml"],
        server=["node", str(entry), str(served)],
        name="filesystem",
        extra=["--param", f"workspace={workspace}", "--param", "writable_paths=[]"],
    )
    outside = served / "outside.txt"

    async def scenario(client: Client) -> tuple[Any, ...]:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        return (
            listed,
            await client.call_tool("read_text_file", {"path": str(workspace / "notes.txt")}),
            await client.call_tool("write_file", {"path": str(outside), "content": "escaped"}),
            await client.call_tool("write_file", {"path": str(workspace / "new.txt"), "content": "inside"}),
            await client.call_tool("read_text_file", {"path": str(workspace / "app.ini")}),
        )

    async def run() -> tuple[Any, ...]:
        with anyio.fail_after(120):
            params = StdioServerParameters(command=argv[0], args=argv[1:])
            async with Client(params) as client:
                return await scenario(client)

    listed, read, denied, written, secret = anyio.run(run)
    assert {"read_text_file", "write_file", "edit_file"} <= set(listed)
    assert not read.is_error and "plain notes" in _text(read)
    assert denied.is_error and "baseline/deny-file-writes-outside-workspace" in _text(denied)
    assert not outside.exists()  # the server would have written it: the proxy refused
    assert not written.is_error and (workspace / "new.txt").read_text() == "inside"
    assert FAKE_ACCESS_KEY not in _text(secret) and "[REDACTED:aws-access-key]" in _text(secret)
    assert FAKE_ACCESS_KEY not in audit.read_text("utf-8")
    assert verify_log([audit]).intact


def test_the_reference_servers_move_is_judged_as_the_move_it_is(tmp_path: Path) -> None:
    """``move_file {source, destination}`` is in no vocabulary table: the proxy judges it by what its
    arguments do (policy/decide/tool_views.py), so the real server's move out of the workspace is
    refused as the ``mv`` it amounts to, and a move inside the workspace runs."""
    entry = _installed_server()
    served = tmp_path / "served"
    workspace = served / "work"
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("plain notes\n")
    (workspace / "draft.txt").write_text("draft\n")
    audit = tmp_path / "audit.jsonl"
    argv = proxy_argv(
        audit,
        packs=[ROOT / "rules" / "baseline.yaml"],
        server=["node", str(entry), str(served)],
        name="filesystem",
        extra=["--param", f"workspace={workspace}", "--param", "writable_paths=[]"],
    )
    outside = served / "moved-out.txt"

    async def run() -> tuple[Any, Any]:
        with anyio.fail_after(120):
            params = StdioServerParameters(command=argv[0], args=argv[1:])
            async with Client(params) as client:
                out = await client.call_tool(
                    "move_file", {"source": str(workspace / "notes.txt"), "destination": str(outside)}
                )
                inside = await client.call_tool(
                    "move_file",
                    {"source": str(workspace / "draft.txt"), "destination": str(workspace / "final.txt")},
                )
                return out, inside

    out, inside = anyio.run(run)
    assert out.is_error and "judged as shell mv" in _text(out), _text(out)
    assert (workspace / "notes.txt").exists() and not outside.exists()  # the server never moved it
    assert not inside.is_error, _text(inside)
    assert (workspace / "final.txt").read_text() == "draft\n" and not (workspace / "draft.txt").exists()
    assert verify_log([audit]).intact
