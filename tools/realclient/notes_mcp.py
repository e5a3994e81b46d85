#!/usr/bin/env python3
"""A stdio MCP server with one tool, ``read_notes``, that returns a file of the throwaway
workspace: the real-client suite's MCP case (the client runs it; it reads nothing outside
``--work``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TOOL = {
    "name": "read_notes",
    "description": "Return the deployment notes of the workspace.",
    "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
}


def answer(request: dict[str, Any], notes: Path) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None  # a notification
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion", "2025-06-18")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": notes.read_text()}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if not args.work.startswith("/tmp/"):
        print("refusing: --work must lie under /tmp/", file=sys.stderr)
        return 2
    notes = Path(args.work) / "proj" / "deploy-notes.txt"
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), notes)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
