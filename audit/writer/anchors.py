"""``PATH.anchor``: a copy of the newest checkpoint line, for copying off the host.

Copied off the host, the anchor lets ``verify`` prove a cut tail. It must never be durable ahead of
the checkpoint it copies (a power cut would make an honest log look truncated), so the group
commit hands it over only once an fsync covers that checkpoint (:mod:`.group_commit`).
"""

from __future__ import annotations

import os
import threading
from contextlib import suppress
from pathlib import Path

import orjson

from ..segments import anchor_path


class AnchorExporter:
    """Keeps ``PATH.anchor`` equal to the newest durable checkpoint."""

    __slots__ = ("_durable", "_path")

    def __init__(self, path: Path, *, durable: bool) -> None:
        self._path = path
        self._durable = durable

    def export(self, line: bytes, *, monotonic: bool = True) -> None:
        """Atomically replace ``PATH.anchor`` with a checkpoint line.

        Several processes append to one log, and a flusher exports its checkpoint only once an
        fsync covers it, possibly after another process exported a newer one: an anchor never moves
        back to an older checkpoint (that would report an honest log's anchor as stale). On open
        (``monotonic=False``) the checkpoint read back from the file replaces whatever is there."""
        target = anchor_path(self._path)
        if monotonic and anchor_seq(line) <= _current_anchor_seq(target):
            return
        temporary = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, line + b"\n")
                if self._durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, target)
        except BaseException:
            with suppress(OSError):
                temporary.unlink()
            raise

    def refresh_if_stale(self, line: bytes) -> None:
        """On open: a writer killed between a checkpoint's fsync and its export left the anchor
        behind the log; the checkpoint read back from the file is durable, so export it now."""
        try:
            current = anchor_path(self._path).read_bytes()
        except FileNotFoundError:
            current = b""
        if current.rstrip(b"\n") != line:
            self.export(line, monotonic=False)


def anchor_seq(line: bytes) -> int:
    """``last_seq`` of a checkpoint line, -1 when it is not one."""
    try:
        value = orjson.loads(line)["checkpoint"]["last_seq"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return -1
    return value if isinstance(value, int) else -1


def _current_anchor_seq(target: Path) -> int:
    try:
        return anchor_seq(target.read_bytes().rstrip(b"\n"))
    except OSError:
        return -1
