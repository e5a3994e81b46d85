"""CEL's strings extension (cel-go ``ext.Strings``) for the closure compiler: ``charAt``,
``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``, ``split``,
``substring``, ``trim``, ``join``, ``reverse``, ``format`` and ``strings.quote``. Indexes count
code points, as CEL's ``size`` does; a wrong argument type is ``no such overload``."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, Final

from dsh_policy.policy.cel.closure_conversions import format_double, to_string
from dsh_policy.policy.cel.closure_values import CelError, CelType, Uint, is_list, is_map, overload_error


def _string(function: str, value: Any, *args: Any) -> str:
    if type(value) is not str:
        raise overload_error(function, value, *args)
    return value


def _int(function: str, value: Any, *args: Any) -> int:
    if type(value) is not int:
        raise overload_error(function, *args)
    return value


def _out_of_range(position: int) -> CelError:
    return CelError(f"index out of range: {position}", "index_out_of_range")


def char_at(s: Any, i: Any = None, *extra: Any) -> str:
    """``s.charAt(i)``: the code point at ``i`` (``""`` at the end)."""
    if extra or i is None:
        raise overload_error("charAt", s, i, *extra)
    text = _string("charAt", s, i)
    position = _int("charAt", i, s, i)
    if not 0 <= position <= len(text):
        raise _out_of_range(position)
    return text[position : position + 1]


def index_of(s: Any, sub: Any = None, offset: Any = 0, *extra: Any) -> int:
    """``s.indexOf(sub[, offset])``: the first code point index of ``sub``, or -1."""
    if extra or sub is None:
        raise overload_error("indexOf", s, sub, offset, *extra)
    text = _string("indexOf", s, sub)
    needle = _string("indexOf", sub, s, sub)
    start = _int("indexOf", offset, s, sub, offset)
    if not 0 <= start <= len(text):
        raise _out_of_range(start)
    return text.find(needle, start)


def last_index_of(s: Any, sub: Any = None, offset: Any = None, *extra: Any) -> int:
    """``s.lastIndexOf(sub[, offset])``: the last index of ``sub`` starting at or before
    ``offset``, or -1."""
    if extra or sub is None:
        raise overload_error("lastIndexOf", s, sub, *extra)
    text = _string("lastIndexOf", s, sub)
    needle = _string("lastIndexOf", sub, s, sub)
    end = len(text) if offset is None else _int("lastIndexOf", offset, s, sub, offset)
    if not 0 <= end <= len(text):
        raise _out_of_range(end)
    return text.rfind(needle, 0, end + len(needle))


def _ascii_case(function: str, upper: bool) -> Callable[..., str]:
    table = {
        ord(c): ord(c.upper() if upper else c.lower())
        for c in ("abcdefghijklmnopqrstuvwxyz" if upper else "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    }

    def convert(s: Any, *extra: Any) -> str:
        if extra:
            raise overload_error(function, s, *extra)
        return _string(function, s).translate(table)

    return convert


def replace(s: Any, old: Any = None, new: Any = None, n: Any = -1, *extra: Any) -> str:
    """``s.replace(old, new[, n])``: ``n`` < 0 replaces every occurrence."""
    if extra or old is None or new is None:
        raise overload_error("replace", s, old, new, *extra)
    text = _string("replace", s, old, new)
    _string("replace", old, s, old, new)
    _string("replace", new, s, old, new)
    count = _int("replace", n, s, old, new, n)
    return text.replace(old, new, count if count >= 0 else -1)


def split(s: Any, sep: Any = None, n: Any = -1, *extra: Any) -> list[str]:
    """``s.split(sep[, n])``: at most ``n`` parts (``n`` < 0: all; 0: none); an empty
    separator splits into code points."""
    if extra or sep is None:
        raise overload_error("split", s, sep, *extra)
    text = _string("split", s, sep)
    separator = _string("split", sep, s, sep)
    limit = _int("split", n, s, sep, n)
    if limit == 0:
        return []
    if separator == "":
        chars = list(text)
        if limit > 0 and len(chars) > limit:
            return [*chars[: limit - 1], "".join(chars[limit - 1 :])]
        return chars
    return text.split(separator, limit - 1 if limit > 0 else -1)


def substring(s: Any, start: Any = None, end: Any = None, *extra: Any) -> str:
    """``s.substring(start[, end])`` in code points."""
    if extra or start is None:
        raise overload_error("substring", s, start, *extra)
    text = _string("substring", s, start)
    begin = _int("substring", start, s, start)
    stop = len(text) if end is None else _int("substring", end, s, start, end)
    if not 0 <= begin <= len(text):
        raise _out_of_range(begin)
    if not 0 <= stop <= len(text):
        raise _out_of_range(stop)
    if begin > stop:
        raise CelError(f"invalid substring range. start: {begin}, end: {stop}", "invalid_argument")
    return text[begin:stop]


_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""What Go's ``unicode.IsSpace`` calls white space (cel-go trims with it)."""


def trim(s: Any, *extra: Any) -> str:
    """``s.trim()``: leading and trailing Unicode white space removed."""
    if extra:
        raise overload_error("trim", s, *extra)
    return _string("trim", s).strip(_SPACE)


