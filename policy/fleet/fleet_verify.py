"""``dsh-policy verify --fleet URL|ARCHIVE``: every host's chain, verified centrally and in parallel.

The evidence stream is pulled once (or an exported archive read), each log is verified on its own
(:mod:`.evidence`, which hands it to ``audit/verify``), one log per worker process so every core
works, and the verdicts are joined with what the gateways reported themselves (a shipper that saw
its log cut or rewritten) and with their status (a host silent beyond ``--silent-after``).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_policy.policy.fleet.collect import pull_fleet, read_archive, write_archive
from dsh_policy.policy.fleet.evidence import LogVerdict, verify_shipped_bytes


@dataclass(slots=True)
class FleetReport:
    logs: list[LogVerdict]
    reports: list[dict[str, Any]] = field(default_factory=list)
    silent: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    @property
    def flagged_hosts(self) -> list[str]:
        hosts = {verdict.host for verdict in self.logs if not verdict.intact}
        hosts |= {str(report.get("host")) for report in self.reports if report.get("kind") == "finding"}
        hosts |= {str(entry.get("host")) for entry in self.silent}
        return sorted(hosts)

    @property
    def ok(self) -> bool:
        return bool(self.logs) and not self.flagged_hosts

    @property
    def records(self) -> int:
        return sum(verdict.lines for verdict in self.logs)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "hosts": len({verdict.host for verdict in self.logs}),
            "logs": [verdict.to_json() for verdict in self.logs],
            "flagged_hosts": self.flagged_hosts,
            "findings": [report for report in self.reports if report.get("kind") == "finding"],
            "refusals": [report for report in self.reports if report.get("kind") == "refused"],
            "silent": self.silent,
            "records": self.records,
            "seconds": round(self.seconds, 3),
            "workers": self.workers,
        }


def _verify_file(host: str, log_id: str, path: str, key: str | None, live: bool, scratch: str) -> LogVerdict:
    """One log, in a worker: its segments are rewritten in this process's own scratch folder."""
    folder = Path(scratch) / str(os.getpid())
    folder.mkdir(exist_ok=True)
    return verify_shipped_bytes(
        host, log_id, Path(path).read_bytes(), public_key=key, live=live, scratch=folder
    )


def _verify_files(
    jobs: list[tuple[str, str, str]], key: str | None, live: bool, scratch: str
) -> list[LogVerdict]:
    return [_verify_file(host, log_id, path, key, live, scratch) for host, log_id, path in jobs]


def verify_archive(
    folder: Path, *, key: str | None, live: bool = True, workers: int | None = None
) -> FleetReport:
    """Verify every log of an archive, ``workers`` processes at once (default: every core)."""
    started = time.perf_counter()
    logs = read_archive(folder)
    count = max(1, min(workers or os.cpu_count() or 1, len(logs) or 1))
    # Largest first, so no worker is left with one big log at the end.
    order = sorted(logs.items(), key=lambda item: -item[1].stat().st_size)
    # Segments are rewritten there once per log: memory, where the machine offers it.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.mkdtemp(prefix="dsh-fleet-verify-", dir=shm)
    try:
        if count == 1:
            verdicts = [
                _verify_file(host, log_id, str(path), key, live, scratch) for (host, log_id), path in order
            ]
        else:
            # A few large tasks rather than one per log: each task costs a round trip to a worker.
            chunks: list[list[tuple[str, str, str]]] = [[] for _ in range(count * 2)]
            for index, ((host, log_id), path) in enumerate(order):
                chunks[index % len(chunks)].append((host, log_id, str(path)))
            with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork")) as pool:
                futures = [pool.submit(_verify_files, chunk, key, live, scratch) for chunk in chunks if chunk]
                verdicts = [verdict for future in futures for verdict in future.result()]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    verdicts.sort(key=lambda verdict: (verdict.host, verdict.log_id))
    return FleetReport(verdicts, seconds=time.perf_counter() - started, workers=count)


