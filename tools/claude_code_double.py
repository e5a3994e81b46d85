"""Claude Code's half of the Claude Agent SDK's control protocol, scripted, for the SDK parity test.

The real SDK (``claude_agent_sdk.query`` with its own ``Query``, ``HookMatcher`` registration,
``HookContext`` and answer conversion) talks to this transport instead of the bundled CLI. It
plays what the CLI does around one tool call, per call of a script, all in one session:

1. ``initialize``: keeps the hook matchers the SDK registered (event -> matcher -> callback ids,
   ``onFailure``) and says it honours ``on_failure``;
2. ``PreToolUse``: asks every matching callback (``hook_callback`` control requests, the payload
   Claude Code sends); the first ``deny`` refuses the call, an ``ask`` goes to the application's
   ``can_use_tool`` (a ``can_use_tool`` control request), a failed callback refuses (``on_failure``
   is ``block``);
3. the tool runs (``run(call)``: the test's body) unless refused;
4. ``PostToolUse``: asks every matching callback with the tool's response; ``updatedToolOutput`` /
   ``updatedMCPToolOutput`` replace the output, ``decision: block`` gives the reason instead;
   ``additionalContext`` follows.

What the model would read is kept per call (``shown``). This is a stand-in for the CLI inside a
unit test (and the Python-side half of ``benchmarks/bench_frameworks.py``'s SDK row); the proof on
the real CLI is ``tests/adapters/test_claude_agent_sdk_adapter.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from claude_agent_sdk import Transport
from dsh_policy.policy.events import all_strings_text

SESSION = "sdk-parity-session"


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One Claude Code tool call: its id, Claude Code's tool name and input, and the tool's
    response in Claude Code's shape (what PostToolUse carries)."""

    tool_use_id: str
    tool_name: str
    tool_input: Mapping[str, Any]
    tool_response: Any


