"""The examples in ``examples/`` run as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_plain_loop_example_decides_redacts_and_writes_a_verified_log() -> None:
    example = ROOT / "examples" / "plain_loop.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "DENY" in done.stdout
    assert "[REDACTED:openai-key]" in done.stdout
    assert "sk-proj-EXAMPLE" not in done.stdout
    assert "verify exit 0" in done.stdout
