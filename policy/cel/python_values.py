"""Values between plain Python and cel-python's types, for the python engine.

Rules and events hold plain Python (dicts, lists, str, int, float, bool, None, bytes, datetime,
timedelta); cel-python evaluates its own wrapper types. :func:`to_celpy` converts an activation
value in, :func:`from_celpy` a result out, and :func:`describe_celpy_error` turns cel-python's
error into the one-line message a verdict carries.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import celpy.celtypes as ct
from celpy.evaluation import CELEvalError

_INT64 = (-(2**63), 2**63)
_UINT64_END = 2**64
_MAX_VALUE_DEPTH = 128


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


def describe_celpy_error(error: CELEvalError) -> str:
    """cel-python's error as one readable line, e.g. ``no such key: 'z'``."""
    args = error.args
    message = str(args[0]) if args else type(error).__name__
    message = message.split(" (in activation ", 1)[0]  # cel-python appends the whole activation
    detail = args[2] if len(args) > 2 else None
    if isinstance(detail, tuple) and detail:
        message += ": " + ", ".join(repr(from_celpy(d)) if not isinstance(d, str) else d for d in detail)
    return message
