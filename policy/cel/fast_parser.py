"""A hand-written CEL parser giving cel-python's parse tree without its precedence chains.

cel-python parses with a general LALR parser (lark) whose tree holds one node per precedence
level: ``args.command.contains("rm")`` is 30 nodes, each with its position record, and building
them was most of a pack's load. Every load-time walker (:mod:`.celpy_ast`, the type checker, the
closure compiler) already skips a precedence node that has a single child, so this parser never
builds those nodes: it gives the tree cel-python's parser gives *with every such chain collapsed*
(:func:`collapse` says exactly which), with the same node names, tokens and positions, in one
recursive-descent pass over a tokenizer built from the same terminal patterns.

It handles the grammar of cel-python's ``cel.lark`` and declines (returns ``None``) whatever it
is not sure to parse identically: syntax errors, reserved words, deep nesting. The caller then
parses with cel-python, whose errors are the ones reported. ``tests/cel/test_cel_fast_parser.py``
compares both trees node by node, positions included, on every shipped expression, every
conformance case and random expressions, and pins these patterns to lark's.
"""

from __future__ import annotations

import re
from typing import Any, Final

import lark
from dsh_policy.cmdline.lazy_regex import lazy_compile
from lark.tree import Meta

# Terminal patterns exactly as cel-python's grammar compiles them (the test pins them), in the
# order lark's lexer tries them: the first that matches wins.
_ESC = r"""\\[abfnrtv"'\\]|\\\d{3}|\\x[0-9a-fA-F]{2}"""
_LINES = "\r\n|\r|\n"  # line breaks as characters, as lark compiles the grammar's escapes
_SQ = "[rR]?'(?:" + _ESC + r"|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|.)*?'"
_DQ = '[rR]?"(?:' + _ESC + r'|\\u[0-9a-fA-F]{4-8}|.)*?"'
_MSQ = "[rR]?'''(?:" + _ESC + r"|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|" + _LINES + "|.)*?'''"
_MDQ = '[rR]?"""(?:' + _ESC + r"|\\u[0-9a-fA-F]{4-8}|" + _LINES + '|.)*?"""'
PATTERNS: Final[dict[str, str]] = {
    "BYTES_LIT": rf"(?:[bB](?:{_MSQ}|{_MDQ})|[bB](?:{_SQ}|{_DQ}))",
    "MLSTRING_LIT": rf"(?:{_MSQ}|{_MDQ})",
    "STRING_LIT": rf"(?:{_SQ}|{_DQ})",
    "FLOAT_LIT": (
        r"(?:-?(?:[0-9])+[eE][+-]?(?:[0-9])+|-?(?:[0-9])+\.(?:[0-9])*(?:[eE][+-]?(?:[0-9])+)?"
        r"|-?(?:[0-9])*\.(?:[0-9])+(?:[eE][+-]?(?:[0-9])+)?)"
    ),
    "UINT_LIT": r"(?:-?0x(?:[0-9abcdefABCDEF])+|-?(?:[0-9])+)[uU]",
    "INT_LIT": r"(?:-?0x(?:[0-9abcdefABCDEF])+|-?(?:[0-9])+)",
    "IDENT": r"[_a-zA-Z][_a-zA-Z0-9]*",
}
_IGNORED: Final = lazy_compile(r"(?:[\t\n\f\r ]+|//.*)+", re.M)
# An operand: a literal or a name, tried in lark's order (the lexer's "first match wins").
_OPERAND: Final = lazy_compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in PATTERNS.items()), re.M)
# What may come next when it is not an operand: an operator, punctuation, or the word ``in``.
_PUNCTUATION: Final = lazy_compile(r"\|\||&&|<=|>=|==|!=|[!:,.{<(\[\-%+?}>)\]/*]|in(?![_a-zA-Z0-9])")
_KEYWORDS: Final = {"true": "BOOL_LIT", "false": "BOOL_LIT", "null": "NULL_LIT"}
# ``in`` is the operator wherever it stands (lark's lexer makes the word its keyword): declined as
# a name, so cel-python words whatever it makes of it.
_DECLINED_WORDS: Final = frozenset({"in"})
_RELATIONS: Final = {
    "<": "relation_lt", "<=": "relation_le", ">": "relation_gt", ">=": "relation_ge",
    "==": "relation_eq", "!=": "relation_ne", "in": "relation_in",
}  # fmt: skip
_ADDITIONS: Final = {"+": "addition_add", "-": "addition_sub"}
_MULTIPLICATIONS: Final = {"*": "multiplication_mul", "/": "multiplication_div", "%": "multiplication_mod"}
#: Binary operators by precedence level (1 binds loosest), and the grammar rule of each level.
_LEVELS: Final = {
    "||": 1, "&&": 2, **dict.fromkeys(_RELATIONS, 3), **dict.fromkeys(_ADDITIONS, 4),
    **dict.fromkeys(_MULTIPLICATIONS, 5),
}  # fmt: skip
_LEVEL_RULES: Final = {
    1: "conditionalor",
    2: "conditionaland",
    3: "relation",
    4: "addition",
    5: "multiplication",
}
_OPERATOR_RULES: Final = {**_RELATIONS, **_ADDITIONS, **_MULTIPLICATIONS}
MAX_DEPTH: Final = 50
"""Deepest nesting this parser follows before declining (cel-python's own limit then applies)."""


