"""Load-time work on cel-python's parse tree: namespaced calls, name checks, references, limits.

cel-python parses ``path.normalize(p)`` as a method call ``normalize`` on a variable ``path``,
which would fail at evaluation ("undeclared reference to 'path'"). :func:`analyze` rewrites
every such call whose receiver is a bare function namespace (``path``, ``shell``, ``url``,
``secrets``; see :data:`~dsh_policy.policy.cel.functions.FUNCTION_NAMESPACES`) into a global call
named ``path.normalize``, which the engine registers under exactly that name. A comprehension
variable of the same name shadows the namespace, as CEL scoping says.

The same walk rejects, at load time rather than on the hot path: unknown functions (a misspelled
``path.normalise`` or ``sze(x)``), constant ``matches`` patterns RE2 cannot compile, and
comprehensions nested deeper than :data:`MAX_COMPREHENSION_NESTING`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import lark
from dsh_policy.policy.cel.engine import (
    MAX_COMPREHENSION_NESTING,
    MAX_EXPRESSION_CHARS,
    CelCompileIssue,
    MemberRead,
    Reads,
)
from dsh_policy.policy.cel.fast_parser import parse_collapsed
from dsh_policy.policy.cel.functions import CEL_FUNCTIONS, FUNCTION_NAMESPACES, compile_re2
from dsh_policy.policy.cel.tree_shape import line_column_to_offset

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_CELPY_EXTRA_MACROS = frozenset({"reduce", "min"})  # cel-python extensions, not CEL: rejected
_GLOBAL_MACROS = frozenset({"has", "dyn"})
TYPE_NAMES = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "type", "null_type", "dyn",
     "google", "optional_type"}
)  # fmt: skip

if TYPE_CHECKING:
    import celpy

# cel-python itself (about 20 ms to import, with pendulum) is imported where it is used: parsing
# what the fast parser declines, decoding a literal, the function table. A policy the compiled-
# policy cache reads back compiles stored trees and never needs it.


@cache
def known_functions() -> frozenset[str]:
    """Every function name an expression may call: cel-python's standard ones, the gateway's
    helpers, and the global macros."""
    from celpy.evaluation import base_functions

    return frozenset(base_functions) | frozenset(CEL_FUNCTIONS) | _GLOBAL_MACROS


@dataclass(frozen=True, slots=True)
class AnalysisIssue:
    """A load-time problem, at the 0-based ``offset`` in the expression when known."""

    message: str
    offset: int | None


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the walk found: top-level identifiers read, and problems."""

    references: frozenset[str]
    issues: tuple[AnalysisIssue, ...]
    matches_offsets: tuple[int, ...] = ()
    """Where each ``matches`` function name starts, for engines that rename it."""
    reads: Reads = Reads((), frozenset())  # noqa: RUF009 (frozen, so one shared default is safe)
    """Constant member selections on top-level names, and names read whole."""


def _offset(source: str, item: lark.Tree | lark.Token) -> int | None:
    line = getattr(item, "line", None) if isinstance(item, lark.Token) else None
    column = getattr(item, "column", None) if isinstance(item, lark.Token) else None
    if isinstance(item, lark.Tree):
        meta = item.meta
        if meta.empty:
            return None
        line, column = meta.line, meta.column
    if line is None or column is None:
        return None
    return line_column_to_offset(source, line, column)


def _single_ident(tree: lark.Tree) -> str | None:
    """The name when ``tree`` is exactly one bare identifier (``member -> primary -> ident``)."""
    node: lark.Tree | lark.Token = tree
    while isinstance(node, lark.Tree) and node.data != "ident":
        if len(node.children) != 1:
            return None
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident":
        token = node.children[0]
        return str(token) if isinstance(token, lark.Token) else None
    return None


