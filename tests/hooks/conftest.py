"""Fixtures for the hook adapter tests: run ``dsh-policy hook`` in-process with a given stdin."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.decide import Policy
from hook_testkit import PACK, HookRun, StdinText

_LOADED: dict[str, Any] = {}


class _MemoizedPolicy:
    """Stands in for ``Policy`` inside the hook command during tests: a hook process compiles its
    packs on every event, which is right for a process but makes hundreds of in-process runs slow.
    A policy is immutable, so equal inputs (same files, same mtimes, same params) may share one."""

    @staticmethod
    def load(paths: Any, **options: Any) -> Any:
        files = [str(path) for path in paths]
        stamps = [Path(path).stat().st_mtime_ns if Path(path).exists() else -1 for path in files]
        key = json.dumps([files, stamps, options], sort_keys=True, default=str)
        if key not in _LOADED:
            _LOADED[key] = Policy.load(paths, **options)
        return _LOADED[key]


@pytest.fixture
def run_hook(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Callable[..., HookRun]]:
    """``run_hook(harness, stdin, *args)``: stdin is bytes, str or a JSON-able object."""

    def run(harness: str, stdin: bytes | str | Any, *args: str, pack: Path | None = PACK) -> HookRun:
        if isinstance(stdin, str):
            raw = stdin.encode()
        elif isinstance(stdin, bytes):
            raw = stdin
        else:
            raw = json.dumps(stdin).encode()
        monkeypatch.setattr("dsh_policy.policy.cli.hook.Policy", _MemoizedPolicy)
        # These tests exercise the in-process adapter; the client/server path has its own tests.
        monkeypatch.setenv("DSH_POLICY_GATEWAY", "off")
        monkeypatch.setattr(sys, "stdin", StdinText(io.BytesIO(raw), encoding="utf-8"))
        capsys.readouterr()
        argv = ["hook", harness, *(["--pack", str(pack)] if pack is not None else []), *args]
        code = cli_main(argv)
        out, err = capsys.readouterr()
        return HookRun(code, out, err)

    yield run
