"""The python engine's function table: CEL's operators with the spec's semantics, and the
gateway helpers wrapped for cel-python.

cel-python's own operators differ from the spec (and from the other engines) where a decision can
flip: these replace them. Each gateway helper from
:data:`~dsh_policy.policy.cel.functions.CEL_FUNCTIONS` is wrapped to take and give cel-python
values, with its results cached per string arguments. :data:`HOST_FUNCTIONS` is the table every
program is built with.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import celpy.celtypes as ct
from celpy.evaluation import CELEvalError, base_functions
from dsh_policy.policy.cel.functions import CEL_FUNCTIONS
from dsh_policy.policy.cel.python_values import from_celpy, to_celpy


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

HOST_FUNCTIONS: dict[str, Callable[..., Any]] = {
    **_OPERATORS,
    **{name: _host_function(function) for name, function in CEL_FUNCTIONS.items()},
}
"""Every function a python-engine program calls: the operators above and the gateway helpers."""
