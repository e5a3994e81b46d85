"""LangChain v1 / LangGraph's side of its adapter tests: an agent over LangChain's own fake chat
model with the middleware, driven through interrupts. Imported by a fixture, not at collection:
LangChain and LangGraph take about a second to import, and every worker collects every module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adapter_parity_kit import Call, Run, load_packs
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy import DecisionAuditor
from dsh_policy.policy.adapters.langgraph import FRAMEWORK, PolicyMiddleware
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

__all__ = ["FRAMEWORK", "build_agent", "drive_async", "drive_sync", "shown", "tool_messages"]

_ANY_ARGS = {"type": "object", "properties": {}, "additionalProperties": True}


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's own fake chat model, made to accept tools (it ignores them: the script decides)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


class Script:
    """The model's messages, one tool call per turn, and the id of the call being made."""

    def __init__(self, calls: list[Call]) -> None:
        self.calls = calls
        self.current: Call | None = None

    def messages(self) -> Iterator[AIMessage]:
        for call in self.calls:
            self.current = call
            tool_call = {"name": call.tool, "args": dict(call.args), "id": call.call_id}
            yield AIMessage(content="", tool_calls=[tool_call])
        yield AIMessage(content="done")


def build_agent(
    policy: Any,
    calls: list[Call],
    run: Run,
    log: Path | None,
    *,
    checkpointer: bool = True,
    auditor: DecisionAuditor | None = None,
) -> tuple[Any, Script, AuditWriter | None]:
    script = Script(calls)
    writer = AuditWriter.open(log, fsync="off") if log is not None else None
    if auditor is None and writer is not None:
        auditor = DecisionAuditor(writer, load_packs() if policy is None else policy)

    def tool(name: str) -> StructuredTool:
        def body(**kwargs: Any) -> str:
            assert script.current is not None and script.current.tool == name
            run.ran.append(script.current.call_id)
            return script.current.output

        async def abody(**kwargs: Any) -> str:
            return body(**kwargs)

        return StructuredTool(name=name, description=name, args_schema=_ANY_ARGS, func=body, coroutine=abody)

    agent = create_agent(
        ScriptedChatModel(messages=script.messages()),
        tools=[tool(name) for name in sorted({call.tool for call in calls})],
        middleware=[PolicyMiddleware(policy, auditor=auditor, observers=[run])],
        checkpointer=InMemorySaver() if checkpointer else None,
    )
    return agent, script, writer


def _resume(script: Script) -> Command:
    assert script.current is not None
    kind = "approve" if script.current.approve else "reject"
    return Command(resume={"decisions": [{"type": kind}]})


def drive_sync(agent: Any, script: Script) -> dict[str, Any]:
    config = {"configurable": {"thread_id": "parity"}}
    state = agent.invoke({"messages": [{"role": "user", "content": "go"}]}, config)
    while state.get("__interrupt__"):
        state = agent.invoke(_resume(script), config)
    return state


async def drive_async(agent: Any, script: Script) -> dict[str, Any]:
    config = {"configurable": {"thread_id": "parity"}}
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]}, config)
    while state.get("__interrupt__"):
        state = await agent.ainvoke(_resume(script), config)
    return state


def shown(state: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in state["messages"] if isinstance(m, ToolMessage)}


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    """The tool results the model read, in order."""
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]
