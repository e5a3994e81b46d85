"""Deep freezing of JSON values, so arguments and results cannot change after they are sealed.

Frozen form: objects become :class:`FrozenDict` (a read-only ``Mapping``), arrays become tuples,
scalars stay. ``thaw`` turns a frozen value back into plain ``dict``/``list`` for serializers and
CEL activations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any


class FrozenDict(Mapping[str, Any]):
    """A read-only mapping of frozen JSON values, with a stable hash; equality is mapping equality.

    Read-only through every attribute a caller can reach: the contents are held behind a
    ``MappingProxyType`` (so even the private ``_data`` gives no way in), attributes cannot be set
    or deleted (``__class__`` included), and the constructor deep-freezes what it is given, so a
    nested dict or list cannot be reached and changed through the mapping either. Values must be
    JSON (``NotJsonError`` otherwise), the same rule as :func:`freeze_json`.
    """

    __slots__ = ("_data", "_hash")

    _data: MappingProxyType[str, Any]
    _hash: int

    def __init__(self, data: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        frozen = freeze_json(dict(data) if data is not None else {})
        _set_data(self, frozen._data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"FrozenDict is read-only; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"FrozenDict is read-only; cannot delete {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self._data),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: Any) -> FrozenDict:
        return self

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # The Mapping mixins work through __iter__/__getitem__; delegating to the proxy is several
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
            return dict(self._data) == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:  # not computed yet: the slot starts empty
            cached = hash(frozenset(self._data.items()))
            _set_hash(self, cached)
            return cached

    def __repr__(self) -> str:
        return f"FrozenDict({dict(self._data)!r})"


# The slot descriptors are the only writers (used above); instances refuse __setattr__.
_set_data: Any = FrozenDict.__dict__["_data"].__set__
_set_hash: Any = FrozenDict.__dict__["_hash"].__set__
_new_frozen: Any = object.__new__


def _wrap(data: dict[str, Any]) -> FrozenDict:
    """A FrozenDict over a dict whose values are already frozen (internal: skips the deep walk)."""
    instance: FrozenDict = _new_frozen(FrozenDict)
    _set_data(instance, MappingProxyType(data))
    return instance


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
    except Exception as exc:
        # A hostile container (a Mapping whose items() raises, a sequence whose iterator does):
        # whatever went wrong, the value cannot be snapshotted losslessly.
        raise NotJsonError(f"{_path}: value could not be read ({type(exc).__name__})") from None


class _NotJson(Exception):
    """Internal: carries the failing location outward; the path is only built when one fails."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.segments: list[str] = []


def _freeze(value: Any) -> Any:
    kind = type(value)
    # Exact types first (the hot path). Everything else is judged by its real type, never by
    # isinstance (a ``__class__`` property can fool that); subclasses of the JSON scalars become
    # the exact type, so no override of theirs survives into a frozen value.
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is FrozenDict:
        return value  # deep-frozen by construction
    if kind is dict or issubclass(kind, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key_kind = type(key)
            if key_kind is not str:
                if not issubclass(key_kind, str):
                    raise _NotJson(f"non-string key of type {key_kind.__name__}")
                key = str.__str__(key)
            try:
                out[key] = _freeze(item)
            except _NotJson as exc:
                exc.segments.append(f".{key}")
                raise
        return _wrap(out)
    if kind is list or kind is tuple or issubclass(kind, list | tuple):
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_freeze(item))
            except _NotJson as exc:
                exc.segments.append(f"[{index}]")
                raise
        return tuple(items)
    if kind is float or issubclass(kind, float):
        number = float.__float__(value)
        if not math.isfinite(number):
            raise _NotJson(f"non-finite number {number!r}")
        return number
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, int):  # bool cannot be subclassed; other int subclasses become int
        return int.__int__(value)
    raise _NotJson(f"{kind.__name__} is not JSON")


def thaw(value: Any) -> Any:
    """Return a plain, mutable copy (dict/list) of a frozen JSON value."""
    # Plain loops, not comprehensions: one frame per nesting level, as in freezing, so whatever
    # depth could be frozen can be thawed too.
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is FrozenDict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key] = thaw(item)
        return out
    if isinstance(value, tuple | list):
        items = []
        for item in value:
            items.append(thaw(item))
        return items
    return value


def to_json_text(value: Any) -> str:
    """Serialize a (frozen or plain) JSON value compactly, for logs and model-facing text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain_mapping)


def _plain_mapping(value: Any) -> Any:
    # json encodes tuples as arrays already; only Mappings that are not dicts need help.
    if isinstance(value, Mapping):
        return dict(value.items())
    raise TypeError(f"{type(value).__name__} is not JSON")
