"""The dependency rule of the layout: ``core`` and ``audit`` import nothing else of ours.

An auditor verifies a log without the policy engine, and the harness runs without either, so any
import of another ``dsh_policy`` subpackage from them (at module level or inside a function, as a
relative import, or as a dotted string handed to importlib) fails this test, naming the line.
(The import-linter contracts in ``.importlinter`` check the same rule on the import graph, with the
rest of the layers; only this test sees a module named as a string.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SELF_CONTAINED = ("core", "audit")


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every ``dsh_policy`` module ``path`` (under the package root ``root``) imports, absolute,
    with its line."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    here = ["dsh_policy", *path.relative_to(root).with_suffix("").parts]
    if here[-1] == "__init__":
        here.pop()
    else:
        here.pop()  # the module's package
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text.startswith("dsh_policy.") and " " not in text and "\n" not in text:
                found.append((node.lineno, text))
    return [(line, name) for line, name in found if name == "dsh_policy" or name.startswith("dsh_policy.")]


@pytest.mark.parametrize("package", SELF_CONTAINED)
def test_a_self_contained_package_imports_nothing_else_of_ours(package: str) -> None:
    allowed = f"dsh_policy.{package}"
    offences = [
        f"{path.relative_to(ROOT)}:{line}: imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _imports(path)
        if name != allowed and not name.startswith(allowed + ".")
    ]
    assert offences == []


def test_the_rule_checker_sees_relative_and_lazy_imports(tmp_path: Path) -> None:
    """The checker itself must catch what it is for (a test that cannot fail proves nothing)."""
    assert _imports(ROOT / "core" / "__init__.py"), "core/__init__.py imports its own modules"
    probe = tmp_path / "audit" / "probe.py"
    probe.parent.mkdir()
    probe.write_text(
        "def f():\n    from ..policy import decide\n    import importlib\n"
        "    importlib.import_module('dsh_policy.policy.cli')\n",
        "utf-8",
    )
    names = [name for _, name in _imports(probe, tmp_path)]
    assert names == ["dsh_policy.policy", "dsh_policy.policy.cli"]
