"""Chaos on loopback, bounded: gateways ship while the bus is killed (SIGKILL) and restarted
twice, one gateway is SIGKILLed mid-publish and started again, one works offline and comes back.
At the end the stream holds every line of every local log exactly once, and every chain verifies.
Opt in with ``DSH_TEST_FLEET=1`` (about half a minute)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.segments import discover_segments
from dsh_policy.policy.fleet.bus import EVIDENCE, EVIDENCE_SUBJECTS, connect
from dsh_policy.policy.fleet.collect import pull_stream
from dsh_policy.policy.fleet.evidence import seq_and_hash
from dsh_policy.policy.fleet.fleet_verify import verify_fleet
from dsh_policy.policy.fleet.local_server import LocalServer

pytestmark = [
    pytest.mark.fleet,
    pytest.mark.skipif(os.environ.get("DSH_TEST_FLEET") != "1", reason="opt in with DSH_TEST_FLEET=1"),
]

GATEWAY = Path(__file__).with_name("chaos_gateway.py")
COUNT = 1500


def start(url: str, folder: Path, host: str, count: int, key: Path) -> subprocess.Popen[bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, str(GATEWAY), url, str(folder / "audit.jsonl"), host, str(count), str(key)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


def finish(process: subprocess.Popen[bytes]) -> None:
    output = process.communicate(timeout=120)[0].decode()
    assert process.returncode == 0, output


async def stream(url: str) -> list[tuple[str, bytes]]:
    connection = await connect(url, max_reconnect_attempts=2)
    try:
        return await pull_stream(connection.jetstream(), EVIDENCE, EVIDENCE_SUBJECTS)
    finally:
        await connection.close()


def test_totals_reconcile_exactly_after_bus_restarts_a_killed_gateway_and_an_offline_one(
    nats_server: LocalServer, keys: dict[str, KeyPairFiles], tmp_path: Path, wait_until: Callable[..., None]
) -> None:
    url, key = nats_server.url, keys["audit"].private_path
    hosts = {name: tmp_path / name for name in ("steady", "killed", "offline")}
    # The offline gateway writes its whole log while its bus address answers nothing.
    dead = LocalServer(tmp_path / "nowhere").url
    offline = start(dead, hosts["offline"], "offline", COUNT // 2, key)
    wait_until(lambda: (hosts["offline"] / "audit.jsonl").exists(), 30, "the offline gateway's log")

    steady = start(url, hosts["steady"], "steady", COUNT, key)
    killed = start(url, hosts["killed"], "killed", COUNT, key)
    cursor = hosts["killed"] / "audit.jsonl.shipped"
    wait_until(cursor.exists, 60, "the first acknowledged batch")
    nats_server.restart()  # the bus dies mid-stream (SIGKILL) and comes back
    time.sleep(0.3)
    os.kill(killed.pid, signal.SIGKILL)  # a gateway dies mid-publish
    killed.wait()
    nats_server.restart()
    killed = start(url, hosts["killed"], "killed", COUNT // 3, key)  # and starts again

    # The offline gateway stops (its lines wait in its log) and comes back with a bus.
    offline.kill()
    offline.wait()
    back = start(url, hosts["offline"], "offline", 10, key)
    for process in (steady, killed, back):
        finish(process)

    lines = asyncio.run(stream(url))
    in_stream = Counter((subject.split(".")[2], seq_and_hash(data)) for subject, data in lines)
    assert max(in_stream.values()) == 1, "a line reached the stream twice"
    on_disk = Counter(
        (host, seq_and_hash(line))
        for host, folder in hosts.items()
        for segment in discover_segments(folder / "audit.jsonl")
        for line in segment.read_bytes().splitlines()
    )
    assert in_stream == on_disk  # nothing lost, nothing extra: totals reconcile exactly
    report = verify_fleet(url, key=str(keys["audit"].public_path), silent_after=1e9)
    assert report.ok, [verdict.to_json() for verdict in report.logs if not verdict.intact]
    assert {verdict.host for verdict in report.logs} == set(hosts)
