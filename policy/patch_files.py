"""The files an ``apply_patch`` patch touches, read from the patch text itself.

A patch names its files in its own headers (``*** Update File: src/x.py``). The hook adapters
have always listed them as ``args.paths``; a call that reaches the gateway another way (an MCP
proxy, a framework adapter, ``dsh-policy check``) may carry only the patch. Every rule and the
self-protection guard judge a patch by ``args.paths``, so a patch without them would be judged as
writing nowhere (and refused as a write without a path); the event fills them in from the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from dsh_policy.cmdline.lazy_regex import lazy_compile

_FILE_HEADER: Final = lazy_compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
_MOVE_HEADER: Final = lazy_compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_UNIFIED_FILE: Final = lazy_compile(r"^\+\+\+ (?:b/)?(\S.*?)\s*$", re.MULTILINE)


def patch_paths(patch: str) -> list[str]:
    """Every file a ``*** Begin Patch`` patch adds, updates, deletes or moves to (or, for a
    unified diff, its ``+++`` targets), in patch order."""
    found: list[tuple[int, str]] = []
    if "*** " in patch:
        found = [(m.start(), m.group(1)) for m in _FILE_HEADER.finditer(patch)]
        found += [(m.start(), m.group(1)) for m in _MOVE_HEADER.finditer(patch)]
    if not found and "+++ " in patch:
        found = [(m.start(), m.group(1)) for m in _UNIFIED_FILE.finditer(patch) if m.group(1) != "/dev/null"]
    paths: list[str] = []
    for _, path in sorted(found):
        if path not in paths:
            paths.append(path)
    return paths


_ANY_HEADER: Final = lazy_compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)


def added_texts(patch: str) -> list[tuple[str, str]]:
    """``(path, text)`` for each file a ``*** Begin Patch`` patch adds or updates: the lines it
    adds (``+`` lines, without the ``+``), in order; a deleted file adds nothing. A unified diff
    is not read here."""
    found: list[tuple[str, str]] = []
    headers = list(_ANY_HEADER.finditer(patch)) if "*** " in patch else []
    for index, header in enumerate(headers):
        if header.group(1) == "Delete":
            continue
        end = headers[index + 1].start() if index + 1 < len(headers) else len(patch)
        body = patch[header.end() : end]
        added = [line[1:] for line in body.splitlines() if line.startswith("+")]
        if added:
            found.append((header.group(2), "\n".join(added) + "\n"))
    return found


def with_patch_paths(tool: str, args: Any) -> Any:
    """``args`` of an ``apply_patch`` call given as a patch alone, with the patch's files as
    ``paths``; every other call's arguments unchanged (the same object)."""
    if tool != "apply_patch" or not isinstance(args, Mapping) or "paths" in args:
        return args
    patch = args.get("patch")
    if not isinstance(patch, str):
        return args
    return {**args, "paths": patch_paths(patch)}
