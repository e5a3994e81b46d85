"""CEL's operators and standard functions over the closure compiler's values.

Each function takes evaluated arguments and returns a value or raises
:class:`~dsh_policy.policy.cel.closure_values.CelError`: integer overflow past int64/uint64,
division by zero, conversions out of range, and ``no such overload`` for argument types the
function does not take. The compiler binds these directly into the closures it builds (and
specializes the common cases, such as ``string == constant``, inline).
"""

from __future__ import annotations

import datetime
import math
import re
import struct
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dsh_policy.policy.cel.closure_values import (
    INT64_MAX,
    INT64_MIN,
    MAX_DURATION_SECONDS,
    UINT64_MAX,
    UTC,
    CelError,
    CelType,
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
    map_lookup,
    overload_error,
    timestamp_of,
    type_of,
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
    if not (_number(a) and _number(b)):
        raise overload_error(operator, a, b)


def _number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float or kind is Uint


def contained_in(item: Any, container: Any) -> bool:
    """``_in_``: a list element by CEL equality, or a map key (numbers across kinds)."""
    kind = type(container)
    if kind is list or kind is tuple:
        if type(item) is str:
            for element in container:
                if type(element) is str and element == item:
                    return True
            return any(type(e) is not str and equal(item, e) for e in container)
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


# -- conversions -------------------------------------------------------------------------------

_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")


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


_FLOAT_TEXT = re.compile(
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


# -- timestamps and durations ------------------------------------------------------------------

_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z"
)


def parse_timestamp(text: str) -> _DT:
    """An RFC 3339 timestamp (fractions beyond microseconds are truncated)."""
    found = _RFC3339.match(text)
    if found is None:
        raise CelError(f"invalid timestamp {text!r}", "invalid_argument")
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = found.groups()
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        if zulu:
            zone: datetime.tzinfo = UTC
        else:
            offset = _TD(hours=int(off_h), minutes=int(off_m))
            zone = datetime.timezone(-offset if sign == "-" else offset)
        local = _DT(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo=zone)
        return check_timestamp(local.astimezone(UTC))
    except (ValueError, OverflowError):
        raise CelError(f"invalid timestamp {text!r}", "invalid_argument") from None


def to_timestamp(value: Any) -> _DT:
    """``timestamp()``: from an RFC 3339 string, Unix seconds, or a timestamp."""
    if isinstance(value, _DT):
        return timestamp_of(value)
    if type(value) is str:
        return parse_timestamp(value)
    if type(value) is int:
        try:
            return check_timestamp(_DT.fromtimestamp(value, UTC))
        except (OverflowError, OSError, ValueError):
            raise CelError("timestamp out of range", "overflow") from None
    raise overload_error("timestamp", value)


def format_timestamp(value: _DT) -> str:
    """RFC 3339 in UTC with as many fraction digits as needed (``...T00:00:00.5Z``)."""
    moment = timestamp_of(value).astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if len(text) < 19:  # years below 1000 print without padding on some platforms
        text = f"{moment.year:04d}" + text[text.index("-") :]
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


_DURATION_PART: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_NANOS: Final = {
    "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
    "m": 60_000_000_000, "h": 3_600_000_000_000,
}  # fmt: skip


def parse_duration(text: str) -> _TD:
    """A Go-style duration (``1h30m``, ``-1.5s``, ``100ms``, ``3us``); nanoseconds truncate to
    microseconds."""
    body = text
    negative = body.startswith("-")
    if body[:1] in "+-":
        body = body[1:]
    if body == "0":
        return _TD(0)
    position = 0
    nanos = Decimal(0)
    while position < len(body):
        found = _DURATION_PART.match(body, position)
        if found is None:
            raise CelError(f"invalid duration {text!r}", "invalid_argument")
        try:
            nanos += Decimal(found.group(1)) * _UNIT_NANOS[found.group(2)]
        except InvalidOperation:
            raise CelError(f"invalid duration {text!r}", "invalid_argument") from None
        position = found.end()
    if not body:
        raise CelError(f"invalid duration {text!r}", "invalid_argument")
    if nanos > MAX_DURATION_SECONDS * 1_000_000_000:
        raise CelError(f"duration out of range: {text!r}", "overflow")
    micros = int(nanos / 1000)
    return _TD(microseconds=-micros if negative else micros)


def to_duration(value: Any) -> _TD:
    """``duration()``: from a duration string or a duration."""
    if type(value) is _TD:
        return value
    if type(value) is str:
        return parse_duration(value)
    raise overload_error("duration", value)


def format_duration(value: _TD) -> str:
    """Seconds with the fraction needed (``1.5s``, ``-5400s``)."""
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    whole, fraction = divmod(abs(micros), 1_000_000)
    if fraction:
        return f"{sign}{whole}.{f'{fraction:06d}'.rstrip('0')}s"
    return f"{sign}{whole}s"


@lru_cache(maxsize=64)
def _zone(name: str) -> datetime.tzinfo:
    offset = re.fullmatch(r"([+-]?)(\d{2}):?(\d{2})", name)
    if offset is not None:
        delta = _TD(hours=int(offset.group(2)), minutes=int(offset.group(3)))
        return datetime.timezone(-delta if offset.group(1) == "-" else delta)
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CelError(f"unknown time zone {name!r}", "invalid_argument") from None


def _local(value: Any, zone: Any, function: str) -> _DT:
    if not isinstance(value, _DT):
        raise overload_error(function, value)
    moment = timestamp_of(value)
    if zone is None:
        return moment.astimezone(UTC)
    if type(zone) is not str:
        raise overload_error(function, value, zone)
    return moment.astimezone(_zone(zone))


def _total_micros(value: _TD) -> int:
    return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds


def _truncated(micros: int, unit: int) -> int:
    return int(micros / unit) if abs(micros) < 2**52 else (abs(micros) // unit) * (1 if micros >= 0 else -1)


def _time_getter(
    on_timestamp: Callable[[_DT], int], on_duration: Callable[[_TD], int] | None, name: str
) -> Callable[..., int]:
    def getter(value: Any, zone: Any = None) -> int:
        if type(value) is _TD:
            if on_duration is None or zone is not None:
                raise overload_error(name, value)
            return on_duration(value)
        return on_timestamp(_local(value, zone, name))

    getter.__name__ = name
    return getter


TIME_GETTERS: Final[Mapping[str, Callable[..., int]]] = {
    "getFullYear": _time_getter(lambda t: t.year, None, "getFullYear"),
    "getMonth": _time_getter(lambda t: t.month - 1, None, "getMonth"),
    "getDate": _time_getter(lambda t: t.day, None, "getDate"),
    "getDayOfMonth": _time_getter(lambda t: t.day - 1, None, "getDayOfMonth"),
    "getDayOfYear": _time_getter(lambda t: t.timetuple().tm_yday - 1, None, "getDayOfYear"),
    "getDayOfWeek": _time_getter(lambda t: (t.weekday() + 1) % 7, None, "getDayOfWeek"),
    "getHours": _time_getter(
        lambda t: t.hour, lambda d: _truncated(_total_micros(d), 3_600_000_000), "getHours"
    ),
    "getMinutes": _time_getter(
        lambda t: t.minute, lambda d: _truncated(_total_micros(d), 60_000_000), "getMinutes"
    ),
    "getSeconds": _time_getter(
        lambda t: t.second, lambda d: _truncated(_total_micros(d), 1_000_000), "getSeconds"
    ),
    "getMilliseconds": _time_getter(
        lambda t: t.microsecond // 1000,
        lambda d: _truncated(_total_micros(d), 1000) - _truncated(_total_micros(d), 1_000_000) * 1000,
        "getMilliseconds",
    ),
}
"""The timestamp (optionally in a time zone) and duration accessors, by method name."""


# -- optionals ---------------------------------------------------------------------------------


def optional_of(value: Any) -> Optional:
    """``optional.of(x)``."""
    return Optional(True, value)


def optional_of_non_zero(value: Any) -> Optional:
    """``optional.ofNonZeroValue(x)``: none for the zero value of its type."""
    if value is None or value is False or (type(value) in (int, float, Uint) and value == 0):
        return Optional(False)
    if isinstance(value, str | bytes | list | tuple | Mapping) and len(value) == 0:
        return Optional(False)
    return Optional(True, value)


def _optional(function: str, value: Any) -> Optional:
    if type(value) is not Optional:
        raise overload_error(function, value)
    return value


def optional_has_value(value: Any) -> bool:
    """``opt.hasValue()``."""
    return _optional("hasValue", value).present


def optional_value(value: Any) -> Any:
    """``opt.value()``: an error when empty."""
    found = _optional("value", value)
    if not found.present:
        raise CelError("optional.none() has no value", "invalid_argument")
    return found.value


def optional_or(value: Any, other: Any) -> Optional:
    """``opt.or(other)``."""
    found = _optional("or", value)
    return found if found.present else _optional("or", other)


def optional_or_value(value: Any, other: Any) -> Any:
    """``opt.orValue(x)``."""
    found = _optional("orValue", value)
    return found.value if found.present else other


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


# -- math extension ----------------------------------------------------------------------------


def _numbers_of(function: str, args: tuple[Any, ...]) -> list[Any]:
    values = list(args[0]) if len(args) == 1 and is_list(args[0]) else list(args)
    if not values:
        raise CelError(f"{function}(): no arguments", "invalid_argument")
    for value in values:
        if not _number(value):
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
    if not _number(value):
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
