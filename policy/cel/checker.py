"""Static type checking of CEL expressions over cel-python's parse tree, at load time.

Both engines evaluate ``params.max_len + "x"`` or ``result.text`` in a pre-execute rule only to
fail on every event, so such rules would deny every call (``on_error: deny``) or silently never
match (``ignore``). This checker finds them before a pack loads, the way cel-go's checker does
(``checker/checker.go``; overloads from cel-spec's langdef), against the types the stage provides
(handed in by the caller: the policy's stage table, see :class:`CheckEnvironment`; the CEL
package imports nothing of the policy), the pack's params (typed from their declared values), its
variables (typed from their expressions) and the declared functions (:mod:`.declarations`).
``args`` is ``dyn``: its fields are only known at run time, so anything may be done with them.

It walks the tree an engine already parsed (so loading parses once), in either form: as the
parser builds it or with single-child precedence levels collapsed (the python engine's). Every
problem in an expression is reported, each at its 0-based offset; an expression whose part is
already wrong gets the ``error`` type, which causes no second report. Warnings flag what is
legal but suspicious: the same dynamic value (``args.mode``) compared with both an int and a
string, where at most one can ever match.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

import lark
from dsh_policy.policy.cel.branches import Branch
from dsh_policy.policy.cel.celpy_ast import MACROS, TYPE_NAMES, single_ident, string_literal
from dsh_policy.policy.cel.declarations import FUNCTIONS, OPERATOR_SYMBOLS
from dsh_policy.policy.cel.functions import FUNCTION_NAMESPACES
from dsh_policy.policy.cel.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    ERROR,
    INT,
    NEVER,
    NULL,
    STRING,
    TYPE,
    UINT,
    CelType,
    Overload,
    comparable,
    join,
    list_of,
    map_of,
    orderable,
    record,
    substitute,
    unify,
)

VARS = record("vars", ())
"""The type of ``vars``: selecting a field asks the environment for that variable's type."""


@dataclass(frozen=True, slots=True)
class VariableInfo:
    """A pack variable as the checker sees it: its type and the stage names it reads, directly or
    through other variables (a rule may use it only where all of them exist)."""

    type: CelType
    reads: frozenset[str]


@dataclass(frozen=True, slots=True)
class CheckEnvironment:
    """What one expression may read: ``names`` with their types, and per name the stages that
    provide it (``stages_of``, in the order messages list them: the caller's stage table). ``stage``
    None is a pack variable, evaluated wherever a rule uses it (so it may read any stage's names;
    the rule's use is checked instead)."""

    names: Mapping[str, CelType]
    stages_of: Mapping[str, Collection[str]]
    stage: str | None
    variable: Callable[[str], VariableInfo | None] = field(default=lambda _name: None)


@dataclass(frozen=True, slots=True, order=True)
class TypeIssue:
    """A problem at the 0-based ``offset`` inside the expression; warnings never fail a load."""

    offset: int
    message: str
    warning: bool = False


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The expression's type, every issue (sorted by offset), the stage names it reads (also
    through variables), and its branches in source order."""

    type: CelType
    issues: tuple[TypeIssue, ...]
    reads: frozenset[str]
    branches: tuple[Branch, ...]

    @property
    def errors(self) -> tuple[TypeIssue, ...]:
        """The issues that fail the load."""
        return tuple(issue for issue in self.issues if not issue.warning)


def check(tree: lark.Tree, source: str, env: CheckEnvironment) -> CheckResult:
    """Type-check one parsed expression (``tree`` as an engine holds it) against ``env``."""
    walker = _Checker(source, env)
    try:
        found = walker.visit(tree, {})
    except RecursionError:  # the engines refuse deeper trees already; never crash a load here
        found = DYN
    issues = tuple(sorted(set(walker.issues)))
    branches = tuple(sorted(walker.branches, key=lambda branch: branch.offset))
    return CheckResult(found, issues, frozenset(walker.reads), branches)


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance with transpositions (``agrs`` is one step from ``args``), capped at ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            cost = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, previous2[j - 2] + 1)
            row.append(cost)
        previous2, previous = previous, row
    return previous[-1]


def _suggest(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'args'?)`` for the closest choice within two edits, if any."""
    limit = 0 if len(word) <= 2 else 1 if len(word) <= 4 else 2
    scored = sorted((_distance(word, choice, limit), choice) for choice in set(choices) if choice != word)
    if not scored or scored[0][0] > limit:
        return ""
    return f" (did you mean {scored[0][1]!r}?)"


