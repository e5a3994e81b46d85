"""Fixtures for the hook adapter tests: run ``dsh-policy hook`` in-process with a given stdin."""

from __future__ import annotations

import io
import json
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.cli import main as cli_main
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec
from hook_testkit import PACK, HookRun, StdinText
from resident_kit import spec_for, start_gateway

_LOADED: dict[str, Any] = {}
_REAL_BUILD = PolicySources.build


@pytest.fixture(scope="session")
def gateway_a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DeploymentSpec, Path, Path]]:
    """A running gateway for a copy of the test pack, with an audit log and HTTP on loopback."""
    folder = tmp_path_factory.mktemp("gateway-a")
    pack = folder / "hook-guard.yaml"
    shutil.copy(PACK, pack)
    audit = folder / "audit.jsonl"
    spec = spec_for(pack=pack, audit=audit)
    process = start_gateway(spec, "--http", "127.0.0.1:0")
    try:
        yield spec, pack, audit
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def _memoized_build(sources: PolicySources, **options: Any) -> Any:
    """Stands in for ``PolicySources.build`` during tests: a hook process compiles its packs on
    every event, which is right for a process but makes hundreds of in-process runs slow. A
    compiled policy is immutable, so equal inputs (same files, same mtimes, same params) share one."""
    files = [str(path) for path in sources.packs]
    stamps = [Path(path).stat().st_mtime_ns if Path(path).exists() else -1 for path in files]
    inputs = [sources.params, sources.engine, sources.shadow, sources.unprotected, options]
    config = sources.config.path if sources.config is not None else None
    if config is not None:
        stamps.append(Path(config).stat().st_mtime_ns if Path(config).exists() else -1)
    key = json.dumps([files, stamps, inputs, config], sort_keys=True, default=str)
    if key not in _LOADED:
        _LOADED[key] = _REAL_BUILD(sources, **options)
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
        monkeypatch.setattr(PolicySources, "build", _memoized_build)
        # These tests exercise the in-process adapter; the client/server path has its own tests.
        monkeypatch.setenv("DSH_POLICY_GATEWAY", "off")
        monkeypatch.setattr(sys, "stdin", StdinText(io.BytesIO(raw), encoding="utf-8"))
        capsys.readouterr()
        argv = ["hook", harness, *(["--pack", str(pack)] if pack is not None else []), *args]
        code = cli_main(argv)
        out, err = capsys.readouterr()
        return HookRun(code, out, err)

    yield run
