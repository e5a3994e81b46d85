"""The key a compiled policy is kept under: a digest of everything that shapes it.

That is every byte of the packs (and their paths, which errors and the digest name), the param
overrides, the engine asked for (and whether the native runtime could be made), shadow mode,
every byte of this package's code and data that loading reads (``policy``, ``cmdline``,
``core``: the parser, checker, compiler, helpers and the advisory snapshot), the interpreter's
version and the versions of the installed distributions (their ``.dist-info`` names). A change
to any of them is a different key, so a kept policy is never one that a fresh build would not
make.

Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from typing import Any

#: The package folders whose bytes are part of every key (relative to the package root).
CODE_FOLDERS = ("policy", "cmdline", "core")
FORMAT = 2
"""The entry format; bumped when :mod:`.codec` changes what it writes."""

_CODE: list[str] = []


def code_digest() -> str:
    """SHA-256 over every file of :data:`CODE_FOLDERS` (names and bytes) and the installed
    distributions' names; computed once per process (about 5 ms for 2 MB)."""
    if _CODE:
        return _CODE[0]
    import dsh_policy

    root = os.path.dirname(os.path.abspath(dsh_policy.__file__))
    digest = hashlib.sha256()
    digest.update(f"{FORMAT}\0{sys.version}\0".encode())
    for folder in CODE_FOLDERS:
        for current, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(name for name in dirs if name != "__pycache__")
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(current, name)
                with open(path, "rb") as handle:
                    data = handle.read()
                digest.update(f"{os.path.relpath(path, root)}\0{len(data)}\0".encode())
                digest.update(data)
    for site in sorted(filter(None, {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")})):
        try:
            names = sorted(name for name in os.listdir(site) if name.endswith(".dist-info"))
        except OSError:
            continue
        digest.update("\0".join(names).encode())
    _CODE.append(digest.hexdigest())
    return _CODE[0]


def policy_key(
    paths: Sequence[str],
    contents: Sequence[bytes],
    *,
    params: Mapping[str, Any],
    param_origins: Mapping[str, Any],
    engine: str,
    native: bool,
    shadow: bool,
) -> str | None:
    """The key of one load, or None when some input has no stable text (then nothing is kept)."""
    try:
        import orjson

        options = orjson.dumps(
            {"params": params, "engine": engine, "native": native, "shadow": shadow},
            option=orjson.OPT_SORT_KEYS,
        )
    except TypeError:
        return None
    digest = hashlib.sha256()
    digest.update(code_digest().encode())
    digest.update(options)
    digest.update(repr(sorted((str(k), repr(v)) for k, v in param_origins.items())).encode())
    for path, content in zip(paths, contents, strict=True):
        digest.update(f"\0{path}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()
