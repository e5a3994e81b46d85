"""The fleet plane on a real nats-server (JetStream, loopback): ingest, lag, propagation, verify.

Run: ``python benchmarks/bench_fleet.py [--gateways 200] [--records 500] [--rate 1000] [--seconds 5]
[--rounds 9] [--only-verify]`` (needs the ``fleet`` extra). Prints the figures as JSON and writes
``benchmarks/results/fleet.json`` (``fleet_verify.json`` with ``--only-verify``, which skips the lag
and propagation phases). One run
measures, with ``--gateways`` simulated gateways (each its own audit log, signed checkpoints, and
its own connection to the server, all in this process):

- **ingest**: every gateway's backlog of ``--records`` lines shipped at once by its
  :class:`~dsh_policy.policy.fleet.shipper.Shipper` (read from the log, published with its
  ``Nats-Msg-Id``, acknowledged, cursor saved): records/s into the stream (target >= 20,000);
- **lag**: gateways appending ``--rate`` records/s in total for ``--seconds``, shipping every
  0.1 s, while a central consumer reads the stream: end-to-end lag from the record's own ``ts``
  to its arrival, p50/p99;
- **propagation**: a signed bundle put in the bucket, seen and accepted (signature, publisher,
  revision) by every gateway's watch: time until the last of them (target < 2 s). Compiling is
  each host's own CPU; one host's compile-and-install time is reported beside it;
- **verify**: ``verify --fleet`` of what the ingest phase shipped (one process per core), over its
  exported archive and end to end from the bus, against single-process ``verify`` of
  the same logs one after the other (``--key``, all): ``--rounds`` side-by-side rounds in
  alternating order, the median of the per-round ratios (target >= 1.6x on 2 cores), with the
  best-of ratio and CPU times beside it (:func:`verify_ratio`). The pull of the stream is timed
  on its own.

The machine's load average is recorded before and after: on a shared machine every figure moves
with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "fleet.json"

from dsh_policy.audit.keys import key_id, load_private_key, load_public_key, write_key_pair  # noqa: E402
from dsh_policy.audit.segments import discover_segments  # noqa: E402
from dsh_policy.audit.verify import verify_log  # noqa: E402
from dsh_policy.audit.writer import AuditWriter  # noqa: E402
from dsh_policy.policy.fleet.bundle import accept, new_bundle  # noqa: E402
from dsh_policy.policy.fleet.bus import (  # noqa: E402
    BUNDLE_KEY,
    EVIDENCE,
    EVIDENCE_SUBJECTS,
    bundles_bucket,
    connect,
    ensure_evidence,
)
from dsh_policy.policy.fleet.collect import group_evidence, pull_stream, write_archive  # noqa: E402
from dsh_policy.policy.fleet.fleet_verify import verify_archive, verify_fleet  # noqa: E402
from dsh_policy.policy.fleet.local_server import LocalServer  # noqa: E402
from dsh_policy.policy.fleet.materialize import install  # noqa: E402
from dsh_policy.policy.fleet.shipper import Shipper  # noqa: E402

_TS = re.compile(rb'"ts":"([^"]+)"')
PACK = ROOT / "rules" / "baseline.yaml"


SERVER_PID: list[int] = []


def server_cpu() -> float:
    """The nats-server's user+system CPU seconds so far (Linux /proc), 0 where unreadable."""
    try:
        fields = Path(f"/proc/{SERVER_PID[0]}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def write_logs(folder: Path, gateways: int, records: int, key: Path, prefix: str) -> list[Path]:
    logs = []
    for n in range(gateways):
        log = folder / f"{prefix}{n:03d}" / "audit.jsonl"
        with AuditWriter.open(log, fsync="off", checkpoint_every=250, signing_key=key) as writer:
            for i in range(records):
                writer.append("hook_event", {"n": i, "tool": "Bash", "decision": "allow", "note": "x" * 60})
        logs.append(log)
    return logs


async def ingest(url: str, logs: list[Path]) -> dict[str, Any]:
    shippers = [Shipper(log, f"gw{n:03d}", batch=256) for n, log in enumerate(logs)]
    backlog = sum(len(seg.read_bytes().splitlines()) for log in logs for seg in discover_segments(log))
    connections = [await connect(url) for _ in shippers]
    streams = [c.jetstream() for c in connections]
    await ensure_evidence(streams[0])
    started = time.perf_counter()
    cpu = time.process_time()
    served = server_cpu()
    errors: list[str] = []

    async def drain(shipper: Shipper, connection: Any) -> int:
        done = 0
        while True:  # an interrupted batch resumes from the cursor, as after any outage
            done += await shipper.ship_all(connection, timeout=30.0)
            if shipper.state.last_error is None:
                return done
            errors.append(shipper.state.last_error)

    shipped = await asyncio.gather(*(drain(s, c) for s, c in zip(shippers, connections, strict=True)))
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    served = server_cpu() - served
    for connection in connections:
        await connection.close()
    assert sum(shipped) == backlog, (sum(shipped), backlog)
    return {
        "records": backlog,
        "interrupted_batches": len(errors),
        "first_interruption": errors[0] if errors else None,
        "seconds": round(elapsed, 3),
        "records_per_s": round(backlog / elapsed),
        "client_cpu_s": round(cpu, 3),
        "server_cpu_s": round(served, 3),
        # What the two sides' CPU alone allows: the rate on an otherwise idle machine with a core each.
        "records_per_cpu_s_client": round(backlog / cpu) if cpu else None,
        "records_per_cpu_s_server": round(backlog / served) if served else None,
    }


async def lag(
    url: str, folder: Path, gateways: int, rate: float, seconds: float, key: Path
) -> dict[str, Any]:
    logs = [folder / f"live{n:03d}" / "audit.jsonl" for n in range(gateways)]
    writers = [AuditWriter.open(log, fsync="off", checkpoint_every=250, signing_key=key) for log in logs]
    shippers = [Shipper(log, f"live{n:03d}", batch=512) for n, log in enumerate(logs)]
    connections = [await connect(url) for _ in shippers]
    central = await connect(url)
    js = central.jetstream()
    lags: list[float] = []
    from nats.js.api import DeliverPolicy

    async def on_message(message: Any) -> None:
        arrived = time.time()
        found = _TS.search(message.data)
        if found is not None:
            stamp = datetime.fromisoformat(found.group(1).decode().replace("Z", "+00:00")).timestamp()
            lags.append(arrived - stamp)

    subscription = await js.subscribe(
        EVIDENCE_SUBJECTS, cb=on_message, ordered_consumer=True, deliver_policy=DeliverPolicy.NEW
    )
    stop = threading.Event()
    written = [0]

    def produce() -> None:
        interval = 1.0 / rate
        next_at = time.perf_counter()
        n = 0
        end = next_at + seconds
        while time.perf_counter() < end:
            writers[n % gateways].append("hook_event", {"n": n, "note": "x" * 60})
            n += 1
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        written[0] = n
        stop.set()

    async def ship_loop(shipper: Shipper, connection: Any) -> None:
        while not stop.is_set() or shipper.pending(1):
            await shipper.ship_all(connection, timeout=30.0)
            await asyncio.sleep(0.1)

    producer = threading.Thread(target=produce)
    producer.start()
    await asyncio.gather(*(ship_loop(s, c) for s, c in zip(shippers, connections, strict=True)))
    producer.join()
    for writer in writers:
        writer.close()
    await asyncio.gather(*(s.ship_all(c, timeout=30.0) for s, c in zip(shippers, connections, strict=True)))
    deadline = time.monotonic() + 10
    while len(lags) < written[0] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await subscription.unsubscribe()
    for connection in [*connections, central]:
        await connection.close()
    return {
        "rate_per_s": rate,
        "seconds": seconds,
        "records": written[0],
        "received": len(lags),
        "p50_ms": round(percentile(lags, 0.50) * 1000, 1),
        "p99_ms": round(percentile(lags, 0.99) * 1000, 1),
        "max_ms": round(max(lags) * 1000, 1) if lags else None,
        "ship_interval_ms": 100,
    }


async def propagation(url: str, gateways: int, keys: Path, folder: Path) -> dict[str, Any]:
    from dsh_policy.policy.loading import build_policy

    private = load_private_key(keys.with_suffix(".key"))
    public = load_public_key(keys.with_suffix(".pub"))
    publishers = {key_id(public): public}
    built = build_policy([PACK])
    assert not isinstance(built, type(None)) and hasattr(built, "digest")
    bundle = new_bundle(
        ((PACK.name, PACK.read_text()),),
        revision=1,
        params={},
        engine="auto",
        refuse_weakening=False,
        policy_digest=built.digest,
    ).signed(private)  # type: ignore[union-attr]
    data = bundle.to_bytes()
    accepted_at: list[float] = []
    connections = [await connect(url) for _ in range(gateways)]
    watchers = []
    for connection in connections:
        bucket = await bundles_bucket(connection.jetstream())
        watchers.append(await bucket.watch(BUNDLE_KEY))
    for watcher in watchers:  # the "no pending updates" marker
        await watcher.updates(timeout=5)

    async def follow(watcher: Any) -> None:
        while True:
            entry = await watcher.updates(timeout=30)
            if entry is not None and entry.value:
                verdict = accept(entry.value, publishers, None, None)
                assert not hasattr(verdict, "reason"), verdict
                accepted_at.append(time.perf_counter())
                return

    publisher = await connect(url)
    tasks = [asyncio.create_task(follow(w)) for w in watchers]
    await asyncio.sleep(0.2)
    put_at = time.perf_counter()
    await (await bundles_bucket(publisher.jetstream())).put(BUNDLE_KEY, data)
    await asyncio.gather(*tasks)
    spread = [t - put_at for t in accepted_at]
    compile_started = time.perf_counter()
    installed = install(folder / "one-host-state", bundle, None)
    compile_s = time.perf_counter() - compile_started
    assert not hasattr(installed, "reason"), installed
    for connection in [*connections, publisher]:
        await connection.close()
    return {
        "gateways": gateways,
        "all_accepted_s": round(max(spread), 3),
        "p50_s": round(percentile(spread, 0.5), 3),
        "bundle_bytes": len(data),
        "one_host_compile_and_install_s": round(compile_s, 3),
    }


async def pull(url: str) -> tuple[dict[tuple[str, str], list[bytes]], float]:
    connection = await connect(url)
    started = time.perf_counter()
    messages = await pull_stream(connection.jetstream(), EVIDENCE, EVIDENCE_SUBJECTS)
    elapsed = time.perf_counter() - started
    await connection.close()
    return group_evidence(messages), elapsed


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(run: Any) -> tuple[float, float, float]:
    """Wall seconds, this process's CPU seconds and its reaped children's CPU seconds for ``run()``."""
    started, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    run()
    return time.perf_counter() - started, time.process_time() - cpu, _children_cpu() - children


def _spin(units: int) -> None:
    """CPU work and nothing else (no memory traffic, no system calls)."""
    total = 0
    for number in range(units):
        total += number


def _spin_on_every_core(units: int, workers: int) -> None:
    """``_spin(units)`` shared over ``workers`` processes: this one and forked children."""
    children = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            try:
                _spin(units // workers)
            finally:
                os._exit(0)
        children.append(pid)
    _spin(units // workers)
    for pid in children:
        os.waitpid(pid, 0)


def verify_ratio(
    logs: list[Path],
    archive: Path,
    url: str,
    public: Path,
    rounds: int,
) -> dict[str, Any]:
    """Single-process ``verify`` of every log against ``verify --fleet`` of the same records, side
    by side: one untimed round of each first (both then start with the same warm caches), then
    ``rounds`` rounds, each timing the two back to back, in alternating order so a change in
    the machine's load weighs on both alike. Reported: the median of the per-round ratios (the
    figure), the best-of ratio, and CPU. ``verify --fleet`` is timed over the exported archive
    (each process reads its files) and end to end from the bus (``verify --fleet URL``: each
    process pulls its share of the logs and verifies it).

    Wall time on a shared machine measures the scheduler as much as the code (and Linux's
    autogroup gives one session's processes together one share of the CPU against other
    sessions), so CPU time is reported as well: the single process's against the slower of
    ``verify --fleet``'s processes (this one, which also shares the work out and collects the
    verdicts, or the average child): the ratio with a core free for each process. And in the
    same rounds, the ceiling the machine offers at that moment: plain CPU work as long as the
    single verify, in one process against spread over one per core."""
    workers = os.cpu_count() or 1
    records = [0]

    def single() -> None:
        records[0] = 0
        for log in logs:
            report = verify_log([log], public_key=public)
            assert report.intact, report.to_json()
            records[0] += report.records_checked

    def fleet_archive() -> None:
        result = verify_archive(archive, key=str(public), live=False)
        assert result.ok and result.workers == min(workers, len(logs)), result.to_json()

    def fleet_url() -> None:
        result = verify_fleet(url, key=str(public), live=False, silent_after=1e9)
        assert result.ok and result.records == records[0], result.to_json()

    single_cpu_once = time.process_time()
    single()
    single_cpu_once = time.process_time() - single_cpu_once
    probe = time.process_time()
    _spin(1_000_000)
    units = int(1_000_000 * single_cpu_once / max(1e-6, time.process_time() - probe))

    def spin_one() -> None:
        _spin(units)

    def spin_all() -> None:
        _spin_on_every_core(units, workers)

    sides = {
        "single": single,
        "fleet_archive": fleet_archive,
        "fleet_url": fleet_url,
        "spin_one": spin_one,
        "spin_all": spin_all,
    }
    for run in sides.values():
        run()
    timings: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
    for round_number in range(rounds):
        order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
        for name in order:
            timings[name].append(_timed(sides[name]))
    single_wall = [wall for wall, _, _ in timings["single"]]
    single_cpu = statistics.median(own + children for _, own, children in timings["single"])
    result: dict[str, Any] = {
        "records": records[0],
        "rounds": rounds,
        "workers": workers,
        "single_median_s": round(statistics.median(single_wall), 3),
        "single_best_s": round(min(single_wall), 3),
        "single_records_per_s": round(records[0] / statistics.median(single_wall)),
        "single_cpu_s": round(single_cpu, 3),
    }
    spin_ratios = [
        one / every
        for (one, _, _), (every, _, _) in zip(timings["spin_one"], timings["spin_all"], strict=True)
    ]
    # What this machine gives right now: work that is perfectly parallel and as long as single
    # verify, in one process against spread over one per core, in the same rounds.
    ceiling = statistics.median(spin_ratios)
    result["parallel_ceiling"] = round(ceiling, 2)
    result["parallel_ceiling_per_round"] = [round(ratio, 2) for ratio in spin_ratios]
    for name in ("fleet_archive", "fleet_url"):
        walls = [wall for wall, _, _ in timings[name]]
        ratios = [one / other for one, other in zip(single_wall, walls, strict=True)]
        total_cpu = statistics.median(own + children for _, own, children in timings[name])
        # The slower process: this one, or the children's average (workers - 1 of them).
        critical = statistics.median(
            max(own, children / max(1, workers - 1)) for _, own, children in timings[name]
        )
        result[name] = {
            "median_s": round(statistics.median(walls), 3),
            "best_s": round(min(walls), 3),
            "records_per_s": round(records[0] / statistics.median(walls)),
            "ratio": round(statistics.median(ratios), 2),
            "ratio_per_round": [round(ratio, 2) for ratio in ratios],
            "ratio_best_of": round(min(single_wall) / min(walls), 2),
            "ratio_of_ceiling": round(statistics.median(ratios) / ceiling, 2),
            "cpu_s": round(total_cpu, 3),
            "cpu_vs_single": round(total_cpu / single_cpu, 3),
            "slowest_process_cpu_s": round(critical, 3),
            "ratio_if_cores_free": round(single_cpu / critical, 2),
        }
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gateways", type=int, default=200)
    parser.add_argument("--records", type=int, default=500, help="backlog per gateway for ingest and verify")
    parser.add_argument("--rate", type=float, default=1000, help="records/s in total for the lag phase")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=9, help="side-by-side rounds of the verify phase")
    parser.add_argument(
        "--only-verify", action="store_true", help="the verify phase alone (after ingest and pull)"
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="dsh-bench-fleet-"))
    server = LocalServer(folder / "store").start()
    SERVER_PID.append(server.pid or 0)
    load_before = os.getloadavg()
    try:
        keys = write_key_pair(folder / "audit")
        publisher = write_key_pair(folder / "publisher")
        print(f"writing {args.gateways} logs of {args.records} records ...", file=sys.stderr)
        logs = write_logs(folder / "logs", args.gateways, args.records, keys.private_path, "gw")
        results: dict[str, Any] = {"gateways": args.gateways}
        results["ingest"] = asyncio.run(ingest(server.url, logs))
        shipped, pull_s = asyncio.run(pull(server.url))
        archive = folder / "archive"
        write_archive(archive, shipped)
        pulled = sum(len(lines) for lines in shipped.values())
        results["pull"] = {
            "records": pulled,
            "seconds": round(pull_s, 3),
            "records_per_s": round(pulled / pull_s),
        }
        print(f"verify: {args.rounds} rounds, load {os.getloadavg()[0]:.2f} ...", file=sys.stderr)
        results["verify"] = verify_ratio(logs, archive, server.url, keys.public_path, args.rounds)
        if not args.only_verify:
            results["lag"] = asyncio.run(
                lag(server.url, folder, args.gateways, args.rate, args.seconds, keys.private_path)
            )
            results["propagation"] = asyncio.run(
                propagation(server.url, args.gateways, publisher.private_path.with_suffix(""), folder)
            )
    finally:
        server.kill()
        shutil.rmtree(folder, ignore_errors=True)
    results["load_average_before"] = [round(x, 2) for x in load_before]
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    results["cpus"] = os.cpu_count()
    results["targets"] = {
        "ingest_records_per_s": ">= 20000",
        "propagation_all_s": "< 2",
        "verify_ratio": ">= 1.6 on 2 cores",
    }
    target = RESULTS.with_name("fleet_verify.json") if args.only_verify else RESULTS
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
