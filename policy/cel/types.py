"""CEL types for the load-time checker, in CEL's own notation (``list(string)``, ``map(K, V)``).

One small model serves the stage table (:mod:`~dsh_policy.policy.stages`), the helper signatures
(:data:`~dsh_policy.policy.cel.functions.CEL_SIGNATURES`), the standard declarations
(:mod:`.declarations`) and the checker (:mod:`.checker`); the native engine turns the same
signatures into its runtime's declarations, so every engine and the checker read one table.

Beyond CEL's types there are four the checker needs: ``record`` (a map whose keys are known, such
as ``tool`` or a pack's ``params``: selecting another key is an error), a type parameter (``A``
in ``size(list(A))``), ``never`` (the element type of ``[]``, which joins with anything) and
``error`` (an expression already reported, so it causes no second error).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from dsh_policy.cmdline.lazy_regex import lazy_compile

Kind: TypeAlias = Literal[
    "int", "uint", "double", "bool", "string", "bytes", "null_type", "timestamp", "duration",
    "type", "list", "map", "record", "dyn", "param", "never", "error",
]  # fmt: skip

NUMERIC_KINDS = frozenset({"int", "uint", "double"})
_LENIENT_KINDS = frozenset({"dyn", "error", "never"})


@dataclass(frozen=True, slots=True)
class CelType:
    """A CEL type. ``args`` are the element type of a list, key and value of a map; ``name`` is a
    type parameter's letter or a record's display name; ``fields`` a record's known keys."""

    kind: Kind
    args: tuple[CelType, ...] = ()
    name: str = ""
    fields: tuple[tuple[str, CelType], ...] = ()
    _index: dict[str, CelType] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if self.fields and not self._index:
            self._index.update(self.fields)

    def field(self, name: str) -> CelType | None:
        """A record's field type (None when the record has no such key)."""
        return self._index.get(name)

    @property
    def field_names(self) -> tuple[str, ...]:
        """A record's keys, in declaration order."""
        return tuple(name for name, _ in self.fields)

    @property
    def lenient(self) -> bool:
        """``dyn``, ``never`` or ``error``: the checker cannot or need not say more."""
        return self.kind in _LENIENT_KINDS

    @property
    def numeric(self) -> bool:
        """int, uint or double."""
        return self.kind in NUMERIC_KINDS

    @property
    def element(self) -> CelType:
        """A list's element type (``dyn`` for anything else)."""
        return self.args[0] if self.kind == "list" else DYN

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list({self.args[0]})"
        if self.kind == "map":
            return f"map({self.args[0]}, {self.args[1]})"
        if self.kind == "record":
            return "map(string, dyn)"
        if self.kind == "param":
            return self.name
        return self.kind


INT = CelType("int")
UINT = CelType("uint")
DOUBLE = CelType("double")
BOOL = CelType("bool")
STRING = CelType("string")
BYTES = CelType("bytes")
NULL = CelType("null_type")
TIMESTAMP = CelType("timestamp")
DURATION = CelType("duration")
TYPE = CelType("type")
DYN = CelType("dyn")
NEVER = CelType("never")
ERROR = CelType("error")

_PRIMITIVES: Mapping[str, CelType] = {
    t.kind: t for t in (INT, UINT, DOUBLE, BOOL, STRING, BYTES, NULL, TIMESTAMP, DURATION, TYPE, DYN)
}
_ALIASES: Mapping[str, CelType] = {
    "google.protobuf.Timestamp": TIMESTAMP,
    "google.protobuf.Duration": DURATION,
    "null": NULL,
}


def list_of(element: CelType) -> CelType:
    """``list(element)``."""
    return CelType("list", (element,))


def map_of(key: CelType, value: CelType) -> CelType:
    """``map(key, value)``."""
    return CelType("map", (key, value))


def record(name: str, fields: Iterable[tuple[str, CelType]]) -> CelType:
    """A map with known string keys (``tool``, ``result``, a pack's ``params``)."""
    return CelType("record", (), name, tuple(fields))


def type_param(name: str) -> CelType:
    """A type parameter of a signature (one capital letter)."""
    return CelType("param", (), name)


# -- notation ------------------------------------------------------------------------------------

