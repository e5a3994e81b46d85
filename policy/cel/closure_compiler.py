"""The closure compiler's walk: one parse tree to one :class:`~.closure_nodes.Node`.

Each kind of parse-tree node has a handler (:data:`_HANDLERS`); single-child precedence levels
are skipped. Calls resolve at compile time: a constant ``matches`` pattern is compiled once with
RE2, a gateway helper from :data:`~dsh_policy.policy.cel.functions.CEL_FUNCTIONS` is bound
directly into its call node (and marks the expression as calling helpers), and every other
function comes from :mod:`.closure_library`. Anything the closures cannot run is a
:class:`CompileError` with the offending node, so the load reports it with its offset.

Trees are read by their shape (:mod:`.tree_shape`: a token is a ``str``, a tree is not), so the
walk takes lark's trees from the parser and the cache's stored trees alike, without lark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from dsh_policy.cmdline.deadline import one_time_setup
from dsh_policy.policy.cel import closure_operators as ops
from dsh_policy.policy.cel.closure_comprehensions import comprehension_fn
from dsh_policy.policy.cel.closure_conversions import to_type
from dsh_policy.policy.cel.closure_library import GLOBAL_FUNCTIONS, MACROS, METHODS, NAMESPACES
from dsh_policy.policy.cel.closure_literals import LiteralError, decode_literal
from dsh_policy.policy.cel.closure_nodes import (
    FIRST_VARIABLE_SLOT,
    Activation,
    Locals,
    Node,
    binary_node,
    call_node,
    constant_node,
    equality_node,
    fold_constants,
    has_field,
    logical_fn,
    membership_node,
    optional_map_fn,
    raising_node,
    select_node,
    specialized_method_node,
    strict_bool_fn,
    variable_fn,
)
from dsh_policy.policy.cel.closure_values import (
    TYPES,
    CelError,
    Uint,
    map_lookup,
    overload_error,
)
from dsh_policy.policy.cel.functions import CEL_FUNCTIONS, DeferredHelper, compile_re2, re2_finds
from dsh_policy.policy.cel.tree_shape import line_column_to_offset, single_ident

if TYPE_CHECKING:
    import lark


class CompileError(Exception):
    """Syntax the closures cannot run, at ``at`` (a node or token of the parse tree)."""

    def __init__(self, message: str, at: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.at = at


_TYPE_IDENTS: Final = frozenset(
    {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "optional_type"}
)
_QUALIFIED_TYPES: Final = {
    "google.protobuf.Timestamp": TYPES["google.protobuf.Timestamp"],
    "google.protobuf.Duration": TYPES["google.protobuf.Duration"],
}


def _helper(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A gateway helper as a CEL function: its arguments as they are (plain values: a ``uint``
    is an ``int``), its ``TypeError``/``ValueError`` as an evaluation error."""

    target = function
    if isinstance(function, DeferredHelper):

        def first_call(*args: Any) -> Any:
            # Imports the reader, and puts its function in the closures' cell: later calls pay
            # nothing for the deferral.
            nonlocal target
            target = function.resolve()
            return target(*args)

        target = first_call

    def call(*args: Any) -> Any:
        try:
            return target(*args)
        except (TypeError, ValueError, KeyError, RecursionError) as exc:
            raise CelError(f"{name}: {exc}", "helper") from None

    return call


