"""Overhead of the tool pipeline and of one agent-loop step, against calling the tool directly.

Run: ``python benchmarks/bench_pipeline.py [--calls N] [--steps N]``. Prints a table and writes
``benchmarks/results/pipeline.json``. Every figure is measured in the same run, best of several
trials, so a noisy shared machine moves all sides together; the ratios are what to compare.

- ``direct``: the tool function called as a plain function (and awaited as a coroutine);
- ``pipeline``: ``ToolRegistry.execute`` with no listeners: identity sealing, pre-execute default,
  guards, dispatch, argument and output validation, rendering, post-execute default, finalize,
  materialization and the ``tools/result`` notification;
- ``pipeline + 4 listeners``: one pass-through listener on each waterfall seam and a result
  observer, the shape a gateway installs;
- ``step``: one loop step whose model reply (instant, scripted) holds one tool call, including the
  fact log (in memory), inbox claim, pre-step and the model-request bookkeeping.

``--against DIR`` compares this checkout with another one (``DIR`` is its repository root, e.g. a
``git worktree`` or ``git archive`` of the commit before a change): both ``core`` packages are
loaded into this process and measured in alternating rounds, on thread CPU time so that other
processes on a shared machine do not count, each as a ratio to a direct call measured in the same
round. It prints the medians and writes them under ``against`` in the JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from dsh_policy.core import (
    Harness,
    Message,
    ModelReply,
    ModelRequest,
    ModelToolCall,
    ToolOutput,
    define_tool,
)

RESULTS = Path(__file__).resolve().parent / "results" / "pipeline.json"
TRIALS = 5

PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
}
OUTPUT = ToolOutput(schema={"type": "object", "properties": {"lines": {"type": "integer"}}})
ARGUMENTS = {"path": "src/app.py", "limit": 20}


def read_file(args: Any, run: Any) -> dict[str, Any]:
    """A stand-in tool: cheap on purpose, so what is measured is the pipeline around it."""
    return {"path": args["path"], "lines": args.get("limit", 0)}


async def read_file_async(args: Any, run: Any) -> dict[str, Any]:
    return read_file(args, run)


class ToolLoopModel:
    """Replies with one tool call for ``steps - 1`` requests, then with text: ``steps`` steps."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.count = 0

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.count += 1
        if self.count < self.steps:
            call = ModelToolCall(f"call_{self.count}", "read_file", '{"path": "src/app.py", "limit": 20}')
            return ModelReply(tool_calls=(call,), stop_reason="tool_calls")
        return ModelReply(text="done")


def best_of(trials: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(trials))


