"""The OpenAI Agents SDK side of its adapter tests: agents over scripted models, driven through
interruptions. Imported by a fixture, not at collection: the SDK takes seconds to import, and every
worker collects every test module."""

from __future__ import annotations

from typing import Any

import anyio
from adapter_parity_kit import Call, Run
from agents import Agent, FunctionTool, Runner, set_tracing_disabled
from agents.items import ToolCallOutputItem
from agents.testing import ScriptedModel, assistant_message, function_call
from dsh_policy.policy import DecisionAuditor
from dsh_policy.policy.adapters.openai_agents import FRAMEWORK, PolicyGuardrails

__all__ = ["FRAMEWORK", "PolicyGuardrails", "build", "drive", "fetching_agent", "run_sync"]

set_tracing_disabled(True)  # offline: no trace export
_TURNS = 1000
_ANY_ARGS = {"type": "object", "properties": {}, "additionalProperties": True}


def build(policy: Any, calls: list[Call], run: Run,
          auditor: DecisionAuditor | None) -> tuple[Agent, PolicyGuardrails]:
    outputs = {call.call_id: call.output for call in calls}
    guardrails = PolicyGuardrails(policy, auditor=auditor, observers=[run])

    def tool(name: str) -> FunctionTool:
        async def invoke(context: Any, arguments: str) -> str:
            run.ran.append(context.tool_call_id)
            return outputs[context.tool_call_id]

        return FunctionTool(name=name, description=name, params_json_schema=_ANY_ARGS,
                            on_invoke_tool=invoke, strict_json_schema=False)

    steps: list[Any] = [[function_call(c.tool, dict(c.args), call_id=c.call_id)] for c in calls]
    steps.append([assistant_message("done")])
    tools = guardrails.govern_all([tool(name) for name in sorted({c.tool for c in calls})])
    return Agent(name="parity", model=ScriptedModel(steps), tools=tools), guardrails


def _collect(result: Any, shown: dict[str, str]) -> None:
    for item in result.new_items:
        if isinstance(item, ToolCallOutputItem):
            raw = item.raw_item
            call_id = raw["call_id"] if isinstance(raw, dict) else raw.call_id
            shown[call_id] = str(item.output)


async def drive(agent: Agent, guardrails: PolicyGuardrails, calls: list[Call], *,
                sync: bool) -> dict[str, str]:
    approve = {call.call_id: call.approve for call in calls}
    shown: dict[str, str] = {}

    async def once(start: Any) -> Any:
        if sync:
            return await anyio.to_thread.run_sync(lambda: Runner.run_sync(agent, start, max_turns=_TURNS))
        return await Runner.run(agent, start, max_turns=_TURNS)

    result = await once("go")
    _collect(result, shown)
    while result.interruptions:
        state = result.to_state()
        for item in result.interruptions:
            if approve[item.raw_item.call_id]:
                state.approve(item)
            else:
                guardrails.reject(state, item)
        result = await once(state)
        _collect(result, shown)
    return shown


def fetching_agent(guardrails: PolicyGuardrails, url: str, ran: list[str]) -> Agent:
    """An agent whose scripted model fetches ``url`` once with a ``web_fetch`` tool that records
    its arguments in ``ran``."""

    async def invoke(context: Any, arguments: str) -> str:
        ran.append(arguments)
        return "page text"

    tool = FunctionTool(name="web_fetch", description="fetch", params_json_schema=_ANY_ARGS,
                        on_invoke_tool=invoke, strict_json_schema=False)
    model = ScriptedModel([[function_call("web_fetch", {"url": url}, call_id="c1")],
                           [assistant_message("done")]])
    return Agent(name="headless", model=model, tools=guardrails.govern_all([tool]))


def run_sync(agent: Agent, prompt: str, max_turns: int) -> Any:
    return Runner.run_sync(agent, prompt, max_turns=max_turns)
