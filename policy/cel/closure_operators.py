"""CEL's operators over the closure compiler's values: arithmetic, comparison, membership,
indexing, ``size`` and the string tests (``contains``, ``startsWith``, ``endsWith``).

Each takes evaluated arguments and returns a value or raises
:class:`~dsh_policy.policy.cel.closure_values.CelError`: integer overflow past int64/uint64,
division by zero, and ``no such overload`` for argument types the operator does not take. The
compiler binds these directly into the closures it builds (and specializes the common cases, such
as ``string == constant``, inline).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Mapping
from typing import Any

from dsh_policy.policy.cel.closure_values import (
    INT64_MAX,
    INT64_MIN,
    CelError,
    Optional,
    Uint,
    check_duration,
    check_int,
    check_timestamp,
    check_uint,
    compare,
    equal,
    is_list,
    is_nan,
    is_number,
    map_lookup,
    overload_error,
    timestamp_of,
)

_TD = datetime.timedelta
_DT = datetime.datetime


# -- arithmetic --------------------------------------------------------------------------------


def add(a: Any, b: Any) -> Any:
    """``_+_``: numbers of one kind, strings, bytes, lists, timestamps and durations."""
    ta = type(a)
    if ta is type(b):
        if ta is int:
            r = a + b
            if INT64_MIN <= r <= INT64_MAX:
                return r
            raise CelError("integer overflow", "overflow")
        if ta is float or ta is str or ta is bytes or ta is list:
            return a + b
        if ta is Uint:
            return check_uint(a + b)
        if ta is _TD:
            return check_duration(_duration_op(lambda: a + b))
        if ta is tuple:
            return list(a) + list(b)
    if is_list(a) and is_list(b):
        return list(a) + list(b)
    if isinstance(a, _DT) and type(b) is _TD:
        return check_timestamp(_duration_op(lambda: timestamp_of(a) + b))
    if ta is _TD and isinstance(b, _DT):
        return check_timestamp(_duration_op(lambda: timestamp_of(b) + a))
    raise overload_error("_+_", a, b)


def subtract(a: Any, b: Any) -> Any:
    """``_-_``: numbers of one kind, timestamps and durations."""
    ta = type(a)
    if ta is type(b):
        if ta is int:
            r = a - b
            if INT64_MIN <= r <= INT64_MAX:
                return r
            raise CelError("integer overflow", "overflow")
        if ta is float:
            return a - b
        if ta is Uint:
            return check_uint(a - b)
        if ta is _TD:
            return check_duration(_duration_op(lambda: a - b))
    if isinstance(a, _DT) and isinstance(b, _DT):
        return check_duration(_duration_op(lambda: timestamp_of(a) - timestamp_of(b)))
    if isinstance(a, _DT) and type(b) is _TD:
        return check_timestamp(_duration_op(lambda: timestamp_of(a) - b))
    raise overload_error("_-_", a, b)


def _duration_op(operation: Callable[[], Any]) -> Any:
    try:
        return operation()
    except OverflowError:
        raise CelError("timestamp or duration out of range", "overflow") from None


def multiply(a: Any, b: Any) -> Any:
    """``_*_``: numbers of one kind."""
    ta = type(a)
    if ta is type(b):
        if ta is int:
            return check_int(a * b)
        if ta is float:
            return a * b
        if ta is Uint:
            return check_uint(a * b)
    raise overload_error("_*_", a, b)


def divide(a: Any, b: Any) -> Any:
    """``_/_``: integers truncate toward zero (division by zero and ``MIN / -1`` are errors);
    doubles follow IEEE 754."""
    ta = type(a)
    if ta is type(b):
        if ta is int:
            if b == 0:
                raise CelError("divide by zero", "division_by_zero")
            q = abs(a) // abs(b)
            return check_int(-q if (a < 0) != (b < 0) else q)
        if ta is float:
            if b == 0.0:
                if a == 0.0 or a != a:
                    return math.nan
                return math.copysign(math.inf, a) * math.copysign(1.0, b)
            return a / b
        if ta is Uint:
            if b == 0:
                raise CelError("divide by zero", "division_by_zero")
            return Uint(a // b)
    raise overload_error("_/_", a, b)


def modulo(a: Any, b: Any) -> Any:
    """``_%_``: integers only; the result has the dividend's sign."""
    ta = type(a)
    if ta is type(b):
        if ta is int:
            if b == 0:
                raise CelError("modulus by zero", "division_by_zero")
            if a == INT64_MIN and b == -1:
                raise CelError("integer overflow", "overflow")
            r = abs(a) % abs(b)
            return -r if a < 0 else r
        if ta is Uint:
            if b == 0:
                raise CelError("modulus by zero", "division_by_zero")
            return Uint(a % b)
    raise overload_error("_%_", a, b)