# -- the walk ------------------------------------------------------------------------------------

_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
     "member", "primary", "paren_expr"}
)  # fmt: skip
_RELATIONS = {
    "relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
    "relation_eq": "==", "relation_ne": "!=", "relation_in": "in",
}  # fmt: skip
_ARITHMETIC = {
    "addition_add": "_+_", "addition_sub": "_-_",
    "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
}  # fmt: skip
_LITERALS = {
    "INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "STRING_LIT": STRING, "MLSTRING_LIT": STRING,
    "BYTES_LIT": BYTES, "BOOL_LIT": BOOL, "NULL_LIT": NULL,
}  # fmt: skip
_MAP_KEY_KINDS = frozenset({"int", "uint", "bool", "string"})
_BRANCHING = frozenset({"exists", "all", "exists_one"})
_STRING_METHODS = frozenset({"contains", "startsWith", "endsWith", "matches"})
_A_OR_AN = {"int": "an int", "uint": "a uint", "error": "an error"}
#: Overload resolutions already made, by function, call style and argument types (pure, so shared).
_RESOLVED: dict[tuple[str, bool, tuple[CelType, ...]], CelType] = {}

Scope = Mapping[str, CelType]
Node = lark.Tree | lark.Token


def _article(t: CelType) -> str:
    return _A_OR_AN.get(t.kind, f"a {t}")


def _start(node: Node) -> int | None:
    if isinstance(node, lark.Token):
        return node.start_pos
    return None if node.meta.empty else node.meta.start_pos


def _end(node: Node) -> int | None:
    if isinstance(node, lark.Token):
        return node.end_pos
    return None if node.meta.empty else node.meta.end_pos


def _skip(node: lark.Tree) -> lark.Tree:
    """Down through single-child precedence levels to the node that does something. Node names
    become plain ``str`` on the way (as the python engine leaves them): lark's are tokens, whose
    Python-level ``__eq__`` would dominate the walk."""
    while True:
        data = node.data
        if type(data) is not str:
            data = node.data = str(data)
        children = node.children
        if data not in _PASS_THROUGH or len(children) != 1 or not isinstance(children[0], lark.Tree):
            return node
        node = children[0]


def _arguments(exprlist: Node | None) -> list[lark.Tree]:
    if isinstance(exprlist, lark.Tree) and exprlist.data == "exprlist":
        return [child for child in exprlist.children if isinstance(child, lark.Tree)]
    return []


