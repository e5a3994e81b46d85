"""CPU the resident gateway spends per request, over its Unix socket and over HTTP.

Run: ``python benchmarks/bench_gateway_cpu.py [--requests 2000] [--concurrency 50] [--rounds 3]
[--before PATH]``. Starts ``dsh-policy serve`` (the hook-guard pack, an audit log, HTTP on
loopback), sends a fixed batch of hook events (half an allowed ``ls``, half a denied
``rm -rf /``) at a fixed concurrency, and divides the gateway's user+system CPU time
(``/proc/PID/stat``) by the number of requests. CPU time, unlike latency, barely depends on what
else the machine runs, so two versions can be compared on a busy machine: ``--before PATH`` (a
checkout of another commit, e.g. ``git worktree add /tmp/before main``) runs the same batches
against a gateway started from that tree, alternating rounds with this one, and prints both side
by side. Writes ``benchmarks/results/gateway_cpu.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gateway_load as load  # the load benchmark's clients and gateway

RESULTS = load.ROOT / "benchmarks" / "results" / "gateway_cpu.json"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds ``pid`` has used (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class TreeGateway(load.Gateway):
    """A gateway started from the source tree at ``tree`` (None: the installed one)."""

    def __init__(self, folder: Path, tree: Path | None) -> None:
        super().__init__(folder)
        if tree is not None:  # ``dsh_policy`` is the tree's root: import it through a link
            links = folder / "pythonpath"
            links.mkdir()
            (links / "dsh_policy").symlink_to(tree.resolve())
            self.env["PYTHONPATH"] = str(links)


async def _batch(kind: str, gateway: load.Gateway, count: int, concurrency: int) -> list[float | None]:
    names = list(load.EVENTS)
    raws = {name: (load.PAYLOADS / f"{name}.json").read_bytes() for name in names}
    port, token = (gateway.http_port(), gateway.token()) if kind == "http" else (0, "")
    path = gateway.socket
    gate = asyncio.Semaphore(concurrency)
    wrong = 0

    async def one(index: int) -> float | None:
        nonlocal wrong
        name = names[index % 2]
        async with gate:
            if kind == "socket":
                seconds, correct = await load._socket_client(path, name, raws[name])
            else:
                seconds, correct = await load._http_client(port, token, name, raws[name])
        wrong += not correct
        return seconds

    found = await asyncio.gather(*(one(i) for i in range(count)))
    if wrong:
        raise SystemExit(f"{wrong} wrong or missing answers over {kind}")
    return list(found)


def measure(gateway: load.Gateway, kind: str, count: int, concurrency: int) -> dict[str, Any]:
    """One batch: CPU per request (ms) and latency quantiles."""
    pid = gateway.pid
    asyncio.run(_batch(kind, gateway, 20, 5))  # warm: first-use imports and caches
    before, started = cpu_seconds(pid), time.monotonic()
    latencies = asyncio.run(_batch(kind, gateway, count, concurrency))
    cpu, wall = cpu_seconds(pid) - before, time.monotonic() - started
    return {
        "cpu_ms_per_request": round(cpu * 1000 / count, 3),
        "requests_per_s": round(count / wall, 1),
        **load._quantiles([s for s in latencies if s is not None]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout to compare with (run alternately)")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"this": None}
    if args.before is not None:
        trees = {"before": args.before, "this": None}
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {name: {"socket": [], "http": []} for name in trees}
    with tempfile.TemporaryDirectory(prefix="dsh-gw-cpu-") as scratch:
        gateways = {}
        try:
            for name, tree in trees.items():
                folder = Path(scratch) / name
                folder.mkdir()
                gateways[name] = TreeGateway(folder, tree)
                gateways[name].start()
            for round_number in range(args.rounds):
                for kind in ("socket", "http"):
                    for name, gateway in gateways.items():
                        row = measure(gateway, kind, args.requests, args.concurrency)
                        samples[name][kind].append(row)
                        print(f"round {round_number + 1} {kind:6} {name:6} {json.dumps(row)}", flush=True)
        finally:
            for gateway in gateways.values():
                gateway.stop()
    summary = {
        name: {
            kind: {
                "cpu_ms_per_request_median": statistics.median(r["cpu_ms_per_request"] for r in rows),
                "p99_ms_median": statistics.median(r["p99_ms"] or 0.0 for r in rows),
            }
            for kind, rows in kinds.items()
        }
        for name, kinds in samples.items()
    }
    for name, kinds in summary.items():
        print(f"{name:6} " + "  ".join(f"{kind}: {v['cpu_ms_per_request_median']:.3f} ms CPU/request"
                                       for kind, v in kinds.items()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": {"cpus": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version()},
        "requests": args.requests, "concurrency": args.concurrency, "rounds": args.rounds,
        "summary": summary, "samples": samples,
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