_TOKEN = lazy_compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_.]*)|(\S))")


class TypeNotationError(ValueError):
    """A type or signature written wrongly in a declaration (a bug in our tables, not user input)."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = [m.group(1) or m.group(2) for m in _TOKEN.finditer(text) if m.group(1) or m.group(2)]
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise TypeNotationError(f"{self.text!r}: expected {expected or 'more'} at token {self.at}")
        self.at += 1
        return token

    def type(self) -> CelType:
        name = self.take()
        if name in ("list", "map") and self.peek() == "(":
            self.take("(")
            first = self.type()
            if name == "list":
                self.take(")")
                return list_of(first)
            self.take(",")
            second = self.type()
            self.take(")")
            return map_of(first, second)
        if len(name) == 1 and name.isupper():
            return type_param(name)
        found = _PRIMITIVES.get(name) or _ALIASES.get(name)
        if found is None:
            raise TypeNotationError(f"{self.text!r}: unknown type {name!r}")
        return found

    def done(self) -> None:
        if self.peek() is not None:
            raise TypeNotationError(f"{self.text!r}: unexpected {self.peek()!r}")


def parse_type(notation: str) -> CelType:
    """``"list(map(string, dyn))"`` -> its :class:`CelType` (capital letters are type parameters)."""
    reader = _Reader(notation)
    parsed = reader.type()
    reader.done()
    return parsed


@dataclass(frozen=True, slots=True)
class Overload:
    """One overload of a function: parameter types (the receiver first for a method), result."""

    name: str
    params: tuple[CelType, ...]
    result: CelType
    member: bool

    def __str__(self) -> str:
        if self.member:
            receiver, *rest = self.params
            return f"{receiver}.{self.name}({', '.join(map(str, rest))}) -> {self.result}"
        return f"{self.name}({', '.join(map(str, self.params))}) -> {self.result}"


def parse_signature(name: str, notation: str) -> Overload:
    """``"path.within(string, string) -> bool"`` (a function) or ``"string.contains(string) ->
    bool"`` (a method of its receiver's type) -> an :class:`Overload` of ``name``."""
    text = notation.strip()
    member = not text.startswith(name + "(")
    receiver: CelType | None = None
    if member:
        head, dot, rest = text.partition("." + name + "(")
        if not dot:
            raise TypeNotationError(f"{notation!r} does not declare {name!r}")
        receiver = parse_type(head)
        text = "(" + rest
    else:
        text = text[len(name) :]
    arguments, arrow, result = text.rpartition("->")
    if not arrow:
        raise TypeNotationError(f"{notation!r}: missing '-> result'")
    reader = _Reader(arguments)
    reader.take("(")
    params: list[CelType] = [receiver] if receiver is not None else []
    while reader.peek() != ")":
        params.append(reader.type())
        if reader.peek() == ",":
            reader.take(",")
    reader.take(")")
    reader.done()
    return Overload(name, tuple(params), parse_type(result), member)


# -- values --------------------------------------------------------------------------------------

_INT64 = (-(2**63), 2**63)


def type_of_value(value: Any) -> CelType:
    """The CEL type of a plain value (a pack param as written in YAML): ``5`` is int, ``[a, b]``
    list(string), ``{}`` map with unknown key and value types; ``null`` is dyn (a param declared
    ``null`` is a placeholder any override may fill)."""
    if value is None:
        return DYN
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        if _INT64[0] <= value < _INT64[1]:
            return INT
        return UINT if 0 <= value < 2**64 else DOUBLE
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, str):
        return STRING
    if isinstance(value, bytes):
        return BYTES
    if isinstance(value, datetime.datetime):
        return TIMESTAMP
    if isinstance(value, datetime.timedelta):
        return DURATION
    if isinstance(value, Mapping):
        return map_of(
            join_all(type_of_value(k) for k in value), join_all(type_of_value(v) for v in value.values())
        )
    if isinstance(value, list | tuple):
        return list_of(join_all(type_of_value(item) for item in value))
    return DYN


# -- relations -----------------------------------------------------------------------------------


