"""The default engine: per expression, the engine that runs it best.

The closure compiler runs every expression it compiles: it evaluates against the activation as
it is, while the C++ runtime first converts the activation (about 6 us for a tool call's
arguments) and pays a crossing into C++ per expression, which the closures beat for every rule
shape the shipped packs and the benchmarks hold (``benchmarks/bench_cel.py`` measures both per
expression). The native runtime, when the ``fast`` extra is installed, takes the expressions only
its grammar accepts (optional syntax such as ``m.?key``, backquoted field names), so a pack
loads on ``auto`` whenever it loads on either engine alone.

Both engines implement the same CEL, and the differential tests (``tests/cel/``) hold them to
identical values and error kinds, so which one runs an expression never changes a decision.
"""

from __future__ import annotations

from collections.abc import Callable

from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CompiledExpression


class AutoCelEngine:
    """The closure compiler, with a native fallback for what only the C++ grammar accepts.

    ``make_native`` (instead of ``native``) makes the native engine on the first expression the
    closure compiler refuses, so a load that needs no fallback (the shipped packs) never loads
    the C++ runtime, whose import alone cost more CPU than compiling those packs."""

    def __init__(
        self,
        closure: CelEngine,
        native: CelEngine | None = None,
        make_native: Callable[[], CelEngine] | None = None,
    ) -> None:
        self._closure = closure
        self._native = native
        self._make_native = make_native

    @property
    def name(self) -> str:
        """``closure+native`` with the fast extra installed, else ``closure``."""
        return "closure+native" if self._native is not None or self._make_native is not None else "closure"

    def compile(self, expression: str) -> CompiledExpression | CelCompileIssue:
        """The closure program; the native one when only the native runtime compiles it; else
        the closure compiler's issue (its messages and offsets are the ones users see)."""
        compiled = self._closure.compile(expression)
        if not isinstance(compiled, CelCompileIssue):
            return compiled
        if self._native is None and self._make_native is not None:
            self._native = self._make_native()
        if self._native is None:
            return compiled
        fallback = self._native.compile(expression)
        return compiled if isinstance(fallback, CelCompileIssue) else fallback

    def engine_for(self, expression: str) -> str:
        """Which engine ``compile`` picks for ``expression`` (for ``explain`` and the tests)."""
        compiled = self.compile(expression)
        if isinstance(compiled, CelCompileIssue):
            return "none"
        return "closure" if type(compiled).__module__.endswith("closure_engine") else "native"
