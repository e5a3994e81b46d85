"""What every framework's parity test starts from (:mod:`adapter_parity_kit`): the shipped packs,
the shared calls, and the in-process gateway's run of them, once per test module."""

from __future__ import annotations

import anyio
import pytest
from adapter_parity_kit import Call, Run, load_packs, reference_run, shared_calls
from dsh_policy.policy import Policy


@pytest.fixture(scope="module")
def policy() -> Policy:
    return load_packs()


@pytest.fixture(scope="module")
def calls() -> list[Call]:
    return shared_calls()


@pytest.fixture(scope="module")
def reference(policy: Policy, calls: list[Call], tmp_path_factory: pytest.TempPathFactory) -> Run:
    return anyio.run(reference_run, policy, calls, tmp_path_factory.mktemp("ref") / "ref.jsonl")
