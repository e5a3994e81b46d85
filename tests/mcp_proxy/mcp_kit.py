"""Shared parts of the MCP tests: the proxy's command line around the demo server.

(The folder is ``mcp_proxy``, not ``mcp``: a test folder named ``mcp`` would shadow the SDK.)"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEMO_SERVER = HERE / "demo_server.py"
TEST_PACK = HERE / "mcp-test.yaml"
SHIPPED = [ROOT / "rules" / "secrets.yaml", ROOT / "rules" / "injection.yaml"]


def proxy_argv(
    audit: Path | None,
    *,
    packs: list[Path] | None = None,
    server: list[str] | None = None,
    name: str = "demo",
    extra: list[str] | None = None,
) -> list[str]:
    """``python -m dsh_policy.policy.cli mcp proxy ... -- python demo_server.py`` as argv."""
    chosen = packs if packs is not None else [TEST_PACK, *SHIPPED]
    argv = [sys.executable, "-m", "dsh_policy.policy.cli", "mcp", "proxy", "--name", name]
    argv += ["--pack", *map(str, chosen)]
    if audit is not None:
        argv += ["--audit", str(audit)]
    argv += extra or []
    return [*argv, "--", *(server or [sys.executable, str(DEMO_SERVER)])]
