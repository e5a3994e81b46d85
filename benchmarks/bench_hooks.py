"""Command-hook latency: what one ``dsh-policy hook`` process costs a Claude Code or Codex tool call.

Run: ``python benchmarks/bench_hooks.py [--runs N] [--pack PACK]``. Prints a table and writes
``benchmarks/results/hooks.json``. A hook is a fresh process per event, so its cost is interpreter
start + imports + loading and compiling the packs + one decision. Everything is measured side by
side in one run: the whole console-script invocation against a bare ``python -c pass`` (the floor
any Python hook pays), and the in-process phases (import, load per engine, decide) that explain the
difference. Target: a hook invocation within 10x of the bare interpreter start.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "hooks.json"
PAYLOAD = ROOT / "tests" / "hooks" / "payloads" / "claude-code" / "pre_tool_use_bash_rm_root.json"
SCRIPT = Path(sys.executable).parent / "dsh-policy"
RATIO_TARGET = 10.0


def _median_seconds(command: list[str], stdin: bytes, runs: int) -> tuple[float, float]:
    """Median wall-clock and median CPU (user + system) seconds of one process; CPU time is the
    steadier number on a shared machine, wall time is what the harness waits."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, input=stdin, capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def _in_process_phases(pack: str) -> dict[str, float]:
    probe = f"""
import json, sys, time
t0 = time.perf_counter()
from dsh_policy.policy.cli import hook  # noqa: F401
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.events import decide_hook
from dsh_policy.policy.hooks.protocol import parse_hook_input
t1 = time.perf_counter()
out = {{"import": t1 - t0}}
payload = parse_hook_input(open({str(PAYLOAD)!r}, "rb").read())
for engine in ("python", "native"):
    a = time.perf_counter()
    policy = Policy.load([{pack!r}], engine=engine)
    b = time.perf_counter()
    decide_hook(policy, "claude-code", payload)
    c = time.perf_counter()
    out["load_" + engine] = b - a
    out["decide_" + engine] = c - b
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True, text=True)
    phases: dict[str, float] = json.loads(done.stdout)
    return phases


def main() -> int:
    """Measure, print, and write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pack", default=str(ROOT / "rules" / "baseline.yaml"))
    args = parser.parse_args()
    stdin = PAYLOAD.read_bytes()
    bare, bare_cpu = _median_seconds([sys.executable, "-c", "pass"], b"", args.runs)
    hook, hook_cpu = _median_seconds(
        [str(SCRIPT), "hook", "claude-code", "--pack", args.pack], stdin, args.runs
    )
    phases = _in_process_phases(args.pack)
    ratio = hook / bare
    rows: list[tuple[str, float]] = [
        ("python -c pass (floor), wall", bare),
        ("python -c pass (floor), cpu", bare_cpu),
        ("dsh-policy hook, wall", hook),
        ("dsh-policy hook, cpu", hook_cpu),
        *((f"  phase: {name}", seconds) for name, seconds in phases.items()),
    ]
    for name, seconds in rows:
        print(f"{name:<34} {seconds * 1000:9.1f} ms")
    print(f"{'hook / bare interpreter, wall':<34} {ratio:9.1f} x   (target <= {RATIO_TARGET:.0f}x)")
    print(f"{'hook / bare interpreter, cpu':<34} {hook_cpu / bare_cpu:9.1f} x")
    report: dict[str, Any] = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "runs": args.runs,
        "pack": args.pack,
        "bare_interpreter_s": bare,
        "bare_interpreter_cpu_s": bare_cpu,
        "hook_process_s": hook,
        "hook_process_cpu_s": hook_cpu,
        "phases_s": phases,
        "ratio": ratio,
        "ratio_target": RATIO_TARGET,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
