"""Load time and memory held: 1 to 1,000 rules and the shipped packs, each in a fresh process.

Run: ``python benchmarks/bench_load.py [--rounds N]`` (``bench_peers.py`` runs it too, after its
decision table). Every cell is a new Python process (a cold start: nothing parsed, compiled or
imported before), which reports:

- *import*: CPU seconds from the process's start to the loader imported (the interpreter's own
  start included);
- *load*: CPU seconds of the first ``build_policy`` (YAML, schema, CEL parse, type check, compile,
  inline examples, and the modules and tables loading imports on first use): the "ready in"
  figure of the targets; *ready* is import + load, the process's CPU until the policy is built;
- *decided*: the process's CPU once it has also imported the decision API and decided a first
  call (``Read``, a tool the shipped packs' rules read nothing of): what a hook process or an
  embedding program pays before its first verdict;
- *warm*: a second ``build_policy`` of the same files in that process (nothing is shared with the
  first but imported modules and one-time tables);
- *held*: bytes a third load leaves allocated (``tracemalloc``, after a collection) while its
  compiled policy is alive: what deciding keeps in memory;
- *check*: CPU seconds of ``dsh-policy check PACK --cases PACK.cases.yaml`` for every shipped pack
  (in one process, after its imports), beside its floor: in that process, the same packs loaded
  as check loads them (YAML, compile, inline examples; read from the cache in the ``cached``
  modes) and their cases files read as YAML; the ratio of the two is the target (what check adds:
  the cases' schema and deciding every case). Also printed: the ratio over the *built* floor
  (the packs built from YAML and compiled, never read from the cache).

Every cell runs in four modes, side by side in one run:

- *cache*: ``cold`` builds from the packs (``DSH_POLICY_COMPILE_CACHE=off``); ``cached`` reads
  the verified compiled policy an earlier process kept (a private cache folder, primed by one
  process before the rounds; the entry is checked and its trees compiled on every load);
- *bytecode*: ``none`` is this machine's default (``PYTHONDONTWRITEBYTECODE=1``, so this
  package's modules are compiled from source in every process, as in a development checkout);
  ``pyc`` reads bytecode from a private ``PYTHONPYCACHEPREFIX`` primed first, as a ``pip``
  install (which compiles on install) has it. ``none`` still reads the ``__pycache__`` folders a
  checkout holds: give ``--before`` a tree without them (``git archive main | tar -x -C DIR``), or
  its ``none`` rows are measured with its bytecode.

The targets are read from the ``cached``/``pyc`` rows (a user's installed gateway, the packs
loaded before), and printed for the ``cached``/``none`` rows too. Since a load imports what it
uses on first use, *ready* (import + load, the process's CPU until the policy decides) is the
figure to compare across versions; *load* alone moves with what is imported lazily.

CPU time, not wall time: the machine is shared, and CPU time is what the process itself spent.
Each cell takes the median of ``--rounds`` processes.

``--before DIR`` (a checkout of another version, e.g. ``git worktree add /tmp/main main``) runs
every cell and check of that version too, interleaved with this one's in every round (its package
found first on ``PYTHONPATH``, its own ``rules/``, cache and bytecode folders), and prints both
side by side; the targets are read from this checkout's rows.
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
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.events import ToolCallEvent
Decider(policy).check_tool_call(ToolCallEvent(tool="Read", args={"file_path": "/tmp/x"}))
decided = time.process_time()
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
row = {
    "import_s": imported, "load_s": ready - began, "ready_s": ready, "decided_s": decided, "warm_s": warm,
    "held": held,
}
print(json.dumps(row))
"""


