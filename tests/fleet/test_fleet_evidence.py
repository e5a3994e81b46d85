"""Evidence on a real JetStream server: two hosts ship their audit logs; the bus is killed and
restarted mid-stream and the stream ends with every line exactly once; a host whose log was cut
back and written again is flagged by ``verify --fleet``, its own shipper reports the cut, and the
honest host verifies intact (from the stream and from an exported archive)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.segments import discover_segments as segments
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.cli import main as cli
from dsh_policy.policy.fleet.bus import EVIDENCE, EVIDENCE_SUBJECTS, connect, ensure_evidence
from dsh_policy.policy.fleet.collect import pull_stream
from dsh_policy.policy.fleet.evidence import seq_and_hash
from dsh_policy.policy.fleet.local_server import LocalServer
from dsh_policy.policy.fleet.shipper import Shipper


def write(log: Path, key: Path, count: int) -> None:
    with AuditWriter.open(
        log, fsync="off", checkpoint_every=40, rotate_bytes=16_384, signing_key=key
    ) as writer:
        for n in range(count):
            writer.append("hook_event", {"n": n, "note": "x" * 40})


async def ship(url: str, shippers: list[Shipper], *, kill: Callable[[], None] | None = None) -> None:
    """Ship everything; ``kill`` is called once, after the first batch was acknowledged."""
    connection = await connect(url)
    try:
        js = connection.jetstream()
        await ensure_evidence(js)
        if kill is not None:
            await shippers[0].ship_once(connection)
            kill()  # the bus dies (SIGKILL) and comes back on the same port and store
        for _ in range(200):
            results = [await shipper.ship_all(connection, timeout=2.0) for shipper in shippers]
            if not any(results) and all(s.state.last_error is None and not s.pending(1) for s in shippers):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"shipping never finished: {[s.state for s in shippers]}")
    finally:
        await connection.close()


async def stream(url: str) -> list[tuple[str, bytes]]:
    connection = await connect(url, max_reconnect_attempts=2)
    try:
        return await pull_stream(connection.jetstream(), EVIDENCE, EVIDENCE_SUBJECTS)
    finally:
        await connection.close()


def run_cli(argv: list[str]) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(argv)
    return code, json.loads(out.getvalue())


def test_evidence_survives_a_killed_bus_and_a_cut_log_is_flagged(
    nats_server: LocalServer, keys: dict[str, KeyPairFiles], tmp_path: Path
) -> None:
    url, key = nats_server.url, keys["audit"].private_path
    logs = {host: tmp_path / host / "audit.jsonl" for host in ("honest", "cut")}
    for log in logs.values():
        write(log, key, 300)
    findings: list[dict[str, Any]] = []
    shippers = [Shipper(log, host, batch=128, on_finding=findings.append) for host, log in logs.items()]
    asyncio.run(ship(url, shippers, kill=nats_server.restart))

    lines = asyncio.run(stream(url))
    per_record = Counter((subject, seq_and_hash(data)) for subject, data in lines)
    on_disk = sum(len(p.read_bytes().splitlines()) for log in logs.values() for p in segments(log))
    assert len(lines) == on_disk and set(per_record.values()) == {1}  # none lost, none twice

    # Cut the second host's active segment back to its first half and let the writer go on.
    active = logs["cut"]
    content = active.read_bytes().splitlines(keepends=True)
    active.write_bytes(b"".join(content[: len(content) // 2]))
    write(active, key, 20)
    asyncio.run(ship(url, shippers))
    assert len(findings) == 1 and findings[0]["reason"] in {"TRUNCATED", "REWRITTEN"}
    # The cut log goes on past the seq shipped: those lines do ship, and do not chain.
    write(active, key, 300)
    asyncio.run(ship(url, shippers))

    code, report = run_cli(
        ["verify", "--fleet", url, "--key", str(keys["audit"].public_path), "--format", "json"]
    )
    assert code == 1
    by_host = {entry["host"]: entry for entry in report["logs"]}
    assert by_host["honest"]["intact"] and by_host["honest"]["duplicates"] == 0
    assert not by_host["cut"]["intact"] and by_host["cut"]["verify"]["reason_counts"].get("PREV_MISMATCH")
    assert report["flagged_hosts"] == ["cut"]

    archive = tmp_path / "archive"
    assert cli(["fleet", "export", "--fleet", url, "--out", str(archive)]) == 0
    code, offline = run_cli(
        ["verify", "--fleet", str(archive), "--key", str(keys["audit"].public_path), "--format", "json"]
    )
    assert code == 1 and offline["flagged_hosts"] == ["cut"]
    assert [entry["intact"] for entry in offline["logs"]] == [entry["intact"] for entry in report["logs"]]


def test_a_pull_ends_at_the_last_message_as_it_began_or_after_an_idle_timeout(
    nats_server: LocalServer,
) -> None:
    from nats.js.api import StreamConfig

    async def scenario() -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
        connection = await connect(nats_server.url, max_reconnect_attempts=2)
        try:
            js = connection.jetstream()
            await js.add_stream(StreamConfig(name="PULL_TEST", subjects=["pull.test.>"]))
            for n in range(300):
                await js.publish(f"pull.test.h{n % 3}", b"line %d" % n)
            whole = await pull_stream(js, "PULL_TEST", "pull.test.>")
            # The last message deleted: the pull waits for it until nothing arrives for a while.
            await js.delete_msg("PULL_TEST", 300)
            cut = await pull_stream(js, "PULL_TEST", "pull.test.>", timeout=0.5)
            return whole, cut
        finally:
            await connection.close()

    whole, cut = asyncio.run(scenario())
    assert [data for _, data in whole] == [b"line %d" % n for n in range(300)]
    assert [subject for subject, _ in whole[:4]] == [
        "pull.test.h0",
        "pull.test.h1",
        "pull.test.h2",
        "pull.test.h0",
    ]
    assert cut == whole[:299]


def test_the_stream_seq_is_read_off_both_reply_forms() -> None:
    from types import SimpleNamespace

    from dsh_policy.policy.fleet.collect import _stream_seq

    v1 = SimpleNamespace(reply="$JS.ACK.DSH_EVIDENCE.c1.1.4711.12.1700000000000000000.3")
    v2 = SimpleNamespace(reply="$JS.ACK.hub.ACCHASH.DSH_EVIDENCE.c1.1.4712.12.1700000000000000000.3.r4nd")
    assert _stream_seq(v1) == 4711 and _stream_seq(v2) == 4712


def test_each_process_pulls_its_own_logs_and_the_verdicts_are_those_of_one_pull(
    nats_server: LocalServer, keys: dict[str, KeyPairFiles], tmp_path: Path, monkeypatch: Any
) -> None:
    import dsh_policy.policy.fleet.fleet_verify as fleet_verify

    key = keys["audit"].private_path
    logs = {f"share{n}": tmp_path / f"share{n}" / "audit.jsonl" for n in range(5)}
    for n, log in enumerate(logs.values()):
        write(log, key, 60 + 50 * n)
    asyncio.run(ship(nats_server.url, [Shipper(log, host, batch=128) for host, log in logs.items()]))
    public = str(keys["audit"].public_path)

    shared: list[int] = []
    real = fleet_verify._pull_and_verify_shares

    def spy(*args: Any, **kwargs: Any) -> Any:
        report = real(*args, **kwargs)
        shared.append(report.workers)
        return report

    monkeypatch.setattr(fleet_verify, "_pull_and_verify_shares", spy)
    by_shares = fleet_verify.verify_fleet(nats_server.url, key=public, workers=2, silent_after=1e9)
    assert shared == [2]  # the stream listed its subjects: two processes pulled their own
    monkeypatch.setattr(fleet_verify, "evidence_layout", _no_layout)
    one_pull = fleet_verify.verify_fleet(nats_server.url, key=public, workers=2, silent_after=1e9)
    assert shared == [2]
    ignore = {"seconds": 0, "workers": 0}
    assert by_shares.to_json() | ignore == one_pull.to_json() | ignore
    mine = [verdict for verdict in by_shares.logs if verdict.host in logs]
    assert len(mine) == 5 and all(verdict.intact for verdict in mine)
    assert sum(verdict.lines for verdict in mine) == sum(
        len(p.read_bytes().splitlines()) for log in logs.values() for p in segments(log)
    )


async def _no_layout(js: Any) -> None:
    return None


def test_a_bus_without_evidence_is_said_so(tmp_path: Path, capsys: Any) -> None:
    server = LocalServer(tmp_path / "store").start()
    try:
        assert cli(["verify", "--fleet", server.url]) == 2
    finally:
        server.kill()
    assert (
        "no evidence stream (DSH_EVIDENCE): no gateway has shipped to this bus yet" in capsys.readouterr().err
    )
