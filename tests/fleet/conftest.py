"""A real nats-server with JetStream on loopback (the ``fleet`` extra installs it), stopped by PID."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dsh_policy.audit.keys import KeyPairFiles, write_key_pair
from dsh_policy.policy.fleet.local_server import LocalServer

PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata:
  name: fleet-test
spec:
  params:
    denied: rm
  rules:
    - id: deny-the-named-command
      stage: pre-execute
      when: 'args.command == params.denied'
      decision: deny
"""


@pytest.fixture(scope="module")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    server = LocalServer(tmp_path_factory.mktemp("nats") / "store").start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KeyPairFiles]:
    folder = tmp_path_factory.mktemp("keys")
    return {name: write_key_pair(folder / name) for name in ("publisher", "foreign", "audit")}


Wait = Callable[..., None]


@pytest.fixture
def wait_until() -> Wait:
    """Poll ``condition`` until true; fail naming ``what`` after ``timeout`` seconds (generous: the
    machine is shared; a hung test, never a timed assertion)."""

    def wait(condition: Callable[[], object], timeout: float = 60.0, what: str = "condition") -> None:
        give_up = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > give_up:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.02)

    return wait


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    path = tmp_path / "fleet-test.yaml"
    path.write_text(PACK, encoding="utf-8")
    return path
