"""Our decision API beside a peer and hand-written Python, in one process, for 1 to 1,000 rules.

Run: ``python benchmarks/bench_peers.py [--quick]``. Prints a table and writes
``benchmarks/results/peers.json``; then the load table of ``bench_load.py`` (load time and memory
held for the same sizes and the shipped packs, each cell a fresh process; ``--load-rounds 0``
skips it). The peer is Microsoft's Agent Governance Toolkit
(``PolicyEvaluator`` from ``agent_os.policies``), installed by the optional benchmark extra
(``pip install -e '.[bench]'``); without it the AGT column is skipped with a message.

The policy: N deny rules, rule ``i`` reading "tool is ``shell_i`` and its command contains
``rm``". The event calls the last rule's tool, so a linear evaluator walks every rule:

- *hit*: ``shell_{N-1}`` with ``rm -rf /tmp/build`` (denied by the last rule);
- *miss*: ``shell_{N-1}`` with ``ls -la /tmp`` (allowed: no rule matches).

Each side as its users write it:

- ours: a rule pack with ``match: {tools: [shell_i]}`` and ``when: args.command.contains("rm")``,
  decided by ``Policy.pre_execute`` (the whole decide path: tool index, activation, rule
  evaluation, verdict), on every installed engine and on ``auto``, the default. The events are
  built before timing (a ``ToolCallEvent`` is the caller's input, as AGT's context dict and the
  hand-written side's arguments are) and cycled from a pool larger than the decider's per-event
  cache, so no decision reuses the work of an earlier one;
- AGT: a ``PolicyDocument`` of N ``PolicyRule``s evaluated by ``PolicyEvaluator.evaluate`` on a
  fresh context dict per call. An AGT rule holds one condition on one context field, so "tool and
  command" is encoded the way cheapest for AGT: the command is given under a field named after the
  tool (``command@shell_i``) and rule ``i`` is ``contains "rm"`` on that field; a rule for
  another tool finds no field, AGT's fastest path;
- hand-written: a dict from tool name to a Python function doing the same check.

Before timing, every side decides both events and must agree (deny on hit, allow on miss).
All cells are timed interleaved in one run, so load on the machine hits every side alike. The
table shows each cell's best round; the ratios (and the targets) are medians over rounds of the
ratio within a round, which cancels the load drifting between rounds.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.loading import LoadFailure

RESULTS = Path(__file__).resolve().parent / "results" / "peers.json"
SIZES = (1, 10, 100, 1000)
EVENTS = 256  # distinct events per cell: more than the decider remembers (64)
HIT = "rm -rf /tmp/build"
MISS = "ls -la /tmp"


def our_pack(rules: int) -> dict[str, Any]:
    """N pre-execute deny rules, one per tool."""
    return {
        "apiVersion": "dsh-policy/v1",
        "kind": "RulePack",
        "metadata": {"name": "peers", "version": "1.0.0"},
        "spec": {
            "defaults": {"mode": "enforce", "on_error": "deny", "decision": "allow"},
            "rules": [
                {
                    "id": f"no-rm-{i}",
                    "stage": "pre-execute",
                    "match": {"tools": [f"shell_{i}"]},
                    "when": 'args.command.contains("rm")',
                    "decision": "deny",
                    "message": f"shell_{i} may not remove files",
                }
                for i in range(rules)
            ],
        },
    }


def hand_written(rules: int) -> Callable[[str, Mapping[str, Any]], str]:
    """The same rules as a dict of Python functions."""
    checks: dict[str, Callable[[Mapping[str, Any]], bool]] = {
        f"shell_{i}": (lambda args: "rm" in args["command"]) for i in range(rules)
    }

    def decide(tool: str, args: Mapping[str, Any]) -> str:
        check = checks.get(tool)
        return "deny" if check is not None and check(args) else "allow"

    return decide


def agt_evaluator(rules: int) -> Any | None:
    """AGT's PolicyEvaluator over the same rules, or None when AGT is not installed."""
    try:
        from agent_os.policies import PolicyEvaluator
        from agent_os.policies.schema import (
            PolicyAction,
            PolicyCondition,
            PolicyDocument,
            PolicyOperator,
            PolicyRule,
        )
    except ImportError:
        return None
    document = PolicyDocument(
        name="peers",
        rules=[
            PolicyRule(
                name=f"no-rm-{i}",
                condition=PolicyCondition(
                    field=f"command@shell_{i}", operator=PolicyOperator.CONTAINS, value="rm"
                ),
                action=PolicyAction.DENY,
                message=f"shell_{i} may not remove files",
            )
            for i in range(rules)
        ],
    )
    return PolicyEvaluator(policies=[document])


