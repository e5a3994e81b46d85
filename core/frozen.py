"""Deep freezing of JSON values, so arguments and results cannot change after they are sealed.

Frozen form: objects become :class:`FrozenDict` (a read-only ``Mapping``), arrays become tuples,
scalars stay. ``thaw`` turns a frozen value back into plain ``dict``/``list`` for serializers and
CEL activations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any


class FrozenDict(Mapping[str, Any]):
    """A read-only mapping with a stable hash; equality is plain mapping equality."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # The Mapping mixins work through __iter__/__getitem__; delegating to the dict is several
    # times faster on the hot path (validation, rendering) and behaves the same.

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def keys(self) -> Any:
        return self._data.keys()

    def values(self) -> Any:
        return self._data.values()

    def items(self) -> Any:
        return self._data.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


class NotJsonError(ValueError):
    """A value is not losslessly JSON-serializable (HARNESS.md section 3, step 1)."""


def freeze_json(value: Any, _path: str = "$") -> Any:
    """Return a deep-frozen copy of a JSON value, or raise :class:`NotJsonError`.

    Lossless means: only dict (string keys), list/tuple, str, int, finite float, bool and None;
    anything else (sets, bytes, NaN, objects) would change on a JSON round trip.
    """
    try:
        return _freeze(value)
    except _NotJson as exc:
        raise NotJsonError(f"{_path}{''.join(reversed(exc.segments))}: {exc.reason}") from None
    except RecursionError:
        # Arguments come from a model: nesting deep enough to exhaust the stack must become the
        # pipeline's ordinary "not JSON" error result, never an exception that escapes the call.
        raise NotJsonError(f"{_path}: value nests too deeply to snapshot") from None


class _NotJson(Exception):
    """Internal: carries the failing location outward; the path is only built when one fails."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.segments: list[str] = []


def _freeze(value: Any) -> Any:
    kind = type(value)
    # Exact types first (the hot path); the isinstance chain keeps subclasses behaving the same.
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict or kind is FrozenDict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotJson(f"non-string key {key!r}")
            try:
                out[key] = _freeze(item)
            except _NotJson as exc:
                exc.segments.append(f".{key}")
                raise
        return FrozenDict(out)
    if kind is list or kind is tuple or isinstance(value, list | tuple):
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_freeze(item))
            except _NotJson as exc:
                exc.segments.append(f"[{index}]")
                raise
        return tuple(items)
    if isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJson(f"non-finite number {value!r}")
        return value
    raise _NotJson(f"{type(value).__name__} is not JSON")


def thaw(value: Any) -> Any:
    """Return a plain, mutable copy (dict/list) of a frozen JSON value."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is FrozenDict:
        return {key: thaw(item) for key, item in value._data.items()}
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(item) for item in value]
    return value


def to_json_text(value: Any) -> str:
    """Serialize a (frozen or plain) JSON value compactly, for logs and model-facing text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain_mapping)


def _plain_mapping(value: Any) -> Any:
    # json encodes tuples as arrays already; only Mappings that are not dicts need help.
    if isinstance(value, Mapping):
        return dict(value.items())
    raise TypeError(f"{type(value).__name__} is not JSON")
