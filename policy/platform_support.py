"""Where dsh-policy runs: Linux, CPython 3.11 to 3.13. Elsewhere it refuses to guard anything.

Two protections depend on Linux. The audit writer serializes every process appending to one log
with ``fcntl`` locks (Windows has none), and the resident gateway checks who is on the other end of
its socket with ``SO_PEERCRED`` (Linux only: on macOS that check would be skipped, so any local
process of another user could talk to the gateway). A guard with a protection silently missing is
worse than no guard, so the commands that enforce policy (hooks, the gateway, the MCP proxy,
scripted runs, ``init``, ``doctor``) stop with a message saying so. The commands that only read
(``verify``, ``log``, ``check``, ``explain``, ``diff``, ``replay``, ...) run anywhere Python does:
an auditor may verify a log on any machine. ``DSH_POLICY_UNSUPPORTED_PLATFORM=allow`` lets an
operator run the rest anyway, knowingly (tests of a port).
"""

from __future__ import annotations

import os
import sys

SUPPORTED = "Linux with CPython 3.11, 3.12 or 3.13"
OVERRIDE_VARIABLE = "DSH_POLICY_UNSUPPORTED_PLATFORM"
#: Commands that enforce policy, and so need every protection.
ENFORCING = frozenset({"hook", "serve", "mcp", "redact-output", "run", "init", "doctor"})


def platform_problem(command: str, platform: str | None = None) -> str | None:
    """Why ``command`` must not run on this platform, or None."""
    where = sys.platform if platform is None else platform
    if where.startswith("linux") or command not in ENFORCING:
        return None
    if os.environ.get(OVERRIDE_VARIABLE) == "allow":
        return None
    return (
        f"dsh-policy {command} is not supported on {where}: it runs on {SUPPORTED}. The audit log's "
        "file locks (fcntl) and the gateway's check of who connects (SO_PEERCRED) are Linux's, and a "
        "guard with a protection missing is refused rather than run. Verifying and reading logs "
        f"(verify, log, check, diff, replay) works here; {OVERRIDE_VARIABLE}=allow runs it anyway"
    )