class _Decline(Exception):
    """Not parsed here: the caller asks cel-python."""


#: Where a punctuation token lay: line, column, start offset, end line, end column, end offset.
_Span = tuple[int, int, int, int, int, int]


def _tree(
    data: str, children: list[lark.Tree | lark.Token], start: _Span | None = None, end: _Span | None = None
) -> lark.Tree:
    """A node with the position record lark's ``propagate_positions`` gives it: from the start of
    its first child to the end of its last, counting the punctuation the tree leaves out
    (``start``/``end``: an opening ``(``, a closing ``]``, an operator) and every token, even
    the position-less ``true``/``false`` cel-python's lexer callback makes."""
    meta = Meta()
    meta.empty = False
    if start is not None:
        meta.line, meta.column, meta.start_pos = start[0], start[1], start[2]
    else:
        first = children[0]
        source: Any = first if isinstance(first, lark.Token) else first.meta
        meta.line, meta.column, meta.start_pos = source.line, source.column, source.start_pos
    if end is not None:
        meta.end_line, meta.end_column, meta.end_pos = end[3], end[4], end[5]
    else:
        last = children[-1]
        source = last if isinstance(last, lark.Token) else last.meta
        meta.end_line, meta.end_column, meta.end_pos = source.end_line, source.end_column, source.end_pos
    return lark.Tree(data, children, meta)


