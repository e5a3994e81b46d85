"""What a framework adapter costs per tool call, over the framework's own per-call cost, in one run.

Run: ``python benchmarks/bench_frameworks.py [--calls N] [--rounds N] [--only NAME] [--cli]``. For
every framework whose extra is installed (or each ``--only`` one), an agent driven by the
framework's own scripted/fake model makes ``--calls`` allowed tool calls (one per model turn, a
canned tool body) in five variants, side by side round by round:

- ``alone``: the framework with no hook at all;
- ``noop``: the framework's own hook mechanism with a do-nothing hook of the kind the adapter uses
  (a middleware, capability, guardrails + ``needs_approval``, plugin, hook callbacks): what having
  any hook costs in that framework, which is not ours to cut;
- ``known``: that do-nothing hook burning 50 us of thread CPU per call before the tool: a cost of
  known size, so every row shows how closely whole-session differences resolve a cost of the
  target's size at that moment (on a shared machine: not always; then the glue timed inside the
  hooks is the figure to trust);
- ``glue``: the adapter on a pack with no rules and no audit log: our translation (plus the empty
  policy's own stages, which the in-process gateway pays too);
- ``gated``: the adapter with the shipped packs, every call recorded (``fsync=off``): what a
  deployment pays (the policy's own cost is ``bench_gateway.py``'s subject).

Times are CPU time of the benchmark process (every thread), and what is reported is the steady
state: a variant's cost per tool call is a session of ``--calls`` calls minus a session of one
call, over ``--calls - 1``, so a session's own costs (starting the run, the first call's caches,
thread pools, ending it) cancel out; they are reported apart as ``setup`` (the one-call session
minus one steady call), and building the agent as ``build``. Every round takes the variants
side by side, in an order rotated round by round, each session after a ``gc.collect()`` (a
session does not pay for the garbage of the one before). Ratios are taken within a round, against
that round's ``alone``, and reported as medians over the rounds: on a shared machine, a
difference of two medians of whole sessions (what this measured before) swung by +-0.1 between
two runs at the same load, because the session setup (1-5 ms, 10-15% of a 20-call session) and
the neighbours' noise were divided into the per-call figure. The glue is also timed inside the
adapter's hooks (thread CPU time, the framework's handler excluded), which a busy machine
disturbs far less. Target: the glue adds at most 10% of the framework's own per-call cost or
50 us, whichever is larger.

The Claude Agent SDK runs the Claude Code CLI in a subprocess; its row drives the real SDK with
Claude Code's side of the protocol scripted in process (``tools/claude_code_double.py``), so it
measures the SDK's own per-call work in the application's process and the hook callbacks' cost
over it. ``--cli`` adds the real bundled CLI, offline (``tools/fake_anthropic.py``, harmless
commands in a temporary folder): wall and CPU time (this process and the CLI's) per tool call,
alone, with do-nothing hook callbacks and with ``PolicyHooks`` (shipped packs, audit log). Writes
``benchmarks/results/frameworks.json`` with the load average.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # claude_code_double, fake_anthropic
RESULTS = ROOT / "benchmarks" / "results" / "frameworks.json"
PACKS = [ROOT / "rules" / f"{name}.yaml" for name in ("baseline", "secrets", "injection")]
TARGET_RATIO = 0.10
TARGET_FLOOR_US = 50.0
VARIANTS = ("alone", "noop", "known", "glue", "gated")
#: Thread CPU the ``known`` variant's do-nothing hook burns per call: a cost of known size, so each
#: row shows how closely whole-session differences resolve a cost of the target's size right now.
KNOWN_US = 50.0


def _spin(microseconds: float) -> None:
    """Burn ``microseconds`` of this thread's CPU (the ``known`` variant's hook body)."""
    if microseconds <= 0:
        return
    end = time.thread_time() + microseconds / 1e6
    while time.thread_time() < end:
        pass

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


def _langgraph_noop(spin_us: float = 0.0) -> Any:
    from langchain.agents.middleware import AgentMiddleware

    class NoopMiddleware(AgentMiddleware):  # the hook PolicyMiddleware uses, doing nothing
        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            _spin(spin_us)
            return handler(request)

        async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
            _spin(spin_us)
            return await handler(request)

    return NoopMiddleware()


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


def _openai_agents_noop(spin_us: float = 0.0) -> Any:
    import dataclasses

    from agents import ToolGuardrailFunctionOutput
    from agents.tool_guardrails import ToolInputGuardrail, ToolOutputGuardrail

    class NoopGuardrails:  # what PolicyGuardrails.govern adds to a tool, each doing nothing
        def __init__(self) -> None:
            allow = ToolGuardrailFunctionOutput.allow
            def before(data: Any) -> Any:
                _spin(spin_us)
                return allow()

            self.before: ToolInputGuardrail[Any] = ToolInputGuardrail(guardrail_function=before, name="noop")
            self.after: ToolOutputGuardrail[Any] = ToolOutputGuardrail(guardrail_function=lambda d: allow(),
                                                                       name="noop")

        def govern(self, tool: Any) -> Any:
            async def needs_approval(context: Any, params: dict[str, Any], call_id: str) -> bool:
                return False

            guarded = {"tool_input_guardrails": [self.before], "tool_output_guardrails": [self.after]}
            return dataclasses.replace(tool, needs_approval=needs_approval, **guarded)

    return NoopGuardrails()


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


def _pydantic_ai_noop(spin_us: float = 0.0) -> Any:
    from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering

    class NoopCapability(AbstractCapability[Any]):  # the hook PolicyCapability uses, doing nothing
        def get_ordering(self) -> CapabilityOrdering:
            return CapabilityOrdering(position="innermost")

        async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any,
                                    handler: Any) -> Any:
            _spin(spin_us)
            return await handler(args)

    return NoopCapability()


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


def _adk_noop(spin_us: float = 0.0) -> Any:
    from google.adk.plugins.base_plugin import BasePlugin

    class NoopPlugin(BasePlugin):  # the callbacks PolicyPlugin uses, doing nothing
        async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> Any:
            _spin(spin_us)
            return None

        async def after_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any,
                                      result: Any) -> Any:
            return None

    return NoopPlugin(name="noop")


def _sdk_session(calls: int, hooks: Any) -> Callable[[], None]:
    """The real SDK (``query``, its control protocol, hook dispatch, message parsing) with Claude
    Code's side scripted in process (``tools/claude_code_double.py``, also streaming the messages
    the CLI streams per call): what the SDK costs per tool call in the application's process. The
    CLI itself runs in its own process; ``--cli`` measures it."""
    import anyio
    from claude_agent_sdk import ClaudeAgentOptions, query
    from claude_code_double import ScriptedClaudeCode, ToolUse

    response = {"stdout": "4 passed in 0.12s", "stderr": "", "interrupted": False, "isImage": False}
    uses = [ToolUse(f"c{i}", "Bash", {"command": "pytest -q"}, response) for i in range(calls)]
    options = ClaudeAgentOptions(hooks=hooks.matchers() if hooks is not None else None)

    async def session() -> None:
        transport = ScriptedClaudeCode(uses, lambda use: None, tempfile.gettempdir(), transcript=True)
        async for _ in query(prompt="go", options=options, transport=transport):
            pass

    def run() -> None:
        anyio.run(session)

    return run


def _sdk_adapter(policy: Any, auditor: Any) -> Any:
    from dsh_policy.policy.hooks.in_process.agent_sdk import PolicyHooks

    return PolicyHooks(policy, auditor=auditor)


def _sdk_noop(spin_us: float = 0.0) -> Any:
    from claude_agent_sdk import HookMatcher

    class NoopHooks:  # the matchers PolicyHooks registers, each callback answering "no opinion"
        def matchers(self) -> dict[str, list[Any]]:
            async def callback(hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
                if hook_input.get("hook_event_name") == "PreToolUse":
                    _spin(spin_us)
                return {}

            return {event: [HookMatcher(matcher=None, hooks=[callback], timeout=60.0, on_failure="block")]
                    for event in ("PreToolUse", "PostToolUse", "UserPromptSubmit")}

    return NoopHooks()


class Framework(NamedTuple):
    """The module its extra installs, a session factory, the adapter and a do-nothing hook."""

    module: str
    extra: str
    session: Session
    adapter: Callable[[Any, Any], Any]
    noop: Callable[..., Any]


FRAMEWORKS: dict[str, Framework] = {
    "langgraph": Framework("langchain.agents", "langgraph", _langgraph_session, _langgraph_adapter,
                           _langgraph_noop),
    "openai-agents": Framework("agents.testing", "openai-agents", _openai_agents_session,
                               _openai_agents_adapter, _openai_agents_noop),
    "pydantic-ai": Framework("pydantic_ai.models.function", "pydantic-ai", _pydantic_ai_session,
                             _pydantic_ai_adapter, _pydantic_ai_noop),
    "adk": Framework("google.adk.runners", "adk", _adk_session, _adk_adapter, _adk_noop),
    "claude-agent-sdk": Framework("claude_agent_sdk", "claude-agent-sdk", _sdk_session, _sdk_adapter,
                                  _sdk_noop),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


class Meter:
    """CPU seconds spent inside the adapter's own hook code (the tool body and whatever the
    framework runs inside a wrapping hook excluded), on whichever thread the hook runs: our glue,
    measured where it runs rather than as a difference of two noisy session times."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds

    def plain(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(time.thread_time() - start)

        return timed

    def coroutine(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """An async hook that awaits nothing of the framework's (it answers at once)."""

        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.add(time.thread_time() - start)

        return timed

    def wrapping(self, fn: Callable[..., Any], *, handler: str, asynchronous: bool) -> Callable[..., Any]:
        """A hook that calls the framework's ``handler`` (keyword or second argument) inside."""

        def split(args: tuple[Any, ...], kwargs: dict[str, Any], inner: list[float]) -> tuple[Any, Any]:
            original = kwargs[handler] if handler in kwargs else args[1]

            def timed_handler(*a: Any, **k: Any) -> Any:
                start = time.thread_time()
                try:
                    return original(*a, **k)
                finally:
                    inner[0] += time.thread_time() - start

            async def timed_async_handler(*a: Any, **k: Any) -> Any:
                start = time.thread_time()
                try:
                    return await original(*a, **k)
                finally:
                    inner[0] += time.thread_time() - start

            wrapped = timed_async_handler if asynchronous else timed_handler
            if handler in kwargs:
                return args, {**kwargs, handler: wrapped}
            return (args[0], wrapped, *args[2:]), kwargs

        if asynchronous:
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                inner = [0.0]
                args, kwargs = split(args, kwargs, inner)
                start = time.thread_time()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    self.add(time.thread_time() - start - inner[0])

            return timed_async

        def timed_sync(*args: Any, **kwargs: Any) -> Any:
            inner = [0.0]
            args, kwargs = split(args, kwargs, inner)
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(time.thread_time() - start - inner[0])

        return timed_sync


def metered(name: str, adapter: Any, meter: Meter) -> Any:
    """``adapter`` with its hook entry points timed by ``meter`` (before the framework sees it)."""
    if name == "langgraph":
        adapter.wrap_tool_call = meter.wrapping(adapter.wrap_tool_call, handler="handler", asynchronous=False)
    elif name == "pydantic-ai":
        adapter.wrap_tool_execute = meter.wrapping(adapter.wrap_tool_execute, handler="handler",
                                                   asynchronous=True)
    elif name == "openai-agents":
        adapter._plan = meter.plain(adapter._plan)
        for guardrail in (adapter.input_guardrail, adapter.output_guardrail):
            guardrail.guardrail_function = meter.plain(guardrail.guardrail_function)
    elif name == "adk":
        adapter.before_tool_callback = meter.coroutine(adapter.before_tool_callback)
        adapter.after_tool_callback = meter.coroutine(adapter.after_tool_callback)
    elif name == "claude-agent-sdk":
        adapter.__call__ = meter.coroutine(adapter.__call__)
    return adapter


class Sample(NamedTuple):
    """One variant in one round, CPU seconds of this process: building the agent (and adapter),
    a session of one call, a session of ``calls`` calls."""

    build: float
    one: float
    many: float

    def per_call(self, calls: int) -> float:
        """The steady-state cost of one more tool call: start-up and first-call costs cancel."""
        return (self.many - self.one) / (calls - 1)

    def setup(self, calls: int) -> float:
        """What a session costs besides its calls (start, first-call caches, end), building excluded."""
        return self.one - self.per_call(calls)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    gc.collect()  # the garbage of the session before is not this one's to pay
    start = time.process_time()
    value = fn()
    return value, time.process_time() - start


def _sample(session: Session, calls: int, hook: Callable[[], Any]) -> Sample:
    """CPU time, not wall time: on a shared machine, wall time mostly measures the neighbours."""
    run_one, build = _timed(lambda: session(1, hook()))
    _, one = _timed(run_one)
    run_many = session(calls, hook())
    _, many = _timed(run_many)
    return Sample(build, one, many)


_EMPTY_PACK = """apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: empty, version: "1.0.0", description: "no rules: measures the glue"}
spec: {rules: []}
"""


def _us(seconds: float) -> float:
    return round(seconds * 1e6, 1)


def measure(name: str, calls: int, rounds: int) -> dict[str, Any]:
    """One framework's variants, side by side: every round takes each variant once (in an
    order rotated round by round, so no variant always follows the same one), each as a session
    of one call and one of ``calls`` calls. Costs are per round, ratios are taken within a round
    (against that round's ``alone``) and reported as medians over the rounds."""
    if calls < 2:
        raise ValueError("--calls must be at least 2: the per-call cost is a difference of two sessions")
    from dsh_policy.audit import AuditWriter
    from dsh_policy.policy import DecisionAuditor, LoadFailure, Policy

    framework = FRAMEWORKS[name]
    session, adapter = framework.session, framework.adapter
    policy = Policy.load(PACKS)
    assert not isinstance(policy, LoadFailure), str(policy)
    samples: dict[str, list[Sample]] = {variant: [] for variant in VARIANTS}
    direct: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        empty_path = Path(folder) / "empty.yaml"
        empty_path.write_text(_EMPTY_PACK)
        empty = Policy.load([empty_path])
        assert not isinstance(empty, LoadFailure), str(empty)
        writer = AuditWriter.open(Path(folder) / "bench.jsonl", fsync="off")
        auditor = DecisionAuditor(writer, policy)
        hooks: dict[str, Callable[[], Any]] = {
            "alone": lambda: None,
            "noop": framework.noop,
            "known": lambda: framework.noop(KNOWN_US),
            "glue": lambda: adapter(empty, None),
            "gated": lambda: adapter(policy, auditor),
        }
        for hook in hooks.values():  # warm every path (imports, compiled caches)
            session(2, hook())()
        for round_ in range(rounds):
            order = VARIANTS[round_ % len(VARIANTS):] + VARIANTS[: round_ % len(VARIANTS)]
            for variant in order:
                samples[variant].append(_sample(session, calls, hooks[variant]))
            meter = Meter()
            run = session(calls, metered(name, adapter(empty, None), meter))
            run()
            direct.append(meter.seconds / calls)
        writer.close()
    return _row(name, calls, rounds, samples, direct)


def _row(name: str, calls: int, rounds: int, samples: dict[str, list[Sample]],
         direct: list[float]) -> dict[str, Any]:
    def median(values: Any) -> float:
        return statistics.median(list(values))

    per_call = {v: [s.per_call(calls) for s in samples[v]] for v in VARIANTS}
    alone = per_call["alone"]

    def ratio(minus: str | None, variant: str) -> float:
        """Median over the rounds of (variant - minus) / alone, each round against itself."""
        base = [0.0] * rounds if minus is None else per_call[minus]
        return round(median((v - b) / a for v, b, a in zip(per_call[variant], base, alone, strict=True)), 3)

    base_us = median(alone) * 1e6
    budget_us = max(TARGET_RATIO * base_us, TARGET_FLOOR_US)
    glue_over_noop_us = median(g - n for g, n in zip(per_call["glue"], per_call["noop"], strict=True)) * 1e6
    own_us = median(direct) * 1e6
    row: dict[str, Any] = {
        "framework": name,
        "calls_per_session": calls,
        "rounds": rounds,
        "framework_alone_us_per_call": round(base_us, 1),
        "per_call_us": {v: _us(median(per_call[v])) for v in VARIANTS},
        "session_setup_us": {v: _us(median(s.setup(calls) for s in samples[v])) for v in VARIANTS},
        "build_us": {v: _us(median(s.build for s in samples[v])) for v in VARIANTS},
        "noop_hook_ratio": ratio("alone", "noop"),
        "glue_ratio": ratio("alone", "glue"),
        "glue_over_noop_us_per_call": round(glue_over_noop_us, 1),
        "known_us_per_call": KNOWN_US,
        "known_over_noop_us_per_call": round(
            median(k - n for k, n in zip(per_call["known"], per_call["noop"], strict=True)) * 1e6, 1),
        "glue_over_noop_ratio": ratio("noop", "glue"),
        "glue_own_us_per_call": round(own_us, 1),
        "glue_own_ratio": round(median(d / a for d, a in zip(direct, alone, strict=True)), 3),
        "gated_ratio": ratio("alone", "gated"),
        "gated_over_noop_ratio": ratio("noop", "gated"),
        "budget_us": round(budget_us, 1),
        "glue_over_noop_within_target": glue_over_noop_us <= budget_us,
        "glue_own_within_target": own_us <= budget_us,
    }
    return row


def _cli_session(calls: int, hooks: Any, folder: Path) -> tuple[float, float]:
    """One conversation of the real bundled Claude Code CLI (scripted model on 127.0.0.1) making
    ``calls`` harmless Bash calls in ``folder``: (wall seconds, CPU seconds of this process and of
    the CLI process, which exits and is reaped inside the session)."""
    import anyio
    from claude_agent_sdk import ClaudeAgentOptions, query
    from fake_anthropic import FakeModel

    home = folder / "home"
    home.mkdir(exist_ok=True)
    script: dict[str, Any] = {"bench": [("Bash", {"command": f"echo ok-{i}"}) for i in range(calls)]}
    with FakeModel(script) as model:
        options = ClaudeAgentOptions(
            cwd=str(folder), hooks=hooks.matchers() if hooks is not None else None, allowed_tools=["Bash"],
            setting_sources=[], max_turns=calls + 5,
            env={"HOME": str(home), "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "dummy",
                 "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})

        async def prompt() -> Any:
            yield {"type": "user", "message": {"role": "user", "content": "scenario=bench"}}

        async def session() -> None:
            async for _ in query(prompt=prompt(), options=options):
                pass

        wall, cpu = time.perf_counter(), _cpu_with_children()
        anyio.run(session)
        wall, cpu = time.perf_counter() - wall, _cpu_with_children() - cpu
        made = len(model.tool_results.get("bench", []))
    if made != calls:
        raise RuntimeError(f"the CLI made {made} of {calls} tool calls")
    return wall, cpu


def _cpu_with_children() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_cli(calls: int, rounds: int) -> dict[str, Any]:
    """The real CLI, alone, with do-nothing hook callbacks and with :class:`PolicyHooks` (shipped
    packs, audit log): per tool call,
    from a session of ``calls`` calls minus a session of one (the CLI's start-up cancels out)."""
    from dsh_policy.audit import AuditWriter
    from dsh_policy.policy import DecisionAuditor, LoadFailure, Policy
    from dsh_policy.policy.hooks.in_process.agent_sdk import PolicyHooks

    policy = Policy.load(PACKS)
    assert not isinstance(policy, LoadFailure), str(policy)
    samples: dict[str, list[tuple[float, float]]] = {"alone": [], "noop": [], "gated": []}
    with tempfile.TemporaryDirectory(prefix="bench-sdk-cli-") as folder:
        writer = AuditWriter.open(Path(folder) / "bench.jsonl", fsync="off")
        hooks = PolicyHooks(policy, auditor=DecisionAuditor(writer, policy))
        for _ in range(rounds):
            for variant, adapter in (("alone", None), ("noop", _sdk_noop()), ("gated", hooks)):
                many = _cli_session(calls, adapter, Path(folder))
                one = _cli_session(1, adapter, Path(folder))
                samples[variant].append(((many[0] - one[0]) / (calls - 1), (many[1] - one[1]) / (calls - 1)))
        writer.close()
    row: dict[str, Any] = {"framework": "claude-agent-sdk (real CLI)", "calls_per_session": calls,
                           "rounds": rounds}
    for variant in ("alone", "noop", "gated"):
        row[f"{variant}_wall_ms_per_call"] = round(statistics.median(w for w, _ in samples[variant]) * 1e3, 2)
        row[f"{variant}_cpu_ms_per_call"] = round(statistics.median(c for _, c in samples[variant]) * 1e3, 2)
    for variant in ("noop", "gated"):
        for kind in ("wall", "cpu"):
            base = row[f"alone_{kind}_ms_per_call"]
            added = row[f"{variant}_{kind}_ms_per_call"] - base
            row[f"{variant}_{kind}_ratio"] = round(added / base, 3) if base > 0 else None
    return row


def _line(row: dict[str, Any]) -> str:
    per_call, setup, build = row["per_call_us"], row["session_setup_us"], row["build_us"]
    verdict = "within" if row["glue_over_noop_within_target"] else "OVER"
    known = f"a known {row['known_us_per_call']:.0f} us measures {row['known_over_noop_us_per_call']:+.1f} us"
    return (
        f"{row['framework']:<16} per call (steady) alone {per_call['alone']:>7.1f} us | "
        f"noop {row['noop_hook_ratio']:+.3f} | glue {row['glue_ratio']:+.3f}, over noop "
        f"{row['glue_over_noop_ratio']:+.3f} ({row['glue_over_noop_us_per_call']:+.1f} us, {verdict} "
        f"{row['budget_us']:.0f} us; {known}) | glue inside the hooks {row['glue_own_ratio']:.3f} "
        f"({row['glue_own_us_per_call']:.1f} us) | gated {row['gated_ratio']:+.3f}\n"
        f"{'':<16} per session: setup alone/noop/glue/gated {setup['alone']:.0f}/{setup['noop']:.0f}/"
        f"{setup['glue']:.0f}/{setup['gated']:.0f} us, build {build['alone']:.0f}/{build['noop']:.0f}/"
        f"{build['glue']:.0f}/{build['gated']:.0f} us"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--only", action="append", choices=sorted(FRAMEWORKS),
                        help="measure only this framework (repeatable)")
    parser.add_argument("--cli", action="store_true",
                        help="also run the real bundled Claude Code CLI (claude-agent-sdk extra), offline")
    parser.add_argument("--cli-calls", type=int, default=10)
    parser.add_argument("--cli-rounds", type=int, default=5)
    options = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; CPU time of this process, median of "
          f"{options.rounds} rounds x {options.calls} calls; ratios are over the framework alone")
    rows = []
    for name, framework in FRAMEWORKS.items():
        if options.only and name not in options.only:
            continue
        if not _installed(framework.module):
            print(f"{name:<16} skipped: pip install -e '.[{framework.extra}]'")
            continue
        row = measure(name, options.calls, options.rounds)
        rows.append(row)
        print(_line(row))
    print("(ratios: median over rounds of the variant's steady per-call CPU minus alone's (or noop's), over "
          "alone's, same round; setup: a one-call session minus one steady call; build: making the agent)")
    if options.cli and _installed("claude_agent_sdk"):
        cli = measure_cli(options.cli_calls, options.cli_rounds)
        rows.append(cli)
        print(f"{'claude-agent-sdk':<16} real CLI per tool call: alone "
              f"{cli['alone_wall_ms_per_call']:.1f} ms wall, {cli['alone_cpu_ms_per_call']:.1f} ms CPU "
              f"(CLI + this process) | do-nothing hook callbacks {cli['noop_wall_ms_per_call']:.1f} ms wall "
              f"({cli['noop_wall_ratio']:+.3f}), {cli['noop_cpu_ms_per_call']:.1f} ms CPU "
              f"({cli['noop_cpu_ratio']:+.3f}) | with PolicyHooks (packs, audit) "
              f"{cli['gated_wall_ms_per_call']:.1f} ms wall ({cli['gated_wall_ratio']:+.3f}), "
              f"{cli['gated_cpu_ms_per_call']:.1f} ms CPU ({cli['gated_cpu_ratio']:+.3f})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {"python": sys.version.split()[0], "machine": platform.machine(),
              "load_average": [round(x, 2) for x in load], "results": rows}
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