class Compiler:
    """One walk over one parse tree: the slots it allocated, whether it loops or calls a
    helper, and the activation names it references. ``patterns_checked``: the tree's constant
    ``matches`` patterns were compiled by the build that made it (a tree the verified cache kept),
    so each is compiled on its first evaluation rather than in the walk."""

    def __init__(self, source: str, *, patterns_checked: bool = False) -> None:
        self.source = source
        self.patterns_checked = patterns_checked
        self.slots = FIRST_VARIABLE_SLOT
        self.loops = False
        self.helpers = False  # calls a gateway helper (which reads the stage deadline)
        self.references: set[str] = set()

    # -- plumbing --

    def offset(self, at: lark.Tree | lark.Token | None) -> int | None:
        if isinstance(at, str):
            line, column = getattr(at, "line", None), getattr(at, "column", None)
            if line is not None and column is not None:
                return line_column_to_offset(self.source, line, column)
        elif at is not None and not at.meta.empty:
            return line_column_to_offset(self.source, at.meta.line, at.meta.column)
        return None

    def compile(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        node: lark.Tree = tree
        while True:
            data = node.data
            children = node.children
            if len(children) == 1 and data in _PASS_THROUGH and not isinstance(children[0], str):
                node = children[0]
                continue
            break
        handler = _HANDLERS.get(str(node.data))
        if handler is None:
            raise CompileError(f"unsupported syntax: {node.data}", node)
        return handler(self, node, scope)

    # -- operators --

    def conditional(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
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

        return Node(choose)

    def logical(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        left = self.compile(tree.children[0], scope)
        right = self.compile(tree.children[1], scope)
        deciding = tree.data == "conditionalor"
        name = "_||_" if deciding else "_&&_"
        for one, other in ((left, right), (right, left)):
            if one.constant and one.value is deciding:
                return constant_node(deciding)
            if one.constant and one.value is (not deciding):
                return Node(strict_bool_fn(other.fn, name))  # true && x is x, if x is a bool
        return Node(logical_fn(left.fn, right.fn, deciding, name))

    def relation(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        operator_tree, right_tree = tree.children
        assert not isinstance(operator_tree, str) and not isinstance(right_tree, str)
        left = self.compile(operator_tree.children[0], scope)
        right = self.compile(right_tree, scope)
        kind = str(operator_tree.data)
        if kind in ("relation_eq", "relation_ne"):
            return equality_node(left, right, kind == "relation_ne")
        if kind == "relation_in":
            return membership_node(left, right)
        function = _ORDERINGS[kind]
        return fold_constants(function, left, right) or binary_node(function, left, right)

    def arithmetic(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        operator_tree, right_tree = tree.children
        assert not isinstance(operator_tree, str) and not isinstance(right_tree, str)
        left = self.compile(operator_tree.children[0], scope)
        right = self.compile(right_tree, scope)
        function = _ARITHMETIC[str(operator_tree.data)]
        return fold_constants(function, left, right) or binary_node(function, left, right)

    def unary(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        operator_tree, operand_tree = tree.children
        assert not isinstance(operator_tree, str) and not isinstance(operand_tree, str)
        operand = self.compile(operand_tree, scope)
        if operator_tree.data == "unary_not":
            function: Callable[[Any], Any] = ops.logical_not
        else:
            literal = _negated_literal(operand_tree)
            if literal is not None:  # - 9223372036854775808 is int64's minimum, not an overflow
                return literal
            function = ops.negate
        folded = fold_constants(function, operand)
        if folded is not None:
            return folded
        fn = operand.fn
        return Node(lambda a, loc: function(fn(a, loc)))

    # -- leaves --

    def literal(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        token = tree.children[0]
        assert isinstance(token, str)  # lark's Token or tree_shape's StoredToken: a str with a type
        kind: str = token.type  # type: ignore[attr-defined]
        try:
            return constant_node(decode_literal(kind, str(token)))
        except LiteralError as error:
            raise CompileError(str(error), token) from None

    def ident(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        token = tree.children[0]
        name = str(token)
        if name in scope:
            slot = scope[name]
            return Node(lambda _a, loc: loc[slot], slot=slot)
        if name in _TYPE_IDENTS:
            type_value = TYPES[name]

            def type_or_variable(a: Activation, _loc: Locals) -> Any:
                return a.get(name, type_value)

            return Node(type_or_variable)
        self.references.add(name)
        return Node(variable_fn(name), variable=name)

    def dot_ident(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        token = tree.children[0]
        self.references.add(str(token))
        return Node(variable_fn(str(token)), variable=str(token))

    def paren(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        return self.compile(tree.children[0], scope)

    def list_literal(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        items = self._arguments(tree.children[0] if tree.children else None, scope)
        if all(item.constant for item in items):
            values = [item.value for item in items]
            return Node(lambda _a, _l: values, True, values)
        fns = [item.fn for item in items]
        return Node(lambda a, loc: [fn(a, loc) for fn in fns])

    def map_literal(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        inits = tree.children[0] if tree.children else None
        exprs = (
            [c for c in inits.children if not isinstance(c, str)]
            if inits is not None and not isinstance(inits, str)
            else []
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
                    raise CelError(f"unsupported map key type: {to_type(key).name}", "invalid_argument")
                if map_lookup(result, key)[0]:
                    raise CelError(f"duplicate map key: {key!r}", "invalid_argument")
                result[key] = value_fn(a, loc)
            return result

        if all(key.constant and value.constant for key, value in pairs):
            try:
                value = build({}, [])
            except CelError as error:
                return raising_node(error)
            return Node(lambda _a, _l: value, True, value)
        return Node(build)

    def message(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        raise CompileError("message construction is not supported (no protobuf types here)", tree)

    def _arguments(self, exprlist: Any, scope: Mapping[str, int]) -> list[Node]:
        return [self.compile(child, scope) for child in _argument_trees(exprlist)]

    # -- member access --

    def member_dot(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        target_tree, name_token = tree.children
        name = str(name_token)
        qualified = _qualified_name(tree)
        if qualified is not None and qualified in _QUALIFIED_TYPES and qualified.split(".")[0] not in scope:
            type_value = _QUALIFIED_TYPES[qualified]
            return Node(lambda _a, _l: type_value, True, type_value)
        assert not isinstance(target_tree, str)
        target = self.compile(target_tree, scope)
        return select_node(target, name)

    def member_index(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        target = self.compile(tree.children[0], scope)
        key = self.compile(tree.children[1], scope)
        folded = fold_constants(ops.index, target, key)
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
                return ops.index(container, position)

            return Node(slot_at_position)
        if key.constant and type(key.value) is int:
            position = key.value

            def at_position(a: Activation, loc: Locals) -> Any:
                container = target_fn(a, loc)
                if type(container) is list and 0 <= position < len(container):
                    return container[position]
                return ops.index(container, position)

            return Node(at_position)
        return Node(lambda a, loc: ops.index(target_fn(a, loc), key_fn(a, loc)))

    # -- calls --

    def global_call(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        name_token = tree.children[0]
        name = str(name_token)
        exprlist = tree.children[1] if len(tree.children) > 1 else None
        raw = _argument_trees(exprlist)
        if name == "has":
            if len(raw) != 1:
                raise CompileError("has() takes one field selection", name_token)
            return self._has(raw[0], scope)
        args = [self.compile(argument, scope) for argument in raw]
        return self._call(name, name_token, args, None)

    def dot_global_call(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        return self.global_call(tree, scope)

    def method_call(self, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
        target_tree, method_token = tree.children[0], tree.children[1]
        exprlist = tree.children[2] if len(tree.children) > 2 else None
        raw = _argument_trees(exprlist)
        method = str(method_token)
        assert not isinstance(target_tree, str)
        namespace = single_ident(target_tree)
        if namespace is not None and namespace in NAMESPACES and namespace not in scope:
            qualified = f"{namespace}.{method}"
            if qualified == "cel.bind":
                return self._bind(raw, method_token, scope)
            if qualified in GLOBAL_FUNCTIONS:
                return self._call(qualified, method_token, [self.compile(r, scope) for r in raw], None)
        if method in MACROS:
            return self._macro(method, method_token, target_tree, raw, scope)
        target = self.compile(target_tree, scope)
        args = [self.compile(argument, scope) for argument in raw]
        return self._call(method, method_token, args, target)

    def _call(self, name: str, at: lark.Token | Any, args: list[Node], target: Node | None) -> Node:
        if name == "matches":
            return self._matches(at, args, target)
        if target is not None:
            function = METHODS.get(name)
            if function is None:
                raise CompileError(f"unknown function .{name}()", at)
            specialized = specialized_method_node(name, function, target, args)
            return specialized or call_node(function, [target, *args])
        helper = CEL_FUNCTIONS.get(name)
        if helper is not None:
            self.helpers = True
            return call_node(_helper(name, helper), args, fold=False)
        function = GLOBAL_FUNCTIONS.get(name) or METHODS.get(name)
        if function is None:
            raise CompileError(f"unknown function {name}()", at)
        if name == "dyn" and len(args) == 1:
            return args[0]
        return call_node(function, args)

    def _matches(self, at: Any, args: list[Node], target: Node | None) -> Node:
        operands = [target, *args] if target is not None else args
        if len(operands) != 2:
            raise CompileError("matches() takes a string and a pattern", at)
        subject, pattern = operands
        if pattern.constant and type(pattern.value) is str:
            found: Callable[[str], bool]
            if self.patterns_checked:
                source = pattern.value

                def first_search(text: str) -> bool:
                    # The first evaluation compiles, and puts the pattern's own test in the
                    # closures' cell: later ones pay nothing for the deferral.
                    nonlocal found
                    try:
                        with one_time_setup():  # once per process: outside the stage's budget
                            found = re2_finds(compile_re2(source))
                    except ValueError as exc:  # never for a kept tree; fails closed if it were
                        raise CelError(f"matches: {exc}", "invalid_argument") from None
                    return found(text)

                found = first_search
            else:
                try:
                    found = re2_finds(compile_re2(pattern.value))
                except ValueError as exc:
                    raise CompileError(str(exc), at) from None
            subject_fn = subject.fn
            if subject.slot is not None:
                slot = subject.slot

                def slot_matches_constant(_a: Activation, loc: Locals) -> bool:
                    text = loc[slot]
                    if type(text) is not str and not isinstance(text, str):
                        raise overload_error("matches", text, pattern.value)
                    return found(text)

                return Node(slot_matches_constant)

            def matches_constant(a: Activation, loc: Locals) -> bool:
                text = subject_fn(a, loc)
                if type(text) is not str and not isinstance(text, str):
                    raise overload_error("matches", text, pattern.value)
                return found(text)

            return Node(matches_constant)
        self.helpers = True
        return call_node(_helper("matches", CEL_FUNCTIONS["matches"]), operands, fold=False)

    def _has(self, argument: lark.Tree, scope: Mapping[str, int]) -> Node:
        node = argument
        while (
            len(node.children) == 1 and not isinstance(node.children[0], str) and node.data in _PASS_THROUGH
        ):
            node = node.children[0]
        if node.data != "member_dot":
            raise CompileError("has() takes a field selection such as has(args.path)", argument)
        target_tree, name_token = node.children
        name = str(name_token)
        target = self.compile(target_tree, scope)
        folded = fold_constants(lambda value: has_field(value, name), target)
        if folded is not None:
            return folded
        target_fn = target.fn

        def has(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            if type(value) is dict:
                return name in value
            return has_field(value, name)

        return Node(has)

    def _bind(self, raw: list[lark.Tree], at: Any, scope: Mapping[str, int]) -> Node:
        variable = single_ident(raw[0]) if len(raw) == 3 else None
        if variable is None:
            raise CompileError("cel.bind() takes a name, a value and an expression", at)
        init = self.compile(raw[1], scope)
        slot = self._slot()
        body = self.compile(raw[2], {**scope, variable: slot})
        init_fn, body_fn = init.fn, body.fn

        def bind(a: Activation, loc: Locals) -> Any:
            loc[slot] = init_fn(a, loc)
            return body_fn(a, loc)

        return Node(bind)

    def _slot(self) -> int:
        slot = self.slots
        self.slots += 1
        return slot

    def _macro(
        self, method: str, at: Any, target_tree: lark.Tree, raw: list[lark.Tree], scope: Mapping[str, int]
    ) -> Node:
        names = [single_ident(r) for r in raw[:-1]]
        target = self.compile(target_tree, scope)
        if method in ("optMap", "optFlatMap"):
            if len(raw) != 2 or names[0] is None:
                raise CompileError(f".{method}() takes a variable name and an expression", at)
            slot = self._slot()
            body = self.compile(raw[1], {**scope, names[0]: slot})
            return Node(optional_map_fn(target.fn, slot, body.fn, method == "optFlatMap"))
        two = method in ("transformList", "transformMap", "transformMapEntry") or (
            len(raw) >= 3 and method in ("all", "exists", "exists_one", "existsOne")
        )
        count = 2 if two else 1
        shapes = {
            "map": (2, 3), "filter": (2,), "all": (2, 3), "exists": (2, 3), "exists_one": (2, 3),
            "existsOne": (2, 3), "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4),
        }  # fmt: skip
        if len(raw) not in shapes[method] or any(name is None for name in names[:count]):
            raise CompileError(f".{method}() takes variable names and expressions", at)
        self.loops = True
        slots = [self._slot() for _ in range(count)]
        inner = {**scope, **{name: slot for name, slot in zip(names[:count], slots, strict=True) if name}}
        bodies = [self.compile(r, inner) for r in raw[count:]]
        return Node(comprehension_fn(method, target.fn, slots, [b.fn for b in bodies]))


_PASS_THROUGH: Final = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member",
     "primary"}
)  # fmt: skip

_ORDERINGS: Final = {
    "relation_lt": ops.less,
    "relation_le": ops.less_equal,
    "relation_gt": ops.greater,
    "relation_ge": ops.greater_equal,
}
_ARITHMETIC: Final = {
    "addition_add": ops.add,
    "addition_sub": ops.subtract,
    "multiplication_mul": ops.multiply,
    "multiplication_div": ops.divide,
    "multiplication_mod": ops.modulo,
}


def _handle_expr(c: Compiler, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
    return c.conditional(tree, scope)


def _handle_logical(c: Compiler, tree: lark.Tree, scope: Mapping[str, int]) -> Node:
    return c.logical(tree, scope)


_HANDLERS: Final[Mapping[str, Callable[[Compiler, lark.Tree, Mapping[str, int]], Node]]] = {
    "expr": _handle_expr,
    "conditionalor": _handle_logical,
    "conditionaland": _handle_logical,
    "relation": Compiler.relation,
    "addition": Compiler.arithmetic,
    "multiplication": Compiler.arithmetic,
    "unary": Compiler.unary,
    "literal": Compiler.literal,
    "ident": Compiler.ident,
    "dot_ident": Compiler.dot_ident,
    "paren_expr": Compiler.paren,
    "list_lit": Compiler.list_literal,
    "map_lit": Compiler.map_literal,
    "member_object": Compiler.message,
    "member_dot": Compiler.member_dot,
    "member_index": Compiler.member_index,
    "member_dot_arg": Compiler.method_call,
    "ident_arg": Compiler.global_call,
    "dot_ident_arg": Compiler.dot_global_call,
}


def _negated_literal(tree: lark.Tree) -> Node | None:
    """``-9223372036854775808`` with a space after the sign: int64's minimum, whose magnitude
    alone would be an out-of-range literal."""
    node: Any = tree
    while not isinstance(node, str) and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, str) and getattr(node, "type", None) == "INT_LIT" and not node.startswith("-"):
        try:
            return constant_node(decode_literal("INT_LIT", "-" + str(node)))
        except LiteralError:
            return None
    return None


def _argument_trees(exprlist: Any) -> list[lark.Tree]:
    """A call's argument expressions (``exprlist`` is absent for a call without arguments)."""
    if exprlist is None or isinstance(exprlist, str):
        return []
    return [child for child in exprlist.children if not isinstance(child, str)]


def _qualified_name(tree: lark.Tree) -> str | None:
    """``a.b.c`` when ``tree`` is only identifiers and dots."""
    parts: list[str] = []
    node: Any = tree
    while not isinstance(node, str):
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