def agt_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("agent-governance-toolkit")
    except Exception:
        return None


def interleaved_rounds(
    functions: Mapping[str, Callable[[], Any]], *, rounds: int, budget: float
) -> dict[str, list[float]]:
    """The mean seconds per call of each function in each of ``rounds`` rounds, the functions
    taking turns within every round (so the cells of one round share the machine's load)."""
    sizes: dict[str, int] = {}
    for name, function in functions.items():
        function()
        started = time.perf_counter()
        for _ in range(10):
            function()
        per_call = max((time.perf_counter() - started) / 10, 1e-8)
        sizes[name] = max(1, int(budget / rounds / per_call))
    per_round: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            batch = sizes[name]
            gc.collect()  # untimed: no cell pays for the garbage an earlier cell left
            started = time.perf_counter()
            for _ in range(batch):
                function()
            per_round[name].append((time.perf_counter() - started) / batch)
    return per_round


def round_ratio(per_round: Mapping[str, list[float]], numerator: str, denominator: str) -> float:
    """The median over rounds of ``numerator / denominator`` measured in the same round: the
    load of a shared machine drifts between rounds, and a ratio within one round cancels it
    (the ratio of two minimums would pair moments of different load)."""
    return statistics.median(a / b for a, b in zip(per_round[numerator], per_round[denominator], strict=True))


def prepare(directory: Path, rules: int, engines: list[str]) -> dict[str, Callable[[], Any]]:
    """The callables to time for one size, after checking every side decides alike."""
    path = directory / f"peers-{rules}.yaml"
    path.write_text(yaml.safe_dump(our_pack(rules), sort_keys=False), encoding="utf-8")
    tool = f"shell_{rules - 1}"
    functions: dict[str, Callable[[], Any]] = {}
    hand = hand_written(rules)
    for case, command in (("hit", HIT), ("miss", MISS)):
        args = {"command": command}
        expected = "deny" if case == "hit" else "allow"
        if hand(tool, args) != expected:
            raise SystemExit(f"hand-written {rules} rules {case}: {hand(tool, args)}")
        functions[f"hand:{case}"] = lambda args=args: hand(tool, args)
        for engine in engines:
            policy = Policy.load([path], engine=engine)
            if isinstance(policy, LoadFailure):
                raise SystemExit(f"{engine}: {policy}")
            verdict = policy.pre_execute(ToolCallEvent(tool=tool, args=args))
            if verdict.decision != expected:
                raise SystemExit(f"{engine} {rules} rules {case}: {verdict.decision} {verdict.message}")
            pool = itertools.cycle(
                [ToolCallEvent(tool=tool, args={"command": command}) for _ in range(EVENTS)]
            )
            functions[f"{engine}:{case}"] = lambda decide=policy.pre_execute, pool=pool: decide(next(pool))
        evaluator = agt_evaluator(rules)
        if evaluator is not None:
            decision = evaluator.evaluate({"tool_name": tool, f"command@{tool}": command})
            if decision.action != expected:
                raise SystemExit(f"AGT {rules} rules {case}: {decision.action}")
            functions[f"agt:{case}"] = lambda evaluator=evaluator, command=command: evaluator.evaluate(
                {"tool_name": tool, f"command@{tool}": command}
            )
    return functions