_CHECK = r"""
import contextlib, io, json, sys, time
from dsh_policy.policy.cli.check import main
from dsh_policy.policy.loading import LoadFailure, build_policy
from dsh_policy.policy.source.yaml_source import read_yaml_file
floor = built = check = 0.0
codes = []
for pack in sys.argv[1:]:
    cases = pack.removesuffix(".yaml") + ".cases.yaml"
    began = time.process_time()
    assert not isinstance(build_policy([pack]), LoadFailure)
    assert not isinstance(read_yaml_file(cases), list)
    floor += time.process_time() - began
    began = time.process_time()
    assert not isinstance(build_policy([pack], cache=False), LoadFailure)
    assert not isinstance(read_yaml_file(cases), list)
    built += time.process_time() - began
    began = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        codes.append(main([pack, "--cases", cases]))
    check += time.process_time() - began
print(json.dumps({"floor_s": floor, "built_floor_s": built, "check_s": check, "codes": codes}))
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


def shipped_packs(root: Path = ROOT) -> list[Path]:
    """The packs in ``rules/`` of the checkout at ``root`` (without their cases files)."""
    return sorted(p for p in (root / "rules").glob("*.yaml") if not p.name.endswith(".cases.yaml"))


MODES = (("cold", "none"), ("cold", "pyc"), ("cached", "none"), ("cached", "pyc"))
TARGET_MODE = ("cached", "pyc")


def _env(tmp: str, cache: str, bytecode: str, package: str | None = None) -> dict[str, str]:
    """The environment of one mode: a private cache folder (off for ``cold``), and no bytecode
    written (``none``) or bytecode read from a private prefix (``pyc``); ``package``: a folder
    holding another version's ``dsh_policy``, put first on ``PYTHONPATH`` (``--before``)."""
    env = {**os.environ, "DSH_POLICY_CACHE_DIR": str(Path(tmp) / "cache")}
    if package is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (package, os.environ.get("PYTHONPATH"))))
    env["DSH_POLICY_COMPILE_CACHE"] = "off" if cache == "cold" else "on"
    env.pop("PYTHONPYCACHEPREFIX", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if bytecode == "pyc":
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pyc")
    return env


def _prime(tmp: str, cells: list[list[str]], root: Path = ROOT, package: str | None = None) -> None:
    """Write the bytecode of every module a load and a check import, and keep each cell's policy
    (and each shipped pack's, which ``check`` loads one by one)."""
    env = _env(tmp, "cached", "pyc", package)
    env.pop("PYTHONDONTWRITEBYTECODE")
    for paths in cells:
        subprocess.run([sys.executable, "-c", _CHILD, *paths], capture_output=True, check=True, env=env)
    packs = [str(p) for p in shipped_packs(root)]
    subprocess.run([sys.executable, "-c", _CHECK, *packs], capture_output=True, check=True, env=env)


def _child(paths: list[str], env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *paths], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _check_cpu(env: dict[str, str], root: Path = ROOT) -> tuple[float, float, float]:
    """CPU seconds of ``dsh-policy check PACK --cases PACK.cases.yaml`` over every shipped pack,
    of its floor (the same packs loaded as ``check`` loads them, cache or not, and their cases
    files read as YAML, in that process) and of the built floor (the packs built from YAML and
    compiled, never read from the cache)."""
    packs = [str(p) for p in shipped_packs(root)]
    out = subprocess.run(
        [sys.executable, "-c", _CHECK, *packs], capture_output=True, text=True, check=True, env=env
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if any(found["codes"]):
        raise SystemExit(f"dsh-policy check of a shipped pack failed: exit codes {found['codes']}")
    return float(found["check_s"]), float(found["floor_s"]), float(found["built_floor_s"])


def measure(rounds: int, sizes: tuple[int, ...] = SIZES, before: Path | None = None) -> dict[str, Any]:
    """Every cell in every mode, each the median of ``rounds`` fresh processes; with ``before``
    (another checkout), its cells too, interleaved (rows and checks marked ``before``)."""
    rows: list[dict[str, Any]] = []
    checks: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sides: list[tuple[str, str, Path, str | None]] = [("", tmp, ROOT, None)]
        if before is not None:
            package = Path(tmp) / "before-package"
            package.mkdir()
            (package / "dsh_policy").symlink_to(before.resolve(), target_is_directory=True)
            (Path(tmp) / "before").mkdir()
            sides.append(("before", str(Path(tmp) / "before"), before.resolve(), str(package)))
        cells: list[tuple[str, list[str]]] = []
        for rules in sizes:
            path = Path(tmp) / f"load-{rules}.yaml"
            path.write_text(yaml.safe_dump(numbered_pack(rules), sort_keys=False), encoding="utf-8")
            cells.append((f"{rules} rules", [str(path)]))
        side_cells = {
            side: [*cells, ("shipped packs", [str(p) for p in shipped_packs(root)])]
            for side, _, root, _ in sides
        }
        for side, folder, root, package in sides:
            _prime(folder, [paths for _, paths in side_cells[side]], root, package)
        samples: dict[tuple[str, str, str, str], list[dict[str, float]]] = {}
        for _ in range(rounds):  # interleaved: every cell sees the same drift of the machine's load
            for cache, bytecode in MODES:
                for side, folder, root, package in sides:
                    env = _env(folder, cache, bytecode, package)
                    for name, paths in side_cells[side]:
                        samples.setdefault((side, name, cache, bytecode), []).append(_child(paths, env))
                    mode = f"{cache}/{bytecode}" if not side else f"{side} {cache}/{bytecode}"
                    checks.setdefault(mode, []).append(_check_cpu(env, root))
    for (side, name, cache, bytecode), found in samples.items():
        rows.append({
            **({"tree": side} if side else {}),
            "cell": name,
            "cache": cache,
            "bytecode": bytecode,
            "import_s": statistics.median(s["import_s"] for s in found),
            "ready_s": statistics.median(s["ready_s"] for s in found),
            "decided_s": statistics.median(s["decided_s"] for s in found),
            "load_s": statistics.median(s["load_s"] for s in found),
            "warm_s": statistics.median(s["warm_s"] for s in found),
            "held_mib": statistics.median(s["held"] for s in found) / 2**20,
        })  # fmt: skip
    check = {
        mode: {
            "check_s": statistics.median(c for c, _, _ in found),
            "check_floor_s": statistics.median(f for _, f, _ in found),
            "check_x": statistics.median(c / f for c, f, _ in found),
            "check_built_floor_s": statistics.median(b for _, _, b in found),
            "check_x_built": statistics.median(c / b for c, _, b in found),
        }
        for mode, found in checks.items()
    }
    return {"rows": rows, "check": check, **check["/".join(TARGET_MODE)]}


def targets(result: dict[str, Any], mode: tuple[str, str] = TARGET_MODE) -> list[dict[str, Any]]:
    """The load targets of issue 34, from a :func:`measure` result, in one mode (this checkout's
    rows, never ``--before``'s)."""
    by_cell = {
        row["cell"]: row
        for row in result["rows"]
        if (row.get("cache"), row.get("bytecode")) == mode and "tree" not in row
    }
    label = "/".join(mode)
    found = []
    if "1000 rules" in by_cell:
        row = by_cell["1000 rules"]
        found.append(
            (
                f"1,000 rules ready (import + load CPU), {label}",
                row["ready_s"],
                TARGETS["rules_1000_load_s"],
                "s",
            )
        )
        found.append((f"1,000 rules load CPU, {label}", row["load_s"], TARGETS["rules_1000_load_s"], "s"))
        found.append((f"1,000 rules held, {label}", row["held_mib"], TARGETS["rules_1000_held_mib"], "MiB"))
    shipped = by_cell["shipped packs"]
    found.append(
        (
            f"shipped packs ready (import + load CPU), {label}",
            shipped["ready_s"],
            TARGETS["shipped_load_s"],
            "s",
        )
    )
    found.append((f"shipped packs load CPU, {label}", shipped["load_s"], TARGETS["shipped_load_s"], "s"))
    check = result["check"][label]
    found.append(
        (f"check of the shipped packs / its load floor, {label}", check["check_x"], TARGETS["check_x"], "x")
    )
    return [
        {"name": name, "value": value, "limit": limit, "unit": unit, "passed": value <= limit}
        for name, value, limit, unit in found
    ]


def print_table(result: dict[str, Any]) -> None:
    """The load table and its targets."""
    print("\nload, each cell a fresh process (CPU ms; held: tracemalloc after gc)")
    print(
        f"{'tree':<7}{'cell':<15}{'cache':>8}{'bytecode':>9}{'import ms':>11}{'load ms':>10}{'ready ms':>10}"
        f"{'decided ms':>12}{'warm ms':>10}{'held MiB':>10}"
    )
    order: dict[str, int] = {}
    for row in result["rows"]:
        order.setdefault(row["cell"], len(order))
    for row in sorted(
        result["rows"], key=lambda r: (r["cache"], r["bytecode"], order[r["cell"]], r.get("tree", ""))
    ):
        print(
            f"{row.get('tree', 'this'):<7}"
            f"{row['cell']:<15}{row['cache']:>8}{row['bytecode']:>9}{row['import_s'] * 1e3:>11.1f}"
            f"{row['load_s'] * 1e3:>10.1f}{row['ready_s'] * 1e3:>10.1f}{row['decided_s'] * 1e3:>12.1f}"
            f"{row['warm_s'] * 1e3:>10.1f}"
            f"{row['held_mib']:>10.2f}"
        )
    for mode, check in result["check"].items():
        print(
            f"dsh-policy check PACK --cases PACK.cases.yaml, every shipped pack, {mode}: "
            f"{check['check_s'] * 1e3:.1f} ms CPU (floor, the packs loaded and the cases read as YAML: "
            f"{check['check_floor_s'] * 1e3:.1f} ms): {check['check_x']:.2f}x; over the built floor "
            f"(YAML + compile, no cache: {check['check_built_floor_s'] * 1e3:.1f} ms): "
            f"{check['check_x_built']:.2f}x"
        )
    for mode in (TARGET_MODE, ("cached", "none")):
        for target in targets(result, mode):
            status = "PASS" if target["passed"] else "FAIL"
            print(
                f"{status}  {target['name']}: {target['value']:.3g} {target['unit']} (<= {target['limit']:g})"
            )
    print(f"load average: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


def main(argv: list[str] | None = None) -> int:
    """Measure, print, and write ``benchmarks/results/load.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per cell (median)")
    parser.add_argument(
        "--before", type=Path, default=None, metavar="DIR", help="another checkout to run side by side"
    )
    options = parser.parse_args(argv)
    result = measure(options.rounds, before=options.before)
    print_table(result)
    result["targets"] = targets(result) + targets(result, ("cached", "none"))
    out = Path(__file__).resolve().parent / "results" / "load.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
