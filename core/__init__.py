"""The compact harness: plugin runtime, tool pipeline and agent loop (HARNESS.md).

``core`` imports nothing else of ``dsh_policy``; the gateway is a handful of ordinary plugins on its
public seams. Embedding::

    import anyio
    from dsh_policy.core import Harness, Message, ScriptedModel, define_tool, deny, reply

    def permission_gate(ctx, config=None):          # a plugin may be a module, an object or
        def pre_execute(execution, next):           # anything with ``name`` and ``apply``
            if execution.name == "rm":
                return deny("rm is not allowed")
            return next()
        ctx.on("tools/pre-execute", pre_execute)

    permission_gate.apply = permission_gate         # (a module with ``def apply(ctx)`` works too)

    async def main() -> None:
        harness = Harness()
        harness.tools.register(define_tool(
            "echo", description="Echo text back",
            parameters={"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]},
            execute=lambda args, run: args["text"],
        ))
        fiber = harness.plugin(permission_gate)     # fiber.dispose() unloads it
        model = ScriptedModel([reply(tool_calls=[("echo", '{"text": "hi"}')]), reply("done")])
        agent = await harness.create_agent(model=model)   # fires agent/session-start
        agent.followup(Message.user("say hi"))
        await agent.wait_idle()                     # runs turns until idle (or parked)
        print([fact.type for fact in agent.session.facts])

    anyio.run(main)

Seams (``ctx.on(event, listener, prepend=False)``; listeners may be sync or async): ``agent/pre-step``
(waterfall -> ``enter``/``reject``), ``tools/pre-execute`` (waterfall -> ``allow``/``deny``/``ask``),
``ctx.tools.guard(fn)``, ``tools/execute`` (around-waterfall -> ``ToolResult``; ``next(signal=...)``
combines a signal for the duration), ``tools/post-execute`` (waterfall -> ``accept``/``block``),
``tools/result`` and ``agent/session-start`` (contained emit), ``agent/turn-stopping`` (serial),
``agent/error`` and ``agent/status`` (notifications). ``ctx.approval`` is the optional approval
service (``async request(execution, reason) -> "allowed-once" | "rejected" | "cancelled" |
"unavailable"``), provided with ``ctx.provide("approval", service)``. Every registration returns a
disposer that removes exactly that registration; a plugin's fiber runs them all on dispose.
Failures at any seam become error results or error turns, never exceptions out of ``wait_idle()``
(cancellation aside): see the README's contract notes on the harness's edges.

Models: ``ScriptedModel([reply(...), ...])`` for tests and demos, ``ChatCompletionsModel(base_url=...,
model=..., api_key=...)`` for any OpenAI-compatible endpoint; both implement ``Model.complete(request)
-> ModelReply``. Sessions: ``Session()`` (memory), ``Session.to_file(path)`` (JSONL);
``Session.load(path)`` + ``await harness.resume_agent(session, model=...)`` continues one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers and readers; importing them is lazy (below)
    from .agent import (
        MAX_PARALLEL_TOOLS,
        Agent,
        AgentErrorEvent,
        AgentStatusEvent,
        PreStepEvent,
        SessionStartEvent,
        TurnEnd,
        TurnStoppingEvent,
    )
    from .chat_completions import ChatCompletionsModel, ModelProtocolError
    from .decisions import (
        Accept,
        Allow,
        Ask,
        Block,
        Deny,
        Enter,
        PostToolDecision,
        PreStepDecision,
        PreToolDecision,
        Reject,
        accept,
        allow,
        ask,
        block,
        deny,
        enter,
        reject,
    )
    from .events import EventBus
    from .execution import TextContent, ToolError, ToolExecution, ToolResult
    from .frozen import FrozenDict, freeze_json, thaw
    from .harness import Harness
    from .messages import Message, MessageSource
    from .model import (
        AssistantMessage,
        Model,
        ModelReply,
        ModelRequest,
        ModelToolCall,
        ScriptedModel,
        ToolResultMessage,
        ToolSpec,
        reply,
        to_chat_messages,
        to_chat_tools,
    )
    from .plugin import Context, Fiber, PluginError
    from .session import Fact, JsonlStore, MemoryStore, Session, SessionStore
    from .signals import AbortController, AbortSignal
    from .tool_definitions import (
        ToolDefinition,
        ToolDefinitionError,
        ToolFailure,
        ToolOutput,
        define_tool,
    )
    from .tool_run import ToolRun
    from .tools import ToolRegistry

#: Public name -> the module that defines it. Importing ``dsh_policy.core`` stays cheap: a hook
#: process that only needs ``core.frozen`` must not pay for the loop, the pipeline and jsonschema.
_EXPORTS: dict[str, str] = {
    "AbortController": ".signals",
    "AbortSignal": ".signals",
    "Accept": ".decisions",
    "Agent": ".agent",
    "AgentErrorEvent": ".agent",
    "AgentStatusEvent": ".agent",
    "Allow": ".decisions",
    "Ask": ".decisions",
    "AssistantMessage": ".model",
    "Block": ".decisions",
    "ChatCompletionsModel": ".chat_completions",
    "Context": ".plugin",
    "Deny": ".decisions",
    "Enter": ".decisions",
    "EventBus": ".events",
    "Fact": ".session",
    "Fiber": ".plugin",
    "FrozenDict": ".frozen",
    "Harness": ".harness",
    "JsonlStore": ".session",
    "MAX_PARALLEL_TOOLS": ".agent",
    "MemoryStore": ".session",
    "Message": ".messages",
    "MessageSource": ".messages",
    "Model": ".model",
    "ModelProtocolError": ".chat_completions",
    "ModelReply": ".model",
    "ModelRequest": ".model",
    "ModelToolCall": ".model",
    "PluginError": ".plugin",
    "PostToolDecision": ".decisions",
    "PreStepDecision": ".decisions",
    "PreStepEvent": ".agent",
    "PreToolDecision": ".decisions",
    "Reject": ".decisions",
    "ScriptedModel": ".model",
    "Session": ".session",
    "SessionStartEvent": ".agent",
    "SessionStore": ".session",
    "TextContent": ".execution",
    "ToolDefinition": ".tool_definitions",
    "ToolDefinitionError": ".tool_definitions",
    "ToolError": ".execution",
    "ToolExecution": ".execution",
    "ToolFailure": ".tool_definitions",
    "ToolOutput": ".tool_definitions",
    "ToolRegistry": ".tools",
    "ToolResult": ".execution",
    "ToolResultMessage": ".model",
    "ToolRun": ".tool_run",
    "ToolSpec": ".model",
    "TurnEnd": ".agent",
    "TurnStoppingEvent": ".agent",
    "accept": ".decisions",
    "allow": ".decisions",
    "ask": ".decisions",
    "block": ".decisions",
    "define_tool": ".tool_definitions",
    "deny": ".decisions",
    "enter": ".decisions",
    "freeze_json": ".frozen",
    "reject": ".decisions",
    "reply": ".model",
    "thaw": ".frozen",
    "to_chat_messages": ".model",
    "to_chat_tools": ".model",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "MAX_PARALLEL_TOOLS",
    "AbortController",
    "AbortSignal",
    "Accept",
    "Agent",
    "AgentErrorEvent",
    "AgentStatusEvent",
    "Allow",
    "Ask",
    "AssistantMessage",
    "Block",
    "ChatCompletionsModel",
    "Context",
    "Deny",
    "Enter",
    "EventBus",
    "Fact",
    "Fiber",
    "FrozenDict",
    "Harness",
    "JsonlStore",
    "MemoryStore",
    "Message",
    "MessageSource",
    "Model",
    "ModelProtocolError",
    "ModelReply",
    "ModelRequest",
    "ModelToolCall",
    "PluginError",
    "PostToolDecision",
    "PreStepDecision",
    "PreStepEvent",
    "PreToolDecision",
    "Reject",
    "ScriptedModel",
    "Session",
    "SessionStartEvent",
    "SessionStore",
    "TextContent",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolExecution",
    "ToolFailure",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolResultMessage",
    "ToolRun",
    "ToolSpec",
    "TurnEnd",
    "TurnStoppingEvent",
    "accept",
    "allow",
    "ask",
    "block",
    "define_tool",
    "deny",
    "enter",
    "freeze_json",
    "reject",
    "reply",
    "thaw",
    "to_chat_messages",
    "to_chat_tools",
]
