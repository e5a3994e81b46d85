"""CEL's timestamps and durations over the closure compiler's values: RFC 3339 and Go-style
duration text in and out, ``timestamp()`` and ``duration()``, and the accessors
(``getFullYear``... ``getMilliseconds``, optionally in a time zone).

Timestamps are aware ``datetime`` values in UTC, durations ``timedelta``; both are kept inside
CEL's range (years 1 to 9999, +-315,576,000,000 s), past which an operation is an overflow error.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy.cel.closure_values import (
    MAX_DURATION_SECONDS,
    UTC,
    CelError,
    check_timestamp,
    overload_error,
    timestamp_of,
)

_TD = datetime.timedelta
_DT = datetime.datetime


# -- timestamps and durations ------------------------------------------------------------------

_RFC3339: Final = lazy_compile(
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


_DURATION_PART: Final = lazy_compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
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
