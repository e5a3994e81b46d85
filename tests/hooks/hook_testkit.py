"""Helpers shared by the hook adapter tests (a uniquely named module: several test directories
have a ``conftest.py``, so ``from conftest import ...`` would pick whichever was imported first)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PAYLOADS = HERE / "payloads"
PACK = HERE / "packs" / "hook-guard.yaml"


@dataclass(frozen=True)
class HookRun:
    """What one hook invocation emitted."""

    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        """stdout parsed as the one JSON object the protocol allows."""
        assert self.stdout.count("\n") == 1, self.stdout
        return json.loads(self.stdout)


def payload(harness: str, name: str) -> dict[str, Any]:
    """A recorded payload from ``payloads/<harness>/<name>.json``."""
    document: dict[str, Any] = json.loads((PAYLOADS / harness / f"{name}.json").read_text())
    return document


class StdinText(io.TextIOWrapper):
    """A text stdin over bytes, with ``.buffer`` as the hook reads it."""