def verify_fleet(
    url: str, *, key: str | None, live: bool = True, workers: int | None = None, silent_after: float = 300.0
) -> FleetReport:
    """Pull the streams, verify every log, add the gateways' own findings and silent hosts."""
    from dsh_policy.policy.fleet.status import read_status, silent_hosts

    started = time.perf_counter()
    shipped, reports = asyncio.run(pull_fleet(url))
    statuses = asyncio.run(read_status(url))
    folder = Path(tempfile.mkdtemp(prefix="dsh-fleet-archive-"))
    try:
        write_archive(folder, shipped)
        report = verify_archive(folder, key=key, live=live, workers=workers)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report.reports = reports
    report.silent = silent_hosts(statuses, silent_after)
    report.seconds = time.perf_counter() - started
    return report


def render_text(report: FleetReport) -> str:
    lines = [
        f"verdict      {'INTACT' if report.ok else 'FLAGGED'}",
        f"hosts        {len({v.host for v in report.logs})} host(s), {len(report.logs)} log(s),"
        f" {report.records} line(s) in {report.seconds:.2f} s on {report.workers} worker(s)",
    ]
    for verdict in report.logs:
        state = "intact" if verdict.intact else "FLAGGED"
        verify = verdict.report
        extra = []
        if verdict.forks:
            extra.append(f"{len(verdict.forks)} fork(s) from seq {verdict.forks[0]}")
        if verdict.duplicates:
            extra.append(f"{verdict.duplicates} duplicate(s) dropped")
        counts = verify.get("reason_counts") or {}
        if counts:
            extra.append(", ".join(f"{reason} {count}" for reason, count in sorted(counts.items())))
        lines.append(
            f"  {verdict.host} {verdict.log_id}: {state},"
            f" seq {verify.get('first_seq')}..{verify.get('last_seq')}"
            + (f" ({'; '.join(extra)})" if extra else "")
        )
    for finding in (r for r in report.reports if r.get("kind") == "finding"):
        lines.append(f"  {finding.get('host')}: reported {finding.get('reason')}: {finding.get('message')}")
    for entry in report.silent:
        lines.append(f"  {entry.get('host')}: SILENT for {entry.get('silent_s')} s")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    """``dsh-policy verify --fleet URL|ARCHIVE [--key PUB] [--format json] [--workers N]``."""
    from dsh_policy.audit.arguments import CommandParser, parse_command

    parser = CommandParser(
        prog="dsh-policy verify --fleet",
        description="Verify every host's audit chain from the fleet's evidence stream (a nats:// URL) or an"
        " archive folder written by 'dsh-policy fleet export'.",
        epilog="exit status: 0 every log intact and no host flagged, 1 a host flagged, 2 usage or the bus"
        " cannot be read.",
    )
    parser.add_argument("--fleet", required=True, metavar="URL|ARCHIVE")
    parser.add_argument(
        "--key", metavar="PUB", help="the audit public key (Ed25519 PEM) every host signs with"
    )
    parser.add_argument(
        "--closed", action="store_true", help="logs are closed: an unsigned tail is a failure"
    )
    parser.add_argument("--workers", type=int, metavar="N", help="processes (default: every core)")
    parser.add_argument("--silent-after", type=float, default=300.0, metavar="S")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parse_command(parser, list(argv))
    if isinstance(args, int):
        return args
    live = not args.closed
    try:
        if "://" in args.fleet:
            report = verify_fleet(
                args.fleet, key=args.key, live=live, workers=args.workers, silent_after=args.silent_after
            )
        else:
            folder = Path(args.fleet)
            if not folder.is_dir():
                print(f"dsh-policy verify --fleet: {folder}: no such archive folder", file=sys.stderr)
                return 2
            report = verify_archive(folder, key=args.key, live=live, workers=args.workers)
    except (TimeoutError, OSError) as error:
        print(f"dsh-policy verify --fleet: cannot read the fleet: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), indent=2) if args.format == "json" else render_text(report))
    return 0 if report.ok else 1
