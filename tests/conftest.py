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
from dsh_policy.policy.cache_folders import CACHE_DIR_VARIABLE
from dsh_policy.policy.gateway_folders import RUNTIME_DIR_VARIABLE


def pytest_configure(config: pytest.Config) -> None:
    """structlog renders a logged exception with rich when rich is importable. rich comes with the
    test extras (import-linter needs it), not with the package, and renders each traceback with
    highlighted source in about 0.3 s: a test that contains forty failures spent most of its time
    there. Tests log as an installation without rich does, with structlog's plain traceback."""
    import structlog

    plain = structlog.dev.ConsoleRenderer(exception_formatter=structlog.dev.plain_traceback)
    processors = [
        plain if isinstance(step, structlog.dev.ConsoleRenderer) else step
        for step in structlog.get_config()["processors"]
    ]
    structlog.configure(processors=processors)


@pytest.fixture(autouse=True, scope="session")
def private_runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with _private_folder(tmp_path_factory, "runtime", RUNTIME_DIR_VARIABLE) as folder:
        try:
            yield str(folder)
        finally:
            _stop_gateways(folder)


@contextlib.contextmanager
def _private_folder(factory: pytest.TempPathFactory, name: str, variable: str) -> Iterator[Path]:
    """A folder of the session's own (0700) named by ``variable`` while the session runs."""
    folder = factory.mktemp(name)
    folder.chmod(0o700)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(variable, str(folder))
        yield folder


def _stop_gateways(folder: Path) -> None:
    """SIGTERM every gateway serving from ``folder``, by the pid its lock file holds (checked to
    be a ``serve`` process of ours before it is signalled)."""
    for lock in folder.glob("*.lock"):
        with contextlib.suppress(ValueError, OSError):
            pid = int(lock.read_text().strip() or 0)
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if pid > 0 else []
            if b"serve" in argv and any(b"dsh_policy" in word for word in argv):
                os.kill(pid, signal.SIGTERM)


@pytest.fixture(autouse=True, scope="session")
def private_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Compiled policies the session keeps (every load of the same packs after the first reads
    one back, so the whole suite decides through the cache) go to a folder of its own, never the
    user's ``~/.cache/dsh-policy``."""
    with _private_folder(tmp_path_factory, "compile-cache", CACHE_DIR_VARIABLE) as folder:
        yield str(folder)


#: The system files ``init --managed`` and ``init --system`` write and ``doctor`` reads: never the
#: machine's own in tests (``DSH_POLICY_SYSTEM_ROOT`` moves every path of the hardened mode).
SYSTEM_FILE_VARIABLES = (
    "DSH_POLICY_CLAUDE_MANAGED_SETTINGS",
    "DSH_POLICY_MANAGED_DEPLOYMENT",
    "DSH_POLICY_SYSTEM_ROOT",
)


@pytest.fixture(autouse=True, scope="session")
def private_system_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    folder = tmp_path_factory.mktemp("etc")
    paths = ("claude-code/managed-settings.json", "dsh-policy/gateway.yaml", "system-root")
    with pytest.MonkeyPatch.context() as patch:
        for name, relative in zip(SYSTEM_FILE_VARIABLES, paths, strict=True):
            patch.setenv(name, str(folder / relative))
        yield


# --- the order xdist hands files out in -----------------------------------------------------------

#: The slowest files (seconds of one worker, measured on 2 cores), handed out first: ``--dist
#: loadfile`` gives each worker a file as it frees up, so one of these started last would leave
#: the other worker idle until it ends. Order only: a stale or missing entry costs a few seconds
#: of tail, never a test. Re-measure with ``pytest --durations=60`` (docs/testing.md).
SLOWEST_FILES = (
    "tests/test_release.py",  # mostly waiting on a wheel build: started first, it overlaps
    "tests/mcp_proxy/test_proxy_sdk.py",  # 23 s
    "tests/corpus/test_heldout_corpus.py",  # 22 s, and it grows with every probe corpus
    "tests/audit/test_audit_verify_shortcuts.py",  # 20 s
    "tests/adversarial/test_adv_pack_mutations.py",  # 17 s
    "tests/hooks/test_hook_gateway.py",  # 16 s
    "tests/adversarial/test_adv_resource_limits.py",  # 15 s
    "tests/hooks/test_gateway_load.py",  # 14 s
    "tests/mcp_proxy/test_proxy_http.py",  # 14 s
    "tests/corpus/test_public_corpus.py",  # 14 s
    "tests/audit/test_audit_crash.py",  # 14 s
    "tests/adapters/test_framework_examples.py",  # 13 s
    "tests/rules/test_shipped_packs.py",  # 13 s
    "tests/cmdline/test_probe8_effects.py",  # 13 s
    "tests/adversarial/test_adv_gateway_inputs.py",  # 12 s
    "tests/cmdline/test_probe4_effects.py",  # 11 s
    "tests/policy/test_yaml_c_reader.py",  # 9 s
    "tests/hooks/test_hook_client.py",  # 9 s
    "tests/corpus/test_bypass_corpus.py",  # 9 s
    "tests/cli/test_readme_commands.py",  # 9 s
    "tests/hooks/test_hook_install.py",  # 8 s
    "tests/audit/test_audit_record.py",  # 7 s
    "tests/adapters/test_adk_adapter.py",  # 7 s
    "tests/corpus/test_carrier_invariance.py",  # 6 s
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files in longest-first order: the slowest files above, then files with a ``slow`` test,
    then the rest by their number of tests (what xdist's own reordering did, turned off in
    ``addopts`` so that this order is the one it follows). Every worker computes the same order."""
    rank = {path: index for index, path in enumerate(SLOWEST_FILES)}
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def weight(path: str) -> tuple[int, int, int]:
        if path in rank:
            return (0, rank[path], 0)
        slow = any(item.get_closest_marker("slow") for item in files[path])
        return (1 if slow else 2, 0, -len(files[path]))

    items[:] = [item for path in sorted(files, key=weight) for item in files[path]]
