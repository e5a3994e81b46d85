"""The command-line readers import no CEL library and nothing of ``dsh_policy.policy``.

They read text for the CEL helpers and for self-protection alike; an import of the policy (or of
a CEL engine) from them would tie a reader to what it serves and bring back the circle this
package was cut out to end. Every module under ``cmdline/`` is parsed, so an import inside a
function, a relative import or a dotted name handed to importlib is caught as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CMDLINE = Path(__file__).resolve().parents[2] / "cmdline"
FORBIDDEN = ("dsh_policy.policy", "celpy", "cel_expr_python", "lark")


def _imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """Every module ``path`` (under the package folder ``root``) imports, relative ones made
    absolute, with its line; also dotted strings that name a forbidden module
    (``importlib.import_module("dsh_policy.policy.x")``)."""
    package = ["dsh_policy", *path.relative_to(root.parent).with_suffix("").parts]
    if package[-1] == "__init__":
        package.pop()
    package.pop()  # the importing module's package
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if any(text == name or text.startswith(name + ".") for name in FORBIDDEN):
                found.append((node.lineno, text))
    return found


def _forbidden(name: str) -> bool:
    return any(name == banned or name.startswith(banned + ".") for banned in FORBIDDEN)


def _offences(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root.parent)}:{line}: imports {name}"
        for path in sorted(root.rglob("*.py"))
        for line, name in _imported(path, root)
        if _forbidden(name)
    ]


def test_no_reader_imports_the_policy_or_a_cel_library() -> None:
    assert sorted(CMDLINE.rglob("*.py")), "the cmdline package has modules"
    assert _offences(CMDLINE) == []


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from dsh_policy.policy.cel import make_engine\n", True),
        ("import celpy\n", True),
        ("def f():\n    import cel_expr_python\n", True),
        ("from lark import Tree\n", True),
        ("from ...policy import decide\n", True),  # relative, from cmdline/shell/x.py
        ("from ... import policy\n", True),
        ("import importlib\nimportlib.import_module('dsh_policy.policy.decide')\n", True),
        ("from dsh_policy.cmdline import sql\nimport re\n", False),
        ("import larkspur\n", False),
    ],
)
def test_the_checker_catches_what_it_is_for(tmp_path: Path, source: str, caught: bool) -> None:
    """A checker that cannot fail proves nothing: each spelling of a forbidden import is caught
    in a module placed like ``cmdline/shell/x.py``, and allowed imports are not."""
    root = tmp_path / "cmdline"
    (root / "shell").mkdir(parents=True)
    (root / "shell" / "x.py").write_text(source, encoding="utf-8")
    assert bool(_offences(root)) is caught
