"""The source the C++ runtime compiles: adjacent string literals of a ``+`` chain folded into one.

Google's C++ CEL parser stops at a nesting depth of 32, and a chain ``r'a' + r'b' + ...`` nests
one level per ``+``: a pack variable built as a long concatenation of pattern fragments (as
``cred_re`` in the baseline pack is) loaded on every other engine but not on ``native``. Folding
each run of two or more adjacent string literals into one literal removes those levels (and the
concatenations at evaluation) without changing a value: string concatenation is associative, and
where the left operand is not a string both spellings are the same no-overload error.

Folding changes lengths, so :func:`original_offset` maps an offset of the folded source back to
the written expression, for error positions that point at what the author wrote.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import lark
from dsh_policy.policy.cel.celpy_ast import string_literal


@dataclass(frozen=True, slots=True)
class Edit:
    """``source[start:end]`` becomes ``text``."""

    start: int
    end: int
    text: str


def folded_literal_runs(tree: lark.Tree) -> list[Edit]:
    """One edit per run of two or more adjacent string literals in an addition chain of ``tree``
    (cel-python's parse tree, with token positions), in source order."""
    return sorted(_runs(tree), key=lambda edit: edit.start)


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    """``source`` with each (non-overlapping, ordered) edit applied."""
    parts: list[str] = []
    position = 0
    for edit in edits:
        parts.append(source[position : edit.start])
        parts.append(edit.text)
        position = edit.end
    parts.append(source[position:])
    return "".join(parts)


def original_offset(edits: Sequence[Edit], offset: int) -> int:
    """Where an offset of the edited source was in the original: the start of an edit for an
    offset inside its text, else shifted back by the edits before it."""
    delta = 0
    for edit in edits:
        edited_start = edit.start + delta
        if offset < edited_start:
            break
        if offset < edited_start + len(edit.text):
            return edit.start
        delta += len(edit.text) - (edit.end - edit.start)
    return offset - delta


def cel_string_literal(value: str) -> str:
    """A CEL string literal whose value is ``value``: raw when that needs no escape (a raw literal
    cannot end in a backslash: the lexer reads a backslash and the closing quote as text)."""
    if "'" not in value and value.isprintable() and not value.endswith("\\"):
        return "r'" + value + "'"
    return '"' + "".join(_escaped(char) for char in value) + '"'


def _escaped(char: str) -> str:
    if char in '"\\':
        return "\\" + char
    if char.isprintable():
        return char
    special = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if special is not None:
        return special
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _runs(tree: lark.Tree) -> Iterator[Edit]:
    stack: list[lark.Tree] = [tree]
    while stack:
        node = stack.pop()
        if node.data == "addition" and _is_add(node):
            operands = _chain_operands(node)
            yield from _literal_runs(operands)
            stack.extend(operand for operand in operands if isinstance(operand, lark.Tree))
        else:
            stack.extend(child for child in node.children if isinstance(child, lark.Tree))


def _is_add(node: lark.Tree) -> bool:
    """``addition`` holding ``addition_add`` and its right operand (cel-python's shape of a + b)."""
    return (
        len(node.children) == 2
        and isinstance(node.children[0], lark.Tree)
        and node.children[0].data == "addition_add"
    )


def _chain_operands(node: lark.Tree) -> list[lark.Tree | lark.Token]:
    """The operands of a left-nested ``a + b + c`` chain, left to right (a ``-`` ends it)."""
    reversed_operands: list[lark.Tree | lark.Token] = []
    while node.data == "addition" and _is_add(node):
        reversed_operands.append(node.children[1])
        left = node.children[0].children[0]
        if not isinstance(left, lark.Tree):
            reversed_operands.append(left)
            break
        node = left
    else:
        reversed_operands.append(node)
    return reversed_operands[::-1]


def _literal_runs(operands: list[lark.Tree | lark.Token]) -> Iterator[Edit]:
    run: list[tuple[str, int, int]] = []
    for operand in [*operands, None]:
        literal = _positioned_literal(operand) if operand is not None else None
        if literal is not None:
            run.append(literal)
            continue
        if len(run) >= 2:
            yield Edit(run[0][1], run[-1][2], cel_string_literal("".join(value for value, _, _ in run)))
        run = []


def _positioned_literal(operand: lark.Tree | lark.Token) -> tuple[str, int, int] | None:
    """(value, start, end) when ``operand`` is exactly one string literal with its position."""
    node = operand
    while isinstance(node, lark.Tree) and len(node.children) == 1:
        node = node.children[0]
    if not isinstance(node, lark.Token) or node.start_pos is None or node.end_pos is None:
        return None
    value = string_literal(node)
    return (value, node.start_pos, node.end_pos) if value is not None else None
