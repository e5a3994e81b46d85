"""One call from flags or a deployment file to a running gateway: policy, reload, audit, plugin.

Platform engineers embedding the gateway, ``dsh-policy run`` and the hook adapters all need the
same wiring: resolve where the audit log goes (a flag beats the deployment file), open the writer
with the configured durability and signing key, load a policy that follows edits to its files, and
record every load and every failed reload in the same log the decisions go to. Doing it in one
place keeps those promises identical everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import structlog
from dsh_policy.audit.losses import ReopeningWriter
from dsh_policy.audit.writer import AuditWriteError, AuditWriter
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.audit_plan import AuditPlan, audit_plan, open_audit_writer
from dsh_policy.policy.runtime.auditing import AuditUnavailableError, DecisionAuditor
from dsh_policy.policy.runtime.gateway import CallApprover, GatewayObserver, PolicyGateway
from dsh_policy.policy.runtime.policy_changes import PolicyChanges, diff_summaries, policy_summary
from dsh_policy.policy.runtime.reload import ReloadingPolicy

_log = structlog.get_logger("dsh_policy.policy.deployment")

# AuditPlan and audit_plan live in audit_plan.py (hooks import them without the harness); they
# are re-exported here, where 0.1 defined them.
__all__ = ["AuditPlan", "Deployment", "audit_plan", "deploy", "open_audit_writer"]


@dataclass(slots=True)
class _ReloadRecorder:
    """Forwards reload events to the auditor once it exists (the policy is built first), each
    ``policy_loaded`` with the policy's summary and what changed since the one before."""

    auditor: DecisionAuditor | None = None
    previous: dict[str, Any] | None = None
    pending: CompiledPolicy | None = None
    #: Told the summary of each reloaded policy once it is in force (see :func:`deploy`).
    in_force: Callable[[dict[str, Any]], None] | None = None

    def loaded(self, compiled: CompiledPolicy) -> None:
        if self.auditor is None:
            self.pending = compiled  # the first policy: recorded once the log is open
            return
        summary = policy_summary(compiled)
        changes = diff_summaries(self.previous, summary)
        self.previous = summary
        if self.in_force is not None:
            self.in_force(summary)
        if changes.weakening:
            _log.warning("policy reloaded: enforcement weakened", weakened=list(changes.weakened))
        self._record(
            lambda auditor: auditor.policy_loaded(
                compiled.packs,
                compiled,
                summary=summary,
                changes=changes.record() if not changes.empty else None,
            )
        )

    def refused(self, compiled: CompiledPolicy, changes: PolicyChanges) -> None:
        if self.auditor is not None:
            self._record(
                lambda auditor: auditor.policy_reload_refused(policy_summary(compiled), changes.record())
            )

    def failed(self, errors: Sequence[PolicyError]) -> None:
        if self.auditor is not None:
            self._record(lambda auditor: auditor.policy_reload_failed(errors))

    def _record(self, write: Callable[[DecisionAuditor], None]) -> None:
        assert self.auditor is not None
        # Already logged by the auditor; a reload must not fail because the log did.
        with suppress(AuditUnavailableError):
            write(self.auditor)


