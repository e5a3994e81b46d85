"""The per-user layout of ``measure_rates.py`` (deployment in ``~/.dsh-policy``, every supported
client wired, a project beside it) with its self-protection loaded: what the module-level tests of
this folder decide tool calls against, one layout per test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.config import policy_sources
from measure_rates import make_layout


@pytest.fixture(scope="module")
def layout(
    tmp_path_factory: pytest.TempPathFactory, private_runtime_dir: str
) -> Iterator[tuple[Any, dict[str, str]]]:
    names = make_layout(tmp_path_factory.mktemp("layout"), "per-user")
    names["runtime"] = private_runtime_dir
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", names["home"])
        patch.setenv("CLAUDE_PROJECT_DIR", names["project"])
        sources = policy_sources([], config=str(Path(names["deploy"]) / "gateway.yaml"))
        assert not isinstance(sources, list), sources
        yield sources.protection(), names
