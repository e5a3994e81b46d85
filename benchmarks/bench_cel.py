"""Per-expression CEL evaluation cost: closure, python and native engines and hand-written Python.

Run: ``python benchmarks/bench_cel.py [--seconds S]``. Prints a table and writes
``benchmarks/results/cel.json``. Every expression is evaluated through the engine interface the
gateway uses (``CompiledExpression.evaluate`` with a plain-Python activation, conversion
included), and its hand-written Python twin calls the same helper functions, all in one run, so
the ratios survive a noisy shared machine. The native engine is also measured with the built-in
``matches`` (``cache_matches=False``) to show what the cached RE2 host function buys.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import platform
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dsh_policy.policy.cel import available_engines, make_engine
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CelEvalError
from dsh_policy.policy.cel.functions import path_within, re2_matches, shell_commands, url_host

RESULTS = Path(__file__).resolve().parent / "results" / "cel.json"

ACTIVATION: Mapping[str, Any] = {
    "turn": 12,
    "step": 40,
    "now": datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.UTC),
    "params": {
        "max_turns": 50,
        "workspace": "/workspace",
        "allowed_hosts": ["github.com", "pypi.org", "registry.npmjs.org"],
    },
    "tool": {"name": "shell", "call_id": "c1", "root_call_id": "c1", "nested": False},
    "args": {
        "command": "cd /workspace && sudo -u build make -j4 test 2>&1 | tee build.log",
        "path": "/workspace/src/../src/main.py",
        "url": "https://user@github.com:443/org/repo",
    },
}

RM_ROOT = (
    'shell.commands(args.command).exists(c, c[0] == "rm"'
    ' && c.exists(a, a.matches("^-[a-zA-Z]*[rR]") || a == "--recursive")'
    ' && c.exists(a, a in ["/", "/*", "~", "~/"]))'
)


def _hand_rm_root(a: Mapping[str, Any]) -> bool:
    return any(
        c[0] == "rm"
        and any(re2_matches(x, "^-[a-zA-Z]*[rR]") or x == "--recursive" for x in c)
        and any(x in ("/", "/*", "~", "~/") for x in c)
        for c in shell_commands(a["args"]["command"])
    )


# (name, CEL expression, hand-written Python taking the same activation)
EXPRESSIONS: list[tuple[str, str, Callable[[Mapping[str, Any]], Any]]] = [
    ("turn budget", "turn > params.max_turns", lambda a: a["turn"] > a["params"]["max_turns"]),
    (
        "has + startsWith",
        'has(args.path) && args.path.startsWith("/etc")',
        lambda a: "path" in a["args"] and a["args"]["path"].startswith("/etc"),
    ),
    (
        "constant matches",
        'args.command.matches("(^|[;&|]\\\\s*)(sudo|doas)\\\\s")',
        lambda a: re2_matches(a["args"]["command"], "(^|[;&|]\\s*)(sudo|doas)\\s"),
    ),
    (
        "path.within",
        "path.within(args.path, params.workspace)",
        lambda a: path_within(a["args"]["path"], a["params"]["workspace"]),
    ),
    (
        "url.host allow-list",
        "!(url.host(args.url) in params.allowed_hosts)",
        lambda a: url_host(a["args"]["url"]) not in a["params"]["allowed_hosts"],
    ),
    ("rm -rf / rule", RM_ROOT, _hand_rm_root),
]


def per_call_seconds(function: Callable[[], Any], budget: float) -> float:
    """Best-of-5 mean seconds per call, each round lasting about ``budget / 5``."""
    calls = 1
    while True:  # calibrate
        started = time.perf_counter()
        for _ in range(calls):
            function()
        elapsed = time.perf_counter() - started
        if elapsed > budget / 50 or calls > 1_000_000:
            break
        calls *= 4
    per_round = max(1, int(calls * (budget / 5) / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(per_round):
            function()
        best = min(best, (time.perf_counter() - started) / per_round)
    return best


def _evaluator(engine: CelEngine, source: str, expected: Any) -> Callable[[], Any]:
    program = engine.compile(source)
    if isinstance(program, CelCompileIssue):
        raise SystemExit(f"{engine.name}: {source!r} does not compile: {program.message}")
    value = program.evaluate(ACTIVATION)
    if isinstance(value, CelEvalError) or value != expected:
        raise SystemExit(f"{engine.name}: {source!r} gave {value!r}, hand-written Python {expected!r}")
    return lambda: program.evaluate(ACTIVATION)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write the JSON results."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0, help="measuring time per cell")
    args = parser.parse_args(argv)
    engines: dict[str, CelEngine] = {"closure": make_engine("closure"), "python": make_engine("python")}
    if "native" in available_engines():
        from dsh_policy.policy.cel.native_engine import NativeCelEngine

        engines["native"] = NativeCelEngine()
        engines["native-builtin-matches"] = NativeCelEngine(cache_matches=False)
    rows: list[dict[str, Any]] = []
    for name, source, hand in EXPRESSIONS:
        expected = hand(ACTIVATION)
        row: dict[str, Any] = {"name": name, "expression": source}
        row["hand_us"] = per_call_seconds(functools.partial(hand, ACTIVATION), args.seconds) * 1e6
        for engine_name, engine in engines.items():
            evaluate = _evaluator(engine, source, expected)
            row[f"{engine_name}_us"] = per_call_seconds(evaluate, args.seconds) * 1e6
            row[f"{engine_name}_ratio"] = row[f"{engine_name}_us"] / row["hand_us"]
        rows.append(row)
    header = f"{'expression':<22}{'hand us':>10}" + "".join(f"{e + ' us':>26}{'x hand':>9}" for e in engines)
    print(header)
    for row in rows:
        cells = "".join(f"{row[f'{e}_us']:>26.2f}{row[f'{e}_ratio']:>9.1f}" for e in engines)
        print(f"{row['name']:<22}{row['hand_us']:>10.2f}{cells}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "cel",
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "engines": list(engines),
                "rows": rows,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
