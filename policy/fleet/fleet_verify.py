"""``dsh-policy verify --fleet URL|ARCHIVE``: every host's chain, verified centrally and in parallel.

Each log is verified on its own (:mod:`.evidence`, which hands it to ``audit/verify``), the logs
shared out by size over one process per core (:mod:`.shares`); each process pulls its own logs'
subjects from the evidence stream (or reads its files of an exported archive), so nothing is
copied between them but the verdicts; and the verdicts are joined with what the gateways
reported themselves (a shipper that saw its log cut or rewritten) and with their status (a host
silent beyond ``--silent-after``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from dsh_policy.audit.keys import KeyFileError, load_public_key
from dsh_policy.audit.verify import PublicKeySource
from dsh_policy.policy.fleet.bus import EVIDENCE, connect
from dsh_policy.policy.fleet.collect import (
    Layout,
    Shipped,
    evidence_layout,
    log_of,
    pull_reports,
    pull_shipped,
    pull_subjects,
    read_archive,
)
from dsh_policy.policy.fleet.evidence import LogVerdict, verify_shipped_bytes
from dsh_policy.policy.fleet.shares import balance, run_share_batches

#: One log to verify: its archive file (read by the process that verifies it) or the lines
#: pulled from the stream.
Source = Path | list[bytes]


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


def _size(source: Source) -> int:
    if isinstance(source, Path):
        try:
            return source.stat().st_size
        except OSError:
            return 0
    return sum(map(len, source)) + len(source)


def _verify_one(key: PublicKeySource | None, live: bool, job: tuple[tuple[str, str], Source]) -> LogVerdict:
    (host, log_id), source = job
    data = source.read_bytes() if isinstance(source, Path) else b"\n".join(source) + b"\n"
    return verify_shipped_bytes(host, log_id, data, public_key=key, live=live)


def verify_logs(
    logs: Mapping[tuple[str, str], Source], *, key: str | None, live: bool = True, workers: int | None = None
) -> FleetReport:
    """Verify every log, ``workers`` processes at once (default: every core), each a share of
    near-equal size. Raises ``KeyFileError`` for a key that cannot be loaded, ``OSError`` for an
    archive file that cannot be read."""
    public = load_public_key(key) if key is not None else None  # once, not once per log
    jobs = list(logs.items())
    verify = partial(_verify_one, public, live)
    return _in_shares(
        jobs, [_size(source) for _, source in jobs], workers, lambda batch: list(map(verify, batch))
    )


def _in_shares(
    jobs: Sequence[Any], sizes: list[int], workers: int | None, work: Callable[[list[Any]], list[LogVerdict]]
) -> FleetReport:
    """``work`` on ``jobs`` in shares of near-equal size, one process per share (``workers``,
    default every core), the verdicts sorted by host and log."""
    started = time.perf_counter()
    count = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    shares = balance(sizes, count)
    verdicts = run_share_batches(jobs, shares, work)
    verdicts.sort(key=lambda verdict: (verdict.host, verdict.log_id))
    return FleetReport(verdicts, seconds=time.perf_counter() - started, workers=len(shares) or 1)


def verify_archive(
    folder: Path, *, key: str | None, live: bool = True, workers: int | None = None
) -> FleetReport:
    """Verify every log of an archive folder (each file is read by the process verifying it)."""
    return verify_logs(read_archive(folder), key=key, live=live, workers=workers)


def verify_fleet(
    url: str, *, key: str | None, live: bool = True, workers: int | None = None, silent_after: float = 300.0
) -> FleetReport:
    """Pull the streams, verify every log, add the gateways' own findings and silent hosts.

    Where the server lists every subject of the evidence stream, each process pulls its own
    share of the logs (balanced by their line counts) and verifies them, so the pull, which
    costs more CPU than the verification, runs on every core too; else this process pulls the
    whole stream and the processes verify it."""
    from dsh_policy.policy.fleet.status import read_status, silent_hosts

    started = time.perf_counter()
    layout, reports, shipped = asyncio.run(_survey(url))
    statuses = asyncio.run(read_status(url))
    if layout is None:
        report = verify_logs(shipped or {}, key=key, live=live, workers=workers)
    else:
        report = _pull_and_verify_shares(url, layout, key=key, live=live, workers=workers)
    report.reports = reports
    report.silent = silent_hosts(statuses, silent_after)
    report.seconds = time.perf_counter() - started
    return report


async def _survey(url: str) -> tuple[Layout | None, list[dict[str, Any]], Shipped | None]:
    """The evidence stream's layout and the reports; where the server does not list every
    subject (no layout), the whole evidence stream, pulled on the same connection."""
    connection = await connect(url, max_reconnect_attempts=3)
    try:
        js = connection.jetstream()
        layout = await evidence_layout(js)
        shipped = await pull_shipped(js) if layout is None else None
        return layout, await pull_reports(js), shipped
    finally:
        await connection.close()


def _pull_and_verify_shares(
    url: str, layout: Layout, *, key: str | None, live: bool, workers: int | None
) -> FleetReport:
    public = load_public_key(key) if key is not None else None
    jobs = [
        (subject, lines, log)
        for subject, lines in sorted(layout.subjects.items())
        if (log := log_of(subject)) is not None
    ]
    work = partial(_pull_and_verify, url, layout.last, public, live)
    return _in_shares(jobs, [lines for _, lines, _ in jobs], workers, work)


def _pull_and_verify(
    url: str,
    last: int,
    key: PublicKeySource | None,
    live: bool,
    batch: list[tuple[str, int, tuple[str, str]]],
) -> list[LogVerdict]:
    """One process's share: its logs' subjects pulled on one connection, then each verified."""
    pulled = asyncio.run(pull_subjects(url, [(subject, lines) for subject, lines, _ in batch], last))
    return [_verify_one(key, live, (log, pulled[subject])) for subject, _, log in batch]


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
            from nats.js.errors import NotFoundError

            try:
                report = verify_fleet(
                    args.fleet, key=args.key, live=live, workers=args.workers, silent_after=args.silent_after
                )
            except NotFoundError:
                print(
                    f"dsh-policy verify --fleet: {args.fleet} has no evidence stream ({EVIDENCE}):"
                    " no gateway has shipped to this bus yet",
                    file=sys.stderr,
                )
                return 2
        else:
            folder = Path(args.fleet)
            if not folder.is_dir():
                print(f"dsh-policy verify --fleet: {folder}: no such archive folder", file=sys.stderr)
                return 2
            report = verify_archive(folder, key=args.key, live=live, workers=args.workers)
    except KeyFileError as error:
        print(f"dsh-policy verify --fleet: {error}", file=sys.stderr)
        return 2
    except (TimeoutError, OSError) as error:
        print(f"dsh-policy verify --fleet: cannot read the fleet: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), indent=2) if args.format == "json" else render_text(report))
    return 0 if report.ok else 1
