"""Regular expressions compiled on their first use, not when their module is imported.

The readers hold a few hundred module-level patterns; compiling them all at import was about a
fifth of the CPU a process spent before its policy was ready (``benchmarks/bench_load.py``), while
one decision uses only the few its input reaches. :func:`lazy_compile` returns a stand-in that
compiles on the first access to anything but ``pattern``, then keeps the compiled pattern's
methods and attributes on itself, so every later ``search``/``match``/``sub``... is one attribute
read of an already bound method: a decision after the first pays nothing for the laziness.

A stand-in quacks as the :class:`re.Pattern` it stands for (methods, ``flags``, ``groups``,
``groupindex``), with two exceptions callers must not rely on: ``isinstance(x, re.Pattern)`` is
false, and the module functions (``re.sub(pattern, ...)``) do not accept it; call its methods. A
bad pattern raises :class:`re.error` on first use, so every pattern is compiled by the tests
(``tests/cmdline/test_lazy_regex.py`` compiles every stand-in the package creates).
"""

from __future__ import annotations

import re
import weakref
from typing import AnyStr, cast

from .deadline import one_time_setup

__all__ = ["compile_all", "lazy_compile"]

# What a compiled pattern offers a caller; each is copied onto the stand-in on first use.
_FORWARDED = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "flags",
    "groups",
    "groupindex",
)

_CREATED: weakref.WeakSet[_LazyPattern] = weakref.WeakSet()


class _LazyPattern:
    """A pattern's text and flags until first use; the compiled pattern's methods after it."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._given_flags = flags
        _CREATED.add(self)

    def __getattr__(self, name: str) -> object:
        # Called only for an attribute the object does not hold yet: the first use compiles.
        if name not in _FORWARDED:
            raise AttributeError(name)
        with one_time_setup():  # not the input's work: outside the stage's budget
            compiled = re.compile(self.pattern, self._given_flags)
        for forwarded in _FORWARDED:
            setattr(self, forwarded, getattr(compiled, forwarded))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self._given_flags!r})"


def lazy_compile(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, deferred to the pattern's first use (see the module)."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, int(flags)))


def compile_all() -> int:
    """Compile every stand-in created so far (a test proves each pattern valid); how many."""
    patterns = list(_CREATED)
    for pattern in patterns:
        _ = pattern.flags
    return len(patterns)