class _Parser:
    """One expression: tokens read on demand, each with lark's line/column bookkeeping."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.depth = 0
        self.next = ""
        self.skip()

    # -- tokens --

    def skip(self) -> None:
        """Past whitespace and comments, then note the punctuation that comes next (``peek``
        is asked at every precedence level, so it is worked out once per token)."""
        found = _IGNORED.match(self.text, self.pos)
        if found is not None:
            self.advance(found.end())
        following = _PUNCTUATION.match(self.text, self.pos)
        self.next = following.group() if following is not None else ""

    def advance(self, end: int) -> None:
        newlines = self.text.count("\n", self.pos, end)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.pos, end) + 1
        self.pos = end

    def token(self, kind: str, end: int) -> lark.Token:
        start, line, column = self.pos, self.line, self.pos - self.line_start + 1
        self.advance(end)
        token = lark.Token(
            kind, self.text[start:end], start, line, column, self.line, self.pos - self.line_start + 1, end
        )
        self.skip()
        return token

    def peek(self) -> str:
        """The punctuation (or ``in``) that comes next, ``""`` at the end or before a word."""
        return self.next

    def take(self, punctuation: str) -> _Span:
        """Consume ``punctuation`` (else decline); where it lay."""
        if self.next != punctuation:
            raise _Decline
        start, column = self.pos, self.pos - self.line_start + 1
        self.pos += len(punctuation)
        span = (self.line, column, start, self.line, column + len(punctuation), self.pos)
        self.skip()
        return span

    def ident(self) -> lark.Token:
        found = _OPERAND.match(self.text, self.pos)
        if found is None or found.lastgroup != "IDENT" or found.group() in _DECLINED_WORDS:
            raise _Decline
        if found.group() in _KEYWORDS:
            raise _Decline
        return self.token("IDENT", found.end())

    # -- grammar (cel.lark), each level returning its collapsed node --

    def expr(self) -> lark.Tree:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Decline
        condition = self.binary(1)
        if self.next != "?":
            self.depth -= 1
            return condition
        self.take("?")
        yes = self.binary(1)
        self.take(":")
        no = self.expr()
        self.depth -= 1
        return _tree("expr", [condition, yes, no])

    def binary(self, lowest: int) -> lark.Tree:
        """Operators of precedence ``lowest`` and above, left to right (precedence climbing over
        the grammar's ``conditionalor`` ... ``multiplication`` levels, each building its node)."""
        left = self.unary()
        while (level := _LEVELS.get(self.next, 0)) >= lowest:
            operator = self.next
            span = self.take(operator)
            right = self.binary(level + 1)
            rule = _LEVEL_RULES[level]
            if level <= 2:
                left = _tree(rule, [left, right])
            else:
                left = _tree(rule, [_tree(_OPERATOR_RULES[operator], [left], end=span), right])
        return left

    def unary(self) -> lark.Tree:
        operator = self.peek()
        if operator == "!" or (operator == "-" and not self.signed_number()):
            span = self.take(operator)
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _Decline
            operand = self.unary()
            self.depth -= 1
            name = "unary_not" if operator == "!" else "unary_neg"
            return _tree("unary", [_tree(name, [], span, span), operand])
        return self.member()

    def signed_number(self) -> bool:
        found = _OPERAND.match(self.text, self.pos)
        return found is not None and found.lastgroup in ("FLOAT_LIT", "UINT_LIT", "INT_LIT")

    def member(self) -> lark.Tree:
        node = self.primary()
        while True:
            operator = self.peek()
            if operator == ".":
                self.take(".")
                name = self.ident()
                if self.peek() == "(":
                    _, arguments, close = self.arguments(")")
                    call = _tree("member_dot_arg", [node, name, *arguments], end=close)
                    node = _tree("member", [call])  # kept: celpy_ast rewrites namespaced calls here
                else:
                    node = _tree("member_dot", [node, name])
            elif operator == "[":
                self.take("[")
                index = self.expr()
                close = self.take("]")
                node = _tree("member_index", [node, index], end=close)
            elif operator == "{":
                self.take("{")
                fields: list[lark.Tree | lark.Token] = []
                if self.peek() != "}":
                    fields.append(self.fieldinits())
                close = self.take("}")
                node = _tree("member_object", [node, *fields], end=close)
            else:
                return node

    def arguments(self, close: str) -> tuple[_Span, list[lark.Tree | lark.Token], _Span]:
        """``( [exprlist] )`` or ``[ [exprlist] ]``: where it opens, the exprlist node if any,
        where it closes."""
        opening = self.take("(" if close == ")" else "[")
        if self.peek() == close:
            return opening, [], self.take(close)
        items: list[lark.Tree | lark.Token] = [self.expr()]
        while self.peek() == ",":
            self.take(",")
            items.append(self.expr())
        return opening, [_tree("exprlist", items)], self.take(close)

    def fieldinits(self) -> lark.Tree:
        items: list[lark.Tree | lark.Token] = []
        while True:
            items.append(self.ident())
            self.take(":")
            items.append(self.expr())
            if self.peek() != ",":
                return _tree("fieldinits", items)
            self.take(",")

    def primary(self) -> lark.Tree:
        operator = self.peek()
        if operator == "(":
            opening = self.take("(")
            inner = self.expr()
            return _tree("paren_expr", [inner], opening, self.take(")"))
        if operator == "[":
            opening, elements, close = self.arguments("]")
            return _tree("list_lit", elements, opening, close)
        if operator == "{":
            opening = self.take("{")
            if self.peek() == "}":
                return _tree("map_lit", [], opening, self.take("}"))
            items: list[lark.Tree | lark.Token] = [self.expr()]
            self.take(":")
            items.append(self.expr())
            while self.peek() == ",":
                self.take(",")
                items.append(self.expr())
                self.take(":")
                items.append(self.expr())
            return _tree("map_lit", [_tree("mapinits", items)], opening, self.take("}"))
        if operator == "." and not self.signed_number():
            dot = self.take(".")
            name = self.ident()
            if self.peek() == "(":
                _, arguments, close = self.arguments(")")
                return _tree("dot_ident_arg", [name, *arguments], dot, close)
            return _tree("dot_ident", [name], dot)
        found = _OPERAND.match(self.text, self.pos)
        if found is None or found.lastgroup is None:
            raise _Decline
        kind, word = found.lastgroup, found.group()
        if kind != "IDENT":
            return _tree("literal", [self.token(kind, found.end())])
        if word in _DECLINED_WORDS:
            raise _Decline
        if word in _KEYWORDS:
            token = self.token(_KEYWORDS[word], found.end())
            if word != "null":  # cel-python's lexer callback makes a token without a position
                token = lark.Token("BOOL_LIT", word)
            return _tree("literal", [token])
        name = self.token("IDENT", found.end())
        if self.peek() == "(":
            _, arguments, close = self.arguments(")")
            return _tree("ident_arg", [name, *arguments], end=close)
        return _tree("ident", [name])


def parse_collapsed(expression: str) -> lark.Tree | None:
    """cel-python's parse tree of ``expression`` as :func:`collapse` leaves it, or None when this
    parser declines it (a syntax error among others: cel-python then reports it)."""
    parser = _Parser(expression)
    try:
        tree = parser.expr()
    except (_Decline, RecursionError):
        return None
    if parser.pos != len(expression):
        return None
    return tree


_PASS_THROUGH: Final = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
     "member", "primary"}
)  # fmt: skip


def collapse(tree: lark.Tree) -> lark.Tree:
    """cel-python's tree with every single-child precedence node replaced by its child (they span
    the same text, so no position is lost), except a ``member`` above a method call, where
    :func:`~.celpy_ast.analyze` rewrites namespaced calls. The load-time walkers skip those
    nodes anyway; this is the tree :func:`parse_collapsed` builds directly."""
    node = tree
    while (
        node.data in _PASS_THROUGH
        and len(node.children) == 1
        and isinstance(node.children[0], lark.Tree)
        and not (node.data == "member" and node.children[0].data == "member_dot_arg")
    ):
        node = node.children[0]
    node.children = [collapse(child) if isinstance(child, lark.Tree) else child for child in node.children]
    return node
