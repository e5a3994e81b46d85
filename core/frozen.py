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
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJsonError(f"{_path}: non-finite number {value!r}")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotJsonError(f"{_path}: non-string key {key!r}")
            out[key] = freeze_json(item, f"{_path}.{key}")
        return FrozenDict(out)
    if isinstance(value, list | tuple):
        return tuple(freeze_json(item, f"{_path}[{i}]") for i, item in enumerate(value))
    raise NotJsonError(f"{_path}: {type(value).__name__} is not JSON")


def thaw(value: Any) -> Any:
    """Return a plain, mutable copy (dict/list) of a frozen JSON value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(item) for item in value]
    return value


def to_json_text(value: Any) -> str:
    """Serialize a (frozen or plain) JSON value compactly, for logs and model-facing text."""
    return json.dumps(thaw(value), ensure_ascii=False, separators=(",", ":"))
