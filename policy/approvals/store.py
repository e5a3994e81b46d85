"""The approval queue on disk: one JSON document in a folder, changed only under a file lock.

The queue must outlive the gateway (a restart keeps pending requests and grants) and be shared by
the processes that touch it: the resident gateway, hooks deciding in process, the ``approvals``
command and the web console. So every change is a transaction: take an exclusive ``flock`` on
``queue.lock``, read ``queue.json``, change it, write the new document to a temporary file,
``fsync`` it and ``rename`` it over the old one (then ``fsync`` the folder). A crash leaves the
old document or the new one, never half of either.

A document that cannot be read (bad JSON, the wrong format, a member of the wrong type) is never
repaired or replaced: :class:`ApprovalStoreError` names the file and what is wrong, and every
channel treats that as "no approval" (the call is denied), so a damaged queue fails closed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

FORMAT: Final[str] = "dsh-policy/approvals/v1"
QUEUE_FILE: Final[str] = "queue.json"
LOCK_FILE: Final[str] = "queue.lock"
#: The document's collections and the type each must have.
_COLLECTIONS: Final[dict[str, type]] = {"requests": dict, "grants": dict, "journal": list}


class ApprovalStoreError(Exception):
    """The queue folder or its document cannot be used; the message names the file."""


def empty_document() -> dict[str, Any]:
    """A queue with nothing in it."""
    return {"format": FORMAT, "requests": {}, "grants": {}, "journal": []}


class ApprovalStore:
    """One queue folder. Cheap to construct; every method opens, locks and closes the files."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / QUEUE_FILE

    def _ensure_folder(self) -> None:
        try:
            # Group-writable so approvers in the deployment's group can record decisions (see
            # docs/approvals.md); the umask narrows it where the operator wants.
            self.folder.mkdir(mode=0o770, parents=True, exist_ok=True)
        except OSError as error:
            raise ApprovalStoreError(
                f"{self.folder}: cannot create the approval queue folder ({error})"
            ) from None

    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        self._ensure_folder()
        try:
            fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o660)
        except OSError as error:
            raise ApprovalStoreError(
                f"{self.folder / LOCK_FILE}: cannot open the queue lock ({error})"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def read(self) -> dict[str, Any]:
        """The current document (a consistent snapshot, under a shared lock)."""
        with self._locked(exclusive=False):
            return self._load()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """The document to change in place; written back atomically when the block ends without
        an exception, and only if it changed."""
        with self._locked(exclusive=True):
            document = self._load()
            before = json.dumps(document, sort_keys=True)
            yield document
            if json.dumps(document, sort_keys=True) != before:
                self._write(document)

    def mtime(self) -> float:
        """When the document last changed (0 when there is none): waiting channels poll this."""
        try:
            return self.path.stat().st_mtime
        except OSError:
            return 0.0

    def _load(self) -> dict[str, Any]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return empty_document()
        except OSError as error:
            raise ApprovalStoreError(f"{self.path}: cannot read the approval queue ({error})") from None
        try:
            document = json.loads(data)
        except (ValueError, UnicodeDecodeError) as error:
            raise ApprovalStoreError(
                f"{self.path}: the approval queue is not valid JSON ({error}); it was left as it is,"
                " and every call waiting for approval is denied until it is repaired or moved aside"
            ) from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ApprovalStoreError(f"{self.path}: not an approval queue of format {FORMAT!r}")
        for name, kind in _COLLECTIONS.items():
            if not isinstance(document.get(name), kind):
                raise ApprovalStoreError(f"{self.path}: member {name!r} must be a JSON {kind.__name__}")
        for name in ("requests", "grants"):
            for key, entry in document[name].items():
                if not isinstance(entry, dict) or entry.get("id") != key:
                    raise ApprovalStoreError(f"{self.path}: {name}[{key!r}] is not a well-formed entry")
        return document

    def _write(self, document: dict[str, Any]) -> None:
        temporary = self.folder / f".{QUEUE_FILE}.{os.getpid()}.tmp"
        data = json.dumps(document, sort_keys=True, indent=1, ensure_ascii=True).encode("ascii")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o660)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            folder_fd = os.open(self.folder, os.O_RDONLY)
            try:
                os.fsync(folder_fd)
            finally:
                os.close(folder_fd)
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise ApprovalStoreError(f"{self.path}: cannot write the approval queue ({error})") from None