def join(items: Any, sep: Any = "", *extra: Any) -> str:
    """``list.join([sep])`` over a list of strings."""
    if extra or not is_list(items) or type(sep) is not str:
        raise overload_error("join", items, sep, *extra)
    for item in items:
        if type(item) is not str:
            raise overload_error("join", items, sep)
    return sep.join(items)


def reverse(s: Any, *extra: Any) -> str:
    """``s.reverse()``: the code points in reverse order."""
    if extra:
        raise overload_error("reverse", s, *extra)
    return _string("reverse", s)[::-1]


_QUOTE_ESCAPES: Final = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}  # fmt: skip


def quote(s: Any, *extra: Any) -> str:
    """``strings.quote(s)``: ``s`` in double quotes with escapes for quotes, backslashes and
    control characters; printable Unicode is kept."""
    if extra:
        raise overload_error("strings.quote", s, *extra)
    text = _string("strings.quote", s)
    out = ['"']
    for ch in text:
        escaped = _QUOTE_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) > 0xFF else f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


# -- format ------------------------------------------------------------------------------------


def _as_text(value: Any) -> str:
    """``%s`` of one value, as cel-go prints it."""
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return format_double(value)
    if kind is bytes:
        return value.decode("utf-8", "replace")
    if kind is CelType:
        return value.name
    if is_list(value):
        return "[" + ", ".join(_as_text(item) for item in value) + "]"
    if is_map(value):
        entries = sorted(((_as_text(k), _as_text(v)) for k, v in value.items()), key=lambda e: e[0])
        return "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"
    if isinstance(value, datetime.datetime | datetime.timedelta):
        return to_string(value)
    return to_string(value)


def _special_double(value: Any) -> str | None:
    if type(value) is float and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return None


def _fixed(value: Any, precision: int) -> str:
    special = _special_double(value)
    if special is not None:
        return special
    if type(value) not in (int, float, Uint):
        raise CelError(
            "error during formatting: fixed-point clause can only be used on doubles", "invalid_argument"
        )
    quantum = Decimal(1).scaleb(-precision)
    return str(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_EVEN))


def _scientific(value: Any, precision: int) -> str:
    special = _special_double(value)
    if special is not None:
        return special
    if type(value) not in (int, float, Uint):
        raise CelError(
            "error during formatting: scientific clause can only be used on doubles", "invalid_argument"
        )
    return f"{float(value):.{precision}e}"


def _integer_clause(value: Any, verb: str) -> str:
    kind = type(value)
    if verb == "d":
        special = _special_double(value)
        if special is not None:
            return special
        if kind in (int, Uint):
            return str(int(value))
        raise CelError(
            "error during formatting: decimal clause can only be used on integers", "invalid_argument"
        )
    if verb == "b":
        if kind in (int, Uint, bool):
            number = int(value)
            return ("-" if number < 0 else "") + format(abs(number), "b")
        raise CelError(
            "error during formatting: only integers and bools can be formatted as binary", "invalid_argument"
        )
    if verb == "o":
        if kind in (int, Uint):
            number = int(value)
            return ("-" if number < 0 else "") + format(abs(number), "o")
        raise CelError(
            "error during formatting: octal clause can only be used on integers", "invalid_argument"
        )
    upper = verb == "X"
    if kind in (int, Uint):
        number = int(value)
        text = ("-" if number < 0 else "") + format(abs(number), "x")
    elif kind is str:
        text = value.encode("utf-8").hex()
    elif kind is bytes:
        text = value.hex()
    else:
        raise CelError(
            "error during formatting: only integers, byte buffers, and strings can be formatted as hex",
            "invalid_argument",
        )
    return text.upper() if upper else text


def format_string(s: Any, args: Any = None, *extra: Any) -> str:
    """``"...".format([args])``: ``%s %d %f %e %x %X %o %b`` with an optional ``.precision``
    for ``%f``/``%e``, and ``%%``."""
    if extra or args is None or not is_list(args):
        raise overload_error("format", s, args, *extra)
    text = _string("format", s, args)
    out: list[str] = []
    i = 0
    used = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i < n and text[i] == "%":
            out.append("%")
            i += 1
            continue
        precision: int | None = None
        if i < n and text[i] == ".":
            j = i + 1
            while j < n and text[j].isdigit():
                j += 1
            precision = int(text[i + 1 : j] or "0")
            i = j
        if i >= n:
            raise CelError("could not parse formatting clause: missing verb", "invalid_argument")
        verb = text[i]
        i += 1
        if verb not in "sdfexXob":
            raise CelError(
                f'could not parse formatting clause: unrecognized formatting clause "{verb}"',
                "invalid_argument",
            )
        if used >= len(args):
            raise CelError(f"index {used} out of range", "index_out_of_range")
        value = args[used]
        used += 1
        if verb == "s":
            out.append(_as_text(value))
        elif verb == "f":
            out.append(_fixed(value, 6 if precision is None else precision))
        elif verb == "e":
            out.append(_scientific(value, 6 if precision is None else precision))
        else:
            out.append(_integer_clause(value, verb))
    return "".join(out)


METHODS: Final[Mapping[str, Callable[..., Any]]] = {
    "charAt": char_at,
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": _ascii_case("lowerAscii", upper=False),
    "upperAscii": _ascii_case("upperAscii", upper=True),
    "replace": replace,
    "split": split,
    "substring": substring,
    "trim": trim,
    "join": join,
    "reverse": reverse,
    "format": format_string,
}
"""The extension's receiver-style functions by name."""
