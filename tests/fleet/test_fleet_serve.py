"""``dsh-policy serve --fleet``: the real resident gateway, fed by a real JetStream server. A hook
decides with the published bundle, then with the next one; the gateway's status and its audit
lines reach the bus. Opt in with ``DSH_TEST_FLEET=1`` (processes that compile packs: seconds)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.policy.fleet.fleet_verify import verify_fleet
from dsh_policy.policy.fleet.local_server import LocalServer
from dsh_policy.policy.fleet.status import read_status

pytestmark = [
    pytest.mark.fleet,
    pytest.mark.skipif(os.environ.get("DSH_TEST_FLEET") != "1", reason="opt in with DSH_TEST_FLEET=1"),
]

CLI = [sys.executable, "-m", "dsh_policy.policy.cli"]


def run(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *argv], input=stdin, capture_output=True, timeout=120, check=False)


def publish(pack: Path, revision: int, key: Path, url: str, folder: Path, *params: str) -> None:
    bundle = folder / f"r{revision}.json"
    extra = [arg for param in params for arg in ("--param", param)]
    assert (
        run(
            "bundle", "build", "--pack", str(pack), "--revision", str(revision), "--out", str(bundle), *extra
        ).returncode
        == 0
    )
    assert run("bundle", "sign", str(bundle), "--key", str(key)).returncode == 0
    done = run("bundle", "publish", str(bundle), "--fleet", url)
    assert done.returncode == 0, done.stderr


def hook(config: Path, audit: Path, command: str) -> int:
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "fleet",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": "/tmp",
    }
    done = run(
        "hook",
        "claude-code",
        "--config",
        str(config),
        "--audit",
        str(audit),
        stdin=json.dumps(event).encode(),
    )
    return done.returncode


def test_a_resident_gateway_decides_with_each_published_bundle_and_reports_back(
    nats_server: LocalServer,
    keys: dict[str, KeyPairFiles],
    pack: Path,
    tmp_path: Path,
    wait_until: Callable[..., None],
) -> None:
    url = nats_server.url
    publish(pack, 1, keys["publisher"].private_path, url, tmp_path)
    state, audit = tmp_path / "state", tmp_path / "audit.jsonl"
    gateway = subprocess.Popen(
        [
            *CLI,
            "serve",
            "--fleet",
            url,
            "--publisher-key",
            str(keys["publisher"].public_path),
            "--fleet-state",
            str(state),
            "--fleet-name",
            "laptop",
            "--audit",
            str(audit),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        config = state / "deployment.yaml"
        wait_until(config.exists, 60, "the bundle on disk")
        assert hook(config, audit, "rm") == 2 and hook(config, audit, "ls") == 0
        publish(pack, 2, keys["publisher"].private_path, url, tmp_path, "denied=ls")
        wait_until(lambda: hook(config, audit, "ls") == 2, 60, "revision 2 in force")
        assert hook(config, audit, "rm") == 0

        def reported() -> bool:
            statuses = asyncio.run(read_status(url))
            return any(
                s["gateway"] == "laptop" and s["revision"] == 2 and s["decisions"] >= 4 for s in statuses
            )

        wait_until(reported, 30, "the status report")
    finally:
        os.kill(gateway.pid, signal.SIGTERM)
        output = gateway.communicate(timeout=60)[0].decode()
    assert gateway.returncode == 0, output
    report = verify_fleet(url, key=None)
    assert [verdict.intact for verdict in report.logs] == [True]
    # Every line the gateway wrote, its closing checkpoint included, reached the stream.
    assert report.logs[0].lines == sum(1 for _ in audit.read_bytes().splitlines())
