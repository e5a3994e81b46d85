"""PydanticAI's side of its adapter tests: agents over its own ``FunctionModel`` with the
capability, driven through deferred tools. Imported by a fixture, not at collection: PydanticAI
takes most of a second to import, and every worker collects every test module."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
from adapter_parity_kit import Call, Run
from dsh_policy.policy import DecisionAuditor
from dsh_policy.policy.adapters.pydantic_ai import FRAMEWORK, PolicyCapability
from pydantic_ai import Agent, DeferredToolRequests, RunContext, Tool
from pydantic_ai.exceptions import ModelRetry, UserError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

__all__ = [
    "FRAMEWORK",
    "DeferredToolRequests",
    "ModelRetry",
    "PolicyCapability",
    "UserError",
    "agent_with",
    "build",
    "drive",
    "fetching_agent",
    "shown",
    "tool_returns",
]

_ANY_ARGS = {"type": "object", "properties": {}, "additionalProperties": True}


def script(calls: list[Call]) -> FunctionModel:
    """PydanticAI's own ``FunctionModel``, making the calls one per model turn, then answering."""
    turns: Iterator[ModelResponse] = iter(
        [
            *(
                ModelResponse(parts=[ToolCallPart(c.tool, dict(c.args), tool_call_id=c.call_id)])
                for c in calls
            ),
            ModelResponse(parts=[TextPart("done")]),
        ]
    )

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return next(turns)

    return FunctionModel(respond)


def build(
    policy: Any,
    calls: list[Call],
    run: Run,
    auditor: DecisionAuditor | None,
    *,
    deferred: bool = True,
    sync_tools: bool = False,
) -> tuple[Agent[None, Any], PolicyCapability]:
    outputs = {call.call_id: call.output for call in calls}
    capability = PolicyCapability(policy, auditor=auditor, observers=[run])

    def tool(name: str) -> Tool[None]:
        def body(ctx: RunContext[None], **kwargs: Any) -> str:
            assert ctx.tool_call_id is not None
            run.ran.append(ctx.tool_call_id)
            return outputs[ctx.tool_call_id]

        async def abody(ctx: RunContext[None], **kwargs: Any) -> str:
            return body(ctx, **kwargs)

        return Tool.from_schema(
            body if sync_tools else abody, name=name, description=name, json_schema=_ANY_ARGS, takes_ctx=True
        )

    agent: Agent[None, Any] = Agent(
        script(calls),
        tools=[tool(name) for name in sorted({c.tool for c in calls})],
        output_type=[str, DeferredToolRequests] if deferred else str,
        capabilities=[capability],
    )
    return agent, capability


def shown(messages: list[ModelMessage]) -> dict[str, str]:
    return {
        part.tool_call_id: str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }


async def drive(
    agent: Agent[None, Any], capability: PolicyCapability, calls: list[Call], *, sync: bool
) -> list[ModelMessage]:
    approve = {call.call_id: call.approve for call in calls}
    # One model request per scripted call and one to finish: the shared calls grow with the
    # shipped cases, past pydantic-ai's default limit of 50 requests a run.
    limits = UsageLimits(request_limit=len(calls) + 1)

    async def once(**kwargs: Any) -> Any:
        kwargs["usage_limits"] = limits
        if sync:
            return await anyio.to_thread.run_sync(lambda: agent.run_sync(**kwargs))
        return await agent.run(**kwargs)

    result = await once(user_prompt="go")
    while isinstance(result.output, DeferredToolRequests):
        requests = result.output
        replies = {p.tool_call_id: approve[p.tool_call_id] for p in requests.approvals}
        results = capability.results(requests, replies)
        result = await once(message_history=result.all_messages(), deferred_tool_results=results)
    messages: list[ModelMessage] = result.all_messages()
    return messages


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The tool results the model read, in order."""
    return [
        p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]


def agent_with(
    calls: list[Call], tools: list[Callable[..., Any]], capability: PolicyCapability
) -> Agent[None, str]:
    """An agent whose scripted model makes ``calls`` with plain-function ``tools``."""
    return Agent(script(calls), tools=tools, capabilities=[capability])


def fetching_agent(capability: PolicyCapability, url: str, ran: list[dict[str, Any]]) -> Agent[None, str]:
    """An agent with no deferred-tools output whose model fetches ``url`` once with a
    ``web_fetch`` tool that records its arguments in ``ran``."""
    turns = iter(
        [
            ModelResponse(parts=[ToolCallPart("web_fetch", {"url": url}, tool_call_id="c1")]),
            ModelResponse(parts=[TextPart("done")]),
        ]
    )

    async def fetch(**kwargs: Any) -> str:
        ran.append(kwargs)
        return "page text"

    return Agent(
        FunctionModel(lambda messages, info: next(turns)),
        tools=[Tool.from_schema(fetch, name="web_fetch", description="fetch", json_schema=_ANY_ARGS)],
        output_type=str,
        capabilities=[capability],
    )
