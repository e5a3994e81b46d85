"""A scripted model on 127.0.0.1 speaking just enough of the Anthropic Messages API to drive the
real ``claude -p`` offline (the CLI itself, or through the Claude Agent SDK), one tool call per
conversation.

The prompt carries ``scenario=NAME``; the script (:data:`SCRIPT` unless another is given) maps it
to one tool call (or to a list of calls, made one per model turn). The first request
that offers that tool gets the call; the request carrying its (last) result gets a plain answer. Every
request body is kept (``bodies``), which is how a test proves what the model was and was not sent.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

SCENARIO = re.compile(r"scenario=([A-Za-z0-9_]+)")
#: scenario -> (tool, input), or a list of them: one call per model turn, in order
Step = tuple[str, dict[str, Any]]
SCRIPT: dict[str, Step | list[Step]] = {
    "deny": ("mcp__demo__echo", {"text": "say forbidden"}),
    "allow": ("mcp__demo__echo", {"text": "hello from claude"}),
    "redact": ("mcp__demo__leak_text", {}),
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text(block.get("text") or block.get("content") or "")
            for block in content
            if isinstance(block, dict)
        )
    return ""


class FakeModel:
    """The server, its thread, and what it saw."""

    def __init__(self, script: dict[str, Step | list[Step]] | None = None) -> None:
        self.script = SCRIPT if script is None else script
        self.bodies: list[str] = []
        self.tool_results: dict[str, list[dict[str, Any]]] = {}
        self.tools_offered: list[list[str]] = []
        self.seen_results: set[str] = set()
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        handler = type("Handler", (_Handler,), {"model": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        messages = body.get("messages") or []
        tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        with self.lock:
            self.tools_offered.append(tools)
        found = SCENARIO.search(
            " ".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        )
        scenario = found.group(1) if found else None
        results = [
            block
            for message in messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        planned = self.script.get(scenario) if scenario else None
        steps = planned if isinstance(planned, list) else [planned] if planned else []
        if results and scenario:
            with self.lock:  # each result once, though every later request repeats it
                new = [r for r in results if r.get("tool_use_id") not in self.seen_results]
                self.seen_results.update(str(r.get("tool_use_id")) for r in new)
                self.tool_results.setdefault(scenario, []).extend(
                    {"is_error": bool(r.get("is_error")), "text": _text(r.get("content"))} for r in new
                )
            if len(results) >= len(steps):
                return [{"type": "text", "text": f"Noted {scenario}."}], "end_turn"
        if (
            steps
            and len(results) < len(steps)
            and steps[len(results)][0] in tools
            and (len(steps) > 1 or not any(m.get("role") == "assistant" for m in messages))
        ):
            tool, arguments = steps[len(results)]
            call = {
                "type": "tool_use",
                "id": f"toolu_fake_{next(self.ids):04d}",
                "name": tool,
                "input": arguments,
            }
            return [call], "tool_use"
        return [{"type": "text", "text": "ok"}], "end_turn"


class _Handler(BaseHTTPRequestHandler):
    model: ClassVar[FakeModel]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._send(404, b'{"error": "not found"}', "application/json")

    def do_HEAD(self) -> None:
        self._send(200, b"", "text/plain")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self._send(200, b'{"input_tokens": 12}', "application/json")
            return
        if not path.endswith("/messages"):
            self._send(404, b'{"error": "not found"}', "application/json")
            return
        text = raw.decode("utf-8", "replace")
        with self.model.lock:
            self.model.bodies.append(text)
        body = json.loads(text or "{}")
        blocks, stop = self.model.answer(body)
        message = {
            "id": f"msg_fake_{next(self.model.ids)}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model", "fake")),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 20},
        }
        if not body.get("stream"):
            self._send(200, json.dumps(message).encode(), "application/json")
            return
        self._send(200, _stream(message), "text/event-stream")


def _stream(message: dict[str, Any]) -> bytes:
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
        )
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
