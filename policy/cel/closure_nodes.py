"""The closure compiler's building blocks: a compiled subexpression (:class:`Node`) and the
builders that make one from its parts.

Every node is a function of ``(activation, locals)``: ``locals`` is one list per evaluation
holding the comprehension budget, the deadline and the comprehension variables (slots from
:data:`FIRST_VARIABLE_SLOT` on). A builder folds constant operands at compile time and picks a
specialized closure for the common shapes (``x == "lit"``, ``s.startsWith("lit")``, ``v in
["a", "b"]``), so the work left per evaluation is what depends on the activation. CEL's error
semantics are kept: errors raise :class:`~dsh_policy.policy.cel.closure_values.CelError`, and only
``&&``/``||`` absorb them, in either order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from dsh_policy.policy.cel import closure_operators as ops
from dsh_policy.policy.cel.closure_conversions import to_type
from dsh_policy.policy.cel.closure_values import (
    OPTIONAL_NONE,
    CelError,
    Optional,
    equal,
    is_list,
    is_map,
    map_lookup,
    overload_error,
)

Activation = Mapping[str, Any]
Locals = list[Any]
Fn = Callable[[Activation, Locals], Any]

BUDGET_SLOT: Final = 0
"""Comprehension iterations left in this evaluation."""
DEADLINE_SLOT: Final = 1
"""When this evaluation's comprehensions must stop (``time.monotonic``)."""
FIRST_VARIABLE_SLOT: Final = 2
"""The first slot of a comprehension (or ``cel.bind``) variable."""


@dataclass(slots=True)
class Node:
    """A compiled subexpression: ``fn`` evaluates it; ``constant`` when its value is known;
    ``slot`` when it only reads a comprehension variable (so a parent can read ``loc[slot]``
    itself instead of calling ``fn``: one call fewer per element); ``variable`` when it reads an
    activation name (so a field selection on it reads both in one closure: ``args.command``)."""

    fn: Fn
    constant: bool = False
    value: Any = None
    slot: int | None = None
    variable: str | None = None


def constant_node(value: Any) -> Node:
    return Node(lambda _a, _l: value, True, value)


def raising_node(error: CelError) -> Node:
    def fail(_a: Activation, _l: Locals) -> Any:
        raise CelError(error.message, error.kind)

    return Node(fail)


def fold_constants(function: Callable[..., Any], *nodes: Node) -> Node | None:
    """The node for ``function`` over constant ``nodes``, computed now; None when not all are
    constant. An error is kept for evaluation time (``false && 1/0 == 0`` must still work)."""
    if not all(node.constant for node in nodes):
        return None
    try:
        return constant_node(function(*(node.value for node in nodes)))
    except CelError as error:
        return raising_node(error)


def variable_fn(name: str) -> Fn:
    def read(a: Activation, _loc: Locals) -> Any:
        try:
            return a[name]
        except KeyError:
            raise CelError(f"undeclared reference to {name!r}", "undeclared_reference") from None

    return read


def has_field(value: Any, name: str) -> bool:
    if is_map(value):
        return map_lookup(value, name)[0]
    if type(value) is Optional:
        return value.present and has_field(value.value, name)
    raise CelError(f"has() needs a map or message, got {to_type(value).name}", "no_such_overload")


def select_node(target: Node, name: str) -> Node:
    folded = fold_constants(lambda value: select_value(value, name), target)
    if folded is not None:
        return folded
    target_fn = target.fn
    variable = target.variable
    if variable is not None:
        # ``name.field``, the commonest read of all: the variable read inlined (``variable_fn``).
        def select_variable(a: Activation, _loc: Locals) -> Any:
            try:
                value = a[variable]
            except KeyError:
                raise CelError(f"undeclared reference to {variable!r}", "undeclared_reference") from None
            if type(value) is dict:
                try:
                    return value[name]
                except KeyError:
                    raise CelError(f"no such key: {name!r}", "no_such_key") from None
            return select_value(value, name)

        return Node(select_variable)

    def select(a: Activation, loc: Locals) -> Any:
        value = target_fn(a, loc)
        if type(value) is dict:
            try:
                return value[name]
            except KeyError:
                raise CelError(f"no such key: {name!r}", "no_such_key") from None
        return select_value(value, name)

    return Node(select)


