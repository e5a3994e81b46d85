"""One simulated gateway for the chaos test, as its own process: appends ``COUNT`` records to its
audit log (``fsync=always``: every append that returned is on disk) while its fleet agent ships
them, then closes the log and waits until the stream acknowledged every line, the closing
checkpoint included. Run: ``python chaos_gateway.py URL LOG HOST COUNT KEY``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson
from dsh_policy.audit.segments import discover_segments
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.fleet.agent import AgentSettings, FleetAgent


def last_seq(log: Path) -> int:
    lines = discover_segments(log)[-1].read_bytes().splitlines()
    return int(orjson.loads(lines[-1])["seq"])


def main() -> int:
    url, log, host, count, key = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    agent = FleetAgent(
        AgentSettings(
            url,
            log.parent / "state",
            {},
            audit_log=str(log),
            host=host,
            ship_interval=0.05,
            status_interval=0.5,
        )
    )
    agent.start()
    with AuditWriter.open(
        log, fsync="always", checkpoint_every=100, rotate_bytes=64 * 1024, signing_key=key
    ) as writer:
        for n in range(count):
            writer.append("hook_event", {"n": n, "host": host})
            if n % 50 == 0:
                time.sleep(0.01)
    end = last_seq(log)
    assert agent.shipper is not None
    while agent.shipper.cursor.seq < end:
        time.sleep(0.05)
    agent.stop()
    print(f"{host} shipped through {end}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
