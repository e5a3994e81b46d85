"""Who may change, or read, a path: the properties the hardened mode rests on.

The hardened mode (docs/hardened.md) holds because the operating system refuses the agent's user:
every file that keeps the gateway in force belongs to root or the gateway's service user, and no
other user may write it, nor any folder on its way (whoever may write a folder may rename what is
in it). A folder with the sticky bit (``/tmp``) is allowed on the way only: others may add names
there, not move ours. Mode bits only: an ACL that grants more is not seen (``getfacl`` shows it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Trusted:
    """The users (and their groups) who may change the deployment: root and the service user."""

    uids: frozenset[int]
    gids: frozenset[int]

    @classmethod
    def of(cls, service_uid: int, service_gid: int) -> Trusted:
        return cls(frozenset({0, service_uid}), frozenset({0, service_gid}))


def _why_writable(path: str, info: os.stat_result, trusted: Trusted, *, on_the_way: bool) -> str | None:
    mode = stat.S_IMODE(info.st_mode)
    sticky = on_the_way and stat.S_ISDIR(info.st_mode) and bool(info.st_mode & stat.S_ISVTX)
    if info.st_uid not in trusted.uids:
        return f"{path} belongs to uid {info.st_uid}"
    if mode & 0o002 and not sticky:
        return f"{path} is writable by every user (mode {mode:04o})"
    if mode & 0o020 and info.st_gid not in trusted.gids and not sticky:
        return f"{path} is writable by group {info.st_gid} (mode {mode:04o})"
    return None


def writable_by_others(path: str, trusted: Trusted) -> list[str]:
    """Why a user outside ``trusted`` may change ``path`` (where it leads, and every folder on the
    way); empty when none may. A missing path is reported too."""
    real = os.path.realpath(path)
    problems = []
    if real != os.path.abspath(path):
        problems += _link_problems(os.path.abspath(path), trusted)
    try:
        info = os.lstat(real)
    except OSError as error:
        return [f"{path}: {error.strerror}"]
    why = _why_writable(real, info, trusted, on_the_way=False)
    if why is not None:
        problems.append(why)
    for folder in _folders_above(real):
        try:
            why = _why_writable(folder, os.lstat(folder), trusted, on_the_way=True)
        except OSError as error:
            why = f"{folder}: {error.strerror}"
        if why is not None:
            problems.append(why)
    return problems


def _link_problems(path: str, trusted: Trusted) -> list[str]:
    """A link on the way is as safe as the folder that holds it."""
    problems = []
    for folder in _folders_above(path):
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            continue
        why = _why_writable(folder, info, trusted, on_the_way=True)
        if why is not None:
            problems.append(why)
        break
    return problems


def _folders_above(path: str) -> Iterator[str]:
    folder = os.path.dirname(path)
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def tree_writable_by_others(folder: str, trusted: Trusted, limit: int = 20000) -> list[str]:
    """:func:`writable_by_others` for a folder, plus every file and folder inside it (links are
    judged where they are, not followed)."""
    problems = writable_by_others(folder, trusted)
    seen = 0
    for root, dirs, files in os.walk(folder):
        # The package's modules: an editable install's working copy also holds ``.venv``/``.git``,
        # whose parts that matter (the environment's bin and site-packages) are checked by name.
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        for name in [*dirs, *files]:
            seen += 1
            if seen > limit:
                return problems
            path = os.path.join(root, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            why = _why_writable(path, info, trusted, on_the_way=False)
            if why is not None:
                problems.append(why)
    return problems


def readable_by_others(path: str, owner_uid: int) -> str | None:
    """Why a user other than ``owner_uid`` (and root) may read ``path`` (the signing key), or
    None. The key and its folder must both belong to that user, with no group or other bits."""
    problems = []
    for item in (path, os.path.dirname(path)):
        try:
            info = os.lstat(item)
        except OSError as error:
            return f"{item}: {error.strerror}"
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid != owner_uid:
            problems.append(f"{item} belongs to uid {info.st_uid}, not the gateway's (uid {owner_uid})")
        if mode & 0o077:
            problems.append(f"{item} has mode {mode:04o}: others may read it")
    return "; ".join(problems) or None


def unusable_by(path: str, uid: int, gids: frozenset[int], *, run: bool) -> str | None:
    """Why user ``uid`` (in groups ``gids``) cannot read ``path`` (``run``: and run it), following
    links and entering every folder on the way; None when it can. Root can always."""
    if uid == 0:
        return None
    real = os.path.realpath(path)
    for folder in reversed(list(_folders_above(real))):
        if not _allows(folder, uid, gids, 0o1):
            return f"uid {uid} cannot enter {folder}"
    if not _allows(real, uid, gids, 0o5 if run else 0o4):
        return f"uid {uid} cannot {'run' if run else 'read'} {real}"
    return None


def _allows(path: str, uid: int, gids: frozenset[int], want: int) -> bool:
    """Whether the mode bits of ``path`` grant ``want`` (r=4, w=2, x=1) to that user."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    if info.st_uid == uid:
        granted = info.st_mode >> 6
    elif info.st_gid in gids:
        granted = info.st_mode >> 3
    else:
        granted = info.st_mode
    return granted & want == want


def groups_of(name: str, gid: int) -> frozenset[int]:
    """Every group of user ``name`` (primary ``gid`` included)."""
    return frozenset({gid, *os.getgrouplist(name, gid)})