def negate(a: Any) -> Any:
    """``-_``: int (``-MIN`` overflows) and double."""
    ta = type(a)
    if ta is int:
        return check_int(-a)
    if ta is float:
        return -a
    raise overload_error("-_", a)


def logical_not(a: Any) -> bool:
    """``!_``: bool only."""
    if a is True:
        return False
    if a is False:
        return True
    raise overload_error("!_", a)


# -- comparison and membership -----------------------------------------------------------------


def less(a: Any, b: Any) -> bool:
    """``_<_``."""
    if is_nan(a) or is_nan(b):
        _check_number(a, b, "_<_")
        return False
    return compare(a, b, "_<_") < 0


def less_equal(a: Any, b: Any) -> bool:
    """``_<=_``."""
    if is_nan(a) or is_nan(b):
        _check_number(a, b, "_<=_")
        return False
    return compare(a, b, "_<=_") <= 0


def greater(a: Any, b: Any) -> bool:
    """``_>_``."""
    if is_nan(a) or is_nan(b):
        _check_number(a, b, "_>_")
        return False
    return compare(a, b, "_>_") > 0


def greater_equal(a: Any, b: Any) -> bool:
    """``_>=_``."""
    if is_nan(a) or is_nan(b):
        _check_number(a, b, "_>=_")
        return False
    return compare(a, b, "_>=_") >= 0


def _check_number(a: Any, b: Any, operator: str) -> None:
    if not (is_number(a) and is_number(b)):
        raise overload_error(operator, a, b)


def contained_in(item: Any, container: Any) -> bool:
    """``_in_``: a list element by CEL equality, or a map key (numbers across kinds)."""
    kind = type(container)
    if kind is list or kind is tuple:
        if type(item) is str:
            # One pass over the strings (argv, a params list: all strings, the usual container);
            # the rest, compared by CEL equality, only when there is any.
            mixed = False
            for element in container:
                if type(element) is str:
                    if element == item:
                        return True
                else:
                    mixed = True
            return mixed and any(type(e) is not str and equal(item, e) for e in container)
        return any(equal(item, element) for element in container)
    if kind is dict or isinstance(container, Mapping):
        return map_lookup(container, item)[0]
    if isinstance(container, list | tuple):
        return any(equal(item, element) for element in container)
    raise overload_error("_in_", item, container)


def index(container: Any, key: Any) -> Any:
    """``_[_]``: a list by int/uint (or a whole double), a map by key."""
    kind = type(container)
    if kind is list or kind is tuple or (kind is not dict and isinstance(container, list | tuple)):
        position = _list_position(key)
        if 0 <= position < len(container):
            return container[position]
        raise CelError(f"index out of range: {position}", "index_out_of_range")
    if kind is dict or isinstance(container, Mapping):
        found, value = map_lookup(container, key)
        if found:
            return value
        if type(key) is float and key != key:
            raise CelError("no such key: NaN", "no_such_key")
        raise CelError(f"no such key: {key!r}", "no_such_key")
    if type(container) is Optional:
        return optional_index(container, key)
    raise overload_error("_[_]", container, key)


def _list_position(key: Any) -> int:
    kind = type(key)
    if kind is int or kind is Uint:
        return int(key)
    if kind is float:
        if math.isfinite(key) and key == int(key):
            return int(key)
        raise CelError(f"invalid list index {key!r}: not a whole number", "invalid_argument")
    raise overload_error("_[_]", [], key)


def optional_index(container: Optional, key: Any) -> Optional:
    """``opt[key]`` on an optional: the element when both exist, else none."""
    if not container.present:
        return container
    try:
        return Optional(True, index(container.value, key))
    except CelError as error:
        if error.kind in ("no_such_key", "index_out_of_range"):
            return Optional(False)
        raise


# -- size and strings --------------------------------------------------------------------------


def size(value: Any) -> int:
    """``size``: code points of a string, bytes, list items, map entries."""
    kind = type(value)
    if kind is str or kind is bytes or kind is list or kind is dict or kind is tuple:
        return len(value)
    if isinstance(value, str | bytes | list | tuple | Mapping):
        return len(value)
    raise overload_error("size", value)


def _strings(function: str, a: Any, b: Any) -> None:
    if (type(a) is not str or type(b) is not str) and not (isinstance(a, str) and isinstance(b, str)):
        raise overload_error(function, a, b)


def contains(a: Any, b: Any) -> bool:
    """``string.contains(string)``."""
    _strings("contains", a, b)
    return b in a


def starts_with(a: Any, b: Any) -> bool:
    """``string.startsWith(string)``."""
    _strings("startsWith", a, b)
    return bool(a.startswith(b))


def ends_with(a: Any, b: Any) -> bool:
    """``string.endsWith(string)``."""
    _strings("endsWith", a, b)
    return bool(a.endswith(b))
