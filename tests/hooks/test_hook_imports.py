"""A hook process pays only for what it uses: the adapter never imports the harness or the
gateway plugins (a process per event would pay for them on every tool call)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = (
    "import json, sys\n"
    "import dsh_policy.policy.hooks.in_process.adapter, dsh_policy.policy.hooks.gateway.audit\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith('dsh_policy'))))\n"
)


def test_the_hook_command_imports_neither_the_harness_nor_the_gateway_plugins() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "dsh_policy.policy.hooks.gateway.audit" in loaded  # the probe really imported the adapter
    harness = sorted(m for m in loaded if m.startswith("dsh_policy.core.") and m != "dsh_policy.core.frozen")
    assert harness == []
    assert "dsh_policy.policy.runtime.gateway" not in loaded
    assert "dsh_policy.policy.runtime.deployment" not in loaded


def test_the_hooks_never_import_the_cli() -> None:
    """The CLI calls the hooks, never the reverse: the slow path (deciding in process, the output
    filter's own policy) reaches the adapter and the logging set-up without ``policy.cli``."""
    import ast
    from pathlib import Path

    import dsh_policy

    root = Path(dsh_policy.__file__).parent
    offenders = []
    for path in sorted((root / "policy" / "hooks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names] if isinstance(node, ast.Import)
                else [f"{node.module}.{alias.name}" for alias in node.names]
                if isinstance(node, ast.ImportFrom) and node.module else []
            )
            if any(name.startswith("dsh_policy.policy.cli") for name in names):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []
