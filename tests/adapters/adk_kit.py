"""Google ADK's side of its adapter tests: a scripted model and tool on ADK's own seams, runners
with the plugin, driven through tool confirmations. Imported by a fixture, not at collection: ADK
takes over a second to import, and every worker collects every test module."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio
from adapter_parity_kit import Call, Run
from dsh_policy.policy import DecisionAuditor
from dsh_policy.policy.adapters.adk import FRAMEWORK, PolicyPlugin
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.genai import types
from pydantic import Field

__all__ = [
    "CONFIRMATION", "FRAMEWORK", "PolicyPlugin",
    "build", "drive", "message", "once", "runner_for", "script", "shown",
]

CONFIRMATION = "adk_request_confirmation"
#: A scripted model spends no tokens (ADK's telemetry warns about a response without usage).
NO_TOKENS = types.GenerateContentResponseUsageMetadata(prompt_token_count=0, candidates_token_count=0,
                                                       total_token_count=0)


class ScriptedLlm(BaseLlm):
    """A model that makes the scripted calls one per turn, then answers ``done`` (ADK's own
    ``BaseLlm`` seam: no network, no key)."""

    script: list[types.Content] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        done = types.Content(role="model", parts=[types.Part(text="done")])
        turn = self.script.pop(0) if self.script else done
        yield LlmResponse(content=turn, usage_metadata=NO_TOKENS)


def script(calls: list[Call]) -> ScriptedLlm:
    model = ScriptedLlm(model="scripted")
    model.script = [
        types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
            id=call.call_id, name=call.tool, args=dict(call.args)))])
        for call in calls
    ]
    return model


class ScriptedTool(BaseTool):
    """A tool taking any arguments (the shared calls use many shapes) that returns each call's
    scripted output: ADK's own ``BaseTool`` seam, run by ADK like any tool."""

    def __init__(self, name: str, outputs: dict[str, str], run: Run) -> None:
        super().__init__(name=name, description=name)
        self.outputs, self.run = outputs, run

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema={"type": "object"})

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        call_id = str(tool_context.function_call_id)
        self.run.ran.append(call_id)
        return self.outputs[call_id]


def build(policy: Any, calls: list[Call], run: Run,
          auditor: DecisionAuditor | None) -> tuple[InMemoryRunner, PolicyPlugin]:
    outputs = {call.call_id: call.output for call in calls}
    plugin = PolicyPlugin(policy, auditor=auditor, observers=[run])
    agent = LlmAgent(name="agent", model=script(calls),
                     tools=[ScriptedTool(name, outputs, run) for name in sorted({c.tool for c in calls})])
    return InMemoryRunner(app=App(name="governed", root_agent=agent, plugins=[plugin])), plugin


def message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def confirmation(call_id: str, confirmed: bool) -> types.Content:
    return types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        id=call_id, name=CONFIRMATION, response={"confirmed": confirmed}))])


async def drive(runner: InMemoryRunner, calls: list[Call], *, sync: bool) -> list[Event]:
    """One run, then one resume per confirmation ADK asks for, answered as each call's
    ``approve`` says; returns every event."""
    approve = {call.call_id: call.approve for call in calls}
    session = await runner.session_service.create_session(app_name="governed", user_id="u")
    events: list[Event] = []
    prompt = message("go")
    while True:
        batch = await once(runner, session.id, prompt, sync=sync)
        events.extend(batch)
        asks = [fc for event in batch for fc in event.get_function_calls() if fc.name == CONFIRMATION]
        if not asks:
            return events
        (ask, *_) = asks
        original = (ask.args or {})["originalFunctionCall"]["id"]
        prompt = confirmation(str(ask.id), approve[original])


async def once(runner: InMemoryRunner, session_id: str, prompt: types.Content, *,
               sync: bool) -> list[Event]:
    if sync:
        return await anyio.to_thread.run_sync(
            lambda: list(runner.run(user_id="u", session_id=session_id, new_message=prompt)))
    events = runner.run_async(user_id="u", session_id=session_id, new_message=prompt)
    return [event async for event in events]


def shown(events: list[Event]) -> dict[str, str]:
    """What the model read of each call: the last function response ADK recorded for it (a paused
    call's placeholder is replaced by the resumed call's answer)."""
    texts: dict[str, str] = {}
    for event in events:
        for response in event.get_function_responses():
            if response.name == CONFIRMATION or not response.id:
                continue
            body = dict(response.response or {})
            value = body.get("result", body.get("error"))
            texts[response.id] = value if isinstance(value, str) else str(value)
    return texts


def runner_for(plugin: PolicyPlugin, calls: list[Call], tools: list[Callable[..., Any]]) -> InMemoryRunner:
    """A runner whose scripted model makes ``calls`` with plain-function ``tools``, under ``plugin``."""
    agent = LlmAgent(name="agent", model=script(calls), tools=tools)
    return InMemoryRunner(app=App(name="governed", root_agent=agent, plugins=[plugin]))
