"""The wheel ships every subpackage: pyproject.toml lists packages by hand (the repository root is
the ``dsh_policy`` package), so a new folder that is not listed would be missing from an install
while every test run from the checkout still passes."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_SHIPPED = {"tests", "benchmarks", "examples", "tools", "build", ".venv", ".ci", ".git"}


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = {"dsh_policy"}
    for init in ROOT.rglob("__init__.py"):
        parts = init.parent.relative_to(ROOT).parts
        if parts and parts[0] not in NOT_SHIPPED and not any(p.startswith(".") for p in parts):
            found.add(".".join(("dsh_policy", *parts)))
    assert sorted(found - listed) == [], "add these to [tool.setuptools] packages"
    assert sorted(listed - found) == [], "these listed packages do not exist"