def join(a: CelType, b: CelType) -> CelType:
    """The most specific type both fit: for list literals, map literals and ``?:`` branches.
    Unrelated types join to ``dyn`` (CEL allows heterogeneous lists); ``never`` joins as the other."""
    if a == b:
        return a
    if a.kind == "never":
        return b
    if b.kind == "never":
        return a
    if a.lenient or b.lenient:
        return DYN
    if a.kind == b.kind == "list":
        return list_of(join(a.args[0], b.args[0]))
    if a.kind == b.kind == "map":
        return map_of(join(a.args[0], b.args[0]), join(a.args[1], b.args[1]))
    return DYN


def join_all(types: Iterable[CelType]) -> CelType:
    """:func:`join` of every type (``never`` for none)."""
    joined = NEVER
    for item in types:
        joined = join(joined, item)
    return joined


Bindings: TypeAlias = dict[str, CelType]


def unify(expected: CelType, actual: CelType, bindings: Bindings) -> bool:
    """Whether a value of type ``actual`` fits a parameter of type ``expected``, binding the
    parameter's type variables in ``bindings`` (a variable bound twice must bind to types that
    fit each other; it keeps the more general one). ``dyn`` fits everything, both ways."""
    if expected.kind == "param":
        bound = bindings.get(expected.name)
        if bound is None:
            bindings[expected.name] = actual
            return True
        if unify(bound, actual, {}) or unify(actual, bound, {}):
            bindings[expected.name] = join(bound, actual)
            return True
        return False
    if expected.kind == "dyn" or actual.lenient:
        return True
    if expected.kind == "list":
        return actual.kind == "list" and unify(expected.args[0], actual.args[0], bindings)
    if expected.kind == "map":
        if actual.kind == "record":
            return unify(expected.args[0], STRING, bindings) and unify(expected.args[1], DYN, bindings)
        return (
            actual.kind == "map"
            and unify(expected.args[0], actual.args[0], bindings)
            and unify(expected.args[1], actual.args[1], bindings)
        )
    return expected.kind == actual.kind


def substitute(t: CelType, bindings: Bindings) -> CelType:
    """``t`` with its type variables replaced by their bindings (unbound ones by ``dyn``)."""
    if t.kind == "param":
        found = bindings.get(t.name, DYN)
        return DYN if found.kind == "never" else found
    if t.kind in ("list", "map"):
        return CelType(t.kind, tuple(substitute(arg, bindings) for arg in t.args))
    return t


def comparable(a: CelType, b: CelType) -> bool:
    """Whether ``a == b`` can ever be true: same kind (element-wise for lists and maps), numbers of
    any kind (CEL compares them by value), ``null`` with ``null``, or something dynamic."""
    if a.lenient or b.lenient:
        return True
    if a.numeric and b.numeric:
        return True
    if a.kind in ("list", "map") and a.kind == b.kind:
        return all(comparable(x, y) for x, y in zip(a.args, b.args, strict=True))
    if {a.kind, b.kind} == {"map", "record"}:
        keys = a.args[0] if a.kind == "map" else b.args[0]
        return comparable(keys, STRING)
    return a.kind == b.kind


_ORDERED_KINDS = frozenset({"string", "bytes", "bool", "timestamp", "duration"})


def orderable(a: CelType, b: CelType) -> bool:
    """Whether ``a < b`` has an overload: numbers of any kind, or two strings, bytes, bools,
    timestamps or durations."""
    if a.lenient or b.lenient:
        return (a.lenient or a.numeric or a.kind in _ORDERED_KINDS) and (
            b.lenient or b.numeric or b.kind in _ORDERED_KINDS
        )
    if a.numeric and b.numeric:
        return True
    return a.kind == b.kind and a.kind in _ORDERED_KINDS


def from_notation(value: Any, name: str = "") -> CelType:
    """A stage-table type (notation string, mapping of field types, or a ``ListOf``) as a
    :class:`CelType`; mappings become records named ``name``."""
    if isinstance(value, str):
        return parse_type(value)
    if isinstance(value, Mapping):
        return record(
            name,
            ((key, from_notation(item, f"{name}.{key}" if name else key)) for key, item in value.items()),
        )
    element = getattr(value, "element", None)
    if element is not None:
        return list_of(from_notation(element, name))
    raise TypeNotationError(f"not a type: {value!r}")
