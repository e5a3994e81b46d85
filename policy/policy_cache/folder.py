"""Where compiled policies are kept, and the checks that decide whether a kept one may be read.

The folder is ``$DSH_POLICY_CACHE_DIR``, else ``$XDG_CACHE_HOME/dsh-policy/compiled``, else
``~/.cache/dsh-policy/compiled``; ``DSH_POLICY_COMPILE_CACHE=off`` turns the cache off. A kept
policy decides as its packs would, so whoever can write an entry can change decisions: an entry
is read only from a real folder (not a symlink) owned by this user with no group or world access,
and only when it is a regular file of this user, written by no one else (mode, one link), whose
header names the key it was looked up by and whose body matches the SHA-256 in that header.
Anything else is ignored (and, where the folder is ours, replaced by a fresh build); nothing read
here is ever executed: entries are JSON. Self-protection guards every candidate folder (an agent
of the same user must not write one), see ``self_protection.locations``.

Standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Mapping

from dsh_policy.policy.cache_folders import CACHE_DIR_VARIABLE, cache_folder

__all__ = [
    "CACHE_DIR_VARIABLE",
    "SWITCH_VARIABLE",
    "cache_enabled",
    "cache_folder",
    "entry_path",
    "read_code_digest",
    "read_entry",
    "trusted_folder",
    "write_code_digest",
    "write_entry",
]

SWITCH_VARIABLE = "DSH_POLICY_COMPILE_CACHE"
MAX_ENTRIES = 64
"""Entries kept; the oldest beyond this are removed when one is written (every edit of a pack
makes a new key, and an old one is never looked up again)."""

_HEADER_END = b"\n"


def cache_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False when ``DSH_POLICY_COMPILE_CACHE`` is ``off`` (or ``0``, ``no``, ``false``)."""
    env = os.environ if environ is None else environ
    return env.get(SWITCH_VARIABLE, "").strip().lower() not in ("off", "0", "no", "false")


def trusted_folder(*, create: bool) -> str | None:
    """The cache folder when it can be trusted (made, private, when ``create``); else None."""
    folder = cache_folder()
    if create:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    private = info.st_mode & 0o077 == 0
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or not private:
        return None
    return folder


def entry_path(folder: str, key: str) -> str:
    """The file of ``key`` in ``folder``."""
    return os.path.join(folder, f"{key}.json")


def read_entry(key: str) -> bytes | None:
    """The verified body kept under ``key``, or None (missing, foreign, damaged or not ours)."""
    folder = trusted_folder(create=False)
    if folder is None:
        return None
    data = _read_private(entry_path(folder, key))
    if data is None:
        return None
    _, _, body = data.partition(_HEADER_END)
    return body if data == entry_bytes(key, body) else None


def _read_private(path: str) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of this user that no one else may write
    (mode, one link, not a symlink); else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        foreign = info.st_uid != os.geteuid() or info.st_mode & 0o022 or info.st_nlink != 1
        if not stat.S_ISREG(info.st_mode) or foreign:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def code_record_path(folder: str, root: str) -> str:
    """The file remembering the code digest of the package installed at ``root`` (one per
    installation, so two checkouts sharing a cache folder do not overwrite each other's)."""
    return os.path.join(folder, f"code-{hashlib.sha256(root.encode()).hexdigest()[:32]}.stamp")


def code_record(stamp: str, digest: str) -> bytes:
    """A code record as kept: the format, the code files' stat fingerprint and their content digest."""
    return f"dsh-policy-code 1 {stamp} {digest}".encode() + _HEADER_END


def read_code_digest(root: str, stamp: str) -> str | None:
    """The content digest recorded for the code at ``root`` when its files still have the stat
    fingerprint ``stamp``; None when there is no record, it names another fingerprint, or it
    fails the checks an entry must pass (see :mod:`.key` for why a fingerprint may stand in
    for the bytes)."""
    folder = trusted_folder(create=False)
    if folder is None:
        return None
    data = _read_private(code_record_path(folder, root))
    if data is None:
        return None
    fields = data.decode("ascii", "replace").split()
    if len(fields) != 4 or data != code_record(stamp, fields[3]) or len(fields[3]) != 64:
        return None
    return fields[3]


def write_code_digest(root: str, stamp: str, digest: str) -> bool:
    """Record that the code at ``root`` with fingerprint ``stamp`` has content digest ``digest``
    (atomically, like an entry); False when the folder cannot be trusted or written."""
    folder = trusted_folder(create=True)
    if folder is None:
        return False
    return _write_atomically(folder, code_record_path(folder, root), code_record(stamp, digest))


def entry_bytes(key: str, body: bytes) -> bytes:
    """An entry as kept: a header naming the format, the key and the body's SHA-256, then the body."""
    return f"dsh-policy-compiled 1 {key} {hashlib.sha256(body).hexdigest()}".encode() + _HEADER_END + body


def write_entry(key: str, body: bytes) -> bool:
    """Keep ``body`` under ``key`` (atomically: a reader sees the old entry, none, or this one);
    False when the folder cannot be trusted or written."""
    folder = trusted_folder(create=True)
    if folder is None:
        return False
    if not _write_atomically(folder, entry_path(folder, key), entry_bytes(key, body)):
        return False
    _prune(folder)
    return True


def _write_atomically(folder: str, path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a private temporary file renamed over it (a reader sees
    the old file, none, or this one)."""
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


def _prune(folder: str) -> None:
    """Remove the oldest entries beyond :data:`MAX_ENTRIES`."""
    try:
        with os.scandir(folder) as found:
            entries = [(item.stat().st_mtime_ns, item.path) for item in found if item.name.endswith(".json")]
    except OSError:
        return
    for _, path in sorted(entries)[:-MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            os.unlink(path)
