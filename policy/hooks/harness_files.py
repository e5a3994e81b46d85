"""A coding-agent harness's own files, read and rewritten without loss: the text of a file that may
not exist, a replacement in one atomic rename, and the hook commands a parsed settings file holds.

Shared by installing (:mod:`.install`) and by what one harness keeps in files of its own (Codex's
managed requirements and hook trust, :mod:`.codex`), so neither imports the other for them.
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any


class SettingsError(Exception):
    """A settings file cannot be merged (it does not parse, or has an incompatible shape)."""


def configured_commands(config: Mapping[str, Any]) -> dict[str, set[str]]:
    """Every command hook per event in a parsed Codex config (or Claude Code settings)."""
    out: dict[str, set[str]] = {}
    hooks = config.get("hooks")
    if not isinstance(hooks, Mapping):
        return out
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            entries = group.get("hooks", []) if isinstance(group, Mapping) else []
            for hook in entries if isinstance(entries, list) else []:
                if isinstance(hook, Mapping) and isinstance(hook.get("command"), str):
                    out.setdefault(event, set()).add(hook["command"])
    return out


def read_text(path: str) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write_atomically(path: str, text: str, mode: int = 0o644) -> None:
    """Replace ``path`` with ``text`` in one rename (keeping the old file's mode)."""
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(path).st_mode & 0o7777
    temporary = f"{path}.dsh-policy.{os.getpid()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
