"""Session-wide test isolation that every test directory needs.

A ``dsh-policy hook`` run anywhere in the suite (a subprocess, or ``cli.main`` in process) may
start a resident gateway. They all live in a runtime folder of the session's own, never the
user's ``/tmp/dsh-policy-<uid>``, and are stopped when the session ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

RUNTIME_DIR_VARIABLE = "DSH_POLICY_RUNTIME_DIR"  # dsh_policy.policy.gateway_folders


@pytest.fixture(autouse=True, scope="session")
def private_runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("runtime")
    folder.chmod(0o700)
    saved = os.environ.get(RUNTIME_DIR_VARIABLE)
    os.environ[RUNTIME_DIR_VARIABLE] = str(folder)
    try:
        yield str(folder)
    finally:
        _stop_gateways(folder)
        if saved is None:
            os.environ.pop(RUNTIME_DIR_VARIABLE, None)
        else:
            os.environ[RUNTIME_DIR_VARIABLE] = saved


def _stop_gateways(folder: Path) -> None:
    """SIGTERM every gateway serving from ``folder``, by the pid its lock file holds (checked to
    be a ``serve`` process of ours before it is signalled)."""
    for lock in folder.glob("*.lock"):
        with contextlib.suppress(ValueError, OSError):
            pid = int(lock.read_text().strip() or 0)
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if pid > 0 else []
            if b"serve" in argv and any(b"dsh_policy" in word for word in argv):
                os.kill(pid, signal.SIGTERM)


#: The system files ``init --managed`` writes and ``doctor`` reads: never the machine's own in tests.
SYSTEM_FILE_VARIABLES = ("DSH_POLICY_CLAUDE_MANAGED_SETTINGS", "DSH_POLICY_MANAGED_DEPLOYMENT")


@pytest.fixture(autouse=True, scope="session")
def private_system_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    folder = tmp_path_factory.mktemp("etc")
    saved = {name: os.environ.get(name) for name in SYSTEM_FILE_VARIABLES}
    os.environ["DSH_POLICY_CLAUDE_MANAGED_SETTINGS"] = str(folder / "claude-code" / "managed-settings.json")
    os.environ["DSH_POLICY_MANAGED_DEPLOYMENT"] = str(folder / "dsh-policy" / "gateway.yaml")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
