"""CEL literal tokens (as cel-python's lexer cuts them) decoded into values, per the CEL spec:
int64/uint64 ranges, hexadecimal, raw and triple-quoted strings, and every escape the spec
defines (``\\?``, ``\\```, upper-case ``\\X41``, octal ``\\101``, ``\\u``/``\\U``), with
``\\x``/octal meaning a code point in a string and a byte in a bytes literal."""

from __future__ import annotations

from typing import Any, Final

from dsh_policy.policy.cel.closure_values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint


class LiteralError(ValueError):
    """A literal the spec does not accept (out of range, bad escape)."""


_SIMPLE_ESCAPES: Final = {
    "\\": "\\", "?": "?", '"': '"', "'": "'", "`": "`",
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
}  # fmt: skip


def decode_literal(kind: str, text: str) -> Any:
    """The value of a literal token of lexer type ``kind``."""
    if kind == "INT_LIT":
        return _integer(text, INT64_MIN, INT64_MAX)
    if kind == "UINT_LIT":
        return Uint(_integer(text[:-1], 0, UINT64_MAX))
    if kind == "FLOAT_LIT":
        return float(text)
    if kind == "BOOL_LIT":
        return text == "true"
    if kind == "NULL_LIT":
        return None
    if kind in ("STRING_LIT", "MLSTRING_LIT"):
        return _quoted(text, as_bytes=False)
    if kind == "BYTES_LIT":
        return _quoted(text[1:], as_bytes=True)
    raise LiteralError(f"unknown literal {text!r}")


def _integer(text: str, low: int, high: int) -> int:
    negative = text.startswith("-")
    body = text[1:] if negative else text
    value = int(body[2:], 16) if body[:2].lower() == "0x" else int(body, 10)
    value = -value if negative else value
    if not low <= value <= high:
        raise LiteralError(f"integer literal {text} out of range")
    return value


def _quoted(text: str, as_bytes: bool) -> Any:
    raw = text[:1] in ("r", "R")
    if raw:
        text = text[1:]
    quote = text[:3] if text[:3] in ('"""', "'''") else text[:1]
    body = text[len(quote) : len(text) - len(quote)]
    if raw:
        return body.encode("utf-8") if as_bytes else body
    return _unescape(body, as_bytes)


def _unescape(body: str, as_bytes: bool) -> Any:
    out_bytes = bytearray()
    out_text: list[str] = []
    i = 0
    n = len(body)

    def emit_code_point(code: int) -> None:
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise LiteralError(f"invalid code point U+{code:X} in literal")
        if as_bytes:
            out_bytes.extend(chr(code).encode("utf-8"))
        else:
            out_text.append(chr(code))

    def emit_byte(value: int) -> None:
        if as_bytes:
            out_bytes.append(value)
        else:
            emit_code_point(value)

    while i < n:
        ch = body[i]
        if ch != "\\":
            if as_bytes:
                out_bytes.extend(ch.encode("utf-8", "surrogatepass"))
            else:
                out_text.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise LiteralError("literal ends with a backslash")
        escape = body[i + 1]
        if escape in _SIMPLE_ESCAPES:
            emit_byte(ord(_SIMPLE_ESCAPES[escape]))
            i += 2
        elif escape in "xX":
            digits = body[i + 2 : i + 4]
            if len(digits) != 2 or not _is_hex(digits):
                raise LiteralError(f"invalid escape \\{escape}{digits}")
            emit_byte(int(digits, 16))
            i += 4
        elif escape in "uU":
            width = 4 if escape == "u" else 8
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width or not _is_hex(digits):
                raise LiteralError(f"invalid escape \\{escape}{digits}")
            emit_code_point(int(digits, 16))
            i += 2 + width
        elif escape in "0123":
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or any(d not in "01234567" for d in digits):
                raise LiteralError(f"invalid octal escape \\{digits}")
            emit_byte(int(digits, 8))
            i += 4
        else:
            raise LiteralError(f"invalid escape \\{escape}")
    return bytes(out_bytes) if as_bytes else "".join(out_text)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)
