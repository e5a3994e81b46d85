"""Where and how a deployment records its decisions: the audit log's path, durability and key.

Kept apart from :mod:`.deployment` (which wires the whole gateway into a harness) so a hook
process, which only needs to open the log, imports neither the harness nor the gateway plugins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dsh_policy.audit.record import DEFAULT_FORMAT_VERSION
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.config import PolicySources

__all__ = ["AuditPlan", "FsyncMode", "audit_plan", "open_audit_writer"]

FsyncMode = Literal["always", "batch", "off"]


@dataclass(frozen=True, slots=True)
class AuditPlan:
    """Where and how decisions are recorded."""

    path: str
    fsync: FsyncMode = "batch"
    signing_key: str | None = None
    fail_closed: bool = False
    rotate_bytes: int | None = None
    rotate_seconds: float | None = None
    format_version: int | None = None  # None: the writer's default


def audit_plan(
    sources: PolicySources,
    *,
    path: str | None = None,
    fsync: FsyncMode | None = None,
    signing_key: str | None = None,
    fail_closed: bool | None = None,
) -> AuditPlan | None:
    """Combine flags with the deployment file's ``audit:`` block (flags win); None = no log."""
    configured = sources.config.audit if sources.config is not None else None
    chosen = path or (configured.path if configured else None)
    if chosen is None:
        return None
    return AuditPlan(
        path=chosen,
        fsync=fsync or (configured.fsync if configured else "batch"),
        signing_key=signing_key or (configured.checkpoint_key if configured else None),
        fail_closed=fail_closed if fail_closed is not None else bool(configured and configured.fail_closed),
        rotate_bytes=configured.rotate_bytes if configured else None,
        rotate_seconds=configured.rotate_seconds if configured else None,
        format_version=configured.format if configured else None,
    )


def open_audit_writer(plan: AuditPlan) -> AuditWriter:
    """Open (create or recover) the log; raises ``AuditWriteError`` with a readable message.

    The directory must exist: creating it would let a typo in a path send the log somewhere nobody
    watches."""
    return AuditWriter.open(
        plan.path,
        fsync=plan.fsync,
        signing_key=plan.signing_key,
        rotate_bytes=plan.rotate_bytes,
        rotate_seconds=plan.rotate_seconds,
        format_version=plan.format_version or DEFAULT_FORMAT_VERSION,
    )
