"""The functions the type checker knows: CEL's standard overloads and the gateway's helpers.

Standard overloads follow cel-spec's langdef ("Functions", "Overloads") as cel-go's checker
declares them, in the notation of :mod:`.types`. Where our engines deliberately go beyond the
spec the checker follows the engines: numbers of different kinds compare by value (``1 < 1.5``,
``i == 1u``), lists of different element types concatenate, and values of different types are
simply unequal at run time, which the checker still reports (``params.n == "5"`` can never hold).
Those relational rules live in :mod:`.checker`; everything else is a table here.

Helper overloads come from :data:`~dsh_policy.policy.cel.functions.CEL_SIGNATURES`, the one place
they are declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from dsh_policy.policy.cel.functions import CEL_SIGNATURES
from dsh_policy.policy.cel.types import Overload, parse_signature

_NUMBERS = ("int", "uint", "double")
_TIME_PARTS = (
    "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getHours", "getMinutes", "getSeconds", "getMilliseconds",
)  # fmt: skip
_DURATION_PARTS = ("getHours", "getMinutes", "getSeconds", "getMilliseconds")


def _standard() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {
        "_+_": [
            *(f"_+_({t}, {t}) -> {t}" for t in (*_NUMBERS, "string", "bytes", "list(A)")),
            "_+_(timestamp, duration) -> timestamp",
            "_+_(duration, timestamp) -> timestamp",
            "_+_(duration, duration) -> duration",
        ],
        "_-_": [
            *(f"_-_({t}, {t}) -> {t}" for t in _NUMBERS),
            "_-_(timestamp, timestamp) -> duration",
            "_-_(timestamp, duration) -> timestamp",
            "_-_(duration, duration) -> duration",
        ],
        "_*_": [f"_*_({t}, {t}) -> {t}" for t in _NUMBERS],
        "_/_": [f"_/_({t}, {t}) -> {t}" for t in _NUMBERS],
        "_%_": [f"_%_({t}, {t}) -> {t}" for t in ("int", "uint")],
        "-_": ["-_(int) -> int", "-_(double) -> double"],
        "!_": ["!_(bool) -> bool"],
        "_&&_": ["_&&_(bool, bool) -> bool"],
        "_||_": ["_||_(bool, bool) -> bool"],
        "size": [
            *(f"size({t}) -> int" for t in ("string", "bytes", "list(A)", "map(K, V)")),
            *(f"{t}.size() -> int" for t in ("string", "bytes", "list(A)", "map(K, V)")),
        ],
        "contains": ["string.contains(string) -> bool"],
        "startsWith": ["string.startsWith(string) -> bool"],
        "endsWith": ["string.endsWith(string) -> bool"],
        "int": [f"int({t}) -> int" for t in ("int", "uint", "double", "string", "timestamp")],
        "uint": [f"uint({t}) -> uint" for t in ("int", "uint", "double", "string")],
        "double": [f"double({t}) -> double" for t in ("int", "uint", "double", "string")],
        "string": [
            f"string({t}) -> string"
            for t in ("int", "uint", "double", "bool", "string", "bytes", "timestamp", "duration")
        ],
        "bytes": ["bytes(string) -> bytes", "bytes(bytes) -> bytes"],
        "bool": ["bool(bool) -> bool", "bool(string) -> bool"],
        "timestamp": [
            "timestamp(string) -> timestamp",
            "timestamp(timestamp) -> timestamp",
            "timestamp(int) -> timestamp",
        ],
        "duration": ["duration(string) -> duration", "duration(duration) -> duration"],
        "dyn": ["dyn(A) -> dyn"],
        "type": ["type(A) -> type"],
    }
    for part in _TIME_PARTS:
        table[part] = [f"timestamp.{part}() -> int", f"timestamp.{part}(string) -> int"]
    for part in _DURATION_PARTS:
        table[part].append(f"duration.{part}() -> int")
    return table


def _declarations() -> Mapping[str, tuple[Overload, ...]]:
    table: dict[str, list[str]] = _standard()
    for name, signatures in CEL_SIGNATURES.items():
        table.setdefault(name, []).extend(signatures)
    return MappingProxyType(
        {name: tuple(parse_signature(name, text) for text in texts) for name, texts in table.items()}
    )


FUNCTIONS: Mapping[str, tuple[Overload, ...]] = _declarations()
"""Every function and operator the checker resolves, by CEL name (operators as ``_+_``)."""

OPERATOR_SYMBOLS: Mapping[str, str] = MappingProxyType(
    {
        "_+_": "+",
        "_-_": "-",
        "_*_": "*",
        "_/_": "/",
        "_%_": "%",
        "-_": "-",
        "!_": "!",
        "_&&_": "&&",
        "_||_": "||",
    }
)
"""How an operator is written, for messages."""
