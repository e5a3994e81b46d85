"""The key a compiled policy is kept under: a digest of everything that shapes it.

That is every byte of the packs (and their paths, which errors and the digest name), the param
overrides, the engine asked for (and whether the native runtime could be made), shadow mode,
every byte of this package's code and data that loading reads (``policy``, ``cmdline``,
``core``: the parser, checker, compiler, helpers and the advisory snapshot; hashed only when
the files' stat fingerprint changed, see :func:`code_digest`), the interpreter's
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
FORMAT = 4
"""The entry format; bumped when :mod:`.codec` changes what it writes."""

_CODE: list[str] = []


def code_digest() -> str:
    """SHA-256 of :data:`CODE_FOLDERS` (names and bytes), the interpreter's version and the
    installed distributions' names; computed once per process.

    Hashing the code's bytes (about 2 MB, 12-14 ms) is done only when its stat fingerprint
    (:func:`code_stamp`) differs from the one the cache folder recorded beside the digest it
    had (:func:`.folder.read_code_digest`), as CPython trusts a ``.pyc`` whose source's stat
    still matches. The content is what decides; the fingerprint only says it cannot have changed:
    an edit, a copy or a reinstall gives a file another size, modification time, change time or
    inode, and the change time (``st_ctime``) is set by the kernel on every write and cannot be
    set back by a program. The record is kept and checked like an entry (a private folder and
    file of this user), so only whoever could already write an entry could forge it; the code
    digest guards against a kept policy outliving the code that built it, not against an
    attacker, since whoever can write the package's code decides without any cache."""
    if _CODE:
        return _CODE[0]
    import dsh_policy
    from dsh_policy.policy.policy_cache.folder import read_code_digest, write_code_digest

    root = os.path.dirname(os.path.abspath(dsh_policy.__file__))
    files = _code_files(root)
    stamp = code_stamp(files)
    content = read_code_digest(root, stamp)
    if content is None:
        content = _content_digest(root, files)
        write_code_digest(root, stamp, content)
    digest = hashlib.sha256()
    digest.update(f"{FORMAT}\0{sys.version}\0{content}\0".encode())
    for site in sorted(filter(None, {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")})):
        try:
            names = sorted(name for name in os.listdir(site) if name.endswith(".dist-info"))
        except OSError:
            continue
        digest.update("\0".join(names).encode())
    _CODE.append(digest.hexdigest())
    return _CODE[0]


def _code_files(root: str) -> list[tuple[str, os.stat_result]]:
    """Every file of :data:`CODE_FOLDERS` (not bytecode) with its ``lstat``, sorted by path."""
    found: list[tuple[str, os.stat_result]] = []
    pending = [os.path.join(root, folder) for folder in CODE_FOLDERS]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        pending.append(entry.path)
                elif not entry.name.endswith((".pyc", ".pyo")):
                    found.append((entry.path, entry.stat(follow_symlinks=False)))
    found.sort(key=lambda item: item[0])
    return found


def code_stamp(files: list[tuple[str, os.stat_result]]) -> str:
    """The stat fingerprint of the code files: every path with its size, modification and change
    times (nanoseconds), inode and device."""
    digest = hashlib.sha256()
    for path, info in files:
        digest.update(
            f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{info.st_ino}\0{info.st_dev}\n".encode()
        )
    return digest.hexdigest()


def _content_digest(root: str, files: list[tuple[str, os.stat_result]]) -> str:
    """SHA-256 over every code file's path (relative to ``root``) and bytes."""
    digest = hashlib.sha256()
    for path, _ in files:
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(f"{os.path.relpath(path, root)}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


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
