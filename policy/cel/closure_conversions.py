"""CEL's type conversions over the closure compiler's values: ``int()``, ``uint()``,
``double()``, ``string()``, ``bytes()``, ``bool()``, ``type()``, ``dyn()``, and the encoders
extension (``base64.encode``/``base64.decode``).

A value out of the target type's range, or text that does not parse, is a
:class:`~dsh_policy.policy.cel.closure_values.CelError`; a double prints as CEL runtimes print it
(:func:`format_double`).
"""

from __future__ import annotations

import datetime
import math
import re
from decimal import Decimal
from typing import Any, Final

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy.cel.closure_time import format_duration, format_timestamp
from dsh_policy.policy.cel.closure_values import (
    CelError,
    CelType,
    Uint,
    check_int,
    check_uint,
    overload_error,
    timestamp_of,
    type_of,
)

_TD = datetime.timedelta
_DT = datetime.datetime


# -- conversions -------------------------------------------------------------------------------

_INT_TEXT = lazy_compile(r"[+-]?[0-9]+\Z")


def to_int(value: Any) -> int:
    """``int()``: from int, uint (range), double (truncated; NaN, infinities and values outside
    int64 are errors), decimal string, timestamp (Unix seconds)."""
    kind = type(value)
    if kind is int:
        return value
    if kind is Uint:
        return check_int(int(value))
    if kind is float:
        if not math.isfinite(value) or not (-9.223372036854775808e18 < value < 9.223372036854775807e18):
            raise CelError("double out of int64 range", "overflow")
        return int(value)
    if kind is str:
        if not _INT_TEXT.match(value):
            raise CelError(f"cannot convert {value!r} to int", "invalid_argument")
        return check_int(int(value))
    if isinstance(value, _DT):
        return check_int(math.floor(timestamp_of(value).timestamp()))
    if kind is not bool and isinstance(value, int):
        return check_int(int(value))
    raise overload_error("int", value)


def to_uint(value: Any) -> Uint:
    """``uint()``: from int (not negative), uint, double (truncated, in range), decimal string."""
    kind = type(value)
    if kind is Uint:
        return value
    if kind is int:
        return check_uint(value)
    if kind is float:
        if not math.isfinite(value) or not (-1.0 < value < 1.8446744073709552e19):
            raise CelError("double out of uint64 range", "overflow")
        return Uint(int(value))
    if kind is str:
        if not _INT_TEXT.match(value) or value.startswith("-"):
            raise CelError(f"cannot convert {value!r} to uint", "invalid_argument")
        return check_uint(int(value))
    raise overload_error("uint", value)


_FLOAT_TEXT = lazy_compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)\Z", re.I
)


def to_double(value: Any) -> float:
    """``double()``: from int, uint, double, numeric string (``1e3``, ``inf``, ``NaN``)."""
    kind = type(value)
    if kind is float:
        return value
    if kind is int or kind is Uint:
        return float(value)
    if kind is str:
        if not _FLOAT_TEXT.match(value):
            raise CelError(f"cannot convert {value!r} to double", "invalid_argument")
        return float(value)
    raise overload_error("double", value)


def format_double(value: float) -> str:
    """A double as text the way CEL runtimes print it: Go's ``%g`` with the shortest digits that
    round-trip (``100``, ``123.456``, ``1.234567e+06``, ``1e-05``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0.0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    number = Decimal(repr(value)).normalize()
    exponent = number.adjusted()
    if -4 <= exponent < 6:
        return format(number, "f")
    sign, digit_tuple, _ = number.as_tuple()
    digits = "".join(map(str, digit_tuple))
    body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{'-' if sign else ''}{body}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"


def to_string(value: Any) -> str:
    """``string()``: numbers, bools, UTF-8 bytes, strings, timestamps (RFC 3339) and durations."""
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is Uint:
        return str(int(value))
    if kind is float:
        return format_double(value)
    if kind is bytes:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes", "invalid_argument") from None
    if isinstance(value, _DT):
        return format_timestamp(value)
    if kind is _TD:
        return format_duration(value)
    if isinstance(value, str):
        return str(value)
    raise overload_error("string", value)


def to_bytes(value: Any) -> bytes:
    """``bytes()``: a string's UTF-8, or bytes."""
    if type(value) is bytes:
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return bytes(value)
    raise overload_error("bytes", value)


_TRUE_TEXTS: Final = frozenset({"1", "t", "true", "TRUE", "True", "T"})
_FALSE_TEXTS: Final = frozenset({"0", "f", "false", "FALSE", "False", "F"})


def to_bool(value: Any) -> bool:
    """``bool()``: a bool, or the strings CEL accepts (``true``, ``TRUE``, ``t``, ``1``...)."""
    if value is True or value is False:
        return value
    if isinstance(value, str):
        if value in _TRUE_TEXTS:
            return True
        if value in _FALSE_TEXTS:
            return False
        raise CelError(f"cannot convert {value!r} to bool", "invalid_argument")
    raise overload_error("bool", value)


def to_type(value: Any) -> CelType:
    """``type()``."""
    return type_of(value)


def dyn(value: Any) -> Any:
    """``dyn()``: the value itself (a type-checker hint)."""
    return value


# -- encoders ----------------------------------------------------------------------------------


def base64_encode(value: Any) -> str:
    """``base64.encode(bytes)``: standard alphabet, padded."""
    import base64

    if type(value) is not bytes:
        raise overload_error("base64.encode", value)
    return base64.b64encode(value).decode("ascii")


def base64_decode(value: Any) -> bytes:
    """``base64.decode(string)``: standard alphabet, padding optional."""
    import base64
    import binascii

    if type(value) is not str:
        raise overload_error("base64.decode", value)
    text = value + "=" * (-len(value) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise CelError("invalid base64", "invalid_argument") from None