def main(argv: list[str] | None = None) -> int:
    """Measure every size, print the table, write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="short rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--seconds", type=float, default=0.7, help="measuring time per cell")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="rule counts to measure")
    parser.add_argument("--engines", nargs="*", default=None, help="our engines (default: auto + installed)")
    parser.add_argument(
        "--load-rounds", type=int, default=None, help="fresh processes per load cell (bench_load.py; 0: skip)"
    )
    options = parser.parse_args(argv)
    rounds = 3 if options.quick else options.rounds
    budget = 0.1 if options.quick else options.seconds
    engines = options.engines or ["auto", *available_engines()]
    sizes = tuple(options.sizes)
    has_agt = agt_evaluator(1) is not None
    if not has_agt:
        print(
            "AGT is not installed: its column is skipped (pip install -e '.[bench]' to compare)",
            file=sys.stderr,
        )
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        prepared = {rules: prepare(Path(tmp), rules, engines) for rules in sizes}
        functions = {f"{rules}|{name}": f for rules, cells in prepared.items() for name, f in cells.items()}
        per_round = interleaved_rounds(functions, rounds=rounds, budget=budget)
    timings = {name: min(times) for name, times in per_round.items()}
    sides = [*(["agt"] if has_agt else []), *engines, "hand"]
    for rules in sizes:
        for case in ("hit", "miss"):
            row: dict[str, Any] = {"rules": rules, "case": case}
            for side in sides:
                row[f"{side}_us"] = timings[f"{rules}|{side}:{case}"] * 1e6
            prefix = f"{rules}|"
            row["auto_x_hand"] = round_ratio(per_round, f"{prefix}auto:{case}", f"{prefix}hand:{case}")
            if has_agt:
                row["agt_x_auto"] = round_ratio(per_round, f"{prefix}agt:{case}", f"{prefix}auto:{case}")
            rows.append(row)
    targets = _targets(rows, has_agt)
    _print(rows, sides, targets)
    load_rounds = options.load_rounds if options.load_rounds is not None else (1 if options.quick else 3)
    load = _load_table(load_rounds) if load_rounds > 0 else None
    report = {
        "benchmark": "peers",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "agt": agt_version(),
        "engines": engines,
        "rounds": rounds,
        "seconds_per_cell": budget,
        "rows": rows,
        "targets": targets,
        "load": load,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    return 0


def _load_table(rounds: int) -> dict[str, Any]:
    """Load time and memory held for 1 to 1,000 rules and the shipped packs, each in a fresh
    process (``bench_load.py``), printed after the decision table."""
    import bench_load

    result = bench_load.measure(rounds)
    bench_load.print_table(result)
    result["targets"] = bench_load.targets(result)
    return result


def _targets(rows: list[dict[str, Any]], has_agt: bool) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for row in rows:
        if row["rules"] == 1:
            ratio = row["auto_x_hand"]
            found.append({
                "name": f"auto, 1 rule ({row['case']}) vs hand-written dict", "ratio": ratio,
                "limit": 10.0, "passed": ratio <= 10.0,
            })  # fmt: skip
        if has_agt:
            limit = 10.0 if row["rules"] == 1000 else 1.0
            ratio = row["agt_x_auto"]
            found.append({
                "name": f"AGT / auto, {row['rules']} rules ({row['case']})", "ratio": ratio,
                "limit": limit, "passed": ratio >= limit, "at_least": True,
            })  # fmt: skip
    return found


def _print(rows: list[dict[str, Any]], sides: list[str], targets: list[dict[str, Any]]) -> None:
    print("\nus per decision (Policy.pre_execute; AGT PolicyEvaluator.evaluate; hand-written dict)")
    header = f"{'rules':>6} {'case':<5}" + "".join(f"{side:>16}" for side in sides)
    print(header)
    for row in rows:
        cells = "".join(f"{row[f'{side}_us']:>16.2f}" for side in sides)
        print(f"{row['rules']:>6} {row['case']:<5}{cells}")
    print()
    for target in targets:
        status = "PASS" if target["passed"] else "FAIL"
        relation = ">=" if target.get("at_least") else "<="
        print(f"{status}  {target['name']}: {target['ratio']:.2f}x ({relation} {target['limit']:g}x)")


if __name__ == "__main__":
    raise SystemExit(main())
