"""What a framework adapter costs per tool call, over the framework's own per-call cost, in one run.

Run: ``python benchmarks/bench_frameworks.py [--calls N] [--rounds N] [--only NAME]``. For every
framework whose extra is installed (or each ``--only`` one), an agent driven by the framework's own
scripted/fake model makes ``--calls`` allowed tool calls (one per model turn, a canned tool body),
once without the adapter and once with it twice: ``gated`` (the shipped packs deciding, every call
recorded in an audit log with ``fsync=off``: what a deployment pays) and ``glue`` (a pack with no
rules and no audit log: the adapter's own translation, without the policy's work, which the
in-process gateway pays too). Times are CPU time of the benchmark process, medians over rounds that
alternate the variants. Per call: the framework alone, each variant's added cost, and its ratio to
the framework's. Target: the glue adds at most 10% of the framework's own per-call cost or 50 us,
whichever is larger (the policy's own cost is ``bench_gateway.py``'s subject). Writes
``benchmarks/results/frameworks.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "frameworks.json"
PACKS = [ROOT / "rules" / f"{name}.yaml" for name in ("baseline", "secrets", "injection")]
TARGET_RATIO = 0.10
TARGET_FLOOR_US = 50.0

#: A session factory: (calls, adapter or None) -> a function running the whole session once.
Session = Callable[[int, Any], Callable[[], None]]


def _langgraph_session(calls: int, middleware: Any) -> Callable[[], None]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    class ScriptedChatModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @tool
    def shell(command: str) -> str:
        """A canned shell (nothing is executed)."""
        return "4 passed in 0.12s"

    script = [AIMessage(content="", tool_calls=[{"name": "shell", "args": {"command": "pytest -q"},
                                                 "id": f"c{i}"}]) for i in range(calls)]
    script.append(AIMessage(content="done"))
    agent = create_agent(ScriptedChatModel(messages=iter(script)), tools=[shell],
                         middleware=[middleware] if middleware is not None else [])

    def run() -> None:
        agent.invoke({"messages": [{"role": "user", "content": "go"}]})

    return run


def _langgraph_adapter(policy: Any, auditor: Any) -> Any:
    from dsh_policy.policy.adapters.langgraph import PolicyMiddleware

    return PolicyMiddleware(policy, auditor=auditor)


def _openai_agents_session(calls: int, guardrails: Any) -> Callable[[], None]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    set_tracing_disabled(True)

    @function_tool
    def shell(command: str) -> str:
        """A canned shell (nothing is executed)."""
        return "4 passed in 0.12s"

    steps: list[Any] = [[function_call("shell", {"command": "pytest -q"}, call_id=f"c{i}")]
                        for i in range(calls)]
    steps.append([assistant_message("done")])
    tools = [guardrails.govern(shell)] if guardrails is not None else [shell]
    agent = Agent(name="bench", model=ScriptedModel(steps), tools=tools)

    def run() -> None:
        Runner.run_sync(agent, "go", max_turns=calls + 5)

    return run


def _openai_agents_adapter(policy: Any, auditor: Any) -> Any:
    from dsh_policy.policy.adapters.openai_agents import PolicyGuardrails

    return PolicyGuardrails(policy, auditor=auditor)


def _pydantic_ai_session(calls: int, capability: Any) -> Callable[[], None]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    script = [ModelResponse(parts=[ToolCallPart("shell", {"command": "pytest -q"}, tool_call_id=f"c{i}")])
              for i in range(calls)]
    turns = iter([*script, ModelResponse(parts=[TextPart("done")])])

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return next(turns)

    def shell(command: str) -> str:
        """A canned shell (nothing is executed)."""
        return "4 passed in 0.12s"

    agent = Agent(FunctionModel(respond), tools=[shell],
                  capabilities=[capability] if capability is not None else [])

    def run() -> None:
        agent.run_sync("go")

    return run


def _pydantic_ai_adapter(policy: Any, auditor: Any) -> Any:
    from dsh_policy.policy.adapters.pydantic_ai import PolicyCapability

    return PolicyCapability(policy, auditor=auditor)


def _adk_session(calls: int, plugin: Any) -> Callable[[], None]:
    import asyncio
    from collections.abc import AsyncGenerator

    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    no_tokens = types.GenerateContentResponseUsageMetadata(prompt_token_count=0, candidates_token_count=0,
                                                           total_token_count=0)
    script = [types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
        id=f"c{i}", name="shell", args={"command": "pytest -q"}))]) for i in range(calls)]
    script.append(types.Content(role="model", parts=[types.Part(text="done")]))

    class ScriptedModel(BaseLlm):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            yield LlmResponse(content=script.pop(0), usage_metadata=no_tokens)

    def shell(command: str) -> str:
        """A canned shell (nothing is executed)."""
        return "4 passed in 0.12s"

    agent = LlmAgent(name="bench", model=ScriptedModel(model="scripted"), tools=[shell])
    runner = InMemoryRunner(app=App(name="bench", root_agent=agent,
                                    plugins=[plugin] if plugin is not None else []))

    async def session() -> None:
        created = await runner.session_service.create_session(app_name="bench", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        async for _ in runner.run_async(user_id="u", session_id=created.id, new_message=message):
            pass

    def run() -> None:
        asyncio.run(session())

    return run


def _adk_adapter(policy: Any, auditor: Any) -> Any:
    from dsh_policy.policy.adapters.adk import PolicyPlugin

    return PolicyPlugin(policy, auditor=auditor)


#: framework -> (module its extra installs, session factory, adapter factory)
FRAMEWORKS: dict[str, tuple[str, Session, Callable[[Any, Any], Any]]] = {
    "langgraph": ("langchain.agents", _langgraph_session, _langgraph_adapter),
    "openai-agents": ("agents.testing", _openai_agents_session, _openai_agents_adapter),
    "pydantic-ai": ("pydantic_ai.models.function", _pydantic_ai_session, _pydantic_ai_adapter),
    "adk": ("google.adk.runners", _adk_session, _adk_adapter),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _time_session(make: Callable[[], Callable[[], None]]) -> float:
    """CPU seconds of this process for one session (building the agent excluded): on a shared
    machine, wall time mostly measures the neighbours."""
    run = make()
    start = time.process_time()
    run()
    return time.process_time() - start


_EMPTY_PACK = """apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: empty, version: "1.0.0", description: "no rules: measures the glue"}
spec: {rules: []}
"""


def measure(name: str, calls: int, rounds: int) -> dict[str, Any]:
    from dsh_policy.audit import AuditWriter
    from dsh_policy.policy import DecisionAuditor, LoadFailure, Policy

    _, session, adapter = FRAMEWORKS[name]
    policy = Policy.load(PACKS)
    assert not isinstance(policy, LoadFailure), str(policy)
    samples: dict[str, list[float]] = {"alone": [], "glue": [], "gated": []}
    with tempfile.TemporaryDirectory() as folder:
        empty_path = Path(folder) / "empty.yaml"
        empty_path.write_text(_EMPTY_PACK)
        empty = Policy.load([empty_path])
        assert not isinstance(empty, LoadFailure), str(empty)
        writer = AuditWriter.open(Path(folder) / "bench.jsonl", fsync="off")
        auditor = DecisionAuditor(writer, policy)
        variants: dict[str, Callable[[], Callable[[], None]]] = {
            "alone": lambda: session(calls, None),
            "glue": lambda: session(calls, adapter(empty, None)),
            "gated": lambda: session(calls, adapter(policy, auditor)),
        }
        for make in variants.values():  # warm every path (imports, compiled caches)
            _time_session(make)
        for _ in range(rounds):
            for variant, make in variants.items():
                samples[variant].append(_time_session(make) / calls)
        writer.close()
    base_us, glue_us, gated_us = (statistics.median(samples[v]) * 1e6 for v in ("alone", "glue", "gated"))
    budget_us = max(TARGET_RATIO * base_us, TARGET_FLOOR_US)
    return {
        "framework": name,
        "calls_per_session": calls,
        "rounds": rounds,
        "framework_alone_us_per_call": round(base_us, 1),
        "glue_added_us_per_call": round(glue_us - base_us, 1),
        "glue_ratio": round((glue_us - base_us) / base_us, 3),
        "gated_added_us_per_call": round(gated_us - base_us, 1),
        "gated_ratio": round((gated_us - base_us) / base_us, 3),
        "budget_us": round(budget_us, 1),
        "glue_within_target": glue_us - base_us <= budget_us,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", action="append", choices=sorted(FRAMEWORKS),
                        help="measure only this framework (repeatable)")
    options = parser.parse_args(argv)
    rows = []
    for name, (module, _, _) in FRAMEWORKS.items():
        if options.only and name not in options.only:
            continue
        if not _installed(module):
            print(f"{name:<12} skipped: pip install -e '.[{name}]'")
            continue
        row = measure(name, options.calls, options.rounds)
        rows.append(row)
        print(f"{name:<12} framework {row['framework_alone_us_per_call']:>9.1f} us/call   "
              f"glue +{row['glue_added_us_per_call']:>8.1f} us (ratio {row['glue_ratio']:.3f}, "
              f"{'within' if row['glue_within_target'] else 'OVER'} {row['budget_us']:.0f} us)   "
              f"gated +{row['gated_added_us_per_call']:>8.1f} us (ratio {row['gated_ratio']:.3f})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"python": sys.version.split()[0], "machine": platform.machine(),
                                   "results": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
