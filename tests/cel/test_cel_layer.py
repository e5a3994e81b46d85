"""The CEL layer's direction: ``policy/cel/`` imports nothing of the policy above it.

The engines, the type checker and the helper bindings are handed what they work on (the checker
receives the stage table from ``policy/compile.py``), so any import of ``dsh_policy`` from a module
of ``policy/cel/`` (at module level or inside a function, as a relative import, or as a dotted
string handed to importlib) fails this test, naming the line, unless it stays inside
``policy/cel/``, goes to the command-line readers (``dsh_policy.cmdline``), or to one of the few
leaf modules listed below, each of which imports nothing of ours (checked too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CEL = ROOT / "policy" / "cel"
ALLOWED_PACKAGES = ("dsh_policy.policy.cel", "dsh_policy.cmdline")
LEAVES = {
    "dsh_policy.policy.detectors": "the secret detector table the ``secrets`` helpers bind into CEL",
}
"""Modules outside ``policy/cel/`` it may import, and why: leaves with no imports of ours, so no
path leads from CEL back to the policy through them."""


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every ``dsh_policy`` module ``path`` (under the package root ``root``) imports, absolute,
    with its line."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    package = ["dsh_policy", *path.relative_to(root).with_suffix("").parts][:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:  # ``from package import module`` imports that module
                submodule = f"{module}.{alias.name}"
                found.append(
                    (node.lineno, submodule if node.module is None or _exists(submodule, root) else module)
                )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text.startswith("dsh_policy.") and " " not in text and "\n" not in text:
                found.append((node.lineno, text))
    return [(line, name) for line, name in found if name == "dsh_policy" or name.startswith("dsh_policy.")]


def _exists(module: str, root: Path) -> bool:
    """Whether ``module`` (``dsh_policy.x.y``) is a module or package under the package root."""
    path = root.joinpath(*module.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _allowed(name: str) -> bool:
    return name in LEAVES or any(_within(name, package) for package in ALLOWED_PACKAGES)


def test_no_cel_module_imports_the_policy() -> None:
    modules = sorted(CEL.rglob("*.py"))
    assert len(modules) > 10, "the CEL package was not found"
    offences = [
        f"{path.relative_to(ROOT)}:{line}: imports {name}"
        for path in modules
        for line, name in _imports(path)
        if not _allowed(name)
    ]
    assert offences == []


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_a_leaf_cel_may_import_imports_nothing_of_ours(leaf: str) -> None:
    path = ROOT.joinpath(*leaf.split(".")[1:]).with_suffix(".py")
    assert path.is_file(), f"{leaf} is gone: drop it from LEAVES"
    assert _imports(path) == []


def test_the_layer_check_sees_relative_lazy_and_string_imports(tmp_path: Path) -> None:
    """The check must catch what it is for (a test that cannot fail proves nothing)."""
    probe = tmp_path / "policy" / "cel" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(
        "from .engine import CelEvalError\n"
        "from .. import stages\n"
        "def f():\n    from ..compile import CompiledPolicy\n    import importlib\n"
        "    importlib.import_module('dsh_policy.policy.decide')\n",
        "utf-8",
    )
    names = [name for _, name in _imports(probe, tmp_path)]
    assert names == [
        "dsh_policy.policy.cel.engine",
        "dsh_policy.policy.stages",
        "dsh_policy.policy.compile",
        "dsh_policy.policy.decide",
    ]
    assert [name for name in names if not _allowed(name)] == names[1:]