class _Walker:
    def __init__(self, source: str, check_functions: bool) -> None:
        self.source = source
        self.check_functions = check_functions
        self.references: set[str] = set()
        self.members: list[MemberRead] = []
        self.whole: set[str] = set()
        self.issues: list[AnalysisIssue] = []
        self.matches_offsets: list[int] = []

    def issue(self, message: str, at: lark.Tree | lark.Token) -> None:
        self.issues.append(AnalysisIssue(message, _offset(self.source, at)))

    def walk(self, node: lark.Tree, bound: frozenset[str], nesting: int) -> None:
        # An explicit stack would be longer; recursion depth is bounded by cel-python's parser.
        if node.data == "member" and len(node.children) == 1:
            child = node.children[0]
            is_call = isinstance(child, lark.Tree) and child.data == "member_dot_arg"
            if is_call and self._rewrite_namespaced_call(node, child, bound):
                self.walk(node, bound, nesting)
                return
        if node.data == "member_dot_arg":
            self._method_call(node, bound, nesting)
            return
        if node.data in ("member_dot", "member_index") and self._constant_selection(node, bound):
            for child in node.children[1:]:
                if isinstance(child, lark.Tree):
                    self.walk(child, bound, nesting)
            return
        if node.data == "ident_arg":
            name = node.children[0]
            if self.check_functions and isinstance(name, lark.Token) and str(name) not in known_functions():
                self.issue(f"unknown function {name}()", name)
            self._check_constant_pattern(name, node.children[1:], first_is_subject=True)
        elif node.data in ("ident", "dot_ident"):
            name = node.children[0]
            if isinstance(name, lark.Token) and str(name) not in bound and str(name) not in TYPE_NAMES:
                self.references.add(str(name))
                self.whole.add(str(name))
        for child in node.children:
            if isinstance(child, lark.Tree):
                self.walk(child, bound, nesting)

    def _constant_selection(self, node: lark.Tree, bound: frozenset[str]) -> bool:
        """Record ``name.member`` or ``name["member"]`` on a top-level name; False otherwise."""
        receiver, key = node.children[0], node.children[1]
        root = _single_ident(receiver) if isinstance(receiver, lark.Tree) else None
        if root is None or root in bound or root in TYPE_NAMES:
            return False
        member = str(key) if node.data == "member_dot" else _string_literal(key)
        if member is None:
            return False
        offset = _offset(self.source, key)
        if offset is not None and node.data == "member_index":
            offset += 1  # past the opening quote, where the member's name starts
        self.references.add(root)
        self.members.append(MemberRead(root, member, offset))
        return True

    def _rewrite_namespaced_call(self, member: lark.Tree, call: lark.Tree, bound: frozenset[str]) -> bool:
        receiver, method = call.children[0], call.children[1]
        if not isinstance(receiver, lark.Tree) or not isinstance(method, lark.Token):
            return False
        namespace = _single_ident(receiver)
        if namespace is None or namespace not in FUNCTION_NAMESPACES or namespace in bound:
            return False
        qualified = f"{namespace}.{method}"
        if qualified not in CEL_FUNCTIONS:
            known = sorted(n for n in CEL_FUNCTIONS if n.startswith(namespace + "."))
            self.issue(f"unknown function {qualified}() (known: {', '.join(known)})", method)
        name = lark.Token.new_borrow_pos("IDENT", qualified, method)
        arguments = [c for c in call.children[2:] if isinstance(c, lark.Tree)]
        ident_arg = lark.Tree("ident_arg", [name, *arguments], meta=call.meta)
        member.children = [lark.Tree("primary", [ident_arg], meta=call.meta)]
        return True

    def _method_call(self, call: lark.Tree, bound: frozenset[str], nesting: int) -> None:
        receiver, method = call.children[0], call.children[1]
        arguments = call.children[2] if len(call.children) > 2 else None
        method_name = str(method)
        if isinstance(receiver, lark.Tree):
            self.walk(receiver, bound, nesting)
        if method_name in MACROS:
            self._comprehension(call, method, arguments, bound, nesting)
            return
        unknown = method_name in _CELPY_EXTRA_MACROS or method_name not in known_functions() - _GLOBAL_MACROS
        if self.check_functions and unknown:
            self.issue(f"unknown function .{method_name}()", method)
        if isinstance(arguments, lark.Tree):
            self._check_constant_pattern(method, arguments.children, first_is_subject=False)
            self.walk(arguments, bound, nesting)

    def _comprehension(
        self,
        call: lark.Tree,
        method: lark.Token | lark.Tree,
        arguments: lark.Tree | lark.Token | None,
        bound: frozenset[str],
        nesting: int,
    ) -> None:
        if nesting + 1 > MAX_COMPREHENSION_NESTING:
            self.issue(f"comprehensions nest deeper than {MAX_COMPREHENSION_NESTING} levels", method)
        exprs = arguments.children if isinstance(arguments, lark.Tree) else []
        variable = _single_ident(exprs[0]) if exprs and isinstance(exprs[0], lark.Tree) else None
        if len(exprs) != 2 or variable is None:
            if self.check_functions:
                self.issue(f".{method}() takes a variable name and an expression", method)
            for expr in exprs:  # other engines' forms (two-variable macros): still find references
                if isinstance(expr, lark.Tree):
                    self.walk(expr, bound | _bound_names(exprs[:-1]), nesting + 1)
            return
        body = exprs[1]
        if isinstance(body, lark.Tree):
            self.walk(body, bound | {variable}, nesting + 1)

    def _check_constant_pattern(
        self,
        function: lark.Token | lark.Tree,
        arguments: list[lark.Tree | lark.Token],
        first_is_subject: bool,
    ) -> None:
        """A constant ``matches`` pattern is compiled now, so a bad regex fails the load."""
        if str(function) != "matches":
            return
        offset = _offset(self.source, function)
        if offset is not None:
            self.matches_offsets.append(offset)
        exprs = arguments
        if first_is_subject and len(arguments) == 1 and isinstance(arguments[0], lark.Tree):
            exprs = arguments[0].children
            pattern_index = 1
        else:
            pattern_index = 0
        if len(exprs) <= pattern_index or not isinstance(exprs[pattern_index], lark.Tree):
            return
        literal = _string_literal(exprs[pattern_index])
        if literal is None:
            return
        try:
            compile_re2(literal)
        except ValueError as exc:
            self.issue(str(exc), exprs[pattern_index])


