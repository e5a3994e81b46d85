"""The pure-Python CEL engine, on cel-python's interpreted runner.

cel-python 0.5.0 ships two runners; the transpiled one mis-evaluates ``has(m.z) && m.z == 1``, so
this engine uses the interpreter, subclassed only to count evaluation steps (see
:data:`DEFAULT_STEP_BUDGET`). At load time :mod:`~dsh_policy.policy.cel.celpy_ast` rewrites
namespaced helper calls and rejects unknown functions; at evaluation time values are converted
from plain Python to cel-python's types and back, and every failure comes back as a
:class:`~dsh_policy.policy.cel.engine.CelEvalError` value.
"""

from __future__ import annotations

import datetime
import functools
import math
import operator
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import celpy
import celpy.celtypes as ct
import lark
from celpy.evaluation import Activation, CELEvalError, Evaluator, NameContainer, base_functions
from dsh_policy.policy.cel.celpy_ast import analyze, parse
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEvalError, Reads
from dsh_policy.policy.cel.functions import CEL_FUNCTIONS

DEFAULT_STEP_BUDGET = 200_000
"""Parse-tree nodes one evaluation may visit (single-child precedence levels are removed at load
time, see :func:`collapse_pass_through`); beyond it the evaluation stops with an error, so a
pathological rule or input cannot stall the gateway (:data:`DEFAULT_TIME_BUDGET` usually stops it
first). A typical rule needs under 100; the baseline rm rule on a 100-command line about 7,000."""

DEFAULT_TIME_BUDGET = 2.0
"""Seconds one evaluation may run, checked at every node: also bounds slow steps (a helper called
on a large input in a comprehension) that the step count alone does not."""

_INT64 = (-(2**63), 2**63)
_UINT64_END = 2**64
_MAX_VALUE_DEPTH = 128


class _StepBudgetExceededError(BaseException):
    """Raised inside cel-python's interpreter when the step budget runs out. A BaseException so
    cel-python's own ``except Exception`` handlers cannot turn it into a value and carry on."""


# -- values -------------------------------------------------------------------------------------


