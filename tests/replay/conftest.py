"""Replay tests compile the shipped packs many times over (every CLI run compiles its candidate):
a compiled policy is immutable, so equal inputs (same files and mtimes, same options) share one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy import config, loading
from dsh_policy.policy.decide import facade

_COMPILED: dict[str, Any] = {}
_build = loading.build_policy


def _memoized_build(paths: Any, **options: Any) -> Any:
    files = [str(path) for path in paths]
    stamps = [Path(path).stat().st_mtime_ns if Path(path).exists() else -1 for path in files]
    key = json.dumps([files, stamps, options], sort_keys=True, default=repr)
    if key not in _COMPILED:
        _COMPILED[key] = _build(paths, **options)
    return _COMPILED[key]


@pytest.fixture(autouse=True, scope="module")  # undone after each module: other folders compile for real
def _share_compiled_policies() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for module in (config, facade, loading):
            patch.setattr(module, "build_policy", _memoized_build)
        yield