@dataclass(slots=True)
class ScriptedClaudeCode(Transport):
    """The transport; ``cwd`` is what the payloads name as the session's folder."""

    uses: list[ToolUse]
    run: Callable[[ToolUse], None]
    cwd: str
    #: Also stream the messages the CLI streams around each call (the model's tool use, the tool
    #: result), which the SDK parses: its own per-call work in the application's process.
    transcript: bool = False
    shown: dict[str, str] = field(default_factory=dict)
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _outbox: Any = None
    _inbox: Any = None
    _responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    _arrived: dict[str, anyio.Event] = field(default_factory=dict)
    _prompted: anyio.Event | None = None
    _ended: anyio.Event | None = None
    _counter: int = 0
    _task: asyncio.Task[None] | None = None
    failure: Exception | None = None

    # --- the Transport interface ---------------------------------------------------------------

    async def connect(self) -> None:
        self._outbox, self._inbox = anyio.create_memory_object_stream[dict[str, Any]](100)
        self._prompted, self._ended = anyio.Event(), anyio.Event()
        self._task = asyncio.get_running_loop().create_task(self._script())

    def is_ready(self) -> bool:
        return self._outbox is not None

    async def write(self, data: str) -> None:
        message = json.loads(data)
        kind = message.get("type")
        if kind == "control_request" and message["request"]["subtype"] == "initialize":
            self.hooks = dict(message["request"].get("hooks") or {})
            await self._outbox.send(_success(message["request_id"], {
                "hook_on_failure_supported": True, "hooks_applied": True, "commands": [], "models": []}))
        elif kind == "control_response":
            response = message["response"]
            self._responses[response["request_id"]] = response
            self._arrived[response["request_id"]].set()
        elif kind == "user":
            assert self._prompted is not None
            self._prompted.set()

    async def end_input(self) -> None:
        assert self._ended is not None
        self._ended.set()

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self._outbox is not None:
            await self._outbox.aclose()

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        async for message in self._inbox:
            if message.get("type") == "double_failed":
                raise RuntimeError("the scripted Claude Code failed") from self.failure
            yield message
            if message.get("type") == "result":
                return

    # --- Claude Code's side ----------------------------------------------------------------------

    async def _script(self) -> None:
        try:
            await self._conversation()
        except Exception as error:  # surfaces in the SDK's reader, so the test fails loudly
            self.failure = error
            await self._outbox.send({"type": "double_failed"})

    async def _conversation(self) -> None:
        assert self._prompted is not None
        await self._prompted.wait()
        for use in self.uses:
            if self.transcript:
                await self._outbox.send(_assistant(use))
            shown = self.shown[use.tool_use_id] = await self._tool_call(use)
            if self.transcript:
                await self._outbox.send(_tool_result(use, shown))
        await self._outbox.send({
            "type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1,
            "is_error": False, "num_turns": len(self.uses) + 1, "session_id": SESSION, "result": "done"})

    async def _tool_call(self, use: ToolUse) -> str:
        base = {"session_id": SESSION, "transcript_path": f"{self.cwd}/transcript.jsonl", "cwd": self.cwd,
                "permission_mode": "default", "tool_name": use.tool_name, "tool_input": dict(use.tool_input),
                "tool_use_id": use.tool_use_id}
        contexts: list[str] = []
        for answer in await self._hook("PreToolUse", use, {**base, "hook_event_name": "PreToolUse"}):
            specific = answer.get("hookSpecificOutput") or {}
            contexts += [specific["additionalContext"]] if specific.get("additionalContext") else []
            decision = specific.get("permissionDecision")
            if answer.get("error") or decision == "deny":
                return _with(answer.get("error") or specific.get("permissionDecisionReason", ""), contexts)
            if decision == "ask":
                permission = await self._request({
                    "subtype": "can_use_tool", "tool_name": use.tool_name, "input": dict(use.tool_input),
                    "tool_use_id": use.tool_use_id, "permission_suggestions": [],
                    "decision_reason": specific.get("permissionDecisionReason")})
                verdict = permission.get("response") or {}
                if permission.get("subtype") != "success" or verdict.get("behavior") != "allow":
                    return _with(str(verdict.get("message") or permission.get("error") or "denied"), contexts)
        self.run(use)
        output = use.tool_response
        post = {**base, "hook_event_name": "PostToolUse", "tool_response": output}
        for answer in await self._hook("PostToolUse", use, post):
            specific = answer.get("hookSpecificOutput") or {}
            contexts += [specific["additionalContext"]] if specific.get("additionalContext") else []
            if answer.get("error") or answer.get("decision") == "block":
                return _with(answer.get("error") or answer.get("reason", ""), contexts)
            output = specific.get("updatedMCPToolOutput", specific.get("updatedToolOutput", output))
        return _with(model_text(use.tool_name, output), contexts)

    async def _hook(self, event: str, use: ToolUse, payload: dict[str, Any]) -> list[dict[str, Any]]:
        answers: list[dict[str, Any]] = []
        for matcher in self.hooks.get(event, []):
            pattern = matcher.get("matcher")
            if pattern and not re.fullmatch(pattern, use.tool_name):
                continue
            for callback_id in matcher["hookCallbackIds"]:
                response = await self._request({"subtype": "hook_callback", "callback_id": callback_id,
                                                "input": payload, "tool_use_id": use.tool_use_id})
                answer = dict(response.get("response") or {})
                if response.get("subtype") != "success":  # on_failure="block": a failed callback refuses
                    answer = {"error": f"hook callback failed: {response.get('error')}"}
                answers.append(answer)
                self.answers.setdefault(use.tool_use_id, []).append(answer)
        return answers

    async def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        self._counter += 1
        request_id = f"cli_req_{self._counter}"
        self._arrived[request_id] = anyio.Event()
        await self._outbox.send({"type": "control_request", "request_id": request_id, "request": request})
        await self._arrived[request_id].wait()
        return self._responses.pop(request_id)


def model_text(tool_name: str, output: Any) -> str:
    """The part of a tool's response the model reads: Bash its stdout and stderr, Read the file's
    content, WebFetch its result, MCP tools their text blocks, any other tool every string."""
    if isinstance(output, Mapping):
        if tool_name == "Bash":
            return "\n".join(part for part in (output.get("stdout"), output.get("stderr")) if part)
        if tool_name == "Read" and isinstance(output.get("file"), Mapping):
            return str(output["file"].get("content", ""))
        if tool_name == "WebFetch" and "result" in output:
            return str(output["result"])
    if isinstance(output, list) and all(isinstance(b, Mapping) and b.get("type") == "text" for b in output):
        return "\n".join(str(b.get("text", "")) for b in output)
    return all_strings_text(output)


def _with(text: str, contexts: list[str]) -> str:
    return "\n\n".join((text, *contexts)) if contexts else text


def _assistant(use: ToolUse) -> dict[str, Any]:
    block = {"type": "tool_use", "id": use.tool_use_id, "name": use.tool_name, "input": dict(use.tool_input)}
    message = {"id": f"msg-{use.tool_use_id}", "type": "message", "role": "assistant", "model": "claude",
               "content": [block], "stop_reason": "tool_use",
               "usage": {"input_tokens": 12, "output_tokens": 20}}
    return {"type": "assistant", "parent_tool_use_id": None, "session_id": SESSION,
            "uuid": f"a-{use.tool_use_id}", "message": message}


def _tool_result(use: ToolUse, shown: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": use.tool_use_id, "content": shown, "is_error": False}
    return {"type": "user", "parent_tool_use_id": None, "session_id": SESSION, "uuid": f"u-{use.tool_use_id}",
            "message": {"role": "user", "content": [block]}, "tool_use_result": use.tool_response}


def _success(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response}}
