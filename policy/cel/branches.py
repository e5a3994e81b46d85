"""What coverage counts in an expression, found by the type checker and kept with the compiled
expression: a module of its own, so that the compiled values (and the compiled-policy cache) hold
branches without importing the checker."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Branch"]


@dataclass(frozen=True, slots=True)
class Branch:
    """A call with a bool outcome that coverage reports per side: ``matches`` or a comprehension
    (``exists``, ``all``, ``exists_one``), at the offset of its function name."""

    function: str
    offset: int
    #: Where the call starts (its receiver, for a method).
    start: int

    def text(self, source: str) -> str:
        """The call as written, up to its function name: ``c[0].matches(...)``."""
        snippet = " ".join(source[self.start : self.offset + len(self.function)].split())
        return (snippet if len(snippet) <= 40 else "..." + snippet[-37:]) + "(...)"
