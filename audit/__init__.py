"""The hash-chained JSONL audit log and its verifier (AUDIT.md).

``audit`` imports nothing else of ``dsh_policy``: an auditor verifies a log without the policy
engine.

Writing (the gateway)::

    with AuditWriter.open("audit.jsonl", fsync="batch", signing_key="audit.key") as writer:
        receipt = writer.append("tool_result", {"session": ..., "call": {...}, "decision": {...}})

Verifying (an auditor)::

    report = verify_log(["audit.jsonl"], public_key="audit.pub")  # strict: every record signed
    report.verdict, report.first_error, report.unsigned_tail
"""

from .losses import LossLedger, ReopeningWriter
from .record import fit_to_domain
from .verify import Finding, Reason, Recovery, UnsignedTail, VerificationReport, verify_log
from .writer import (
    AppendReceipt,
    AuditError,
    AuditRecordError,
    AuditWriteError,
    AuditWriter,
    FsyncMode,
)

__all__ = [
    "AppendReceipt",
    "AuditError",
    "AuditRecordError",
    "AuditWriteError",
    "AuditWriter",
    "Finding",
    "FsyncMode",
    "LossLedger",
    "Reason",
    "Recovery",
    "ReopeningWriter",
    "UnsignedTail",
    "VerificationReport",
    "fit_to_domain",
    "verify_log",
]
