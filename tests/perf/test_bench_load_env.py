"""``benchmarks/bench_load.py``'s modes: ``none`` never reads bytecode, not even the ``__pycache__``
folders of the tree it measures (a ``--before`` checkout others ran tests in holds hundreds)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_load.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_load_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_bytecode_mode_looks_for_bytecode_only_in_an_empty_private_folder(tmp_path: Path) -> None:
    bench = _bench()
    none = bench._env(str(tmp_path), "cached", "none")
    pyc = bench._env(str(tmp_path), "cached", "pyc")
    assert none["PYTHONDONTWRITEBYTECODE"] == "1" and pyc["PYTHONDONTWRITEBYTECODE"] == "1"
    assert none["PYTHONPYCACHEPREFIX"] != pyc["PYTHONPYCACHEPREFIX"]
    assert Path(none["PYTHONPYCACHEPREFIX"]).parent == tmp_path
    source = tmp_path / "tree" / "module.py"
    probe = f"import importlib.util as u; print(u.cache_from_source({str(source)!r}))"
    found = subprocess.run(
        [sys.executable, "-c", probe], env=none, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert found.startswith(none["PYTHONPYCACHEPREFIX"])  # never tree/__pycache__/
    assert "__pycache__" not in found
