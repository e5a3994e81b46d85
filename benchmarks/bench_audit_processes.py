"""``verify --key`` of a log of several segments, each run in a fresh process of the ``verify``
command's size (forking the benchmark's own large process would time its page tables): one process
against processes sized to the work, and this tree's verifier against another tree's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from audit_bench_common import Row, Timing
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.verify.parallel import processes_for, usable_cores
from dsh_policy.audit.writer import AuditWriter

#: One ``verify --key`` in a fresh process, as the ``verify`` command runs it (the interpreter's
#: start and the imports are left out: both modes pay them alike); prints its own timings.
_VERIFIER = """
import json, resource, sys, time
from dsh_policy.audit.verify import verify_log
path, public, workers = sys.argv[1], sys.argv[2], None if sys.argv[3] == "auto" else int(sys.argv[3])
def children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
wall, cpu, before = time.perf_counter(), time.process_time(), children()
report = verify_log([path], public_key=public, workers=workers)
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu, children() - before, report.intact]))
"""


def verify_in_fresh_process(path: Path, public: Path, workers: int | None) -> tuple[Timing, float, float]:
    """(timing with the children's CPU added, this process's CPU, the children's CPU) of one
    ``verify_log`` in a process of its own, whose forked scanners are its children."""
    command = [
        sys.executable,
        "-c",
        _VERIFIER,
        str(path),
        str(public),
        "auto" if workers is None else str(workers),
    ]
    wall, own, children, intact = json.loads(
        subprocess.run(command, check=True, stdout=subprocess.PIPE).stdout
    )
    if not intact:
        raise AssertionError("the benchmark's log did not verify")
    return Timing(wall, own + children), own, children


def idle_core_bound(own: float, children: float, processes: int, cores: int) -> float:
    """The wall time a parallel run would take on idle cores, from its CPU times: no less than the
    longest process's CPU (this one, or the children's average) and no less than all of it spread
    over the cores it can use."""
    return max(own, children / max(1, processes - 1), (own + children) / max(1, min(cores, processes)))


def bench_parallel_verify(
    directory: Path, key: Path, records: list[dict[str, Any]], count: int, format_version: int = 3
) -> tuple[list[Row], dict[str, Any]]:
    """``verify --key`` of a log of several segments on one process and as the ``verify`` command
    runs it (``workers=None``: processes sized to the work, up to every usable core), each in a
    fresh process of the command's size (forking this large one would time its page tables),
    interleaved; the reports must be equal (the parallel walk's promise).

    Wall time is what an auditor waits, but on a shared host it measures the neighbours as much as
    us: two processes get two cores only when nobody else wants them. So beside it, the speed-up
    the cores would give were they idle: one process's CPU time against :func:`idle_core_bound`
    of the parallel run (the main process forks, walks its own share and replays the rest)."""
    path = directory / "parallel.jsonl"
    rotate_bytes = max(1 << 20, count * 1100 // 8)  # about eight segments
    with AuditWriter.open(
        path,
        fsync="off",
        signing_key=key,
        checkpoint_every=1000,
        rotate_bytes=rotate_bytes,
        format_version=format_version,
    ) as writer:
        for index in range(count):
            writer.append("tool_result", records[index % len(records)])
    public = directory / "signer.pub"
    serial_report = verify_log([path], public_key=public, workers=1)
    assert serial_report.intact and verify_log([path], public_key=public, workers=None) == serial_report
    segments = len(serial_report.files)
    processes = processes_for([Path(file) for file in serial_report.files], None)
    serial, parallel, critical = [], [], []
    for _ in range(5):
        serial.append(verify_in_fresh_process(path, public, 1)[0])
        timing, own, children = verify_in_fresh_process(path, public, None)
        parallel.append(timing)
        critical.append(idle_core_bound(own, children, processes, usable_cores()))
    megabytes = serial_report.bytes_checked / 1e6
    records_checked = serial_report.records_checked
    rows = [
        Row(f"v{format_version} verify {segments} seg x1", records_checked, tuple(serial), megabytes),
        Row(
            f"v{format_version} verify {segments} seg x{processes}",
            records_checked,
            tuple(parallel),
            megabytes,
        ),
    ]
    facts = {
        "segments": segments,
        "megabytes": megabytes,
        "usable_cores": usable_cores(),
        "processes": processes,
        "wall_speedup": rows[0].best("wall") / rows[1].best("wall"),
        "wall_speedup_median": rows[0].median("wall") / rows[1].median("wall"),
        "idle_core_speedup": rows[0].best("cpu") / min(critical),
        "cpu_ratio_parallel_vs_serial": rows[1].best("cpu") / rows[0].best("cpu"),
    }
    return rows, facts


#: The single-segment ratio in a fresh process: ``verify --key`` against SHA-256 of the same bytes,
#: interleaved, best of 5 each.
_SINGLE = """
import hashlib, json, sys, time
from dsh_policy.audit.verify import verify_log
path, public = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
verify, raw = [], []
for _ in range(5):
    started = time.process_time()
    verify_log([path], public_key=public)
    verify.append(time.process_time() - started)
    started = time.process_time()
    hashlib.sha256(data).digest()
    raw.append(time.process_time() - started)
print(json.dumps(min(verify) / min(raw)))
"""


def compare_trees(
    pythons: dict[str, str],
    directory: Path,
    key: Path,
    records: list[dict[str, Any]],
    count: int,
    format_version: int = 2,
) -> dict[str, dict[str, float]]:
    """The verifier of each tree (its interpreter, whose ``dsh_policy`` it imports) side by side,
    alternating, each measure in a fresh process: the single-segment ratio, and a log of eight
    segments on one process and as the ``verify`` command runs it (``workers=None``). For an old
    tree whose verifier forks a pool, the bound on idle cores counts its main process and one
    worker per core. The logs are of ``format_version`` (the parallel one as
    :func:`bench_parallel_verify` wrote it): format 2 by default, which trees before format 3 read."""
    single = directory / "compare-one.jsonl"
    with AuditWriter.open(
        single, fsync="off", signing_key=key, checkpoint_every=1000, format_version=format_version
    ) as writer:
        for index in range(count):
            writer.append("tool_result", records[index % len(records)])
    segmented = directory / "parallel.jsonl"  # written by bench_parallel_verify
    public = directory / "signer.pub"
    runs: dict[str, dict[str, list[Any]]] = {
        name: {"ratio": [], "serial": [], "auto": []} for name in pythons
    }
    for _ in range(5):
        for name, python in pythons.items():
            command = [python, "-c", _SINGLE, str(single), str(public)]
            runs[name]["ratio"].append(
                json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE).stdout)
            )
            for mode in ("serial", "auto"):
                workers = "1" if mode == "serial" else "auto"
                command = [python, "-c", _VERIFIER, str(segmented), str(public), workers]
                wall, own, children, intact = json.loads(
                    subprocess.run(command, check=True, stdout=subprocess.PIPE).stdout
                )
                if not intact:
                    raise AssertionError(f"{name}: the benchmark's log did not verify")
                runs[name][mode].append((wall, own, children))
    cores = usable_cores()
    found: dict[str, dict[str, float]] = {}
    for name, measured in runs.items():
        serial_cpu = min(own + children for _, own, children in measured["serial"])
        serial_wall = min(wall for wall, _, _ in measured["serial"])
        # A tree that forks one child per share has two processes on two cores; one whose pool
        # forks a worker per core has a main process beside them.
        processes = cores + (0 if name == "this tree" else 1)
        bound = min(idle_core_bound(own, children, processes, cores) for _, own, children in measured["auto"])
        ratios = sorted(measured["ratio"])
        found[name] = {
            "single_segment_verify_vs_sha256_best": ratios[0],
            "single_segment_verify_vs_sha256_median": ratios[len(ratios) // 2],
            "parallel_wall_speedup": serial_wall / min(wall for wall, _, _ in measured["auto"]),
            "parallel_idle_core_speedup": serial_cpu / bound,
            "parallel_cpu_vs_one_process": min(own + children for _, own, children in measured["auto"])
            / serial_cpu,
        }
    return found
