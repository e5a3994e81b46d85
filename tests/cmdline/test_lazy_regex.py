"""The readers' patterns are compiled on first use (cmdline/lazy_regex.py): each must still be a
valid pattern, and a stand-in must answer exactly as the compiled pattern does."""

from __future__ import annotations

import importlib
import pkgutil
import re

import dsh_policy.cmdline
import dsh_policy.policy.cel
import dsh_policy.policy.self_protection
import pytest
from dsh_policy.cmdline.lazy_regex import _CREATED, compile_all, lazy_compile


def test_a_stand_in_compiles_only_on_first_use() -> None:
    pattern = lazy_compile(r"(?P<word>ab+)c", re.IGNORECASE)
    assert "search" not in vars(pattern)
    assert pattern.pattern == r"(?P<word>ab+)c"
    assert "search" not in vars(pattern)  # reading the text does not compile
    found = pattern.search("xxABBC")
    assert found is not None and found.group("word") == "ABB"
    assert "search" in vars(pattern)  # later calls go straight to the compiled pattern's method


def test_a_stand_in_answers_as_the_compiled_pattern() -> None:
    text = "a1 b22 c333"
    lazy = lazy_compile(r"([a-z])(\d+)", re.MULTILINE)
    compiled = re.compile(r"([a-z])(\d+)", re.MULTILINE)
    assert lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub(r"\2\1", text) == compiled.sub(r"\2\1", text)
    assert lazy.split(text) == compiled.split(text)
    assert lazy.fullmatch("z9") is not None and lazy.match(" z9") is None
    assert lazy.flags == compiled.flags and lazy.groups == compiled.groups
    assert lazy.groupindex == compiled.groupindex


def test_bytes_patterns_and_first_access_through_an_attribute() -> None:
    pattern = lazy_compile(rb"(?P<n>\d+)")
    assert pattern.groupindex == {"n": 1}  # the first use may be an attribute, not a method
    found = pattern.search(b"ab12")
    assert found is not None and found.group() == b"12"


def test_a_bad_pattern_fails_on_first_use_and_names_no_other_attribute() -> None:
    pattern = lazy_compile(r"(unclosed")
    with pytest.raises(re.error):
        pattern.search("x")
    with pytest.raises(AttributeError):
        _ = pattern.no_such_attribute  # type: ignore[attr-defined]


# The packages whose module-level patterns are lazy: the readers, CEL, and self-protection (which
# every hook event consults).
_LAZY_PACKAGES = (dsh_policy.cmdline, dsh_policy.policy.cel, dsh_policy.policy.self_protection)


def test_every_pattern_the_readers_and_cel_create_compiles() -> None:
    """Imports every module of the readers, cel and self-protection, then compiles every stand-in
    they made: a typo in a pattern fails here, not on the first decision that reaches it."""
    for package in _LAZY_PACKAGES:
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(module.name)
    assert compile_all() >= 240
    assert all("search" in vars(pattern) for pattern in list(_CREATED))


# Data refresh tools run from the command line, never while a policy loads or decides.
_OFF_THE_DECISION_PATH = {"malicious_refresh.py", "popular_refresh.py"}


def test_no_reader_or_cel_module_compiles_a_pattern_at_import() -> None:
    """docs/design/STYLE.md: module-level patterns on the load and decision path are lazy (the
    readers, CEL, and self-protection, which every hook event consults)."""
    import ast
    from pathlib import Path

    eager: list[str] = []
    for package in _LAZY_PACKAGES:
        for path in sorted(Path(package.__path__[0]).rglob("*.py")):
            if path.name in _OFF_THE_DECISION_PATH:
                continue
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                for sub in ast.walk(node):
                    func = sub.func if isinstance(sub, ast.Call) else None
                    if (
                        isinstance(func, ast.Attribute)
                        and func.attr == "compile"
                        and isinstance(func.value, ast.Name)
                        and func.value.id == "re"
                    ):
                        eager.append(f"{path.name}:{sub.lineno}")
    assert eager == []
