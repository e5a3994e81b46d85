"""Checking the MCP servers a client is configured with: each one behind the proxy, end to end.

A wrapped stdio server is started exactly as the client would start it (its ``command``, ``args``,
``env`` over this environment, ``cwd``), handed an ``initialize`` and a ``tools/list`` as newline
JSON-RPC, and must answer both within the deadline: that proves the proxy starts, loads its policy
and reaches the real server. A server that is not wrapped is a warning (its tools bypass the
policy unless a hook happens to see them); an HTTP entry is reported as such.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any, Final

from dsh_policy.policy.hooks.harness_files import read_text
from dsh_policy.policy.hooks.install.doctor import Finding
from dsh_policy.policy.hooks.install.mcp_servers import describe, wrapped_command

PROBE_SECONDS: Final[float] = 60.0
_HANDSHAKE_VERSION: Final[str] = "2025-11-25"


def claude_code_servers(project: str) -> dict[str, Any]:
    """The ``mcpServers`` of the project's ``.mcp.json`` (empty when none)."""
    text = read_text(os.path.join(project, ".mcp.json"))
    try:
        document = json.loads(text) if text else {}
    except ValueError:
        return {}
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    return servers if isinstance(servers, dict) else {}


def codex_servers(files: list[str]) -> dict[str, Any]:
    """The ``[mcp_servers.*]`` of the Codex config files (later files win)."""
    out: dict[str, Any] = {}
    for path in files:
        text = read_text(path)
        with contextlib.suppress(tomllib.TOMLDecodeError):
            servers = tomllib.loads(text or "").get("mcp_servers")
            if isinstance(servers, dict):
                out.update(servers)
    return out


def check_servers(servers: Mapping[str, Any], project: str) -> Iterator[Finding]:
    for name, entry in servers.items():
        subject = f"mcp {name}"
        if not isinstance(entry, Mapping):
            yield Finding("warn", subject, "not a server entry")
        elif "url" in entry:
            yield Finding(
                "warn",
                subject,
                f"an HTTP server ({entry['url']}): put `dsh-policy mcp proxy --upstream` in front of it",
            )
        elif wrapped_command(entry) is None:
            yield Finding(
                "warn", subject, f"not behind the proxy ({describe(entry)}); run `dsh-policy init ... --mcp`"
            )
        else:
            yield probe(name, entry, project)


def probe(name: str, entry: Mapping[str, Any], project: str) -> Finding:
    """Start the wrapped server as the client would, and list its tools through the proxy."""
    subject = f"mcp {name}"
    env = {**os.environ, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}}
    cwd = str(entry.get("cwd") or project)
    argv = [str(entry["command"]), *map(str, entry.get("args") or [])]
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
    except OSError as error:
        return Finding("fail", subject, f"cannot start {describe(entry)}: {error}")
    try:
        answers = _exchange(process, started + PROBE_SECONDS)
    finally:
        with contextlib.suppress(OSError):
            assert process.stdin is not None
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    elapsed = time.monotonic() - started
    if isinstance(answers, str):
        stderr = process.stderr.read().decode("utf-8", "replace")[-500:] if process.stderr else ""
        return Finding("fail", subject, f"{answers}; stderr: {stderr.strip() or '(empty)'}")
    tools = answers.get("result", {}).get("tools") if isinstance(answers.get("result"), dict) else None
    if not isinstance(tools, list):
        return Finding("fail", subject, f"tools/list failed through the proxy: {answers.get('error')}")
    return Finding("ok", subject, f"proxy started and listed {len(tools)} tools in {elapsed:.1f}s")


def _exchange(process: subprocess.Popen[bytes], deadline: float) -> dict[str, Any] | str:
    """initialize, initialized, tools/list; the tools/list answer, or what went wrong."""
    assert process.stdin is not None and process.stdout is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": _HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "dsh-policy-doctor", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    try:
        process.stdin.write(json.dumps(messages[0]).encode() + b"\n")
        process.stdin.flush()
        first = _answer(process, 1, deadline)
        if isinstance(first, str) or "error" in first:
            return first if isinstance(first, str) else f"initialize failed: {first['error']}"
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages[1:]))
        process.stdin.flush()
    except OSError as error:
        return f"the proxy closed its input: {error}"
    return _answer(process, 2, deadline)


def _answer(process: subprocess.Popen[bytes], request_id: int, deadline: float) -> dict[str, Any] | str:
    """The answer to ``request_id``; a reader thread keeps a blocked read from outliving the deadline."""
    assert process.stdout is not None
    stdout = process.stdout
    found: queue.Queue[bytes] = queue.Queue()

    def read() -> None:
        while line := stdout.readline():
            found.put(line)
            with contextlib.suppress(ValueError, AttributeError):
                if json.loads(line).get("id") == request_id:
                    return
        found.put(b"")

    threading.Thread(target=read, daemon=True).start()
    while True:
        try:
            line = found.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return f"no answer within {PROBE_SECONDS:.0f}s"
        if not line:
            return f"the proxy exited (status {process.poll()}) before answering"
        with contextlib.suppress(ValueError, AttributeError):
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)
