"""Shared helpers for the policy engine tests: write small packs, load them, build a Policy."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.loading import LoadFailure

PACKS = Path(__file__).parent / "packs"

HEADER = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata:
  name: {name}
spec:
"""


@pytest.fixture
def write_pack(tmp_path: Path) -> Callable[..., Path]:
    """Write a pack whose ``spec:`` body is ``body`` (dedented, indented under spec)."""

    def write(body: str, name: str = "t", file: str | None = None) -> Path:
        spec = textwrap.indent(textwrap.dedent(body).strip("\n"), "  ")
        path = tmp_path / (file or f"{name}.yaml")
        path.write_text(HEADER.format(name=name) + spec + "\n", encoding="utf-8")
        return path

    return write


@pytest.fixture
def make_policy(write_pack: Callable[..., Path]) -> Callable[..., Policy]:
    """Build a Policy from a spec body (python engine); fails the test on load errors."""

    def make(body: str, **options: object) -> Policy:
        path = write_pack(body)
        options.setdefault("engine", "python")
        loaded = Policy.load([path], **options)
        assert not isinstance(loaded, LoadFailure), str(loaded)
        return loaded

    return make