def to_celpy(value: Any, _depth: int = 0) -> Any:
    """A plain-Python value (dict/Mapping, list/tuple, str, int, float, bool, None, bytes,
    datetime, timedelta) as cel-python values. Integers beyond int64 become uint when they fit,
    else double; a naive datetime is taken as UTC."""
    if _depth > _MAX_VALUE_DEPTH:
        raise ValueError(f"value nests deeper than {_MAX_VALUE_DEPTH} levels")
    if value is None:
        return None
    if isinstance(value, bool):
        return ct.BoolType(value)
    if isinstance(value, int):
        if _INT64[0] <= value < _INT64[1]:
            return ct.IntType(value)
        return ct.UintType(value) if 0 <= value < _UINT64_END else ct.DoubleType(float(value))
    if isinstance(value, float):
        return ct.DoubleType(value)
    if isinstance(value, str):
        return ct.StringType(value)
    if isinstance(value, bytes):
        return ct.BytesType(value)
    if isinstance(value, datetime.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        return ct.TimestampType(aware)
    if isinstance(value, datetime.timedelta):
        return ct.DurationType(value)
    if isinstance(value, Mapping):
        return ct.MapType({to_celpy(k, _depth + 1): to_celpy(v, _depth + 1) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ct.ListType([to_celpy(item, _depth + 1) for item in value])
    raise TypeError(f"cannot pass a {type(value).__name__} to CEL")


_TYPE_NAMES: Mapping[type, str] = {
    ct.BoolType: "bool", ct.IntType: "int", ct.UintType: "uint", ct.DoubleType: "double",
    ct.StringType: "string", ct.BytesType: "bytes", ct.ListType: "list", ct.MapType: "map",
    ct.TimestampType: "google.protobuf.Timestamp", ct.DurationType: "google.protobuf.Duration",
    ct.NullType: "null_type", type(None): "null_type", ct.TypeType: "type",
}  # fmt: skip


def from_celpy(value: Any) -> Any:
    """A cel-python value as plain Python (the inverse of :func:`to_celpy`); a CEL type value
    becomes its CEL name (``"int"``)."""
    if value is None or isinstance(value, ct.NullType):
        return None
    if isinstance(value, ct.BoolType):
        return bool(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, datetime.datetime):
        return datetime.datetime(
            value.year, value.month, value.day, value.hour, value.minute, value.second,
            value.microsecond, tzinfo=value.tzinfo,
        )  # fmt: skip
    if isinstance(value, datetime.timedelta):
        return datetime.timedelta(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, Mapping):
        return {from_celpy(k): from_celpy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [from_celpy(item) for item in value]
    if isinstance(value, type):
        return _TYPE_NAMES.get(value, getattr(value, "__name__", str(value)))
    return value


def _host_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a helper so cel-python hands it plain values and gets cel-python values back.

    Helper exceptions become ``CELEvalError`` values: cel-python only converts some exception
    types itself, and an exception escaping a method call would abort short-circuit logic."""

    @functools.lru_cache(maxsize=HELPER_CACHE_SIZE)
    def on_strings(*args: str) -> Any:
        return to_celpy(function(*args))

    @functools.wraps(function)
    def call(*args: Any) -> Any:
        try:
            if all(type(a) is ct.StringType and len(a) <= HELPER_CACHE_MAX_CHARS for a in args):
                return on_strings(*(str(a) for a in args))
            return to_celpy(function(*(from_celpy(a) for a in args)))
        except (TypeError, ValueError, KeyError, RecursionError) as exc:
            return CELEvalError(str(exc), exc.__class__, ())

    return call


HELPER_CACHE_SIZE = 256
"""Results kept per helper for string arguments. Every helper is a pure function of its
arguments, and the rules of one event call the same ones on the same values (twenty rules may
each split ``args.command`` with ``shell.commands``), so the helper's work and the conversion of
its result to cel-python values are done once. Results are never mutated by evaluation."""

HELPER_CACHE_MAX_CHARS = 64 * 1024
"""Longer arguments are not cached, so the cache never pins megabytes of tool output."""


# -- CEL equality and ordering ------------------------------------------------------------------
# cel-python raises "no such overload" for ``1 == 1.0``, ``1 < 1.5``, ``[1, "a"].exists(e, e == "a")``
# and ``1 in ["a"]``. The spec says: numbers compare by value across int/uint/double, and values
# of different types are simply unequal. The difference can flip a decision (``!(args.mode in
# [...])`` with ``mode: 1`` would be an error, i.e. ignored under ``on_error: ignore``), so these
# operators are replaced with the spec's semantics, matching the native engine.

_NUMBERS = (ct.IntType, ct.UintType, ct.DoubleType)


def cel_equal(a: Any, b: Any) -> bool:
    """CEL ``==``: numbers by value across kinds; lists and maps element-wise; otherwise values
    of different types are unequal (never an error)."""
    if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS):
        return float(a) == float(b) if isinstance(a, float) or isinstance(b, float) else int(a) == int(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            found, other = _map_lookup(b, key)
            if not found or not cel_equal(value, other):
                return False
        return True
    if a is None or b is None or isinstance(a, ct.NullType) or isinstance(b, ct.NullType):
        return (a is None or isinstance(a, ct.NullType)) and (b is None or isinstance(b, ct.NullType))
    if type(a) is not type(b) and not (isinstance(a, type(b)) or isinstance(b, type(a))):
        return False
    return bool(a == b)


def _map_lookup(mapping: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    """Find ``key`` by CEL equality: the exact-type dict lookup first, numbers across kinds after."""
    try:
        if key in mapping:
            return True, mapping[key]
    except TypeError:
        pass  # a key of another numeric kind with an equal hash: resolved below
    if isinstance(key, _NUMBERS):
        for candidate, value in mapping.items():
            if isinstance(candidate, _NUMBERS) and cel_equal(candidate, key):
                return True, value
    return False, None


def _propagating(operator: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, CELEvalError):
            return a
        if isinstance(b, CELEvalError):
            return b
        return operator(a, b)

    return apply


def _cel_in(item: Any, container: Any) -> ct.BoolType:
    if isinstance(container, list):
        return ct.BoolType(any(cel_equal(item, element) for element in container))
    if isinstance(container, Mapping):
        return ct.BoolType(_map_lookup(container, item)[0])
    raise TypeError(f"no such overload: {type(item).__name__} in {type(container).__name__}")


def _ordering(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """``<`` and friends: numbers by value across kinds; otherwise cel-python's typed comparison
    (which raises "no such overload" for mixed types, as the spec says)."""

    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS) and type(a) is not type(b):
            if isinstance(a, float) or isinstance(b, float):
                return ct.BoolType(compare(float(a), float(b)))  # the spec compares as doubles
            return ct.BoolType(compare(int(a), int(b)))
        return ct.BoolType(compare(a, b))

    return apply


def _index(container: Any, key: Any) -> Any:
    """``_[_]``: a map key of another numeric kind finds the entry (``{1u: "a"}[1]``); a negative
    list index is out of range (cel-python would count it from the end, as Python does)."""
    if isinstance(container, Mapping) and isinstance(key, _NUMBERS):
        found, value = _map_lookup(container, key)
        if not found:
            raise KeyError(key)
        return value
    if isinstance(container, list) and isinstance(key, ct.IntType | ct.UintType) and int(key) < 0:
        raise IndexError(f"list index out of range: {int(key)}")
    return operator.getitem(container, key)


def _divide(a: Any, b: Any) -> Any:
    """``_/_``: IEEE 754 for doubles (cel-python gives ``0.0/0.0 == inf``), else cel-python's."""
    if isinstance(a, ct.DoubleType) and isinstance(b, ct.DoubleType) and float(b) == 0.0:
        if math.isnan(a) or float(a) == 0.0:
            return ct.DoubleType(math.nan)
        return ct.DoubleType(math.copysign(math.inf, float(a)) * math.copysign(1.0, float(b)))
    return operator.truediv(a, b)


def _get_milliseconds(value: Any, tz_name: Any = None) -> Any:
    """``getMilliseconds``: the milliseconds part of a duration (cel-python returns the total)."""
    if isinstance(value, ct.DurationType):
        total = int(value.total_seconds() * 1000)  # truncates toward zero, as the spec's examples
        return ct.IntType(total - int(total / 1000) * 1000)
    return ct.IntType(value.getMilliseconds(tz_name))


def _add(a: Any, b: Any) -> Any:
    """``_+_``: cel-python's, with its result typed again: two string variables concatenate to a
    plain ``str`` there, on which every method call (``(s + t).contains(x)``) then failed."""
    result: Any = base_functions["_+_"](a, b)
    kind = type(result)
    if kind is str:
        return ct.StringType(result)
    if kind is bytes:
        return ct.BytesType(result)
    if kind is list:
        return ct.ListType(result)
    return result


def _propagating_unary(operator: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def apply(a: Any) -> Any:
        return a if isinstance(a, CELEvalError) else operator(a)

    return apply


# An error operand must come out of an operator as itself: cel-python's operators would turn it
# into "no such overload", so ``x + (x / 0)`` changed its error kind on the way up.
_OPERATORS: dict[str, Callable[..., Any]] = {
    "getMilliseconds": _get_milliseconds,
    "_[_]": _propagating(_index),
    "_/_": _propagating(_divide),
    "_+_": _propagating(_add),
    "_-_": _propagating(base_functions["_-_"]),
    "_*_": _propagating(base_functions["_*_"]),
    "_%_": _propagating(base_functions["_%_"]),
    "-_": _propagating_unary(base_functions["-_"]),
    "_==_": _propagating(lambda a, b: ct.BoolType(cel_equal(a, b))),
    "_!=_": _propagating(lambda a, b: ct.BoolType(not cel_equal(a, b))),
    "_in_": _propagating(_cel_in),
    "_<_": _propagating(_ordering(lambda a, b: a < b)),
    "_<=_": _propagating(_ordering(lambda a, b: a <= b)),
    "_>_": _propagating(_ordering(lambda a, b: a > b)),
    "_>=_": _propagating(_ordering(lambda a, b: a >= b)),
}

_HOST_FUNCTIONS: dict[str, Callable[..., Any]] = {
    **_OPERATORS,
    **{name: _host_function(function) for name, function in CEL_FUNCTIONS.items()},
}


def describe_celpy_error(error: CELEvalError) -> str:
    """cel-python's error as one readable line, e.g. ``no such key: 'z'``."""
    args = error.args
    message = str(args[0]) if args else type(error).__name__
    message = message.split(" (in activation ", 1)[0]  # cel-python appends the whole activation
    detail = args[2] if len(args) > 2 else None
    if isinstance(detail, tuple) and detail:
        message += ": " + ", ".join(repr(from_celpy(d)) if not isinstance(d, str) else d for d in detail)
    return message


def _conversion_cache(activation: Mapping[str, Any], engine: str) -> dict[str, Any] | None:
    """The per-engine conversion cache of an activation shared by one event's expressions (an
    ``EventActivation``: a dict with a ``converted`` dict), or None for a plain mapping. Values are
    converted once per event; CEL never mutates them, so sharing is safe."""
    caches = getattr(activation, "converted", None)
    if not isinstance(caches, dict):
        return None
    cache = caches.get(engine)
    if cache is None:
        cache = caches[engine] = {}
    return cache


# -- runner -------------------------------------------------------------------------------------


class _StepCounter:
    __slots__ = ("deadline", "limit", "steps")

    def __init__(self, limit: int, seconds: float) -> None:
        self.limit = limit
        self.steps = 0
        self.deadline = time.monotonic() + seconds


_RELATIONS = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_", "relation_gt": "_>_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "_in_",
}  # fmt: skip
_UNARIES = {"unary_not": "!_", "unary_neg": "-_"}
_CELPY_MACROS = frozenset({"map", "filter", "all", "exists", "exists_one", "reduce", "min"})


def _macro_parts(child: lark.Tree) -> tuple[str | None, lark.Tree]:
    """The loop variable and body of ``list.macro(var, body)``; None when not that shape."""
    arguments = child.children[2]
    if not isinstance(arguments, lark.Tree) or len(arguments.children) != 2:
        return None, child
    variable, body = arguments.children
    idents = list(variable.find_data("ident")) if isinstance(variable, lark.Tree) else []
    if len(idents) != 1 or not isinstance(body, lark.Tree):
        return None, child
    return str(idents[0].children[0]), body


class _BudgetedEvaluator(Evaluator):
    """cel-python's interpreter, counting every parse-tree node it visits, and short-circuiting.

    cel-python evaluates both sides of ``&&``/``||`` and every element of ``exists``/``all``.
    CEL's logic is commutative with errors, but a ``false`` operand decides ``&&`` (and ``true``
    decides ``||``, ``exists``; ``false`` decides ``all``) whatever the rest is, so stopping there
    gives the same value with less work; errors met before the deciding value are dropped, as
    the spec says."""

    def __init__(self, ast: lark.Tree, activation: Activation, counter: _StepCounter) -> None:
        super().__init__(ast, activation)
        self._counter = counter

    def _visit_tree(self, tree: lark.Tree) -> Any:
        counter = self._counter
        counter.steps += 1
        if counter.steps > counter.limit or time.monotonic() > counter.deadline:
            raise _StepBudgetExceededError
        # lark's dispatch, minus its check for ``v_args`` visit wrappers (cel-python has none).
        return getattr(self, tree.data)(tree)

    def visit_children(self, tree: lark.Tree) -> list[Any]:
        """lark's, without cel-python's nesting counter (used only by its trace logging)."""
        return [self._visit_tree(child) if isinstance(child, lark.Tree) else child for child in tree.children]

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return type(self)(ast, self.activation, self._counter)

    # Comprehension bodies: cel-python deep-copies the whole activation (every name) and builds
    # an evaluator for each element; a nested activation that holds only the loop variable and
    # chains to the current one resolves the same names (the nearest binding wins) without it.

    def _element_evaluator(self, identifier: str, body: lark.Tree) -> tuple[Any, _BudgetedEvaluator]:
        """One nested activation and evaluator for a whole comprehension: elements are
        evaluated one after another, so each only rebinds the loop variable."""
        nested = self.activation.nested_activation(vars={identifier: None})
        return nested.identifiers[identifier], type(self)(body, nested, self._counter)

    def build_macro_eval(self, child: lark.Tree) -> Callable[[Any], Any]:
        identifier, body = _macro_parts(child)
        if identifier is None:
            return super().build_macro_eval(child)
        binding, evaluator = self._element_evaluator(identifier, body)

        def element(value: Any) -> Any:
            binding.value = value
            return evaluator.evaluate()

        return element

    def build_ss_macro_eval(self, child: lark.Tree) -> Callable[[Any], Any]:
        identifier, body = _macro_parts(child)
        if identifier is None:
            return super().build_ss_macro_eval(child)
        binding, evaluator = self._element_evaluator(identifier, body)

        def element(value: Any) -> Any:
            binding.value = value
            try:
                return evaluator.evaluate()
            except CELEvalError as error:
                return error

        return element

    def primary(self, tree: lark.Tree) -> Any:
        """The common kinds of ``primary`` (a precomputed literal, an identifier, a function call
        or ``has()``) as cel-python evaluates them, without its per-call ``cast`` subscripts;
        every other kind goes to cel-python."""
        if len(tree.children) == 1:
            child = tree.children[0]
            kind = child.data
            if kind == "literal":
                value = child.__dict__.get(_CONSTANT, _NOT_CONSTANT)
                if value is not _NOT_CONSTANT:
                    return value
            elif kind == "ident":
                name_token: Any = child.children[0]
                try:
                    return self.ident_value(name_token.value)
                except KeyError as exc:
                    message = f"undeclared reference to '{name_token}' (in activation '{self.activation}')"
                    return CELEvalError(message, exc.__class__, exc.args, tree=tree)
            elif kind == "ident_arg" and len(child.children) == 2:
                function_token: Any = child.children[0]
                arguments: Any = child.children[1]
                if function_token.value == "has":
                    return self.macro_has_eval(arguments)
                if function_token.value != "dyn":
                    return self.function_eval(function_token, self.visit_children(arguments))
        return super().primary(tree)

    def literal(self, tree: lark.Tree) -> Any:
        """A literal's value, computed once at load time (see :func:`precompute_literals`)."""
        value = tree.__dict__.get(_CONSTANT, _NOT_CONSTANT)
        return super().literal(tree) if value is _NOT_CONSTANT else value

    # ``relation`` and ``unary`` as cel-python writes them, minus a runtime
    # ``cast(Tuple[List[Result], Result], ...)`` per evaluation that hashes a large Union.

    def relation(self, tree: lark.Tree) -> Any:
        if len(tree.children) != 2:
            return super().relation(tree)
        operator_tree = tree.children[0]
        function = self.activation.resolve_function(_RELATIONS[operator_tree.data])
        values: list[Any] = self.visit_children(tree)  # [[left], right]
        left, right = values[0][0], values[1]
        try:
            return function(left, right)
        except TypeError as exc:
            message = (
                f"found no matching overload for {operator_tree.data!r} "
                f"applied to '({type(left)}, {type(right)})'"
            )
            error = CELEvalError(message, exc.__class__, exc.args, tree=tree)
            error.__cause__ = exc
            return error

    def unary(self, tree: lark.Tree) -> Any:
        if len(tree.children) != 2:
            return super().unary(tree)
        operator_tree = tree.children[0]
        function = self.activation.resolve_function(_UNARIES[operator_tree.data])
        values: list[Any] = self.visit_children(tree)  # [[], operand]
        operand = values[1]
        try:
            return function(operand)
        except TypeError as exc:
            message = f"found no matching overload for {operator_tree.data!r} applied to '({type(operand)})'"
            error = CELEvalError(message, exc.__class__, exc.args, tree=tree)
            error.__cause__ = exc
            return error
        except ValueError as exc:
            error = CELEvalError("return error for overflow", exc.__class__, exc.args, tree=tree)
            error.__cause__ = exc
            return error

    def function_eval(self, name_token: lark.Token, exprlist: Any = None) -> Any:
        """cel-python's global function call, minus its runtime ``cast(List[Result], ...)``."""
        try:
            function = self.activation.resolve_function(name_token.value)
        except KeyError as exc:
            message = f"undeclared reference to '{name_token}' (in activation '{self.activation}')"
            error = CELEvalError(message, exc.__class__, exc.args, token=name_token)
            error.__cause__ = exc
            return error
        if isinstance(exprlist, CELEvalError):
            return exprlist
        try:
            arguments = list(exprlist or [])
            for argument in arguments:
                if isinstance(argument, CELEvalError):
                    return argument
            return function(*arguments)
        except ValueError as exc:
            error = CELEvalError("return error for overflow", exc.__class__, exc.args, token=name_token)
            error.__cause__ = exc
            return error
        except (TypeError, AttributeError) as exc:
            error = CELEvalError("no such overload", exc.__class__, exc.args, token=name_token)
            error.__cause__ = exc
            return error

    def member_dot(self, tree: lark.Tree) -> Any:
        """``m.f`` on a map (what rules read: ``args.path``) as cel-python evaluates it, without
        its chain of type checks; names, messages and packages go through cel-python's method."""
        member_tree: Any = tree.children[0]
        name_token: Any = tree.children[1]
        member = self.visit(member_tree)
        if type(member) is not ct.MapType:
            return self._member_dot_other(tree, member, name_token)
        try:
            return member[name_token.value]
        except KeyError:
            return CELEvalError(f"no such member in mapping: {name_token.value!r}", KeyError, None, tree=tree)

    def _member_dot_other(self, tree: lark.Tree, member: Any, name_token: Any) -> Any:
        """cel-python's ``member_dot`` for an already evaluated ``member`` that is not a plain map."""
        name = name_token.value
        if isinstance(member, CELEvalError):
            return member
        if isinstance(member, NameContainer):
            if name in member:
                return member[name].value
            return CELEvalError(f"No {name!r} in bindings {sorted(member.keys())}", KeyError, None, tree=tree)
        if isinstance(member, ct.MessageType):
            return member.get(name)
        if isinstance(member, ct.MapType):
            try:
                return member[name]
            except KeyError:
                return CELEvalError(f"no such member in mapping: {name!r}", KeyError, None, tree=tree)
        message = f"{member!r} with type: '{type(member)}' does not support field selection"
        return CELEvalError(message, TypeError, None, tree=tree)

    def method_eval(self, target: Any, method_ident: Any, exprlist: Any = None) -> Any:
        """cel-python's method call (``target.method(args)``), minus its runtime casts."""
        try:
            function = self.activation.resolve_function(method_ident.value)
        except KeyError as exc:
            message = f"undeclared reference to {method_ident.value!r} (in activation '{self.activation}')"
            error = CELEvalError(message, exc.__class__, exc.args, token=method_ident)
            error.__cause__ = exc
            return error
        if isinstance(target, CELEvalError):
            return target
        if isinstance(exprlist, CELEvalError):
            return exprlist
        try:
            return function(target, *(exprlist or []))
        except ValueError as exc:
            error = CELEvalError("return error for overflow", exc.__class__, exc.args, token=method_ident)
            error.__cause__ = exc
            return error
        except (TypeError, AttributeError) as exc:
            error = CELEvalError("no such overload", exc.__class__, exc.args, token=method_ident)
            error.__cause__ = exc
            return error

    def exprlist(self, tree: lark.Tree) -> Any:
        """Arguments or list items: the first error, else a list (cel-python's, minus a cast)."""
        values: list[Any] = self.visit_children(tree)
        for value in values:
            if isinstance(value, CELEvalError):
                return value
        return ct.ListType(values)

    def ident_value(self, name: str, root_scope: bool = False) -> Any:
        """cel-python's name resolution without its runtime ``cast(Union[...])``, which costs a
        typing-cache lookup (hashing a large Union) on every identifier read. Outside a package
        (always, here) ``resolve_name`` returns the nearest container's binding of a simple
        name, so that is looked up directly; a dotted or packaged name takes the full route."""
        activation = self.activation
        if not activation.package and "." not in name:
            container: NameContainer | None = activation.identifiers
            while container is not None:
                if name in container:
                    return dict.__getitem__(container, name).value
                container = container.parent
            return activation.functions[name]
        try:
            return activation.identifiers.resolve_name(activation.package, name).value
        except KeyError:
            return activation.functions[name]

    def conditionaland(self, tree: lark.Tree) -> Any:
        return self._logical(tree, "_&&_", deciding=False)

    def conditionalor(self, tree: lark.Tree) -> Any:
        return self._logical(tree, "_||_", deciding=True)

    def _logical(self, tree: lark.Tree, operator_name: str, deciding: bool) -> Any:
        if len(tree.children) != 2:
            return self.visit_children(tree)[0]
        left = self.visit(tree.children[0])
        if isinstance(left, ct.BoolType) and bool(left) is deciding:
            return left
        right = self.visit(tree.children[1])
        try:
            return self.activation.resolve_function(operator_name)(left, right)
        except TypeError as exc:
            return CELEvalError(f"no such overload for {operator_name}", exc.__class__, ())

    def member_dot_arg(self, tree: lark.Tree) -> Any:
        method = tree.children[1]
        if str(method) not in ("exists", "all"):
            if str(method) in _CELPY_MACROS:
                return super().member_dot_arg(tree)
            # A method call, as cel-python makes it minus a runtime cast(Tuple[...]) subscript.
            values: list[Any] = self.visit_children(tree)
            return self.method_eval(*values)
        deciding = str(method) == "exists"
        items = self.visit(tree.children[0])
        if isinstance(items, CELEvalError):
            return items
        predicate = self.build_ss_macro_eval(tree)
        first_error: Any = None
        for item in items:
            value = predicate(item)
            if isinstance(value, ct.BoolType):
                if bool(value) is deciding:
                    return ct.BoolType(deciding)
            elif first_error is None:
                first_error = (
                    value
                    if isinstance(value, CELEvalError)
                    else CELEvalError(f"no such overload: {method}() predicate gave {type(value).__name__}")
                )
        return first_error if first_error is not None else ct.BoolType(not deciding)


#: Called with the name token of a ``matches`` call or an ``exists``/``all``/``exists_one``
#: comprehension and the value it gave, each time one is evaluated (``check --coverage``).
BranchRecorder = Callable[[lark.Token, Any], None]
_RECORDED = frozenset({"matches", "exists", "all", "exists_one"})


def _recording(record: BranchRecorder) -> type[_BudgetedEvaluator]:
    """An evaluator that reports what each branching call gave; only coverage runs use one, so
    the gateway's evaluator pays nothing for it."""

    class _RecordingEvaluator(_BudgetedEvaluator):
        def member_dot_arg(self, tree: lark.Tree) -> Any:
            value = super().member_dot_arg(tree)
            name = tree.children[1]
            if isinstance(name, lark.Token) and name in _RECORDED:
                record(name, value)
            return value

        def function_eval(self, name_token: lark.Token, exprlist: Any = None) -> Any:
            value = super().function_eval(name_token, exprlist)
            if name_token == "matches":
                record(name_token, value)
            return value

    return _RecordingEvaluator


# -- engine -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PythonCompiledExpression:
    """A parsed, checked expression bound to the helper functions; evaluate many times."""

    source: str
    references: frozenset[str]
    reads: Reads
    _runner: celpy.Runner = field(repr=False)
    _step_budget: int = DEFAULT_STEP_BUDGET
    _time_budget: float = DEFAULT_TIME_BUDGET
    _evaluator: type[_BudgetedEvaluator] = field(default=_BudgetedEvaluator, repr=False)
    _base_activation: Activation = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_base_activation", self._runner.new_activation())

    def take_parse_tree(self) -> lark.Tree:
        """The parse tree this program evaluates (precedence levels collapsed), which the load-time
        type checker reads instead of parsing the expression again (kept: it is evaluated)."""
        tree: lark.Tree = self._runner.ast
        return tree

    def evaluate(self, activation: Mapping[str, Any]) -> Any | CelEvalError:
        """Evaluate against plain-Python ``activation``; errors come back as values."""
        runner = self._runner
        try:
            converted = _conversion_cache(activation, "python")
            counter = _StepCounter(self._step_budget, self._time_budget)
            if converted is not None:
                shared = self._shared_activation(activation, converted)
                return from_celpy(self._evaluator(runner.ast, shared, counter).evaluate())
            context = {name: to_celpy(activation[name]) for name in self.references if name in activation}
            # The base activation (functions, annotations) is built once; evaluate() clones it.
            evaluator = self._evaluator(runner.ast, self._base_activation, counter)
            result = evaluator.evaluate(context)
            return from_celpy(result)
        except CELEvalError as error:
            return CelEvalError(describe_celpy_error(error))
        except _StepBudgetExceededError:
            return CelEvalError(
                f"evaluation exceeded its budget of {self._step_budget} steps or {self._time_budget:g} s"
            )
        except RecursionError:
            return CelEvalError("evaluation nested too deeply")
        except Exception as exc:  # any other failure inside cel-python is data-dependent: a value
            return CelEvalError(f"{type(exc).__name__}: {exc}")

    def _shared_activation(self, activation: Mapping[str, Any], converted: dict[str, Any]) -> Activation:
        """The event's cel-python activation, shared by its expressions: cloning the base
        activation and loading values into it is most of the cost of a small expression, so it
        happens once per event; each name is converted and loaded the first time an expression
        reads it. Every program of every python engine has the same functions and annotations,
        so any program's base activation serves as the template."""
        caches: dict[str, Any] = activation.converted  # type: ignore[attr-defined]
        shared: Activation | None = caches.get(_SHARED_ACTIVATION)
        if shared is None:
            shared = caches[_SHARED_ACTIVATION] = self._base_activation.clone()
        missing = [name for name in self.references if name in activation and name not in converted]
        if missing:
            values = {name: to_celpy(activation[name]) for name in missing}
            shared.identifiers.load_values(values)
            converted.update(values)
        return shared


_SHARED_ACTIVATION = "python-activation"


class PythonCelEngine:
    """CEL on cel-python (pure Python, always available)."""

    def __init__(
        self,
        step_budget: int = DEFAULT_STEP_BUDGET,
        time_budget: float = DEFAULT_TIME_BUDGET,
        branch_recorder: BranchRecorder | None = None,
    ) -> None:
        self._environment = celpy.Environment()
        self._step_budget = step_budget
        self._time_budget = time_budget
        self._evaluator = _BudgetedEvaluator if branch_recorder is None else _recording(branch_recorder)

    @property
    def name(self) -> str:
        """``python``."""
        return "python"

    def compile(self, expression: str) -> PythonCompiledExpression | CelCompileIssue:
        """Parse, rewrite namespaced helper calls and check ``expression``; the first problem
        found comes back as a :class:`CelCompileIssue` with its offset."""
        tree = parse(self._environment, expression)
        if isinstance(tree, CelCompileIssue):
            return tree
        try:
            analysis = analyze(tree, expression)
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        if analysis.issues:
            first = analysis.issues[0]
            return CelCompileIssue(first.message, first.offset)
        try:
            tree = collapse_pass_through(tree)
        except RecursionError:
            return CelCompileIssue("expression nests too deeply", None)
        runner = self._environment.program(tree, functions=_HOST_FUNCTIONS)
        precompute_literals(tree, runner.new_activation())
        return PythonCompiledExpression(
            expression,
            analysis.references,
            analysis.reads,
            runner,
            self._step_budget,
            self._time_budget,
            self._evaluator,
        )


_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member"}
)


_CONSTANT = "dsh_constant"
_NOT_CONSTANT = object()


def precompute_literals(tree: lark.Tree, activation: Activation) -> None:
    """Store each literal's value on its node: cel-python would otherwise re-parse a string
    literal's escapes (with regular expressions) on every evaluation. Values are immutable and
    never changed by evaluation; a literal that fails to convert is left to fail at evaluation."""
    evaluator = Evaluator(tree, activation)
    for node in tree.iter_subtrees():
        if node.data == "literal":
            value = evaluator.literal(node)
            if not isinstance(value, CELEvalError):
                node.__dict__[_CONSTANT] = value


def collapse_pass_through(tree: lark.Tree) -> lark.Tree:
    """The parse tree without its single-child precedence levels, evaluated the same way.

    cel-python's grammar wraps every operand in ``expr > conditionalor > conditionaland >
    relation > addition > multiplication > unary > member`` nodes that, with one child, only
    return that child's value; a leaf sits under nine nodes and the interpreter pays a dispatch
    for each. Skipping them at load time cuts the nodes an evaluation visits about threefold.
    ``member_object`` tells a message construction from a plain value by whether its first child
    is ``primary``, so that child keeps its ``member`` node. Node names become plain ``str``
    (lark's ``Token.__eq__`` is a Python-level method, and the interpreter compares them a lot)."""
    node = tree
    while node.data in _PASS_THROUGH and len(node.children) == 1 and isinstance(node.children[0], lark.Tree):
        node = node.children[0]
    node.data = str(node.data)  # a plain str: the interpreter compares it often, a Token slowly
    children = node.children
    for index, child in enumerate(children):
        if not isinstance(child, lark.Tree):
            continue
        if index == 0 and node.data == "member_object":
            child.children = [
                collapse_pass_through(grandchild) if isinstance(grandchild, lark.Tree) else grandchild
                for grandchild in child.children
            ]
        else:
            children[index] = collapse_pass_through(child)
    return node
