"""Each framework example runs offline as its docs say, denies one call, allows one, and ends with
its audit log verified INTACT (skipped, with the reason, when the framework's extra is missing)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: example file -> (a module the framework's extra installs, the extra)
EXAMPLES = {
    "adk.py": ("google.adk.runners", "adk"),
    "claude_agent_sdk.py": ("claude_agent_sdk", "claude-agent-sdk"),
    "langgraph.py": ("langchain.agents", "langgraph"),
    "openai_agents.py": ("agents.testing", "openai-agents"),
    "pydantic_ai.py": ("pydantic_ai.models.function", "pydantic-ai"),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_framework_example_runs_offline_and_verifies_its_log(example: str) -> None:
    module, extra = EXAMPLES[example]
    if not _installed(module):
        pytest.skip(f"the {extra} extra is not installed: pip install -e '.[{extra}]'")
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "frameworks" / example)],
        capture_output=True, text=True, timeout=300, cwd="/tmp",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:1] == ["DENY"] for line in lines), done.stdout
    assert any(line.split()[:1] == ["ALLOW"] for line in lines), done.stdout
    assert lines[-1].startswith("audit: ") and lines[-1].endswith("INTACT"), done.stdout
    assert "sk-proj-EXAMPLE" not in done.stdout