def select_value(value: Any, name: str) -> Any:
    if is_map(value):
        found, item = map_lookup(value, name)
        if found:
            return item
        raise CelError(f"no such key: {name!r}", "no_such_key")
    if type(value) is Optional:
        if not value.present:
            return value
        try:
            return Optional(True, select_value(value.value, name))
        except CelError as error:
            if error.kind == "no_such_key":
                return OPTIONAL_NONE
            raise
    raise CelError(f"type {to_type(value).name} does not support field selection", "no_such_field")


def binary_node(function: Callable[[Any, Any], Any], left: Node, right: Node) -> Node:
    lf, rf = left.fn, right.fn
    if right.constant:
        value = right.value
        return Node(lambda a, loc: function(lf(a, loc), value))
    return Node(lambda a, loc: function(lf(a, loc), rf(a, loc)))


def equality_node(left: Node, right: Node, negate: bool) -> Node:
    folded = fold_constants((lambda x, y: not equal(x, y)) if negate else equal, left, right)
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
            return Node(slot_equals_text)
        return Node(lambda a, loc: not slot_equals_text(a, loc))
    if right.constant and type(right.value) is str:
        text = right.value

        def equals_text(a: Activation, loc: Locals) -> bool:
            value = lf(a, loc)
            if type(value) is str:
                return value == text
            return equal(value, text)

        if not negate:
            return Node(equals_text)
        return Node(lambda a, loc: not equals_text(a, loc))
    if right.constant:
        constant = right.value
        if negate:
            return Node(lambda a, loc: not equal(lf(a, loc), constant))
        return Node(lambda a, loc: equal(lf(a, loc), constant))
    if negate:
        return Node(lambda a, loc: not equal(lf(a, loc), rf(a, loc)))
    return Node(lambda a, loc: equal(lf(a, loc), rf(a, loc)))


def membership_node(item: Node, container: Node) -> Node:
    folded = fold_constants(ops.contained_in, item, container)
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
                return ops.contained_in(value, values)

            return Node(slot_in_texts)

        def in_texts(a: Activation, loc: Locals) -> bool:
            value = item_fn(a, loc)
            if type(value) is str:
                return value in texts
            return ops.contained_in(value, values)

        return Node(in_texts)
    return binary_node(ops.contained_in, item, container)


def strict_bool_fn(fn: Fn, name: str) -> Fn:
    def check(a: Activation, loc: Locals) -> bool:
        value = fn(a, loc)
        if value is True or value is False:
            return value
        raise overload_error(name, value)

    return check


def logical_fn(left: Fn, right: Fn, deciding: bool, name: str) -> Fn:
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


def call_node(function: Callable[..., Any], args: list[Node], fold: bool = True) -> Node:
    if fold:
        folded = fold_constants(function, *args)
        if folded is not None:
            return folded
    fns = [arg.fn for arg in args]
    if len(fns) == 1:
        (f0,) = fns
        return Node(lambda a, loc: function(f0(a, loc)))
    if len(fns) == 2:
        f0, f1 = fns
        if args[1].constant:
            c1 = args[1].value
            return Node(lambda a, loc: function(f0(a, loc), c1))
        return Node(lambda a, loc: function(f0(a, loc), f1(a, loc)))
    if not fns:
        return Node(lambda _a, _l: function())
    return Node(lambda a, loc: function(*(f(a, loc) for f in fns)))


def specialized_method_node(
    name: str, function: Callable[..., Any], target: Node, args: list[Node]
) -> Node | None:
    """``s.startsWith("lit")`` and friends as one closure with the string test inline."""
    if len(args) != 1 or not args[0].constant or type(args[0].value) is not str or target.constant:
        return None
    text = args[0].value
    target_fn = target.fn
    if name == "contains":

        def contains_text(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            return text in value if type(value) is str else function(value, text)

        return Node(contains_text)
    if name == "startsWith":

        def starts_with_text(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            return value.startswith(text) if type(value) is str else function(value, text)

        return Node(starts_with_text)
    if name == "endsWith":

        def ends_with_text(a: Activation, loc: Locals) -> bool:
            value = target_fn(a, loc)
            return value.endswith(text) if type(value) is str else function(value, text)

        return Node(ends_with_text)
    return None


def optional_map_fn(target: Fn, slot: int, body: Fn, flat: bool) -> Fn:
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
