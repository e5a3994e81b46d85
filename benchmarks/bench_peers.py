"""Our decision API beside the engines a team could pick instead, in one process, for 1 to 1,000 rules.

Run: ``python benchmarks/bench_peers.py [--quick]``. Prints a table and writes
``benchmarks/results/peers.json``; then the load table of ``bench_load.py`` (load time and memory
held for the same sizes and the shipped packs, each cell a fresh process; ``--load-rounds 0``
skips it). The peers (``peer_engines.py``: Microsoft's Agent Governance Toolkit, Cedar, Regorus,
the Rust and the C++ CEL runtimes) are installed by the optional benchmark extra
(``pip install -e '.[bench]'``); a peer that is not installed is skipped with a message.

The policy: N deny rules, rule ``i`` reading "tool is ``shell_i`` and its command contains
``rm``", each engine's rules written in its own language (``peer_engines.py`` says how). The
call names the last rule's tool, so a linear evaluator walks every rule:

- *hit*: ``shell_{N-1}`` with ``rm -rf /tmp/build`` (denied by the last rule);
- *miss*: ``shell_{N-1}`` with ``ls -la /tmp`` (allowed: no rule matches);
- *unnamed*: ``other`` with ``rm -rf /tmp/build``, a tool no rule names (allowed).

Every timed call starts from the tool name and the command and builds its engine's input itself:

- ours: a rule pack with ``match: {tools: [shell_i]}`` and ``when: args.command.contains("rm")``,
  decided by ``Policy.pre_execute(ToolCallEvent(tool=..., args={"command": ...}))`` (the event
  built in the call, then the whole decide path: tool index, activation, rule evaluation,
  verdict), on every installed engine and on ``auto``, the default; and ``auto-call``,
  ``Policy.pre_execute_call(tool, {"command": ...})``, the entry for a caller holding a tool name
  and its arguments, which builds the event only when a rule names the tool;
- the peers: their fastest documented API on input built in the call (``peer_engines.py``);
- hand-written: a dict from tool name to a Python function doing the same check.

Before timing, every side decides every cell and must agree (deny on hit, allow on miss and
unnamed). All cells are timed interleaved in one run, so load on the machine hits every side
alike. The table shows each cell's best round; the ratios (and the targets) are medians over
rounds of the ratio within a round, which cancels the load drifting between rounds.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
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
from peer_engines import FACTORIES, Peer

RESULTS = Path(__file__).resolve().parent / "results" / "peers.json"
SIZES = (1, 10, 100, 1000)
CASES = ("hit", "miss", "unnamed")
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


def prepare(
    directory: Path, rules: int, engines: list[str], peers: Mapping[str, Callable[[int], Peer | None]]
) -> dict[str, Callable[[], Any]]:
    """The callables to time for one size (``side:case``), after checking every side decides
    every case alike."""
    path = directory / f"peers-{rules}.yaml"
    path.write_text(yaml.safe_dump(our_pack(rules), sort_keys=False), encoding="utf-8")
    functions: dict[str, Callable[[], Any]] = {}
    hand = hand_written(rules)
    policies: dict[str, Policy] = {}
    for engine in engines:
        policy = Policy.load([path], engine=engine)
        if isinstance(policy, LoadFailure):
            raise SystemExit(f"{engine}: {policy}")
        policies[engine] = policy
    built = {name: factory(rules) for name, factory in peers.items()}
    for case, (tool, command) in cases(rules).items():
        expected = "deny" if case == "hit" else "allow"

        def check(side: str, decision: str, case: str = case, expected: str = expected) -> None:
            if decision != expected:
                raise SystemExit(f"{side}, {rules} rules, {case}: {decision}, expected {expected}")

        check("hand-written", hand(tool, {"command": command}))
        functions[f"hand:{case}"] = lambda tool=tool, command=command: hand(tool, {"command": command})
        for engine, policy in policies.items():
            check(engine, policy.pre_execute(ToolCallEvent(tool=tool, args={"command": command})).decision)
            functions[f"{engine}:{case}"] = lambda decide=policy.pre_execute, tool=tool, command=command: (
                decide(ToolCallEvent(tool=tool, args={"command": command}))
            )
        auto = policies.get("auto")
        if auto is not None:
            check("auto-call", auto.pre_execute_call(tool, {"command": command}).decision)
            decide = auto.pre_execute_call
            functions[f"auto-call:{case}"] = lambda decide=decide, tool=tool, command=command: decide(
                tool, {"command": command}
            )
        for name, peer in built.items():
            if peer is None:
                continue
            check(name, peer.decision(peer.call(tool, command)))
            functions[f"{name}:{case}"] = lambda call=peer.call, tool=tool, command=command: call(
                tool, command
            )
    return functions


def cases(rules: int) -> dict[str, tuple[str, str]]:
    """Each case's tool name and command (see the module doc)."""
    last = f"shell_{rules - 1}"
    return {"hit": (last, HIT), "miss": (last, MISS), "unnamed": ("other", HIT)}


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
    peers = {name: factory for name, factory in FACTORIES.items() if factory(1) is not None}
    for name in FACTORIES.keys() - peers.keys():
        print(f"{name} is not installed: its column is skipped (pip install -e '.[bench]')", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        prepared = {rules: prepare(Path(tmp), rules, engines, peers) for rules in sizes}
        functions = {f"{rules}|{name}": f for rules, cells in prepared.items() for name, f in cells.items()}
        per_round = interleaved_rounds(functions, rounds=rounds, budget=budget)
    timings = {name: min(times) for name, times in per_round.items()}
    ours = [*engines, *(["auto-call"] if "auto" in engines else [])]
    sides = [*ours, *peers, "hand"]
    for rules in sizes:
        for case in CASES:
            row: dict[str, Any] = {"rules": rules, "case": case}
            for side in sides:
                row[f"{side}_us"] = timings[f"{rules}|{side}:{case}"] * 1e6
            prefix = f"{rules}|"
            for side in ours:
                row[f"{side}_x_hand"] = round_ratio(
                    per_round, f"{prefix}{side}:{case}", f"{prefix}hand:{case}"
                )
            if "auto" in engines:
                for side in peers:
                    row[f"{side}_x_auto"] = round_ratio(
                        per_round, f"{prefix}{side}:{case}", f"{prefix}auto:{case}"
                    )
            rows.append(row)
    targets = _targets(rows, list(peers)) if "auto" in engines else []
    uptime = os.getloadavg()
    _print(rows, sides, list(peers), targets, uptime)
    load_rounds = options.load_rounds if options.load_rounds is not None else (1 if options.quick else 3)
    load = _load_table(load_rounds) if load_rounds > 0 else None
    report = {
        "benchmark": "peers",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "load_average": list(uptime),
        "peers": {name: peer.version for name, factory in peers.items() if (peer := factory(1)) is not None},
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


def _targets(rows: list[dict[str, Any]], peers: list[str]) -> list[dict[str, Any]]:
    """The issue's decision targets: ``auto`` at least 1x every peer at every size, hit and miss
    (the event built inside the call), and a tool no rule names at most 2x the hand-written dict
    (for ``pre_execute`` on an event built in the call, and for ``pre_execute_call``)."""
    found: list[dict[str, Any]] = []
    for row in rows:
        rules, case = row["rules"], row["case"]
        if case == "unnamed":
            for side in ("auto", "auto-call"):
                ratio = row.get(f"{side}_x_hand")
                if ratio is not None:
                    found.append({
                        "name": f"{side} / hand-written dict, a tool no rule names ({rules} rules)",
                        "ratio": ratio, "limit": 2.0, "passed": ratio <= 2.0,
                    })  # fmt: skip
            continue
        for peer in peers:
            ratio = row[f"{peer}_x_auto"]
            found.append({
                "name": f"{peer} / auto, {rules} rules ({case})", "ratio": ratio,
                "limit": 1.0, "passed": ratio >= 1.0, "at_least": True,
            })  # fmt: skip
    return found


def _print(
    rows: list[dict[str, Any]],
    sides: list[str],
    peers: list[str],
    targets: list[dict[str, Any]],
    load: tuple[float, float, float],
) -> None:
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("us per decision, input built in the call (best round)")
    print(f"{'rules':>6} {'case':<8}" + "".join(f"{side:>11}" for side in sides))
    for row in rows:
        cells = "".join(f"{row[f'{side}_us']:>11.2f}" for side in sides)
        print(f"{row['rules']:>6} {row['case']:<8}{cells}")
    ratios = [*(f"{peer}_x_auto" for peer in peers), "auto_x_hand", "auto-call_x_hand"]
    print("\nratios within a round (median): peer / auto (above 1: we are faster), auto / hand")
    print(f"{'rules':>6} {'case':<8}" + "".join(f"{name:>17}" for name in ratios))
    for row in rows:
        cells = "".join(f"{row[name]:>17.2f}" if name in row else f"{'-':>17}" for name in ratios)
        print(f"{row['rules']:>6} {row['case']:<8}{cells}")
    print()
    for target in targets:
        status = "PASS" if target["passed"] else "FAIL"
        relation = ">=" if target.get("at_least") else "<="
        print(f"{status}  {target['name']}: {target['ratio']:.2f}x ({relation} {target['limit']:g}x)")


if __name__ == "__main__":
    raise SystemExit(main())
