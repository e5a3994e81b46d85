"""How much text an input holds, counted only as far as a limit.

The decider refuses to evaluate (or to record) more than ``max_scan_bytes`` of text: string
operations in a rule cost time and memory in proportion to their input. Counting stops as soon as
the limit is passed, so measuring a huge input costs no more than the limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def utf8_size(text: str) -> int:
    """The UTF-8 length of ``text`` (lone surrogates count as their 3 bytes)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def strings_size(value: Any, limit: int) -> int:
    """UTF-8 bytes of the strings inside a JSON value, counted until ``limit`` is passed.

    Exact types are tested before the ``Mapping`` ABC: this runs on every tool call a rule reads,
    and most arguments are a plain dict of strings, for which an ABC check cost more than the
    counting."""
    total = 0
    if type(value) is dict:  # the usual arguments: a flat object of ASCII strings, counted inline
        for item in value.values():
            if type(item) is not str or not item.isascii():
                break
            total += len(item)
        else:
            return total
        total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += len(item) if item.isascii() else utf8_size(item)
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is int or kind is bool or kind is float or item is None:
            continue
        elif isinstance(item, str):
            total += utf8_size(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return total


def mib(size: int) -> str:
    """``size`` bytes in MiB, for messages."""
    return f"{size / (1 << 20):g} MiB"
