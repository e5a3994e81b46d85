"""Fixtures of the MCP tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def audit_log(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"