@dataclass(slots=True)
class Deployment:
    """A ready gateway: install ``gateway`` with ``harness.plugin(deployment.gateway)``; ``close``
    writes the closing checkpoint."""

    policy: Policy
    gateway: PolicyGateway
    writer: AuditWriter | None
    auditor: DecisionAuditor | None
    #: A fail-open deployment's log: reopened after a failed write, losses reported in it.
    log: ReopeningWriter | None = None

    def close(self) -> None:
        """Stop following pack edits, then close the audit log (closing checkpoint, fsync)."""
        if isinstance(self.policy, ReloadingPolicy):
            self.policy.close()
        if self.log is not None:
            self.log.close()
        elif self.writer is not None:
            self.writer.close()

    def __enter__(self) -> Deployment:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _watching_policy(
    sources: PolicySources, recorder: _ReloadRecorder, audit: AuditPlan | None
) -> ReloadingPolicy | LoadFailure:
    """A policy that follows its files. With a deployment file the file itself is watched and
    re-read, so only what the flags added (packs after the file's, ``--param`` values) is passed
    on explicitly; everything else comes from the file at each reload."""
    config = sources.config
    flag_params = {
        key: value
        for key, value in sources.params.items()
        if key in sources.param_origins and sources.param_origins[key].file == "--param"
    }
    return ReloadingPolicy.load_watching(
        list(sources.packs[len(config.packs) :] if config is not None else sources.packs),
        params=flag_params if config is not None else sources.params,
        param_origins=sources.param_origins,
        engine=sources.engine,
        shadow=sources.shadow,
        config=config.path if config is not None else None,
        on_loaded=recorder.loaded,
        on_reload_failed=recorder.failed,
        protect=True,
        audit_path=audit.path if audit is not None else None,
        signing_key=audit.signing_key if audit is not None else None,
        unprotected=sources.unprotected,
        on_reload_refused=recorder.refused,
    )


def deploy(
    sources: PolicySources,
    *,
    audit: AuditPlan | None = None,
    watch: bool = True,
    observers: Sequence[GatewayObserver] = (),
    on_reloaded: Callable[[dict[str, Any]], None] | None = None,
    approver: CallApprover | None = None,
) -> Deployment | list[PolicyError]:
    """Build the policy (following edits when ``watch``), open the audit log and the gateway.

    ``on_reloaded`` is told the summary of every reloaded policy once it is in force (the resident
    hook gateway keeps ``LOG.policy`` current with it). Errors come back as values: every pack
    error, or one error naming an audit log that cannot be opened (a gateway that was asked to
    keep a log must not run without one). ``approver`` answers the gateway's asks from the
    approval queue (``approvals.calls.queue_approver(sources.config)``: None unless the deployment
    file routes embedded asks there)."""
    recorder = _ReloadRecorder(in_force=on_reloaded)
    policy: Policy | LoadFailure
    if watch:
        policy = _watching_policy(sources, recorder, audit)
        if isinstance(policy, ReloadingPolicy):
            policy.watch_in_background()
    else:
        built = sources.build(
            audit_path=audit.path if audit is not None else None,
            signing_key=audit.signing_key if audit is not None else None,
        )
        policy = built if isinstance(built, LoadFailure) else Policy(built)
        if not isinstance(built, LoadFailure):
            recorder.pending = built
    if isinstance(policy, LoadFailure):
        return list(policy.errors)
    writer: AuditWriter | None = None
    auditor: DecisionAuditor | None = None
    log: ReopeningWriter | None = None
    if audit is not None:
        try:
            writer = open_audit_writer(audit)
        except AuditWriteError as error:
            _close_policy(policy)
            return [PolicyError(audit.path, 0, 0, f"cannot open the audit log: {error}")]
        # Fail-open goes on without a record, so it reopens the log and reports the losses there;
        # fail-closed refuses calls instead and never trusts a failed writer again.
        plan = audit
        log = None if audit.fail_closed else ReopeningWriter(lambda: open_audit_writer(plan), writer)
        auditor = DecisionAuditor(log or writer, policy, fail_closed=audit.fail_closed)
        recorder.auditor = auditor
        first = recorder.pending or policy.compiled
        recorder.previous = policy_summary(first)
        try:
            auditor.policy_loaded(policy.packs, first, summary=recorder.previous)
        except AuditUnavailableError as error:
            writer.close()
            _close_policy(policy)
            return [PolicyError(audit.path, 0, 0, f"cannot write the audit log: {error}")]
    gateway = PolicyGateway(policy, auditor=auditor, observers=observers, approver=approver)
    return Deployment(policy=policy, gateway=gateway, writer=writer, auditor=auditor, log=log)


def _close_policy(policy: Policy) -> None:
    if isinstance(policy, ReloadingPolicy):
        policy.close()
