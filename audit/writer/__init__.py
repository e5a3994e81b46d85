"""Append-only writer of the hash-chained audit log (AUDIT.md "Durability and concurrency").

One :class:`AuditWriter` per process and log. Every append, under an OS lock on ``PATH.lock``:
catch up with records other processes appended (so the chain never forks), rotate if the segment is
full, write one canonical line with one ``write``, maybe checkpoint. An fsync the append must wait
for (``always``, or a batch at twice its bound) follows once the OS lock is released, so other
processes append meanwhile; group commits run in a flusher thread, off every lock. Opening a log
recovers a torn tail by moving it to a side file and recording a ``recovery`` record; nothing is
ever truncated silently, and a complete line that hashes right is never taken for a torn tail.
Rotation prepares the next segment in ``PATH.next`` and installs it by link-then-rename, so no
file is ever replaced and ``PATH`` always holds a complete segment: a process killed anywhere
leaves a log that verifies, and no record whose ``append`` returned is lost. An ``fsync`` or write
error is fatal: the writer refuses every later append, so a caller can fail closed instead of
trusting a log that may have lost records (:mod:`..losses` reopens it for one that fails open).

Where each job lives (one collaborator each, composed by :class:`AuditWriter`):

- :mod:`.audit_writer` -- the public class: open, append, checkpoint, flush, close; lock order;
- :mod:`.append` -- building and sealing records, writing a line (the hot path);
- :mod:`.chain` -- the chain state (head, seq, Merkle frontier, segment) and reading it back;
- :mod:`.recovery` -- opening an existing log, catching up, repairing a torn tail;
- :mod:`.rotation` -- closing a full segment and installing the next without replacing a file;
- :mod:`.checkpoints` -- checkpoint records; :mod:`.handover` -- signing-key hand-over;
- :mod:`.group_commit` -- what is durable and when to fsync; :mod:`.flusher` -- the thread;
- :mod:`.anchors` -- ``PATH.anchor``; :mod:`.locking` -- locks and the sticky failure;
- :mod:`.files` -- the active descriptor and crash-safe file steps; :mod:`.settings`, :mod:`.errors`.

What a record's hash covers is :mod:`..record_hash`'s alone (shared with the verifier).
"""

from .append import WRITER_FIELDS, WRITER_KINDS, AppendReceipt
from .audit_writer import AuditWriter
from .errors import AuditError, AuditRecordError, AuditWriteError
from .settings import FsyncMode, WriterSettings

__all__ = [
    "WRITER_FIELDS",
    "WRITER_KINDS",
    "AppendReceipt",
    "AuditError",
    "AuditRecordError",
    "AuditWriteError",
    "AuditWriter",
    "FsyncMode",
    "WriterSettings",
]