def _string_literal(tree: lark.Tree | lark.Token) -> str | None:
    node: lark.Tree | lark.Token = tree
    while isinstance(node, lark.Tree) and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, lark.Token) and node.type in ("STRING_LIT", "MLSTRING_LIT"):
        try:
            from celpy.evaluation import celstr

            return str(celstr(node))
        except Exception:  # a literal cel-python cannot decode is reported by evaluation instead
            return None
    return None


def _bound_names(exprs: list[lark.Tree | lark.Token]) -> frozenset[str]:
    names = (_single_ident(e) for e in exprs if isinstance(e, lark.Tree))
    return frozenset(n for n in names if n is not None)


def analyze(tree: lark.Tree, source: str, check_functions: bool = True) -> Analysis:
    """Rewrite namespaced calls in ``tree`` (in place) and report references and issues.

    ``check_functions=False`` leaves function names and macro forms to an engine with its own
    checker (the native engine), keeping the checks both engines share."""
    walker = _Walker(source, check_functions)
    walker.walk(tree, frozenset(), 0)
    return Analysis(
        frozenset(walker.references),
        tuple(walker.issues),
        tuple(walker.matches_offsets),
        Reads(tuple(walker.members), frozenset(walker.whole)),
    )


def single_ident(tree: lark.Tree) -> str | None:
    """The name when ``tree`` is exactly one bare identifier (through single-child nodes)."""
    return _single_ident(tree)


def string_literal(tree: lark.Tree | lark.Token) -> str | None:
    """The value when ``tree`` is exactly one string literal (through single-child nodes)."""
    return _string_literal(tree)


def parse(parser: celpy.Environment, expression: str) -> lark.Tree | CelCompileIssue:
    """cel-python's parse tree of ``expression``, or the issue an engine that evaluates that tree
    reports: too long, a syntax error (with its offset), or nesting too deep to parse."""
    from celpy.celparser import CELParseError

    if len(expression) > MAX_EXPRESSION_CHARS:
        return CelCompileIssue(f"expression longer than {MAX_EXPRESSION_CHARS} characters", 0)
    try:
        tree: lark.Tree = parser.compile(expression)
    except CELParseError as error:
        offset = (
            line_column_to_offset(expression, error.line, error.column)
            if error.line is not None and error.column is not None
            else None
        )
        return CelCompileIssue(_syntax_message(expression, offset), offset)
    except RecursionError:
        return CelCompileIssue("expression nests too deeply", None)
    return tree


def _syntax_message(expression: str, offset: int | None) -> str:
    if offset is None:
        return "syntax error"
    if offset >= len(expression.rstrip()):
        return "syntax error: unexpected end of expression"
    return f"syntax error at {expression[offset : offset + 12].split(chr(10))[0]!r}"


_PARSER: list[celpy.Environment] = []


def _environment() -> celpy.Environment:
    """cel-python's parser, built on first use (building its LALR tables costs about as much as
    parsing a whole pack with :mod:`.fast_parser`, which needs it only for what it declines)."""
    if not _PARSER:
        import celpy

        _PARSER.append(celpy.Environment())
    return _PARSER[0]


def parse_lean(expression: str) -> lark.Tree | CelCompileIssue:
    """:func:`parse` for engines that walk the tree only at load time (closure, native, the type
    checker): the tree with its single-child precedence chains collapsed
    (:func:`~.fast_parser.parse_collapsed`), or cel-python's whole tree, or its issue, for what
    the fast parser declines."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        return CelCompileIssue(f"expression longer than {MAX_EXPRESSION_CHARS} characters", 0)
    tree = parse_collapsed(expression)
    return tree if tree is not None else parse(_environment(), expression)


def parse_checked(expression: str) -> lark.Tree | None:
    """cel-python's parse tree of ``expression`` (collapsed where the fast parser takes it) with
    namespaced calls rewritten (as the engines hold it), for load-time work on an engine that
    keeps no tree; None when cel-python's grammar does not accept it (syntax only another engine
    has) or it nests too deeply."""
    from celpy.celparser import CELParseError

    try:
        tree = parse_collapsed(expression) or _environment().compile(expression)
        analyze(tree, expression)
    except (CELParseError, RecursionError):
        return None
    return tree
