"""CEL engines behind one small interface, plus the gateway's helper functions.

``make_engine("closure")`` (CEL compiled to Python closures) and ``make_engine("python")``
(cel-python's interpreter, the reference the others are tested against) are always available;
``make_engine("native")`` needs the optional ``fast`` extra (cel-expr-python, Google's C++
runtime). ``"auto"``, the default, decides per expression (see :mod:`.auto_engine`): the closure
compiler, and the C++ runtime for what only it compiles. Asking for ``native`` when it is not
installed raises :class:`EngineUnavailableError`: choosing an engine happens once, at startup,
from configuration, and the command line reports the message and exits 2.

Every engine registers the same helpers (:data:`functions.CEL_FUNCTIONS`: ``path.normalize``,
``path.within``, ``path.base``, ``path.ext``, ``shell.commands``, ``shell.argv0s``,
``shell.redirects``, ``url.host``, ``glob``, ``secrets.scan`` and an RE2 ``matches`` with a
compiled-pattern cache), return identical plain-Python values for expressions both accept, and
report every failure as a value. Limits per evaluation: python 200,000 steps and 2 s; native and
closure 10,000 comprehension iterations and a 2 s deadline; all reject expressions over 16,384
characters or with comprehensions nested deeper than 4 at load. ``tests/cel/conformance/TABLE.md``
lists conformance per engine and every known deviation.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CelEvalError, CompiledExpression

__all__ = [
    "CelCompileIssue",
    "CelEngine",
    "CelEvalError",
    "CompiledExpression",
    "EngineName",
    "EngineUnavailableError",
    "available_engines",
    "make_engine",
]

EngineName = Literal["auto", "closure", "python", "native"]


class EngineUnavailableError(RuntimeError):
    """The requested engine is not installed (or unknown); the message says how to get it."""


def _native_installed() -> bool:
    return importlib.util.find_spec("cel_expr_python") is not None


def _native_engine_module_present() -> bool:
    return importlib.util.find_spec("dsh_policy.policy.cel.native_engine") is not None


def available_engines() -> list[EngineName]:
    """Names of the engines that can be made here (not ``auto``), fastest first."""
    names: list[EngineName] = ["closure", "python"]
    if _native_installed() and _native_engine_module_present():
        names.insert(1, "native")
    return names


def make_engine(name: EngineName = "auto") -> CelEngine:
    """A CEL engine by configuration name; ``auto`` is the closure compiler, with the native
    runtime (when installed) for expressions only it compiles."""
    if name == "auto":
        from dsh_policy.policy.cel.auto_engine import AutoCelEngine

        # The native engine is made on first need (see AutoCelEngine): most loads never need it.
        make_native = (lambda: make_engine("native")) if "native" in available_engines() else None
        return AutoCelEngine(make_engine("closure"), make_native=make_native)
    if name == "closure":
        from dsh_policy.policy.cel.closure_engine import ClosureCelEngine

        return ClosureCelEngine()
    if name == "python":
        from dsh_policy.policy.cel.python_engine import PythonCelEngine

        return PythonCelEngine()
    if name == "native":
        if "native" not in available_engines():
            raise EngineUnavailableError(
                "the native CEL engine needs cel-expr-python: pip install 'dsh-policy[fast]'"
            )
        from dsh_policy.policy.cel import native_engine

        return native_engine.NativeCelEngine()
    raise EngineUnavailableError(f"unknown CEL engine {name!r}; choose auto, closure, python or native")
