"""CEL values for the closure compiler: plain Python where CEL and Python agree, small types
where they do not, and CEL's equality and ordering over them.

Values an activation holds pass through unconverted (``dict``/``Mapping``, ``list``/``tuple``,
``str``, ``int``, ``float``, ``bool``, ``None``, ``bytes``, ``datetime``, ``timedelta``): that
is what makes a compiled closure cheap, since nothing is converted per evaluation. Three CEL
kinds have no plain form and get one here: :class:`Uint` (``1u``; an ``int`` subclass, so it
hashes and compares like the number it is), :class:`CelType` (``type(x)``, ``int``) and
:class:`Optional` (``optional.of(x)``). :func:`to_output` turns a result back into the plain
values every engine returns.

Errors are :class:`CelError` exceptions inside the compiled program; only ``&&``, ``||``, the
conditional, ``all``/``exists`` and the program's entry point catch them, which is where CEL
absorbs or reports an error value. Raising costs nothing on the paths that do not raise.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Final

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
UINT64_MAX: Final = 2**64 - 1
UTC: Final = datetime.UTC
MIN_TIMESTAMP: Final = datetime.datetime(1, 1, 1, tzinfo=UTC)
MAX_TIMESTAMP: Final = datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
MAX_DURATION_SECONDS: Final = 9_223_372_036
"""CEL runtimes hold a duration in int64 nanoseconds (about 292 years either way)."""


class CelError(Exception):
    """An evaluation error (CEL's error value). ``kind`` names the class of error the way every
    engine can be compared on (``no_such_overload``, ``no_such_key``, ``overflow``...)."""

    def __init__(self, message: str, kind: str = "invalid_argument") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


def overload_error(function: str, *args: Any) -> CelError:
    """``no such overload`` for ``function`` applied to the CEL types of ``args``."""
    types = ", ".join(type_name(arg) for arg in args)
    return CelError(f"no such overload: {function}({types})", "no_such_overload")


class Uint(int):
    """A CEL ``uint``. Arithmetic on it gives plain ``int``; the compiled operators wrap again."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class CelType:
    """A CEL type as a value (``type(1) == int``). One instance per name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class Optional:
    """A CEL ``optional_type`` value: ``value`` when present."""

    __slots__ = ("present", "value")

    def __init__(self, present: bool, value: Any = None) -> None:
        self.present = present
        self.value = value

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


OPTIONAL_NONE: Final = Optional(False)

TYPES: Final[Mapping[str, CelType]] = {
    name: CelType(name)
    for name in (
        "int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
        "google.protobuf.Timestamp", "google.protobuf.Duration", "optional_type",
    )
}  # fmt: skip
"""Every type value by its CEL name."""

_EXACT_TYPES: Final[Mapping[type, CelType]] = {
    bool: TYPES["bool"], int: TYPES["int"], Uint: TYPES["uint"], float: TYPES["double"],
    str: TYPES["string"], bytes: TYPES["bytes"], list: TYPES["list"], tuple: TYPES["list"],
    dict: TYPES["map"], type(None): TYPES["null_type"], CelType: TYPES["type"],
    datetime.datetime: TYPES["google.protobuf.Timestamp"],
    datetime.timedelta: TYPES["google.protobuf.Duration"], Optional: TYPES["optional_type"],
}  # fmt: skip


def type_of(value: Any) -> CelType:
    """The CEL type of ``value``; raises :class:`CelError` for a value CEL cannot hold."""
    found = _EXACT_TYPES.get(type(value))
    if found is not None:
        return found
    if isinstance(value, Mapping):
        return TYPES["map"]
    if isinstance(value, bool):
        return TYPES["bool"]
    if isinstance(value, int):
        return TYPES["int"]
    for kind in (float, str, bytes, list, tuple, datetime.datetime, datetime.timedelta):
        if isinstance(value, kind):
            return _EXACT_TYPES[kind]
    raise CelError(f"a {type(value).__name__} is not a CEL value", "invalid_argument")


def type_name(value: Any) -> str:
    """The CEL type name of ``value``, for messages (never raises)."""
    try:
        return type_of(value).name
    except CelError:
        return type(value).__name__


# -- kinds -------------------------------------------------------------------------------------


def is_map(value: Any) -> bool:
    """Whether ``value`` is a CEL map (a ``dict`` or any other ``Mapping``)."""
    return type(value) is dict or isinstance(value, Mapping)


def is_list(value: Any) -> bool:
    """Whether ``value`` is a CEL list (``list`` or ``tuple``)."""
    kind = type(value)
    return kind is list or kind is tuple or isinstance(value, list | tuple)


def is_number(value: Any) -> bool:
    """``int``, ``uint`` or ``double`` (never ``bool``)."""
    kind = type(value)
    return kind is int or kind is float or kind is Uint


def timestamp_of(value: datetime.datetime) -> datetime.datetime:
    """A timestamp as an aware UTC-comparable datetime (a naive one is taken as UTC)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# -- equality and ordering ---------------------------------------------------------------------

_SAME_TYPE_EQUAL: Final = frozenset({str, bytes, bool, int, float, Uint, type(None), datetime.timedelta})


def equal(a: Any, b: Any) -> bool:
    """CEL ``==``: numbers by value across int/uint/double (an int against a double as doubles;
    int against uint exactly), lists and
    maps element by element, and values of different types simply unequal (never an error)."""
    ta = type(a)
    tb = type(b)
    if ta is tb:
        if ta in _SAME_TYPE_EQUAL:
            return bool(a == b)
        if ta is list or ta is tuple:
            return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
        if ta is dict:
            return _maps_equal(a, b)
        if ta is datetime.datetime:
            return timestamp_of(a) == timestamp_of(b)
        if ta is CelType:
            return a is b or a.name == b.name
        if ta is Optional:
            return a.present == b.present and (not a.present or equal(a.value, b.value))
        return bool(a == b)
    if (ta is int or ta is float or ta is Uint) and (tb is int or tb is float or tb is Uint):
        if ta is float or tb is float:
            return float(a) == float(b)  # the spec compares an int with a double as doubles
        return bool(a == b)
    if ta is bool or tb is bool or a is None or b is None:
        return False
    if is_list(a) and is_list(b):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if is_map(a) and is_map(b):
        return _maps_equal(a, b)
    if isinstance(a, datetime.datetime) and isinstance(b, datetime.datetime):
        return timestamp_of(a) == timestamp_of(b)
    if ta not in _EXACT_TYPES or tb not in _EXACT_TYPES:  # a subclass of a scalar, as the scalar
        plain_a, plain_b = _plain_scalar(a), _plain_scalar(b)
        if plain_a is not a or plain_b is not b:
            return equal(plain_a, plain_b)
    return False


def _plain_scalar(value: Any) -> Any:
    """A subclass of a scalar (``class Name(str)``) as the scalar itself."""
    kinds: tuple[type, ...] = (bool, Uint, int, float, str, bytes)
    for kind in kinds:
        if isinstance(value, kind):
            return kind(value)
    return value


def _maps_equal(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> bool:
    if len(a) != len(b):
        return False
    for key, value in a.items():
        found, other = map_lookup(b, key)
        if not found or not equal(value, other):
            return False
    return True


def map_lookup(mapping: Mapping[Any, Any], key: Any) -> tuple[bool, Any]:
    """Find ``key`` by CEL equality: a string key directly; a number finds an entry of another
    numeric kind with the same value; ``true`` never finds ``1`` (Python hashes them alike)."""
    if type(key) is str:
        if key in mapping:
            return True, mapping[key]
        return False, None
    if key is True or key is False:
        for candidate, value in mapping.items():
            if candidate is key:
                return True, value
        return False, None
    try:
        if key in mapping:
            if (key == 0 or key == 1) and is_number(key):
                # Python's dict finds True for 1 and False for 0: make sure a number was found.
                for candidate, value in mapping.items():
                    if is_number(candidate) and candidate == key:
                        return True, value
                return False, None
            return True, mapping[key]
    except TypeError:
        return False, None  # an unhashable key is in no map
    return False, None


def compare(a: Any, b: Any, operator: str) -> int:
    """-1, 0 or 1 for CEL ordering of ``a`` and ``b``: numbers across kinds by exact value;
    otherwise both of one orderable type. Raises ``no such overload`` for anything else. NaN is
    unordered: callers check for it first (every comparison with NaN is false)."""
    ta = type(a)
    tb = type(b)
    if ta is tb and (ta is str or ta is int or ta is float or ta is bytes or ta is Uint or ta is bool):
        return -1 if a < b else (1 if a > b else 0)
    if is_number(a) and is_number(b):
        if ta is float or tb is float:
            a, b = float(a), float(b)  # the spec orders an int against a double as doubles
        return -1 if a < b else (1 if a > b else 0)
    if ta is tb and ta is datetime.timedelta:
        return -1 if a < b else (1 if a > b else 0)
    if isinstance(a, datetime.datetime) and isinstance(b, datetime.datetime):
        x, y = timestamp_of(a), timestamp_of(b)
        return -1 if x < y else (1 if x > y else 0)
    if ta is not tb and isinstance(a, str | bytes) and type(_plain_scalar(a)) is type(_plain_scalar(b)):
        return compare(_plain_scalar(a), _plain_scalar(b), operator)
    raise overload_error(operator, a, b)


def is_nan(value: Any) -> bool:
    """Whether ``value`` is a double NaN."""
    return type(value) is float and value != value


# -- results -----------------------------------------------------------------------------------


def to_output(value: Any) -> Any:
    """A result as the plain Python every engine returns: uint as int, a type as its name, lists
    and maps copied (so a caller changing a result cannot change a cached helper value)."""
    kind = type(value)
    if kind is bool or kind is str or kind is int or kind is float or value is None:
        return value
    if kind is Uint:
        return int(value)
    if kind is list or kind is tuple:
        return [to_output(item) for item in value]
    if kind is dict or isinstance(value, Mapping):
        return {to_output(key): to_output(item) for key, item in value.items()}
    if kind is CelType:
        return value.name
    if kind is Optional:
        raise CelError("an optional value cannot leave CEL: use .value() or .orValue()", "invalid_argument")
    if kind is datetime.datetime:
        return timestamp_of(value)
    if isinstance(value, bytes):
        return bytes(value)
    return value


def check_int(value: int) -> int:
    """``value`` when it fits int64, else the overflow error."""
    if INT64_MIN <= value <= INT64_MAX:
        return value
    raise CelError("integer overflow", "overflow")


def check_uint(value: int) -> Uint:
    """``value`` as a uint when it fits uint64, else the overflow error."""
    if 0 <= value <= UINT64_MAX:
        return Uint(value)
    raise CelError("unsigned integer overflow", "overflow")


def check_timestamp(value: datetime.datetime) -> datetime.datetime:
    """``value`` when it is within CEL's range (years 1 to 9999), else an error."""
    if MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        return value
    raise CelError("timestamp out of range", "overflow")


def check_duration(value: datetime.timedelta) -> datetime.timedelta:
    """``value`` when int64 nanoseconds can hold it, else an error."""
    if abs(value.total_seconds()) <= MAX_DURATION_SECONDS:
        return value
    raise CelError("duration out of range", "overflow")