class _Checker:
    def __init__(self, source: str, env: CheckEnvironment) -> None:
        self.source = source
        self.env = env
        self.issues: list[TypeIssue] = []
        self.reads: set[str] = set()
        self.branches: list[Branch] = []
        # A dynamic value's path (``args.mode``) -> the first kind it was used as, and where.
        self.uses: dict[str, tuple[str, str]] = {}

    # -- reporting --

    def error(self, at: Node | int | None, message: str, *, warning: bool = False) -> None:
        offset = at if isinstance(at, int) else (_start(at) if at is not None else None)
        self.issues.append(TypeIssue(offset if offset is not None else 0, message, warning))

    def text(self, node: Node) -> str:
        start, end = _start(node), _end(node)
        if start is None or end is None:
            return str(node) if isinstance(node, lark.Token) else "this expression"
        snippet = " ".join(self.source[start:end].split())
        return snippet if len(snippet) <= 60 else snippet[:57] + "..."

    def operator_offset(self, left: Node, right: Node, symbol: str) -> int | None:
        """Where the operator between two operands is written (the parse tree keeps no token)."""
        end, start = _end(left), _start(right)
        if end is None or start is None:
            return _start(left)
        found = self.source.find(symbol, end, start)
        return found if found >= 0 else _start(left)

    # -- dispatch --

    def visit(self, node: Node, scope: Scope) -> CelType:
        if isinstance(node, lark.Token):
            return DYN
        node = _skip(node)
        data = node.data
        children = node.children
        if data == "literal":
            token = children[0]
            return _LITERALS.get(token.type, DYN) if isinstance(token, lark.Token) else DYN
        if data in ("ident", "dot_ident"):
            token = children[0]
            return self.ident(token, scope) if isinstance(token, lark.Token) else DYN
        if data == "member_dot":
            return self.select(node, scope)
        if data == "member_dot_arg":
            return self.method(node, scope)
        if data in ("ident_arg", "dot_ident_arg"):
            return self.function(node, scope)
        if data == "member_index":
            return self.index(node, scope)
        if data == "relation" and len(children) == 2:
            return self.relation(node, scope)
        if data in ("addition", "multiplication") and len(children) == 2:
            return self.arithmetic(node, scope)
        if data in ("conditionalor", "conditionaland") and len(children) == 2:
            return self.logical(node, scope)
        if data == "unary" and len(children) == 2:
            return self.unary(node, scope)
        if data == "expr" and len(children) == 3:
            return self.conditional(node, scope)
        if data == "list_lit":
            return self.list_literal(node, scope)
        if data == "map_lit":
            return self.map_literal(node, scope)
        for child in children:  # message construction and anything else: still check the parts
            if isinstance(child, lark.Tree):
                self.visit(child, scope)
        return DYN

    # -- names --

    def ident(self, token: lark.Token, scope: Scope) -> CelType:
        name = str(token)
        bound = scope.get(name)
        if bound is not None:
            return bound
        if name == "vars":
            self.reads.add("vars")
            return VARS
        found = self.env.names.get(name)
        if found is not None:
            stages = self.env.stages_of.get(name, frozenset())
            if self.env.stage is not None and self.env.stage not in stages:
                where = ", ".join(stages)
                self.error(token, f"{name!r} is not available at stage {self.env.stage} (only {where})")
                return ERROR
            self.reads.add(name)
            return found
        if name in TYPE_NAMES:
            return TYPE
        if name in FUNCTION_NAMESPACES:
            self.error(
                token, f"{name!r} is a namespace of helper functions ({name}.<function>(...)), not a value"
            )
            return ERROR
        available = [
            n
            for n, stages in self.env.stages_of.items()
            if self.env.stage in stages or self.env.stage is None
        ]
        self.error(token, f"unknown name {name!r}{_suggest(name, [*available, *scope])}")
        return ERROR

    def field(self, owner: Node, owner_type: CelType, name: str, at: Node) -> CelType:
        """The type of ``owner.name`` (a select, a constant index or a ``has`` test)."""
        if owner_type.kind == "error":
            return ERROR
        if owner_type.kind == "type":  # a qualified type name: google.protobuf.Timestamp
            return TYPE
        if owner_type is VARS:
            return self.variable(name, at)
        if owner_type.kind == "record":
            found = owner_type.field(name)
            if found is not None:
                return found
            hint = _suggest(name, owner_type.field_names)
            if owner_type.name == "params":
                self.error(
                    at,
                    f"undeclared param {name!r}{hint} (this pack declares: "
                    f"{', '.join(owner_type.field_names) or 'none'})",
                )
            else:
                self.error(
                    at,
                    f"{owner_type.name} has no field {name!r}{hint} "
                    f"(fields: {', '.join(owner_type.field_names)})",
                )
            return ERROR
        if owner_type.kind == "map":
            key = owner_type.args[0]
            if not (key.lenient or key.kind == "string"):
                self.error(at, f"{self.text(owner)} is a {owner_type}: its keys are not strings")
                return ERROR
            return owner_type.args[1]
        if owner_type.lenient:
            return DYN
        self.error(at, f"{self.text(owner)} is {_article(owner_type)}, which has no field {name!r}")
        return ERROR

    def variable(self, name: str, at: Node) -> CelType:
        info = self.env.variable(name)
        if info is None:
            return DYN  # an unknown variable is reported by compilation, once
        self.reads |= info.reads
        stage = self.env.stage
        if stage is not None:
            missing = sorted(n for n in info.reads if stage not in self.env.stages_of.get(n, frozenset()))
            if missing:
                names = ", ".join(repr(n) for n in missing)
                self.error(
                    at,
                    f"vars.{name} reads {names}, which {'is' if len(missing) == 1 else 'are'} "
                    f"not available at stage {stage}",
                )
                return ERROR
        return info.type

    def select(self, node: lark.Tree, scope: Scope) -> CelType:
        operand, name = node.children[0], node.children[1]
        owner = self.visit(operand, scope)
        return self.field(operand, owner, str(name), name)

    def index(self, node: lark.Tree, scope: Scope) -> CelType:
        operand, key = node.children[0], node.children[1]
        owner = self.visit(operand, scope)
        key_type = self.visit(key, scope)
        if owner.kind == "error" or key_type.kind == "error":
            return ERROR
        if owner is VARS or owner.kind == "record":
            literal = string_literal(key)
            if literal is not None:
                return self.field(operand, owner, literal, key)
            if not (key_type.lenient or key_type.kind == "string"):
                self.error(key, f"{self.text(operand)} has string keys; this key is {_article(key_type)}")
                return ERROR
            return DYN
        if owner.kind == "list":
            if not (key_type.lenient or key_type.kind == "int"):
                self.error(key, f"a list index must be an int, not {_article(key_type)}")
                return ERROR
            return owner.args[0]
        if owner.kind == "map":
            if not comparable(key_type, owner.args[0]):
                self.error(key, f"{self.text(operand)} is a {owner}; a {key_type} key is never in it")
                return ERROR
            return owner.args[1]
        if owner.lenient:
            return DYN
        self.error(key, f"{self.text(operand)} is {_article(owner)}, which cannot be indexed")
        return ERROR

    # -- operators --

    def relation(self, node: lark.Tree, scope: Scope) -> CelType:
        operation, right = node.children[0], node.children[1]
        if not isinstance(operation, lark.Tree):
            return DYN
        left = operation.children[0]
        symbol = _RELATIONS.get(str(operation.data), "?")
        a, b = self.visit(left, scope), self.visit(right, scope)
        at = self.operator_offset(left, right, symbol)
        if a.kind == "error" or b.kind == "error":
            return BOOL
        if symbol in ("==", "!="):
            if not comparable(a, b):
                outcome = "never equal" if symbol == "==" else "always unequal"
                self.error(at, f"'{symbol}' compares {a} with {b}: values of different types are {outcome}")
            self.note_use(left, a, b, node)
            self.note_use(right, b, a, node)
        elif symbol == "in":
            self.membership(right, a, b, at)
            self.note_use(left, a, b.element if b.kind == "list" else DYN, node)
        else:
            if not orderable(a, b):
                self.error(at, f"no matching overload for '{symbol}' applied to ({a}, {b})")
            self.note_use(left, a, b, node)
            self.note_use(right, b, a, node)
        return BOOL

    def membership(self, container: Node, item: CelType, within: CelType, at: int | None) -> None:
        if within.lenient:
            return
        if within.kind == "list" or within.kind == "map":
            keys = within.args[0]
        elif within.kind == "record":
            keys = STRING
        else:
            self.error(
                at, f"'in' needs a list or a map on its right; {self.text(container)} is {_article(within)}"
            )
            return
        if not comparable(item, keys):
            self.error(at, f"'in' looks for {_article(item)} among {keys} values: it is never found")

    def arithmetic(self, node: lark.Tree, scope: Scope) -> CelType:
        operation, right = node.children[0], node.children[1]
        if not isinstance(operation, lark.Tree):
            return DYN
        left = operation.children[0]
        function = _ARITHMETIC.get(str(operation.data), "")
        a, b = self.visit(left, scope), self.visit(right, scope)
        at = self.operator_offset(left, right, OPERATOR_SYMBOLS.get(function, "?"))
        if a.kind == "list" and b.kind == "list" and function == "_+_":
            return list_of(join(a.args[0], b.args[0]))  # both engines concatenate any two lists
        self.note_use(left, a, b, node)
        self.note_use(right, b, a, node)
        return self.resolve(function, [a, b], member=False, at=at)

    def logical(self, node: lark.Tree, scope: Scope) -> CelType:
        left, right = node.children[0], node.children[1]
        symbol = "||" if node.data == "conditionalor" else "&&"
        for operand in (left, right):
            found = self.visit(operand, scope)
            if not (found.lenient or found.kind == "bool"):
                self.error(
                    operand, f"'{symbol}' needs bool operands; {self.text(operand)} is {_article(found)}"
                )
        return BOOL

    def unary(self, node: lark.Tree, scope: Scope) -> CelType:
        operation, operand = node.children[0], node.children[1]
        negate = isinstance(operation, lark.Tree) and operation.data == "unary_neg"
        found = self.visit(operand, scope)
        return self.resolve("-_" if negate else "!_", [found], member=False, at=_start(node))

    def conditional(self, node: lark.Tree, scope: Scope) -> CelType:
        condition, then, otherwise = node.children[0], node.children[1], node.children[2]
        found = self.visit(condition, scope)
        if not (found.lenient or found.kind == "bool"):
            self.error(
                condition,
                f"the condition of '? :' must be a bool; {self.text(condition)} is {_article(found)}",
            )
        a, b = self.visit(then, scope), self.visit(otherwise, scope)
        return ERROR if a.kind == "error" and b.kind == "error" else join(a, b)

    def list_literal(self, node: lark.Tree, scope: Scope) -> CelType:
        element = NEVER
        for item in _arguments(node.children[0] if node.children else None):
            element = join(element, self.visit(item, scope))
        return list_of(element)

    def map_literal(self, node: lark.Tree, scope: Scope) -> CelType:
        inits = node.children[0] if node.children else None
        entries = (
            [child for child in inits.children if isinstance(child, lark.Tree)]
            if isinstance(inits, lark.Tree)
            else []
        )
        key, value = NEVER, NEVER
        for index in range(0, len(entries) - 1, 2):
            found = self.visit(entries[index], scope)
            if not (found.lenient or found.kind in _MAP_KEY_KINDS):
                self.error(
                    entries[index], f"a map key must be an int, uint, bool or string, not {_article(found)}"
                )
            key = join(key, found)
            value = join(value, self.visit(entries[index + 1], scope))
        return map_of(key, value)

    # -- calls --

    def resolve(self, function: str, args: list[CelType], *, member: bool, at: int | None) -> CelType:
        """The result of calling ``function`` on values of these types; an error when no declared
        overload fits. Undeclared functions are left to the engine (it reports unknown ones)."""
        overloads = FUNCTIONS.get(function)
        if overloads is None:
            return DYN
        if any(arg.kind == "error" for arg in args):
            return ERROR
        key = (function, member, tuple(args))
        known = _RESOLVED.get(key)
        if known is not None:
            return known
        found = self._resolve(function, args, member, overloads)
        if found is not None:
            if len(_RESOLVED) < 4096:
                _RESOLVED[key] = found
            return found
        self.error(at, self.overload_message(function, args, member, overloads))
        return ERROR

    @staticmethod
    def _resolve(
        function: str, args: list[CelType], member: bool, overloads: tuple[Overload, ...]
    ) -> CelType | None:
        results: list[CelType] = []
        for overload in overloads:
            if overload.member != member or len(overload.params) != len(args):
                continue
            bindings: dict[str, CelType] = {}
            if all(unify(p, a, bindings) for p, a in zip(overload.params, args, strict=True)):
                results.append(substitute(overload.result, bindings))
        if results:
            first = results[0]
            return first if all(result == first for result in results) else DYN
        return None

    def overload_message(self, function: str, args: list[CelType], member: bool, overloads: tuple) -> str:
        symbol = OPERATOR_SYMBOLS.get(function)
        if symbol is not None:
            hint = ""
            kinds = {arg.kind for arg in args}
            if function == "_+_" and "string" in kinds and kinds & {"int", "uint", "double", "bool"}:
                hint = " (convert with string(...) first)"
            elif len(kinds) == 2 and kinds <= {"int", "uint", "double"}:
                hint = " (numbers of different kinds: convert one with int(), uint() or double())"
            return f"no matching overload for '{symbol}' applied to ({', '.join(map(str, args))}){hint}"
        styles = {overload.member for overload in overloads}
        if member and True not in styles:
            return f"{function}() is a function, not a method: write {function}(x, ...)"
        if not member and False not in styles:
            return f"{function}() is a method: write x.{function}(...)"
        if member:
            applied = f"{args[0]}.{function}({', '.join(map(str, args[1:]))})"
        else:
            applied = f"{function}({', '.join(map(str, args))})"
        known = [str(o) for o in overloads if o.member == member]
        listed = "; ".join(known[:4]) + ("; ..." if len(known) > 4 else "")
        return f"no matching overload for {applied} (declared: {listed})"

    def method(self, node: lark.Tree, scope: Scope) -> CelType:
        receiver, name_token = node.children[0], node.children[1]
        args = _arguments(node.children[2] if len(node.children) > 2 else None)
        name = str(name_token)
        if name in MACROS and isinstance(name_token, lark.Token):
            return self.comprehension(receiver, name_token, args, scope)
        found = self.visit(receiver, scope)
        types = [self.visit(arg, scope) for arg in args]
        if name in _STRING_METHODS:
            self.note_use(receiver, found, STRING, node)
        if name == "matches":
            self.branch(name_token, node)
        return self.resolve(name, [found, *types], member=True, at=_start(name_token))

    def function(self, node: lark.Tree, scope: Scope) -> CelType:
        name_token = node.children[0]
        args = _arguments(node.children[1] if len(node.children) > 1 else None)
        name = str(name_token)
        if name == "has":
            return self.has(name_token, args, scope)
        types = [self.visit(arg, scope) for arg in args]
        if name == "dyn":
            return DYN
        if name == "type":
            return TYPE
        if name == "matches" and isinstance(name_token, lark.Token):
            self.branch(name_token, node)
        return self.resolve(name, types, member=False, at=_start(name_token))

    def has(self, name: Node, args: list[lark.Tree], scope: Scope) -> CelType:
        target = _skip(args[0]) if len(args) == 1 else None
        if target is None or target.data != "member_dot":
            self.error(name, "has() takes one field selection, like has(args.path)")
            for arg in args:
                self.visit(arg, scope)
            return BOOL
        operand, field_name = target.children[0], target.children[1]
        owner = self.visit(operand, scope)
        if owner.kind == "record" or owner is VARS or owner.lenient or owner.kind == "map":
            self.field(operand, owner, str(field_name), field_name)
        else:
            self.error(field_name, f"has() tests a field of a map; {self.text(operand)} is {_article(owner)}")
        return BOOL

    def comprehension(self, receiver: Node, name: lark.Token, args: list[lark.Tree], scope: Scope) -> CelType:
        macro = str(name)
        found = self.visit(receiver, scope)
        variable = single_ident(args[0]) if args else None
        shape_ok = variable is not None and (len(args) == 2 or (macro == "map" and len(args) == 3))
        if not shape_ok:  # another engine's form (two-variable macros): its checker decides
            for arg in args[1:]:
                self.visit(arg, {**scope, **dict.fromkeys(filter(None, map(single_ident, args[:-1])), DYN)})
            return DYN
        assert variable is not None
        if found.kind == "list" or found.kind == "map":
            element = found.args[0]
        elif found.kind == "record" or found is VARS:
            element = STRING
        elif found.lenient:
            element = ERROR if found.kind == "error" else DYN
        else:
            self.error(name, f"{macro}() needs a list or a map; {self.text(receiver)} is {_article(found)}")
            element = ERROR
        inner = {**scope, variable: element}
        if macro in _BRANCHING:
            self.branch(name, None, receiver)
        predicates = args[1:] if macro != "map" else args[1:-1]
        for predicate in predicates:
            result = self.visit(predicate, inner)
            if not (result.lenient or result.kind == "bool"):
                self.error(
                    predicate,
                    f"the predicate of {macro}() must give a bool; "
                    f"{self.text(predicate)} is {_article(result)}",
                )
        if macro == "map":
            mapped = self.visit(args[-1], inner)
            return ERROR if element.kind == "error" else list_of(mapped)
        if macro == "filter":
            return ERROR if element.kind == "error" else list_of(element)
        return BOOL

    def branch(self, name: lark.Token | Node, call: lark.Tree | None, receiver: Node | None = None) -> None:
        offset = _start(name)
        if offset is None:
            return
        begin = _start(receiver) if receiver is not None else (_start(call) if call is not None else offset)
        self.branches.append(Branch(str(name), offset, begin if begin is not None else offset))

    # -- warnings --

    def note_use(self, node: Node, used: CelType, against: CelType, site: Node) -> None:
        """Remember what kind of value a dynamic path is used as (in ``site``, the comparison or
        call); two kinds that can never both hold (``args.mode == 1 || args.mode == "1"``) get a
        warning at the second use."""
        if used.kind != "dyn" or against.lenient or against.kind in ("null_type", "record", "list", "map"):
            return
        path = self.path(node)
        if path is None:
            return
        kind = "a number" if against.numeric else _article(against)
        first = self.uses.setdefault(path, (kind, self.text(site)))
        if first[0] != kind:
            self.error(
                node,
                f"{path} is used as {kind} here but as {first[0]} in `{first[1]}`; it cannot be both",
                warning=True,
            )

    def path(self, node: Node) -> str | None:
        """``args.mode`` for a chain of selects and constant indexes from a stage name."""
        if isinstance(node, lark.Token):
            return None
        node = _skip(node)
        if node.data == "member_dot":
            base = self.path(node.children[0])
            return None if base is None else f"{base}.{node.children[1]}"
        if node.data == "member_index":
            base = self.path(node.children[0])
            literal = string_literal(node.children[1])
            return None if base is None or literal is None else f"{base}[{literal!r}]"
        if node.data in ("ident", "dot_ident"):
            name = str(node.children[0])
            return name if name in self.env.names else None
        return None
