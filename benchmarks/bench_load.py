"""Load time and memory held: 1 to 1,000 rules and the shipped packs, each in a fresh process.

Run: ``python benchmarks/bench_load.py [--rounds N]`` (``bench_peers.py`` runs it too, after its
decision table). Every cell is a new Python process (a cold start: nothing parsed, compiled or
imported before), which reports:

- *import*: CPU seconds from the process's start to the loader imported (the interpreter's own
  start included);
- *load*: CPU seconds of the first ``build_policy`` (YAML, schema, CEL parse, type check, compile,
  inline examples, and the modules and tables loading imports on first use): the "ready in"
  figure of the targets; *ready* is import + load, the process's CPU until the policy decides;
- *warm*: a second ``build_policy`` of the same files in that process (nothing is shared with the
  first but imported modules and one-time tables);
- *held*: bytes a third load leaves allocated (``tracemalloc``, after a collection) while its
  compiled policy is alive: what deciding keeps in memory;
- *check*: CPU seconds of ``dsh-policy check PACK --cases PACK.cases.yaml`` for every shipped pack
  (in one process, after its imports), beside its YAML+compile floor: in that process, the same
  packs loaded (YAML, compile, inline examples) and their cases files read as YAML; the ratio of
  the two is the target (what check adds: the cases' schema and deciding every case).

CPU time, not wall time: the machine is shared, and CPU time is what the process itself spent.
Each cell takes the median of ``--rounds`` processes. There is no persistent compile cache: a
cold process parses every expression.
The N-rule packs are those of ``bench_peers.py`` with a distinct condition per rule (a load must
not profit from repeated text).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1, 10, 100, 1000)
TARGETS = {"rules_1000_load_s": 0.200, "rules_1000_held_mib": 10.0, "shipped_load_s": 0.100, "check_x": 2.0}

_CHILD = r"""
import gc, json, sys, time, tracemalloc
from dsh_policy.policy.loading import build_policy, LoadFailure
imported = time.process_time()
paths = sys.argv[1:]
began = time.process_time()
policy = build_policy(paths)
ready = time.process_time()
assert not isinstance(policy, LoadFailure), str(policy)
del policy
began_warm = time.process_time()
assert not isinstance(build_policy(paths), LoadFailure)
warm = time.process_time() - began_warm
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
policy = build_policy(paths)
gc.collect()
held = tracemalloc.get_traced_memory()[0] - base
row = {"import_s": imported, "load_s": ready - began, "ready_s": ready, "warm_s": warm, "held": held}
print(json.dumps(row))
"""


_CHECK = r"""
import contextlib, io, json, sys, time
from dsh_policy.policy.cli.check import main
from dsh_policy.policy.loading import LoadFailure, build_policy
from dsh_policy.policy.source.yaml_source import read_yaml_file
floor = check = 0.0
codes = []
for pack in sys.argv[1:]:
    cases = pack.removesuffix(".yaml") + ".cases.yaml"
    began = time.process_time()
    assert not isinstance(build_policy([pack]), LoadFailure)
    assert not isinstance(read_yaml_file(cases), list)
    floor += time.process_time() - began
    began = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        codes.append(main([pack, "--cases", cases]))
    check += time.process_time() - began
