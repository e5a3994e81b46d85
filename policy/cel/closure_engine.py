"""The closure compiler: CEL compiled at load time into nested Python closures.

The approach of cel-go's planner: cel-python's parse tree (with the shared load-time rewrites of
:mod:`~dsh_policy.policy.cel.celpy_ast`) is walked once, and every node becomes one small
function of ``(activation, locals)``. Work that does not depend on the activation happens in the
walk, not per evaluation: constant subexpressions are folded, a constant ``matches`` pattern is
compiled once with RE2, a helper from :data:`~dsh_policy.policy.cel.functions.CEL_FUNCTIONS`
is bound directly into its call node, and the common shapes (``args.path``, ``x == "lit"``,
``s.startsWith("lit")``) get specialized closures. Activation values are read as they are (plain
dicts, lists, strings): nothing is converted per evaluation.

Semantics are CEL's: errors are values (raised as
:class:`~dsh_policy.policy.cel.closure_values.CelError` and absorbed only where CEL absorbs
them: ``&&`` and ``||`` in either order, ``all``/``exists``); int64 and uint64 overflow are
errors; ``==`` compares numbers across kinds and is false, never an error, across types;
``has()`` tests map keys. Comprehensions share one budget per evaluation
(:data:`DEFAULT_ITERATION_BUDGET` iterations, the native runtime's limit, so both engines stop
the same inputs) and a wall-clock deadline (:data:`DEFAULT_TIME_BUDGET`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import celpy
import lark
from dsh_policy.policy.cel import closure_library as lib
from dsh_policy.policy.cel import closure_strings
from dsh_policy.policy.cel.celpy_ast import (
    MAX_COMPREHENSION_NESTING,
    analyze,
    line_column_to_offset,
    parse,
    single_ident,
)
from dsh_policy.policy.cel.closure_literals import LiteralError, decode_literal
from dsh_policy.policy.cel.closure_values import (
    OPTIONAL_NONE,
    TYPES,
    CelError,
    Optional,
    Uint,
    equal,
    is_list,
    is_map,
    map_lookup,
    overload_error,
    to_output,
)
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEvalError, Reads
from dsh_policy.policy.cel.functions import CEL_FUNCTIONS, compile_re2

DEFAULT_ITERATION_BUDGET: Final = 10_000
"""Comprehension iterations of one evaluation, all comprehensions together, at which it stops
with an error (the 10,000th fails, as in cel-expr-python, so an input one engine refuses the
other refuses too)."""

DEFAULT_TIME_BUDGET: Final = 2.0
"""Seconds one evaluation may spend in comprehensions before it stops with an error."""

Activation = Mapping[str, Any]
Locals = list[Any]
Fn = Callable[[Activation, Locals], Any]

_BUDGET_SLOT: Final = 0
_DEADLINE_SLOT: Final = 1
_FIRST_VARIABLE_SLOT: Final = 2


class _CompileError(Exception):
    def __init__(self, message: str, at: lark.Tree | lark.Token | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.at = at


@dataclass(slots=True)
class _Node:
    """A compiled subexpression: ``fn`` evaluates it; ``constant`` when its value is known;
    ``slot`` when it only reads a comprehension variable (so a parent can read ``loc[slot]``
    itself instead of calling ``fn``: one call fewer per element)."""

    fn: Fn
    constant: bool = False
    value: Any = None
    slot: int | None = None


def _constant(value: Any) -> _Node:
    return _Node(lambda _a, _l: value, True, value)


def _raising(error: CelError) -> _Node:
    def fail(_a: Activation, _l: Locals) -> Any:
        raise CelError(error.message, error.kind)

    return _Node(fail)


def _fold(function: Callable[..., Any], *nodes: _Node) -> _Node | None:
    """The node for ``function`` over constant ``nodes``, computed now; None when not all are
    constant. An error is kept for evaluation time (``false && 1/0 == 0`` must still work)."""
    if not all(node.constant for node in nodes):
        return None
    try:
        return _constant(function(*(node.value for node in nodes)))
    except CelError as error:
        return _raising(error)


def _budget_tick(loc: Locals) -> None:
    remaining = loc[_BUDGET_SLOT] - 1
    if remaining < 0:
        raise CelError("evaluation exceeded its budget of comprehension iterations", "budget")
    loc[_BUDGET_SLOT] = remaining
    if not remaining & 63 and time.monotonic() > loc[_DEADLINE_SLOT]:
        raise CelError("evaluation exceeded its time budget", "budget")


def _range_of(value: Any, macro: str) -> list[Any] | Any:
    kind = type(value)
    if kind is list or kind is tuple:
        return value
    if kind is dict:
        return list(value)
    if is_map(value) or is_list(value):
        return list(value)
    raise overload_error(macro, value)


_NAMESPACES: Final = frozenset({"math", "base64", "optional", "strings", "cel"})
_TYPE_IDENTS: Final = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "optional_type"}
)
_QUALIFIED_TYPES: Final = {
    "google.protobuf.Timestamp": TYPES["google.protobuf.Timestamp"],
    "google.protobuf.Duration": TYPES["google.protobuf.Duration"],
}

_GLOBAL_FUNCTIONS: Final[Mapping[str, Callable[..., Any]]] = {
    "size": lib.size,
    "int": lib.to_int,
    "uint": lib.to_uint,
    "double": lib.to_double,
    "string": lib.to_string,
    "bytes": lib.to_bytes,
    "bool": lib.to_bool,
    "type": lib.to_type,
    "dyn": lib.dyn,
    "timestamp": lib.to_timestamp,
    "duration": lib.to_duration,
    **lib.MATH_FUNCTIONS,
    "base64.encode": lib.base64_encode,
    "base64.decode": lib.base64_decode,
    "optional.of": lib.optional_of,
    "optional.ofNonZeroValue": lib.optional_of_non_zero,
    "optional.none": lambda: OPTIONAL_NONE,
    "strings.quote": closure_strings.quote,
}

_METHODS: Final[Mapping[str, Callable[..., Any]]] = {
    "contains": lib.contains,
    "startsWith": lib.starts_with,
    "endsWith": lib.ends_with,
    "size": lib.size,
    **lib.TIME_GETTERS,
    "hasValue": lib.optional_has_value,
    "value": lib.optional_value,
    "or": lib.optional_or,
    "orValue": lib.optional_or_value,
    **closure_strings.METHODS,
}
"""Receiver-style functions (``s.contains(x)``); most also work called globally with the
receiver first, as cel-python accepts (``contains(s, x)``)."""

_MACROS: Final = frozenset(
    {"all", "exists", "exists_one", "existsOne", "map", "filter", "transformList", "transformMap",
     "transformMapEntry", "optMap", "optFlatMap"}
)  # fmt: skip


def _helper(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A gateway helper as a CEL function: its arguments as they are (plain values: a ``uint``
    is an ``int``), its ``TypeError``/``ValueError`` as an evaluation error."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except (TypeError, ValueError, KeyError, RecursionError) as exc:
            raise CelError(f"{name}: {exc}", "helper") from None

    return call


class _Compiler:
    """One walk over one parse tree."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.slots = _FIRST_VARIABLE_SLOT
        self.loops = False
        self.helpers = False  # calls a gateway helper (which reads the stage deadline)
        self.references: set[str] = set()

    # -- plumbing --

    def offset(self, at: lark.Tree | lark.Token | None) -> int | None:
        if isinstance(at, lark.Token) and at.line is not None and at.column is not None:
            return line_column_to_offset(self.source, at.line, at.column)
        if isinstance(at, lark.Tree) and not at.meta.empty:
            return line_column_to_offset(self.source, at.meta.line, at.meta.column)
        return None

    def compile(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        node: lark.Tree = tree
        while True:
            data = node.data
            children = node.children
            if len(children) == 1 and data in _PASS_THROUGH and isinstance(children[0], lark.Tree):
                node = children[0]
                continue
            break
        handler = _HANDLERS.get(str(node.data))
        if handler is None:
            raise _CompileError(f"unsupported syntax: {node.data}", node)
        return handler(self, node, scope)

    # -- operators --

    def conditional(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        condition, yes, no = (self.compile(child, scope) for child in tree.children)
        if condition.constant and type(condition.value) is bool:
            return yes if condition.value else no
        c, y, n = condition.fn, yes.fn, no.fn

        def choose(a: Activation, loc: Locals) -> Any:
            test = c(a, loc)
            if test is True:
                return y(a, loc)
            if test is False:
                return n(a, loc)
            raise overload_error("_?_:_", test)

        return _Node(choose)

    def logical(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        left = self.compile(tree.children[0], scope)
        right = self.compile(tree.children[1], scope)
        deciding = tree.data == "conditionalor"
        name = "_||_" if deciding else "_&&_"
        for one, other in ((left, right), (right, left)):
            if one.constant and one.value is deciding:
                return _constant(deciding)
            if one.constant and one.value is (not deciding):
                return _Node(_strict_bool(other.fn, name))  # true && x is x, if x is a bool
        return _Node(_logical(left.fn, right.fn, deciding, name))

    def relation(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        operator_tree, right_tree = tree.children
        assert isinstance(operator_tree, lark.Tree) and isinstance(right_tree, lark.Tree)
        left = self.compile(operator_tree.children[0], scope)
        right = self.compile(right_tree, scope)
        kind = str(operator_tree.data)
        if kind in ("relation_eq", "relation_ne"):
            return _equality(left, right, kind == "relation_ne")
        if kind == "relation_in":
            return _membership(left, right)
        function = _ORDERINGS[kind]
        return _fold(function, left, right) or _binary(function, left, right)

    def arithmetic(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        operator_tree, right_tree = tree.children
        assert isinstance(operator_tree, lark.Tree) and isinstance(right_tree, lark.Tree)
        left = self.compile(operator_tree.children[0], scope)
        right = self.compile(right_tree, scope)
        function = _ARITHMETIC[str(operator_tree.data)]
        return _fold(function, left, right) or _binary(function, left, right)

    def unary(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        operator_tree, operand_tree = tree.children
        assert isinstance(operator_tree, lark.Tree) and isinstance(operand_tree, lark.Tree)
        operand = self.compile(operand_tree, scope)
        if operator_tree.data == "unary_not":
            function: Callable[[Any], Any] = lib.logical_not
        else:
            literal = _negated_literal(operand_tree)
            if literal is not None:  # - 9223372036854775808 is int64's minimum, not an overflow
                return literal
            function = lib.negate
        folded = _fold(function, operand)
        if folded is not None:
            return folded
        fn = operand.fn
        return _Node(lambda a, loc: function(fn(a, loc)))

    # -- leaves --

    def literal(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        token = tree.children[0]
        assert isinstance(token, lark.Token)
        try:
            return _constant(decode_literal(token.type, str(token)))
        except LiteralError as error:
            raise _CompileError(str(error), token) from None

    def ident(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        token = tree.children[0]
        name = str(token)
        if name in scope:
            slot = scope[name]
            return _Node(lambda _a, loc: loc[slot], slot=slot)
        if name in _TYPE_IDENTS:
            type_value = TYPES[name]

            def type_or_variable(a: Activation, _loc: Locals) -> Any:
                return a.get(name, type_value)

            return _Node(type_or_variable)
        self.references.add(name)
        return _Node(_variable(name))

    def dot_ident(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        token = tree.children[0]
        self.references.add(str(token))
        return _Node(_variable(str(token)))

    def paren(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        return self.compile(tree.children[0], scope)

    def list_literal(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        items = self._arguments(tree.children[0] if tree.children else None, scope)
        if all(item.constant for item in items):
            values = [item.value for item in items]
            return _Node(lambda _a, _l: values, True, values)
        fns = [item.fn for item in items]
        return _Node(lambda a, loc: [fn(a, loc) for fn in fns])

    def map_literal(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        inits = tree.children[0] if tree.children else None
        exprs = (
            [c for c in inits.children if isinstance(c, lark.Tree)] if isinstance(inits, lark.Tree) else []
        )
        pairs = [
            (self.compile(exprs[i], scope), self.compile(exprs[i + 1], scope))
            for i in range(0, len(exprs), 2)
        ]
        fns = [(key.fn, value.fn) for key, value in pairs]

        def build(a: Activation, loc: Locals) -> dict[Any, Any]:
            result: dict[Any, Any] = {}
            for key_fn, value_fn in fns:
                key = key_fn(a, loc)
                kind = type(key)
                if not (kind is str or kind is int or kind is Uint or kind is bool):
                    raise CelError(f"unsupported map key type: {lib.to_type(key).name}", "invalid_argument")
                if map_lookup(result, key)[0]:
                    raise CelError(f"duplicate map key: {key!r}", "invalid_argument")
                result[key] = value_fn(a, loc)
            return result

        if all(key.constant and value.constant for key, value in pairs):
            try:
                value = build({}, [])
            except CelError as error:
                return _raising(error)
            return _Node(lambda _a, _l: value, True, value)
        return _Node(build)

    def message(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        raise _CompileError("message construction is not supported (no protobuf types here)", tree)

    def _arguments(self, exprlist: Any, scope: Mapping[str, int]) -> list[_Node]:
        return [self.compile(child, scope) for child in _argument_trees(exprlist)]

    # -- member access --

    def member_dot(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        target_tree, name_token = tree.children
        name = str(name_token)
        qualified = _qualified_name(tree)
        if qualified is not None and qualified in _QUALIFIED_TYPES and qualified.split(".")[0] not in scope:
            type_value = _QUALIFIED_TYPES[qualified]
            return _Node(lambda _a, _l: type_value, True, type_value)
        assert isinstance(target_tree, lark.Tree)
        target = self.compile(target_tree, scope)
        return _select(target, name)

    def member_index(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        target = self.compile(tree.children[0], scope)
        key = self.compile(tree.children[1], scope)
        folded = _fold(lib.index, target, key)
        if folded is not None:
            return folded
        target_fn, key_fn = target.fn, key.fn
        if key.constant and type(key.value) is int and target.slot is not None:
            position = key.value
            slot = target.slot

            def slot_at_position(_a: Activation, loc: Locals) -> Any:
                container = loc[slot]
                if type(container) is list and 0 <= position < len(container):
                    return container[position]
                return lib.index(container, position)

            return _Node(slot_at_position)
        if key.constant and type(key.value) is int:
            position = key.value

            def at_position(a: Activation, loc: Locals) -> Any:
                container = target_fn(a, loc)
                if type(container) is list and 0 <= position < len(container):
                    return container[position]
                return lib.index(container, position)

            return _Node(at_position)
        return _Node(lambda a, loc: lib.index(target_fn(a, loc), key_fn(a, loc)))

    # -- calls --

    def global_call(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        name_token = tree.children[0]
        name = str(name_token)
        exprlist = tree.children[1] if len(tree.children) > 1 else None
        raw = _argument_trees(exprlist)
        if name == "has":
            if len(raw) != 1:
                raise _CompileError("has() takes one field selection", name_token)
            return self._has(raw[0], scope)
        args = [self.compile(argument, scope) for argument in raw]
        return self._call(name, name_token, args, None)

    def dot_global_call(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        return self.global_call(tree, scope)

    def method_call(self, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
        target_tree, method_token = tree.children[0], tree.children[1]
        exprlist = tree.children[2] if len(tree.children) > 2 else None
        raw = _argument_trees(exprlist)
        method = str(method_token)
        assert isinstance(target_tree, lark.Tree)
        namespace = single_ident(target_tree)
        if namespace is not None and namespace in _NAMESPACES and namespace not in scope:
            qualified = f"{namespace}.{method}"
            if qualified == "cel.bind":
                return self._bind(raw, method_token, scope)
            if qualified in _GLOBAL_FUNCTIONS:
                return self._call(qualified, method_token, [self.compile(r, scope) for r in raw], None)
        if method in _MACROS:
            return self._macro(method, method_token, target_tree, raw, scope)
        target = self.compile(target_tree, scope)
        args = [self.compile(argument, scope) for argument in raw]
        return self._call(method, method_token, args, target)

    def _call(self, name: str, at: lark.Token | Any, args: list[_Node], target: _Node | None) -> _Node:
        if name == "matches":
            return self._matches(at, args, target)
        if target is not None:
            function = _METHODS.get(name)
            if function is None:
                raise _CompileError(f"unknown function .{name}()", at)
            return _specialized_method(name, function, target, args) or _call_node(function, [target, *args])
        helper = CEL_FUNCTIONS.get(name)
        if helper is not None:
            self.helpers = True
            return _call_node(_helper(name, helper), args, fold=False)
        function = _GLOBAL_FUNCTIONS.get(name) or _METHODS.get(name)
        if function is None:
            raise _CompileError(f"unknown function {name}()", at)
        if name == "dyn" and len(args) == 1:
            return args[0]
        return _call_node(function, args)

    def _matches(self, at: Any, args: list[_Node], target: _Node | None) -> _Node:
        operands = [target, *args] if target is not None else args
        if len(operands) != 2:
            raise _CompileError("matches() takes a string and a pattern", at)
        subject, pattern = operands
        if pattern.constant and type(pattern.value) is str:
            try:
                regex = compile_re2(pattern.value)
            except ValueError as exc:
                raise _CompileError(str(exc), at) from None
            search = regex.search
            subject_fn = subject.fn
            if subject.slot is not None:
                slot = subject.slot

                def slot_matches_constant(_a: Activation, loc: Locals) -> bool:
                    text = loc[slot]
                    if type(text) is not str and not isinstance(text, str):
                        raise overload_error("matches", text, pattern.value)
                    return search(text) is not None

                return _Node(slot_matches_constant)

            def matches_constant(a: Activation, loc: Locals) -> bool:
                text = subject_fn(a, loc)
                if type(text) is not str and not isinstance(text, str):
                    raise overload_error("matches", text, pattern.value)
                return search(text) is not None

            return _Node(matches_constant)
        self.helpers = True
        return _call_node(_helper("matches", CEL_FUNCTIONS["matches"]), operands, fold=False)

    def _has(self, argument: lark.Tree, scope: Mapping[str, int]) -> _Node:
        node = argument
        while (
            len(node.children) == 1 and isinstance(node.children[0], lark.Tree) and node.data in _PASS_THROUGH
        ):
            node = node.children[0]
        if node.data != "member_dot":
            raise _CompileError("has() takes a field selection such as has(args.path)", argument)
        target_tree, name_token = node.children
        name = str(name_token)
        target = self.compile(target_tree, scope)
        folded = _fold(lambda value: _has_field(value, name), target)
        if folded is not None:
            return folded
        target_fn = target.fn

        def has(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            if type(value) is dict:
                return name in value
            return _has_field(value, name)

        return _Node(has)

    def _bind(self, raw: list[lark.Tree], at: Any, scope: Mapping[str, int]) -> _Node:
        variable = single_ident(raw[0]) if len(raw) == 3 else None
        if variable is None:
            raise _CompileError("cel.bind() takes a name, a value and an expression", at)
        init = self.compile(raw[1], scope)
        slot = self._slot()
        body = self.compile(raw[2], {**scope, variable: slot})
        init_fn, body_fn = init.fn, body.fn

        def bind(a: Activation, loc: Locals) -> Any:
            loc[slot] = init_fn(a, loc)
            return body_fn(a, loc)

        return _Node(bind)

    def _slot(self) -> int:
        slot = self.slots
        self.slots += 1
        return slot

    def _macro(
        self, method: str, at: Any, target_tree: lark.Tree, raw: list[lark.Tree], scope: Mapping[str, int]
    ) -> _Node:
        names = [single_ident(r) for r in raw[:-1]]
        target = self.compile(target_tree, scope)
        if method in ("optMap", "optFlatMap"):
            if len(raw) != 2 or names[0] is None:
                raise _CompileError(f".{method}() takes a variable name and an expression", at)
            slot = self._slot()
            body = self.compile(raw[1], {**scope, names[0]: slot})
            return _Node(_optional_map(target.fn, slot, body.fn, method == "optFlatMap"))
        two = method in ("transformList", "transformMap", "transformMapEntry") or (
            len(raw) >= 3 and method in ("all", "exists", "exists_one", "existsOne")
        )
        count = 2 if two else 1
        shapes = {
            "map": (2, 3), "filter": (2,), "all": (2, 3), "exists": (2, 3), "exists_one": (2, 3),
            "existsOne": (2, 3), "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4),
        }  # fmt: skip
        if len(raw) not in shapes[method] or any(name is None for name in names[:count]):
            raise _CompileError(f".{method}() takes variable names and expressions", at)
        self.loops = True
        slots = [self._slot() for _ in range(count)]
        inner = {**scope, **{name: slot for name, slot in zip(names[:count], slots, strict=True) if name}}
        bodies = [self.compile(r, inner) for r in raw[count:]]
        return _Node(_comprehension(method, target.fn, slots, [b.fn for b in bodies]))


_PASS_THROUGH: Final = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member",
     "primary"}
)  # fmt: skip

_ORDERINGS: Final = {
    "relation_lt": lib.less,
    "relation_le": lib.less_equal,
    "relation_gt": lib.greater,
    "relation_ge": lib.greater_equal,
}
_ARITHMETIC: Final = {
    "addition_add": lib.add,
    "addition_sub": lib.subtract,
    "multiplication_mul": lib.multiply,
    "multiplication_div": lib.divide,
    "multiplication_mod": lib.modulo,
}


def _handle_expr(c: _Compiler, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
    return c.conditional(tree, scope)


def _handle_logical(c: _Compiler, tree: lark.Tree, scope: Mapping[str, int]) -> _Node:
    return c.logical(tree, scope)


_HANDLERS: Final[Mapping[str, Callable[[_Compiler, lark.Tree, Mapping[str, int]], _Node]]] = {
    "expr": _handle_expr,
    "conditionalor": _handle_logical,
    "conditionaland": _handle_logical,
    "relation": _Compiler.relation,
    "addition": _Compiler.arithmetic,
    "multiplication": _Compiler.arithmetic,
    "unary": _Compiler.unary,
    "literal": _Compiler.literal,
    "ident": _Compiler.ident,
    "dot_ident": _Compiler.dot_ident,
    "paren_expr": _Compiler.paren,
    "list_lit": _Compiler.list_literal,
    "map_lit": _Compiler.map_literal,
    "member_object": _Compiler.message,
    "member_dot": _Compiler.member_dot,
    "member_index": _Compiler.member_index,
    "member_dot_arg": _Compiler.method_call,
    "ident_arg": _Compiler.global_call,
    "dot_ident_arg": _Compiler.dot_global_call,
}


# -- node builders -----------------------------------------------------------------------------


def _variable(name: str) -> Fn:
    def read(a: Activation, _loc: Locals) -> Any:
        try:
            return a[name]
        except KeyError:
            raise CelError(f"undeclared reference to {name!r}", "undeclared_reference") from None

    return read


def _has_field(value: Any, name: str) -> bool:
    if is_map(value):
        return map_lookup(value, name)[0]
    if type(value) is Optional:
        return value.present and _has_field(value.value, name)
    raise CelError(f"has() needs a map or message, got {lib.to_type(value).name}", "no_such_overload")


def _select(target: _Node, name: str) -> _Node:
    folded = _fold(lambda value: _select_value(value, name), target)
    if folded is not None:
        return folded
    target_fn = target.fn

    def select(a: Activation, loc: Locals) -> Any:
        value = target_fn(a, loc)
        if type(value) is dict:
            try:
                return value[name]
            except KeyError:
                raise CelError(f"no such key: {name!r}", "no_such_key") from None
        return _select_value(value, name)

    return _Node(select)


def _select_value(value: Any, name: str) -> Any:
    if is_map(value):
        found, item = map_lookup(value, name)
        if found:
            return item
        raise CelError(f"no such key: {name!r}", "no_such_key")
    if type(value) is Optional:
        if not value.present:
            return value
        try:
            return Optional(True, _select_value(value.value, name))
        except CelError as error:
            if error.kind == "no_such_key":
                return OPTIONAL_NONE
            raise
    raise CelError(f"type {lib.to_type(value).name} does not support field selection", "no_such_field")


def _binary(function: Callable[[Any, Any], Any], left: _Node, right: _Node) -> _Node:
    lf, rf = left.fn, right.fn
    if right.constant:
        value = right.value
        return _Node(lambda a, loc: function(lf(a, loc), value))
    return _Node(lambda a, loc: function(lf(a, loc), rf(a, loc)))


def _equality(left: _Node, right: _Node, negate: bool) -> _Node:
    folded = _fold((lambda x, y: not equal(x, y)) if negate else equal, left, right)
    if folded is not None:
        return folded
    if left.constant and not right.constant:
        left, right = right, left
    lf, rf = left.fn, right.fn
    if right.constant and type(right.value) is str and left.slot is not None:
        text = right.value
        slot = left.slot

        def slot_equals_text(_a: Activation, loc: Locals) -> bool:
            value = loc[slot]
            if type(value) is str:
                return value == text
            return equal(value, text)

        if not negate:
            return _Node(slot_equals_text)
        return _Node(lambda a, loc: not slot_equals_text(a, loc))
    if right.constant and type(right.value) is str:
        text = right.value

        def equals_text(a: Activation, loc: Locals) -> bool:
            value = lf(a, loc)
            if type(value) is str:
                return value == text
            return equal(value, text)

        if not negate:
            return _Node(equals_text)
        return _Node(lambda a, loc: not equals_text(a, loc))
    if right.constant:
        constant = right.value
        if negate:
            return _Node(lambda a, loc: not equal(lf(a, loc), constant))
        return _Node(lambda a, loc: equal(lf(a, loc), constant))
    if negate:
        return _Node(lambda a, loc: not equal(lf(a, loc), rf(a, loc)))
    return _Node(lambda a, loc: equal(lf(a, loc), rf(a, loc)))


def _membership(item: _Node, container: _Node) -> _Node:
    folded = _fold(lib.contained_in, item, container)
    if folded is not None:
        return folded
    item_fn = item.fn
    if container.constant and is_list(container.value) and all(type(v) is str for v in container.value):
        texts = frozenset(container.value)
        values = container.value
        if item.slot is not None:
            slot = item.slot

            def slot_in_texts(_a: Activation, loc: Locals) -> bool:
                value = loc[slot]
                if type(value) is str:
                    return value in texts
                return lib.contained_in(value, values)

            return _Node(slot_in_texts)

        def in_texts(a: Activation, loc: Locals) -> bool:
            value = item_fn(a, loc)
            if type(value) is str:
                return value in texts
            return lib.contained_in(value, values)

        return _Node(in_texts)
    return _binary(lib.contained_in, item, container)


def _strict_bool(fn: Fn, name: str) -> Fn:
    def check(a: Activation, loc: Locals) -> bool:
        value = fn(a, loc)
        if value is True or value is False:
            return value
        raise overload_error(name, value)

    return check


def _logical(left: Fn, right: Fn, deciding: bool, name: str) -> Fn:
    """``&&`` (``deciding`` False) or ``||`` (True): the deciding value on either side wins over
    an error or a non-bool on the other; otherwise the first error."""
    other = not deciding

    def combine(a: Activation, loc: Locals) -> bool:
        try:
            value = left(a, loc)
        except CelError as error:
            first: CelError = error
        else:
            if value is deciding:
                return deciding
            if value is other:
                result = right(a, loc)
                if result is True or result is False:
                    return result
                raise overload_error(name, value, result)
            first = overload_error(name, value)
        try:
            result = right(a, loc)
        except CelError:
            raise first from None
        if result is deciding:
            return deciding
        raise first

    return combine


def _call_node(function: Callable[..., Any], args: list[_Node], fold: bool = True) -> _Node:
    if fold:
        folded = _fold(function, *args)
        if folded is not None:
            return folded
    fns = [arg.fn for arg in args]
    if len(fns) == 1:
        (f0,) = fns
        return _Node(lambda a, loc: function(f0(a, loc)))
    if len(fns) == 2:
        f0, f1 = fns
        if args[1].constant:
            c1 = args[1].value
            return _Node(lambda a, loc: function(f0(a, loc), c1))
        return _Node(lambda a, loc: function(f0(a, loc), f1(a, loc)))
    if not fns:
        return _Node(lambda _a, _l: function())
    return _Node(lambda a, loc: function(*(f(a, loc) for f in fns)))


def _specialized_method(
    name: str, function: Callable[..., Any], target: _Node, args: list[_Node]
) -> _Node | None:
    """``s.startsWith("lit")`` and friends as one closure with the string test inline."""
    if len(args) != 1 or not args[0].constant or type(args[0].value) is not str or target.constant:
        return None
    text = args[0].value
    target_fn = target.fn
    if name == "contains":

        def contains_text(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            return text in value if type(value) is str else function(value, text)

        return _Node(contains_text)
    if name == "startsWith":

        def starts_with_text(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            return value.startswith(text) if type(value) is str else function(value, text)

        return _Node(starts_with_text)
    if name == "endsWith":

        def ends_with_text(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            return value.endswith(text) if type(value) is str else function(value, text)

        return _Node(ends_with_text)
    return None


def _negated_literal(tree: lark.Tree) -> _Node | None:
    """``-9223372036854775808`` with a space after the sign: int64's minimum, whose magnitude
    alone would be an out-of-range literal."""
    node: Any = tree
    while isinstance(node, lark.Tree) and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, lark.Token) and node.type == "INT_LIT" and not str(node).startswith("-"):
        try:
            return _constant(decode_literal("INT_LIT", "-" + str(node)))
        except LiteralError:
            return None
    return None


def _argument_trees(exprlist: Any) -> list[lark.Tree]:
    """A call's argument expressions (``exprlist`` is absent for a call without arguments)."""
    if not isinstance(exprlist, lark.Tree):
        return []
    return [child for child in exprlist.children if isinstance(child, lark.Tree)]


def _qualified_name(tree: lark.Tree) -> str | None:
    """``a.b.c`` when ``tree`` is only identifiers and dots."""
    parts: list[str] = []
    node: Any = tree
    while isinstance(node, lark.Tree):
        if node.data == "member_dot":
            parts.append(str(node.children[1]))
            node = node.children[0]
        elif node.data == "ident":
            parts.append(str(node.children[0]))
            return ".".join(reversed(parts))
        elif len(node.children) == 1:
            node = node.children[0]
        else:
            return None
    return None


def _optional_map(target: Fn, slot: int, body: Fn, flat: bool) -> Fn:
    def apply(a: Activation, loc: Locals) -> Optional:
        value = target(a, loc)
        if type(value) is not Optional:
            raise overload_error("optMap", value)
        if not value.present:
            return value
        loc[slot] = value.value
        result = body(a, loc)
        if flat:
            if type(result) is not Optional:
                raise overload_error("optFlatMap", result)
            return result
        return Optional(True, result)

    return apply


def _comprehension(method: str, target: Fn, slots: list[int], bodies: list[Fn]) -> Fn:
    """The loop of one macro. One-variable forms bind the element (a map's key); two-variable
    forms bind index and element (key and value)."""
    two = len(slots) == 2
    first = slots[0]
    second = slots[1] if two else first
    tick = _budget_tick

    def pairs(value: Any) -> Any:
        if two:
            if is_map(value):
                return list(value.items())
            if is_list(value):
                return list(enumerate(value))
            raise overload_error(method, value)
        return [(item, item) for item in _range_of(value, method)]

    if method in ("all", "exists"):
        deciding = method == "exists"
        predicate = bodies[0]

        def quantifier(a: Activation, loc: Locals) -> bool:
            first_error: CelError | None = None
            items = target(a, loc)
            if not two and (type(items) is list or type(items) is tuple):
                # The budget tick inlined: no call per element but the predicate's.
                deadline = loc[_DEADLINE_SLOT]
                for item in items:
                    remaining = loc[_BUDGET_SLOT] - 1
                    if remaining < 0:
                        raise CelError("evaluation exceeded its budget of comprehension iterations", "budget")
                    loc[_BUDGET_SLOT] = remaining
                    if not remaining & 63 and time.monotonic() > deadline:
                        raise CelError("evaluation exceeded its time budget", "budget")
                    loc[first] = item
                    try:
                        value = predicate(a, loc)
                    except CelError as error:
                        first_error = first_error or error
                        continue
                    if value is deciding:
                        return deciding
                    if value is not (not deciding) and first_error is None:
                        first_error = overload_error(method, value)
            else:
                for key, item in pairs(items):
                    tick(loc)
                    loc[first] = key
                    loc[second] = item
                    try:
                        value = predicate(a, loc)
                    except CelError as error:
                        first_error = first_error or error
                        continue
                    if value is deciding:
                        return deciding
                    if value is not (not deciding) and first_error is None:
                        first_error = overload_error(method, value)
            if first_error is not None:
                raise first_error
            return not deciding

        return quantifier

    if method in ("exists_one", "existsOne"):
        predicate = bodies[0]

        def exactly_one(a: Activation, loc: Locals) -> bool:
            count = 0
            for key, item in pairs(target(a, loc)):
                tick(loc)
                loc[first] = key
                loc[second] = item
                value = predicate(a, loc)
                if value is True:
                    count += 1
                elif value is not False:
                    raise overload_error(method, value)
            return count == 1

        return exactly_one

    if method == "filter":
        predicate = bodies[0]

        def keep(a: Activation, loc: Locals) -> list[Any]:
            out: list[Any] = []
            for key, _item in pairs(target(a, loc)):
                tick(loc)
                loc[first] = key
                value = predicate(a, loc)
                if value is True:
                    out.append(key)
                elif value is not False:
                    raise overload_error("filter", value)
            return out

        return keep

    condition = bodies[0] if len(bodies) == 2 else None
    transform = bodies[-1]

    if method in ("map", "transformList"):

        def transform_list(a: Activation, loc: Locals) -> list[Any]:
            out: list[Any] = []
            for key, item in pairs(target(a, loc)):
                tick(loc)
                loc[first] = key
                loc[second] = item
                if condition is not None:
                    test = condition(a, loc)
                    if test is False:
                        continue
                    if test is not True:
                        raise overload_error(method, test)
                out.append(transform(a, loc))
            return out

        return transform_list

    def transform_map(a: Activation, loc: Locals) -> dict[Any, Any]:
        source = target(a, loc)
        if not is_map(source):
            raise overload_error(method, source)
        out: dict[Any, Any] = {}
        for key, item in pairs(source):
            tick(loc)
            loc[first] = key
            loc[second] = item
            if condition is not None:
                test = condition(a, loc)
                if test is False:
                    continue
                if test is not True:
                    raise overload_error(method, test)
            value = transform(a, loc)
            if method == "transformMap":
                out[key] = value
                continue
            if not is_map(value):
                raise overload_error(method, value)
            for entry_key, entry_value in value.items():
                if map_lookup(out, entry_key)[0]:
                    raise CelError(f"duplicate map key: {entry_key!r}", "invalid_argument")
                out[entry_key] = entry_value
        return out

    return transform_map


# -- the engine --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClosureCompiledExpression:
    """An expression compiled to one closure; evaluate many times, from any thread."""

    source: str
    references: frozenset[str]
    reads: Reads
    _fn: Fn = field(repr=False)
    _slots: int = field(repr=False)
    _loops: bool = field(repr=False)
    _iteration_budget: int = DEFAULT_ITERATION_BUDGET
    _time_budget: float = DEFAULT_TIME_BUDGET
    #: cel-python's parse tree (rewritten by ``analyze``) until the loader's type checker takes it:
    #: the closures never look at it again, so it is not kept.
    _tree: list[Any] = field(default_factory=list, repr=False)
    calls_helpers: bool = True
    """Whether it calls a gateway helper (``shell.commands``...; a constant ``matches`` is RE2,
    linear, and not one): those read the stage deadline, so the decider's shortcut leaves them
    to the full run, which sets it."""
    converts_activation = False
    """Reads activation values as they are (see ``CompiledPolicy.converting``)."""

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        """Evaluate against plain-Python ``activation``; errors come back as values."""
        if self._loops:
            loc: Locals = [None] * self._slots
            loc[_BUDGET_SLOT] = self._iteration_budget - 1  # the 10,000th iteration fails, as native's
            loc[_DEADLINE_SLOT] = time.monotonic() + self._time_budget
        elif self._slots > _FIRST_VARIABLE_SLOT:
            loc = [None] * self._slots
        else:
            loc = _NO_LOCALS
        try:
            result = self._fn(activation, loc)
            if result is True or result is False:
                return result
            return to_output(result)
        except CelError as error:
            return CelEvalError(error.message)
        except RecursionError:
            return CelEvalError("evaluation nested too deeply")
        except Exception as exc:  # a data-dependent failure we did not foresee: still a value
            return CelEvalError(f"{type(exc).__name__}: {exc}")

    def take_parse_tree(self) -> Any:
        """cel-python's parse tree, once, for the loader's type checker; then forgotten."""
        return self._tree.pop() if self._tree else None

    def condition(self) -> Callable[[Mapping[str, Any]], Any]:
        """``evaluate`` for a caller that only tests the result for ``True``/``False`` (the
        decider's shortcut): the bare closure when it needs no locals, whose errors raise
        :class:`CelError` instead of coming back as values."""
        fn = self._fn
        if not self._loops and self._slots <= _FIRST_VARIABLE_SLOT:
            return lambda activation: fn(activation, _NO_LOCALS)
        return self.evaluate

    def evaluate_raw(self, activation: Mapping[str, Any]) -> Any:
        """The internal result, raising :class:`CelError` (for the differential tests)."""
        loc: Locals = [None] * max(self._slots, _FIRST_VARIABLE_SLOT)
        loc[_BUDGET_SLOT] = self._iteration_budget - 1
        loc[_DEADLINE_SLOT] = time.monotonic() + self._time_budget
        return self._fn(activation, loc)


_NO_LOCALS: Final[Locals] = []


class ClosureCelEngine:
    """CEL compiled to Python closures (pure Python, always available)."""

    def __init__(
        self, iteration_budget: int = DEFAULT_ITERATION_BUDGET, time_budget: float = DEFAULT_TIME_BUDGET
    ) -> None:
        self._parser = celpy.Environment()
        self._iteration_budget = iteration_budget
        self._time_budget = time_budget

    @property
    def name(self) -> str:
        """``closure``."""
        return "closure"

    def compile(self, expression: str) -> ClosureCompiledExpression | CelCompileIssue:
        """Parse, check and compile ``expression``; the first problem comes back as a
        :class:`CelCompileIssue` with its offset."""
        tree = parse(self._parser, expression)
        if isinstance(tree, CelCompileIssue):
            return tree
        try:
            analysis = analyze(tree, expression, check_functions=False)
            if analysis.issues:
                first = analysis.issues[0]
                return CelCompileIssue(first.message, first.offset)
            compiler = _Compiler(expression)
            node = compiler.compile(tree, {})
        except _CompileError as error:
            return CelCompileIssue(error.message, compiler.offset(error.at))
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        references = frozenset(compiler.references)
        reads = Reads(
            tuple(read for read in analysis.reads.members if read.root in references),
            analysis.reads.whole & references,
        )
        return ClosureCompiledExpression(
            expression,
            references,
            reads,
            node.fn,
            compiler.slots,
            compiler.loops,
            self._iteration_budget,
            self._time_budget,
            [tree],
            compiler.helpers,
        )


__all__ = [
    "DEFAULT_ITERATION_BUDGET",
    "DEFAULT_TIME_BUDGET",
    "MAX_COMPREHENSION_NESTING",
    "ClosureCelEngine",
    "ClosureCompiledExpression",
]
