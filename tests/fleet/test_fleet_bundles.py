"""Signed bundles on a real JetStream server: two gateways pick one up and decide with it through
the ordinary reload path; a rollback, a bad signature and a foreign publisher are refused by both,
reported, and change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from dsh_policy.audit.keys import KeyPairFiles, key_id, load_private_key, load_public_key
from dsh_policy.policy.cli import main as cli
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.fleet.agent import AgentSettings, FleetAgent
from dsh_policy.policy.fleet.bundle import parse_bundle
from dsh_policy.policy.fleet.bus import BUNDLE_KEY, REPORT_SUBJECTS, REPORTS, bundles_bucket, connect
from dsh_policy.policy.fleet.collect import pull_stream
from dsh_policy.policy.fleet.local_server import LocalServer
from dsh_policy.policy.fleet.materialize import DEPLOYMENT
from dsh_policy.policy.runtime.reload import ReloadingPolicy


def build(pack: Path, revision: int, out: Path, key: Path | None, *params: str) -> Path:
    argv = [
        "bundle",
        "build",
        "--pack",
        str(pack),
        "--engine",
        "python",
        "--revision",
        str(revision),
        "--out",
        str(out),
    ]
    for param in params:
        argv += ["--param", param]
    assert cli(argv) == 0
    if key is not None:
        assert cli(["bundle", "sign", str(out), "--key", str(key)]) == 0
    return out


async def put_raw(url: str, data: bytes) -> None:
    """Put a bundle on the bus as an attacker with bus access would: no publisher-side checks."""
    connection = await connect(url, max_reconnect_attempts=1)
    try:
        await (await bundles_bucket(connection.jetstream())).put(BUNDLE_KEY, data)
    finally:
        await connection.close()


async def reports(url: str) -> list[dict[str, Any]]:
    connection = await connect(url, max_reconnect_attempts=1)
    try:
        return [
            orjson.loads(data)
            for _, data in await pull_stream(connection.jetstream(), REPORTS, REPORT_SUBJECTS)
        ]
    finally:
        await connection.close()


def decide(policy: ReloadingPolicy, command: str) -> str:
    return policy.pre_execute(ToolCallEvent("shell", {"command": command})).decision


def test_two_gateways_follow_signed_bundles_and_refuse_rollback_forgery_and_foreign_keys(
    nats_server: LocalServer,
    keys: dict[str, KeyPairFiles],
    pack: Path,
    tmp_path: Path,
    wait_until: Callable[..., None],
) -> None:
    url = nats_server.url
    publisher = load_public_key(keys["publisher"].public_path)
    agents = [
        FleetAgent(
            AgentSettings(
                url, tmp_path / f"gw{n}", {key_id(publisher): publisher}, host=f"host{n}", status_interval=0.2
            )
        )
        for n in (1, 2)
    ]
    first = build(pack, 1, tmp_path / "r1.json", keys["publisher"].private_path)
    assert cli(["bundle", "publish", str(first), "--fleet", url]) == 0
    for agent in agents:
        agent.start()
    try:
        wait_until(
            lambda: all(a.active and a.active.revision == 1 for a in agents), what="revision 1 everywhere"
        )
        # Each gateway decides through the reload path, from the deployment file the bundle became.
        policies = []
        for agent in agents:
            policy = ReloadingPolicy.load_watching(
                [], config=str(agent.settings.state / DEPLOYMENT), interval=0
            )
            assert isinstance(policy, ReloadingPolicy), policy
            assert decide(policy, "rm") == "deny" and decide(policy, "ls") == "allow"
            policies.append(policy)

        second = build(pack, 2, tmp_path / "r2.json", keys["publisher"].private_path, "denied=ls")
        assert cli(["bundle", "publish", str(second), "--fleet", url]) == 0
        wait_until(
            lambda: all(a.active and a.active.revision == 2 for a in agents), what="revision 2 everywhere"
        )
        for policy in policies:
            assert policy.check_now() is True
            assert decide(policy, "ls") == "deny" and decide(policy, "rm") == "allow"

        # The publisher command refuses to go back; an attacker with bus access puts it anyway.
        assert cli(["bundle", "publish", str(first), "--fleet", url]) == 1
        asyncio.run(put_raw(url, first.read_bytes()))
        # A validly signed revision 3 altered after signing, and one signed by another key.
        tampered = parse_bundle(
            build(pack, 3, tmp_path / "r3.json", keys["publisher"].private_path).read_bytes()
        )
        assert not isinstance(tampered, type(None))
        document = orjson.loads(tampered.to_bytes())  # type: ignore[union-attr]
        document["params"] = {"denied": "nothing-at-all"}
        asyncio.run(put_raw(url, orjson.dumps(document)))
        foreign = build(pack, 4, tmp_path / "r4.json", keys["foreign"].private_path, "denied=nothing")
        asyncio.run(put_raw(url, foreign.read_bytes()))

        expected = {"ROLLBACK", "BAD_SIGNATURE", "FOREIGN_PUBLISHER"}
        wait_until(
            lambda: all({r.reason for r in a.refusals} >= expected for a in agents), what="three refusals"
        )
        wait_until(
            lambda: (
                {(r["host"], r["reason"]) for r in asyncio.run(reports(url))}
                >= {(h, reason) for h in ("host1", "host2") for reason in expected}
            ),
            what="refusals reported to the fleet",
        )
        for agent, policy in zip(agents, policies, strict=True):
            assert agent.active is not None and agent.active.revision == 2
            assert policy.check_now() is False and decide(policy, "ls") == "deny"
            assert sorted(p.name for p in (agent.settings.state / "revisions").iterdir()) == [
                "0000000001",
                "0000000002",
            ]  # nothing of a refused bundle was written where the gateway reads
        status = agents[0].status()
        assert status["revision"] == 2 and status["last_refusal"]["reason"] == "FOREIGN_PUBLISHER"

        def fleet_status() -> tuple[int, dict[str, Any]]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = cli(["fleet", "status", "--fleet", url, "--format", "json"])
            text = out.getvalue()
            return code, json.loads(text) if text.strip() else {"gateways": []}

        seen: list[dict[str, Any]] = [{}]

        def both_current() -> bool:
            # Polled until the status reports have arrived (a read before them is not the answer):
            # exit 1, because the newest bundle on the bus is the foreign one, which both refused.
            code, seen[0] = fleet_status()
            states = {(g["host"], g["revision"], g["state"]) for g in seen[0]["gateways"]}
            return code == 1 and states == {("host1", 2, "refused"), ("host2", 2, "refused")}

        try:
            wait_until(both_current, what="fleet status: both at revision 2, the newest refused")
        except AssertionError:
            raise AssertionError(seen[0]) from None
    finally:
        for agent in agents:
            agent.stop()
    assert load_private_key(keys["publisher"].private_path)  # the key files stayed readable
