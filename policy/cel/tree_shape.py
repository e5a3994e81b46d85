"""Parse trees read by their shape, without lark: what the closure compiler needs of a tree.

A CEL parse tree (cel-python's grammar, or :mod:`.fast_parser`, which builds the same trees) holds
two kinds of node: a tree (``data``: the rule's name, ``children``) and a token (a ``str`` with a
``type``). The grammar makes no placeholders, so every child is one or the other, and *a token is
a string, a tree is not* tells them apart for lark's classes and for the two stand-ins here.

:class:`StoredTree` and :class:`StoredToken` are what the verified compiled-policy cache
(:mod:`dsh_policy.policy.policy_cache`) rebuilds a kept tree as: the closure compiler walks them
exactly as it walks lark's, and a process that reads its policy back never imports lark (about a
tenth of such a load's CPU) nor pays lark's constructors for ~20,000 nodes it drops right after.
They have no positions (a kept tree compiled once already; an error in one makes the cache
rebuild from the packs, which reports it with its position).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["StoredToken", "StoredTree", "line_column_to_offset", "single_ident"]


class _NoPosition:
    """A stored tree's ``meta``: empty, as lark's is for a node made without positions."""

    __slots__ = ()
    empty: Final = True


_NO_POSITION: Final = _NoPosition()


class StoredTree:
    """A tree node read back from the cache: its rule's name and its children."""

    __slots__ = ("children", "data")
    meta: Final = _NO_POSITION

    def __init__(self, data: str, children: list[Any]) -> None:
        self.data = data
        self.children = children

    def __repr__(self) -> str:
        return f"StoredTree({self.data!r}, {self.children!r})"


class StoredToken(str):
    """A token read back from the cache: its text, and its ``type`` (``INT_LIT``, ``IDENT``...)."""

    __slots__ = ("type",)
    type: str
    line: Final = None
    column: Final = None

    def __new__(cls, kind: str, text: str) -> StoredToken:
        token = super().__new__(cls, text)
        token.type = kind
        return token


def line_column_to_offset(source: str, line: int, column: int) -> int:
    """1-based line and column (as cel-python and lark report them) to a 0-based offset."""
    lines = source.split("\n")
    return sum(len(text) + 1 for text in lines[: max(line - 1, 0)]) + max(column - 1, 0)


def single_ident(tree: Any) -> str | None:
    """The name when ``tree`` is exactly one bare identifier (through single-child nodes)."""
    node = tree
    while not isinstance(node, str) and node.data != "ident":
        if len(node.children) != 1:
            return None
        node = node.children[0]
    if not isinstance(node, str):
        token = node.children[0]
        return str(token) if isinstance(token, str) else None
    return None
