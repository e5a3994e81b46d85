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
from typing import Any

_FILE_HEADER = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
_MOVE_HEADER = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)


def patch_paths(patch: str) -> list[str]:
    """Every file an ``apply_patch`` patch adds, updates, deletes or moves to, in patch order."""
    if "*** " not in patch:
        return []
    found = [(m.start(), m.group(1)) for m in _FILE_HEADER.finditer(patch)]
    found += [(m.start(), m.group(1)) for m in _MOVE_HEADER.finditer(patch)]
    paths: list[str] = []
    for _, path in sorted(found):
        if path not in paths:
            paths.append(path)
    return paths


def with_patch_paths(tool: str, args: Any) -> Any:
    """``args`` of an ``apply_patch`` call given as a patch alone, with the patch's files as
    ``paths``; every other call's arguments unchanged (the same object)."""
    if tool != "apply_patch" or not isinstance(args, Mapping) or "paths" in args:
        return args
    patch = args.get("patch")
    if not isinstance(patch, str):
        return args
    return {**args, "paths": patch_paths(patch)}