print(json.dumps({"floor_s": floor, "check_s": check, "codes": codes}))
"""


def numbered_pack(rules: int) -> dict[str, Any]:
    """``bench_peers.py``'s pack, each rule's condition with its own literal."""
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
                    "when": f'args.command.contains("rm") && !args.command.contains("--keep-{i}")',
                    "decision": "deny",
                    "message": f"shell_{i} may not remove files",
                }
                for i in range(rules)
            ],
        },
    }


def shipped_packs() -> list[Path]:
    """The packs in ``rules/`` (without their cases files)."""
    return sorted(p for p in (ROOT / "rules").glob("*.yaml") if not p.name.endswith(".cases.yaml"))


def _child(paths: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", "1")}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *paths], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _check_cpu() -> tuple[float, float]:
    """CPU seconds of ``dsh-policy check PACK --cases PACK.cases.yaml`` over every shipped pack,
    and of its floor: the same packs loaded and their cases files read as YAML in that process."""
    packs = [str(p) for p in shipped_packs()]
    out = subprocess.run([sys.executable, "-c", _CHECK, *packs], capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if any(found["codes"]):
        raise SystemExit(f"dsh-policy check of a shipped pack failed: exit codes {found['codes']}")
    return float(found["check_s"]), float(found["floor_s"])


def measure(rounds: int, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    """Every cell, each the median of ``rounds`` fresh processes."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cells: list[tuple[str, list[str]]] = []
        for rules in sizes:
            path = Path(tmp) / f"load-{rules}.yaml"
            path.write_text(yaml.safe_dump(numbered_pack(rules), sort_keys=False), encoding="utf-8")
            cells.append((f"{rules} rules", [str(path)]))
        cells.append(("shipped packs", [str(p) for p in shipped_packs()]))
        samples: dict[str, list[dict[str, float]]] = {name: [] for name, _ in cells}
        checks: list[tuple[float, float]] = []
        for _ in range(rounds):  # interleaved: every cell sees the same drift of the machine's load
            for name, paths in cells:
                samples[name].append(_child(paths))
            checks.append(_check_cpu())
    for name, _ in cells:
        found = samples[name]
        rows.append({
            "cell": name,
            "import_s": statistics.median(s["import_s"] for s in found),
            "ready_s": statistics.median(s["ready_s"] for s in found),
            "load_s": statistics.median(s["load_s"] for s in found),
            "warm_s": statistics.median(s["warm_s"] for s in found),
            "held_mib": statistics.median(s["held"] for s in found) / 2**20,
        })  # fmt: skip
    return {
        "rows": rows,
        "check_s": statistics.median(check for check, _ in checks),
        "check_floor_s": statistics.median(floor for _, floor in checks),
        "check_x": statistics.median(check / floor for check, floor in checks),
    }


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The load targets of issue 34, from a :func:`measure` result."""
    by_cell = {row["cell"]: row for row in result["rows"]}
    found = []
    if "1000 rules" in by_cell:
        row = by_cell["1000 rules"]
        found.append(("1,000 rules ready (load CPU)", row["load_s"], TARGETS["rules_1000_load_s"], "s"))
        found.append(("1,000 rules held", row["held_mib"], TARGETS["rules_1000_held_mib"], "MiB"))
    found.append(
        ("shipped packs ready (load CPU)", by_cell["shipped packs"]["load_s"], TARGETS["shipped_load_s"], "s")
    )
    found.append(("check of the shipped packs / its load floor", result["check_x"], TARGETS["check_x"], "x"))
    return [
        {"name": name, "value": value, "limit": limit, "unit": unit, "passed": value <= limit}
        for name, value, limit, unit in found
    ]


def print_table(result: dict[str, Any]) -> None:
    """The load table and its targets."""
    print("\nload, each cell a fresh process (CPU ms; held: tracemalloc after gc)")
    print(f"{'cell':<15}{'import ms':>11}{'load ms':>10}{'ready ms':>10}{'warm ms':>10}{'held MiB':>10}")
    for row in result["rows"]:
        print(
            f"{row['cell']:<15}{row['import_s'] * 1e3:>11.1f}{row['load_s'] * 1e3:>10.1f}"
            f"{row['ready_s'] * 1e3:>10.1f}{row['warm_s'] * 1e3:>10.1f}{row['held_mib']:>10.2f}"
        )
    print(
        "dsh-policy check PACK --cases PACK.cases.yaml, every shipped pack: "
        f"{result['check_s'] * 1e3:.1f} ms CPU"
        f" (floor, the packs loaded and the cases read as YAML: {result['check_floor_s'] * 1e3:.1f} ms)"
    )
    for target in targets(result):
        status = "PASS" if target["passed"] else "FAIL"
        print(f"{status}  {target['name']}: {target['value']:.3g} {target['unit']} (<= {target['limit']:g})")
    print(f"load average: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


def main(argv: list[str] | None = None) -> int:
    """Measure, print, and write ``benchmarks/results/load.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per cell (median)")
    options = parser.parse_args(argv)
    result = measure(options.rounds)
    print_table(result)
    result["targets"] = targets(result)
    out = Path(__file__).resolve().parent / "results" / "load.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
