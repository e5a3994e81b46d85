"""CEL's math extension (as in cel-go's ``ext.Math``) over the closure compiler's values,
by qualified name in :data:`MATH_FUNCTIONS`: ``greatest``/``least`` across number kinds,
rounding, ``abs``/``sign``, the ``isInf``/``isNaN``/``isFinite`` tests, bit operations and
``sqrt``.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping
from typing import Any, Final

from dsh_policy.policy.cel.closure_values import (
    UINT64_MAX,
    CelError,
    Uint,
    check_int,
    is_list,
    is_nan,
    is_number,
    overload_error,
)

# -- math extension ----------------------------------------------------------------------------


def _numbers_of(function: str, args: tuple[Any, ...]) -> list[Any]:
    values = list(args[0]) if len(args) == 1 and is_list(args[0]) else list(args)
    if not values:
        raise CelError(f"{function}(): no arguments", "invalid_argument")
    for value in values:
        if not is_number(value):
            raise overload_error(function, *values)
    return values


def math_greatest(*args: Any) -> Any:
    """``math.greatest``: the largest number (across kinds), of a list or of the arguments."""
    values = _numbers_of("math.greatest", args)
    best = values[0]
    for value in values[1:]:
        if is_nan(value) or (not is_nan(best) and value > best):
            best = value
    return best


def math_least(*args: Any) -> Any:
    """``math.least``: the smallest number (across kinds)."""
    values = _numbers_of("math.least", args)
    best = values[0]
    for value in values[1:]:
        if is_nan(value) or (not is_nan(best) and value < best):
            best = value
    return best


def _double_function(name: str, function: Callable[[float], float]) -> Callable[[Any], float]:
    def apply(value: Any) -> float:
        if type(value) is not float:
            raise overload_error(name, value)
        return function(value)

    apply.__name__ = name.replace(".", "_")
    return apply


def _round_half_away(value: float) -> float:
    if not math.isfinite(value):
        return value
    rounded = math.floor(abs(value) + 0.5)
    return math.copysign(rounded, value)


def _trunc(value: float) -> float:
    return value if not math.isfinite(value) else float(math.trunc(value))


def math_abs(value: Any) -> Any:
    """``math.abs``: int (``abs(MIN)`` overflows), uint, double."""
    kind = type(value)
    if kind is int:
        return check_int(abs(value))
    if kind is Uint:
        return value
    if kind is float:
        return abs(value)
    raise overload_error("math.abs", value)


def math_sign(value: Any) -> Any:
    """``math.sign``: -1, 0 or 1 in the argument's kind."""
    kind = type(value)
    if kind is int:
        return (value > 0) - (value < 0)
    if kind is Uint:
        return Uint(1 if value else 0)
    if kind is float:
        if value != value:
            return value
        return float((value > 0) - (value < 0))
    raise overload_error("math.sign", value)


def _int_bits(name: str, a: Any, b: Any) -> tuple[Any, Any]:
    if type(a) is not type(b) or type(a) not in (int, Uint):
        raise overload_error(name, a, b)
    return a, b


def math_bit_and(a: Any, b: Any) -> Any:
    """``math.bitAnd``."""
    a, b = _int_bits("math.bitAnd", a, b)
    return Uint(a & b) if type(a) is Uint else a & b


def math_bit_or(a: Any, b: Any) -> Any:
    """``math.bitOr``."""
    a, b = _int_bits("math.bitOr", a, b)
    return Uint(a | b) if type(a) is Uint else a | b


def math_bit_xor(a: Any, b: Any) -> Any:
    """``math.bitXor``."""
    a, b = _int_bits("math.bitXor", a, b)
    return Uint(a ^ b) if type(a) is Uint else a ^ b


def math_bit_not(a: Any) -> Any:
    """``math.bitNot``."""
    if type(a) is int:
        return ~a
    if type(a) is Uint:
        return Uint(UINT64_MAX ^ a)
    raise overload_error("math.bitNot", a)


def math_shift_left(a: Any, bits: Any) -> Any:
    """``math.bitShiftLeft``: bits shifted out are lost; 64 or more gives 0."""
    if type(bits) is not int or type(a) not in (int, Uint):
        raise overload_error("math.bitShiftLeft", a, bits)
    if bits < 0:
        raise CelError("math.bitShiftLeft: negative shift", "invalid_argument")
    if bits >= 64:
        return Uint(0) if type(a) is Uint else 0
    if type(a) is Uint:
        return Uint((a << bits) & UINT64_MAX)
    return struct.unpack("<q", struct.pack("<Q", (a << bits) & UINT64_MAX))[0]


def math_shift_right(a: Any, bits: Any) -> Any:
    """``math.bitShiftRight``: logical (zero-filling) for int as for uint."""
    if type(bits) is not int or type(a) not in (int, Uint):
        raise overload_error("math.bitShiftRight", a, bits)
    if bits < 0:
        raise CelError("math.bitShiftRight: negative shift", "invalid_argument")
    if bits >= 64:
        return Uint(0) if type(a) is Uint else 0
    if type(a) is Uint:
        return Uint(a >> bits)
    return (a & UINT64_MAX) >> bits


def _sqrt(value: Any) -> float:
    if not is_number(value):
        raise overload_error("math.sqrt", value)
    number = float(value)
    return math.nan if number < 0 else math.sqrt(number)


def _finite_check(name: str, function: Callable[[float], bool]) -> Callable[[Any], bool]:
    def apply(value: Any) -> bool:
        if type(value) is not float:
            raise overload_error(name, value)
        return function(value)

    return apply


MATH_FUNCTIONS: Final[Mapping[str, Callable[..., Any]]] = {
    "math.greatest": math_greatest,
    "math.least": math_least,
    "math.ceil": _double_function("math.ceil", lambda v: float(math.ceil(v)) if math.isfinite(v) else v),
    "math.floor": _double_function("math.floor", lambda v: float(math.floor(v)) if math.isfinite(v) else v),
    "math.round": _double_function("math.round", _round_half_away),
    "math.trunc": _double_function("math.trunc", _trunc),
    "math.abs": math_abs,
    "math.sign": math_sign,
    "math.isInf": _finite_check("math.isInf", math.isinf),
    "math.isNaN": _finite_check("math.isNaN", math.isnan),
    "math.isFinite": _finite_check("math.isFinite", math.isfinite),
    "math.bitAnd": math_bit_and,
    "math.bitOr": math_bit_or,
    "math.bitXor": math_bit_xor,
    "math.bitNot": math_bit_not,
    "math.bitShiftLeft": math_shift_left,
    "math.bitShiftRight": math_shift_right,
    "math.sqrt": _sqrt,
}
"""The math extension library (as in cel-go's ``ext.Math``), by qualified name."""