def time_sync(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        read_file(ARGUMENTS, None)
    return (time.perf_counter() - start) / n


async def time_async(n: int, call: Callable[[int], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    for i in range(n):
        await call(i)
    return (time.perf_counter() - start) / n


def harness_with_tool(listeners: bool) -> Harness:
    harness = Harness()
    harness.tools.register(
        define_tool(
            "read_file", description="read", parameters=PARAMETERS, execute=read_file, output=OUTPUT,
            concurrency_safe=True,
        )
    )
    if listeners:
        harness.on("tools/pre-execute", lambda ex, next: next())
        harness.on("tools/execute", lambda ex, next: next())
        harness.on("tools/post-execute", lambda ex, result, next: next())
        harness.on("tools/result", lambda ex, result: None)
    return harness


async def measure_pipeline(n: int, listeners: bool) -> float:
    registry = harness_with_tool(listeners).runtime.tools

    async def call(i: int) -> Any:
        return await registry.execute("read_file", ARGUMENTS, call_id=f"c{i}")

    await time_async(min(n, 200), call)  # warm-up (schema validators, caches)
    return await time_async(n, call)


async def measure_step(steps: int) -> float:
    harness = harness_with_tool(False)
    agent = await harness.create_agent(model=ToolLoopModel(steps))
    agent.followup(Message.user("read it"))
    start = time.perf_counter()
    await agent.wait_idle()
    elapsed = time.perf_counter() - start
    assert sum(1 for f in agent.session.facts if f.type == "step/start") == steps
    return elapsed / steps


def run_async(fn: Callable[..., Awaitable[float]], *args: Any) -> float:
    return anyio.run(fn, *args)


# --- A/B against another checkout -----------------------------------------------------------------

AB_ROUNDS = 9
AB_CALLS = 1000
AB_STEPS = 100


def load_core(root: Path, alias: str) -> Any:
    """Import ``root`` (a repository root, which is the ``dsh_policy`` package) as ``alias`` and
    return its ``core``; ``core`` imports only relatively, so the copy is self-contained."""
    spec = importlib.util.spec_from_file_location(
        alias, root / "__init__.py", submodule_search_locations=[str(root)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"{root}: not a dsh-policy checkout (no __init__.py)")
    package = importlib.util.module_from_spec(spec)
    sys.modules[alias] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{alias}.core")


def cpu_per_op(run: Callable[[], None], n: int) -> float:
    start = time.thread_time()
    run()
    return (time.thread_time() - start) / n


async def ab_pipeline(core: Any, listeners: bool) -> float:
    harness = core.Harness()
    harness.tools.register(
        core.define_tool(
            "read_file", description="read", parameters=PARAMETERS, execute=read_file,
            output=core.ToolOutput(schema=OUTPUT.schema), concurrency_safe=True,
        )
    )
    if listeners:
        harness.on("tools/pre-execute", lambda ex, next: next())
        harness.on("tools/execute", lambda ex, next: next())
        harness.on("tools/post-execute", lambda ex, result, next: next())
        harness.on("tools/result", lambda ex, result: None)
    registry = harness.runtime.tools
    for i in range(100):
        await registry.execute("read_file", ARGUMENTS, call_id=f"w{i}")
    start = time.thread_time()
    for i in range(AB_CALLS):
        await registry.execute("read_file", ARGUMENTS, call_id=f"c{i}")
    return (time.thread_time() - start) / AB_CALLS


async def ab_step(core: Any) -> float:
    harness = core.Harness()
    harness.tools.register(
        core.define_tool(
            "read_file", description="read", parameters=PARAMETERS, execute=read_file,
            output=core.ToolOutput(schema=OUTPUT.schema), concurrency_safe=True,
        )
    )

    class Model:
        count = 0

        async def complete(self, request: Any) -> Any:
            self.count += 1
            if self.count < AB_STEPS:
                call = core.ModelToolCall(f"call_{self.count}", "read_file", '{"path": "src/app.py"}')
                return core.ModelReply(tool_calls=(call,), stop_reason="tool_calls")
            return core.ModelReply(text="done")

    agent = await harness.create_agent(model=Model())
    agent.followup(core.Message.user("read it"))
    start = time.thread_time()
    await agent.wait_idle()
    return (time.thread_time() - start) / AB_STEPS


def against(other: Path) -> dict[str, Any]:
    """Measure this core and the one under ``other`` in alternating rounds; medians of ratios."""
    import dsh_policy.core as this

    sides = {"this": this, "other": load_core(other.resolve(), "dsh_policy_against")}
    ratios: dict[str, dict[str, list[float]]] = {side: {"pipeline": [], "listeners": [], "step": []}
                                                 for side in sides}
    for round_ in range(AB_ROUNDS):
        for side in list(sides) if round_ % 2 == 0 else list(reversed(sides)):
            core = sides[side]
            direct = min(cpu_per_op(lambda: [read_file(ARGUMENTS, None) for _ in range(20000)], 20000)
                         for _ in range(3))
            ratios[side]["pipeline"].append(anyio.run(ab_pipeline, core, False) / direct)
            ratios[side]["listeners"].append(anyio.run(ab_pipeline, core, True) / direct)
            ratios[side]["step"].append(anyio.run(ab_step, core) / direct)
    report: dict[str, Any] = {"other": str(other), "rounds": AB_ROUNDS, "timer": "thread_time"}
    print(f"\nA/B against {other} ({AB_ROUNDS} alternating rounds, thread CPU time, x direct call)")
    print(f"{'measurement':<28}{'this':>10}{'other':>10}{'this/other':>12}")
    for key, label in (("pipeline", "pipeline, no listeners"), ("listeners", "pipeline, 4 listeners"),
                       ("step", "loop step, one tool call")):
        mine, theirs = statistics.median(ratios["this"][key]), statistics.median(ratios["other"][key])
        report[key] = {"this": mine, "other": theirs, "this_vs_other": mine / theirs}
        print(f"{label:<28}{mine:>10.1f}{theirs:>10.1f}{mine / theirs:>12.3f}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="tool calls per trial")
    parser.add_argument("--steps", type=int, default=400, help="loop steps per trial")
    parser.add_argument("--against", type=Path, help="another checkout's root to compare with (A/B)")
    options = parser.parse_args(argv)
    n, steps = options.calls, options.steps

    direct = best_of(TRIALS, lambda: time_sync(n * 20))
    direct_async = best_of(
        TRIALS, lambda: run_async(time_async, n * 5, lambda i: read_file_async(ARGUMENTS, None))
    )
    pipeline = best_of(TRIALS, lambda: run_async(measure_pipeline, n, False))
    pipeline_listeners = best_of(TRIALS, lambda: run_async(measure_pipeline, n, True))
    step = best_of(TRIALS, lambda: run_async(measure_step, steps))

    rows = [
        ("direct call (sync function)", direct),
        ("direct await (async function)", direct_async),
        ("pipeline, no listeners", pipeline),
        ("pipeline, 4 pass-through listeners", pipeline_listeners),
        ("loop step with one tool call", step),
    ]
    print(f"{'measurement':<38}{'per op':>12}{'x direct':>12}{'x await':>12}")
    for label, seconds in rows:
        print(f"{label:<38}{seconds * 1e6:>10.2f}us{seconds / direct:>12.1f}{seconds / direct_async:>12.1f}")
    print(f"{'loop bookkeeping per step (step - pipeline)':<50}{(step - pipeline) * 1e6:>10.2f}us")

    report = {
        "benchmark": "pipeline",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "calls_per_trial": n,
        "steps_per_trial": steps,
        "trials": TRIALS,
        "seconds_per_op": {label: seconds for label, seconds in rows},
        "ratios": {
            "pipeline_vs_direct_call": pipeline / direct,
            "pipeline_vs_direct_await": pipeline / direct_async,
            "pipeline_with_listeners_vs_direct_call": pipeline_listeners / direct,
            "listeners_vs_no_listeners": pipeline_listeners / pipeline,
            "step_vs_direct_call": step / direct,
            "step_vs_pipeline_call": step / pipeline,
        },
    }
    if options.against is not None:
        report["against"] = against(options.against)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
