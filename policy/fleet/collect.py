"""Pull the evidence stream (or read an exported archive) into lines per host and log.

An archive is a folder with one file per log, ``HOST/LOG_ID.jsonl``, holding the lines in stream
order, duplicates included: exactly what the stream held, so verifying the archive later gives the
verdict verifying the stream gave.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.fleet.bus import EVIDENCE, EVIDENCE_SUBJECTS, REPORT_SUBJECTS, REPORTS, connect

Shipped = dict[tuple[str, str], list[bytes]]


async def pull_stream(js: Any, stream: str, subjects: str, timeout: float = 5.0) -> list[tuple[str, bytes]]:
    """Every message in ``stream`` as it stood when the pull began: (subject, payload).

    An ordered consumer delivers them to a callback: nats-py's ``next_msg`` costs a timeout task
    per message, about three quarters of the pull's CPU (measured on 100,800 lines). The pull
    ends at the stream's last message as the pull began, or when nothing arrived for
    ``timeout`` seconds (messages deleted at the end)."""
    info = await js.stream_info(stream)
    if info.state.messages == 0:
        return []
    return await _pull(js, subjects, info.state.last_seq, None, timeout)


async def _pull(
    js: Any, subjects: str, last: int, expected: int | None, timeout: float
) -> list[tuple[str, bytes]]:
    """The messages on ``subjects`` up to stream seq ``last``: all of them once ``expected``
    arrived (when known), the one at ``last`` did, or nothing did for ``timeout`` seconds."""
    from nats.js.api import DeliverPolicy

    out: list[tuple[str, bytes]] = []
    finished = asyncio.get_running_loop().create_future()

    async def take(message: Any) -> None:
        at = _stream_seq(message)
        if at <= last:
            out.append((message.subject, message.data))
        if (at >= last or len(out) == expected) and not finished.done():
            finished.set_result(None)

    subscription = await js.subscribe(
        subjects, cb=take, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
    )
    try:
        arrived = -1
        while not finished.done() and len(out) != arrived:
            arrived = len(out)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(finished), timeout)
    finally:
        await subscription.unsubscribe()
    return out


@dataclass(frozen=True, slots=True)
class Layout:
    """The evidence stream as it stood: its last seq and how many lines each log's subject holds."""

    last: int
    subjects: dict[str, int]


async def evidence_layout(js: Any) -> Layout | None:
    """What the evidence stream holds, subject by subject; None when the server did not list every
    subject (it lists a bounded number) or the listing does not add up to the stream."""
    info = await js.stream_info(EVIDENCE, subjects_filter=EVIDENCE_SUBJECTS)
    subjects = {str(subject): int(count) for subject, count in (info.state.subjects or {}).items()}
    if sum(subjects.values()) != info.state.messages:
        return None
    return Layout(info.state.last_seq, subjects)


async def pull_subjects(
    url: str, subjects: list[tuple[str, int]], last: int, timeout: float = 5.0, at_once: int = 16
) -> dict[str, list[bytes]]:
    """The lines of each (subject, count) up to stream seq ``last``, ``at_once`` subjects at a time
    on one connection: what one process of ``verify --fleet`` pulls for its share of the logs."""
    connection = await connect(url, max_reconnect_attempts=3)
    try:
        js = connection.jetstream()
        gate = asyncio.Semaphore(at_once)

        async def one(subject: str, count: int) -> list[bytes]:
            async with gate:
                return [data for _, data in await _pull(js, subject, last, count, timeout)]

        pulled = await asyncio.gather(*(one(subject, count) for subject, count in subjects))
        return {subject: lines for (subject, _), lines in zip(subjects, pulled, strict=True)}
    finally:
        await connection.close()


def _stream_seq(message: Any) -> int:
    """A JetStream message's stream sequence, read off its reply subject: ``$JS.ACK.<stream>.
    <consumer>.<delivered>.<stream seq>...`` (9 tokens) or, with a domain and an account hash
    before the stream, 11 or more (ADR-15). nats-py's ``metadata`` builds a datetime and two
    dataclasses per message for it, a third of the pull's CPU."""
    tokens = (message.reply or "").split(".")
    if tokens[:2] == ["$JS", "ACK"] and (len(tokens) == 9 or len(tokens) >= 11):
        return int(tokens[5] if len(tokens) == 9 else tokens[7])
    return int(message.metadata.sequence.stream)  # raises NotJSMessageError, as it would have


def group_evidence(messages: list[tuple[str, bytes]]) -> Shipped:
    """Lines per (host, log id), from subjects ``dsh.audit.HOST.LOG_ID``."""
    grouped: Shipped = defaultdict(list)
    for subject, data in messages:
        log = log_of(subject)
        if log is not None:
            grouped[log].append(data)
    return dict(grouped)


def log_of(subject: str) -> tuple[str, str] | None:
    """(host, log id) of an evidence subject ``dsh.audit.HOST.LOG_ID``."""
    parts = subject.split(".", 3)
    return (parts[2], parts[3]) if len(parts) == 4 else None


async def pull_reports(js: Any) -> list[dict[str, Any]]:
    """What the gateways reported (refused bundles, shipper findings)."""
    import orjson

    reports: list[dict[str, Any]] = []
    try:
        for _, data in await pull_stream(js, REPORTS, REPORT_SUBJECTS):
            try:
                reports.append(orjson.loads(data))
            except orjson.JSONDecodeError:
                continue
    except Exception:  # no reports stream yet: no gateway reported anything
        return []
    return reports


async def pull_evidence(url: str) -> Shipped:
    """The whole evidence stream, grouped by log."""
    connection = await connect(url, max_reconnect_attempts=3)
    try:
        return await pull_shipped(connection.jetstream())
    finally:
        await connection.close()


async def pull_shipped(js: Any) -> Shipped:
    """The whole evidence stream on an open JetStream context, grouped by log."""
    return group_evidence(await pull_stream(js, EVIDENCE, EVIDENCE_SUBJECTS))


def write_archive(folder: Path, shipped: Shipped) -> int:
    """Write ``shipped`` as an archive; the number of lines written."""
    total = 0
    for (host, log_id), lines in shipped.items():
        target = folder / host
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{log_id}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        total += len(lines)
    return total


def read_archive(folder: Path) -> dict[tuple[str, str], Path]:
    """The logs of an archive: (host, log id) -> file."""
    return {
        (path.parent.name, path.name.removesuffix(".jsonl")): path
        for path in sorted(folder.glob("*/*.jsonl"))
    }
