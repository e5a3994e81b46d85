"""The writer's errors: a caller's bad record (a bug to fix) versus a write that failed (fatal)."""

from __future__ import annotations


class AuditError(Exception):
    """Base of the audit writer's errors."""


class AuditRecordError(AuditError, ValueError):
    """The caller's record cannot be written as given (a bug in the caller, not an I/O failure)."""


class AuditWriteError(AuditError):
    """The record could not be durably written; the writer is unusable from now on."""
