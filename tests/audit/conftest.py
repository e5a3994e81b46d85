"""Fixtures of the audit tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from audit_helpers import WriteLog, gateway_fields
from dsh_policy.audit.keys import KeyPairFiles, write_key_pair
from dsh_policy.audit.writer import AuditWriter


@pytest.fixture(scope="session")
def key_pair(tmp_path_factory: pytest.TempPathFactory) -> KeyPairFiles:
    """One signing key for the whole session (key generation is cheap, PEM files are not needed twice)."""
    return write_key_pair(tmp_path_factory.mktemp("keys") / "audit")


@pytest.fixture
def log_format() -> int:
    """The format version ``write_log`` writes (the writer's default; modules override it to run
    over every format)."""
    return 2


@pytest.fixture
def write_log(tmp_path: Path, log_format: int) -> WriteLog:
    """Write ``count`` gateway records through the real writer; return the active segment path."""

    def write(count: int, name: str = "audit.jsonl", **options: Any) -> Path:
        path = tmp_path / name
        options.setdefault("fsync", "off")
        options.setdefault("format_version", log_format)
        with AuditWriter.open(path, **options) as writer:
            for index in range(count):
                writer.append("tool_result", gateway_fields(index))
        return path

    return write
