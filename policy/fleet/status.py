"""Status back: what each gateway says about itself, and ``dsh-policy fleet status``.

Each gateway puts one JSON document under its own key of the :data:`~.bus.STATUS` bucket every
few seconds: host, user, the revision and digest in force, the digest the resident gateway
actually decides with, health, decision counts, what is shipped and what waits, the last bundle
refused. ``fleet status`` reads the bucket and says which hosts run which revision and which are
stale (behind the newest bundle), refused (the newest bundle is one it would not take) or silent
(no report for ``--silent-after`` seconds).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import orjson
from dsh_policy.policy.fleet.bus import BUNDLE_KEY, bundles_bucket, connect, status_bucket


async def read_status(url: str) -> list[dict[str, Any]]:
    """Every gateway's last report."""
    connection = await connect(url, max_reconnect_attempts=3)
    try:
        bucket = await status_bucket(connection.jetstream())
        out: list[dict[str, Any]] = []
        try:
            keys = await bucket.keys()
        except Exception:  # nats-py raises NoKeysError on an empty bucket
            return []
        for key in keys:
            entry = await bucket.get(key)
            if entry.value:
                try:
                    out.append(orjson.loads(entry.value))
                except orjson.JSONDecodeError:
                    out.append({"key": key, "unreadable": True})
        return sorted(out, key=lambda doc: (str(doc.get("host")), str(doc.get("gateway"))))
    finally:
        await connection.close()


async def newest_revision(url: str) -> int | None:
    connection = await connect(url, max_reconnect_attempts=3)
    try:
        bucket = await bundles_bucket(connection.jetstream())
        try:
            entry = await bucket.get(BUNDLE_KEY)
        except Exception:
            return None
        try:
            revision = orjson.loads(entry.value or b"{}").get("revision")
        except orjson.JSONDecodeError:
            return None
        return revision if isinstance(revision, int) else None
    finally:
        await connection.close()


def silent_hosts(
    statuses: list[dict[str, Any]], after: float, now: float | None = None
) -> list[dict[str, Any]]:
    now = time.time() if now is None else now
    out = []
    for status in statuses:
        reported = status.get("reported_at")
        age = now - reported if isinstance(reported, (int, float)) else None
        if age is None or age > after:
            out.append(
                {
                    "host": status.get("host"),
                    "gateway": status.get("gateway"),
                    "silent_s": round(age or -1, 1),
                }
            )
    return out


def summarize(statuses: list[dict[str, Any]], newest: int | None, silent_after: float) -> dict[str, Any]:
    now = time.time()
    silent = {(entry["host"], entry["gateway"]) for entry in silent_hosts(statuses, silent_after, now)}
    gateways = []
    for status in statuses:
        revision = status.get("revision")
        refused = status.get("last_refusal") or {}
        behind = newest is not None and (revision is None or revision < newest)
        if (status.get("host"), status.get("gateway")) in silent:
            state = "silent"
        elif behind and refused.get("revision") == newest:
            state = "refused"  # the newest bundle on the bus is one this gateway would not take
        else:
            state = "stale" if behind else "current"
        if state == "current" and not status.get("healthy", False):
            state = "unhealthy"
        gateways.append(
            {**status, "state": state, "age_s": round(now - float(status.get("reported_at", 0)), 1)}
        )
    return {
        "newest_revision": newest,
        "gateways": gateways,
        "counts": {
            state: sum(1 for g in gateways if g["state"] == state)
            for state in ("current", "stale", "refused", "silent", "unhealthy")
        },
    }


def render_text(summary: dict[str, Any]) -> str:
    lines = [
        f"newest bundle  revision {summary['newest_revision']}",
        "counts         " + ", ".join(f"{state} {count}" for state, count in summary["counts"].items()),
    ]
    for gateway in summary["gateways"]:
        refused = gateway.get("last_refusal")
        lines.append(
            f"  {gateway.get('host')}/{gateway.get('gateway')} ({gateway.get('user')}): {gateway['state']},"
            f" revision {gateway.get('revision')} {gateway.get('policy_digest')},"
            f" {gateway.get('decisions', 0)} decision(s), shipped through seq {gateway.get('shipped_seq')},"
            f" backlog {gateway.get('backlog')}, {gateway['age_s']} s ago"
            + (f"; refused revision {refused.get('revision')}: {refused.get('reason')}" if refused else "")
        )
    return "\n".join(lines)


def status_main(argv: Sequence[str]) -> int:
    """``dsh-policy fleet status --fleet URL [--format json] [--silent-after S]``."""
    from dsh_policy.audit.arguments import CommandParser, parse_command

    parser = CommandParser(prog="dsh-policy fleet status", description="Which hosts run which revision.")
    parser.add_argument("--fleet", required=True, metavar="URL")
    parser.add_argument("--silent-after", type=float, default=60.0, metavar="S")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parse_command(parser, list(argv))
    if isinstance(args, int):
        return args
    try:
        statuses = asyncio.run(read_status(args.fleet))
        newest = asyncio.run(newest_revision(args.fleet))
    except (TimeoutError, OSError) as error:
        print(f"dsh-policy fleet status: cannot reach {args.fleet}: {error}", file=sys.stderr)
        return 2
    summary = summarize(statuses, newest, args.silent_after)
    print(json.dumps(summary, indent=2) if args.format == "json" else render_text(summary))
    counts = summary["counts"]
    return 1 if counts["silent"] or counts["unhealthy"] or counts["refused"] else 0
