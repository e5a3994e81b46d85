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
from typing import Literal

from dsh_policy.audit.writer import AuditWriteError, AuditWriter
from dsh_policy.policy.compile import CompiledPolicy
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.auditing import AuditUnavailableError, DecisionAuditor
from dsh_policy.policy.runtime.gateway import GatewayObserver, PolicyGateway
from dsh_policy.policy.runtime.reload import ReloadingPolicy

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
    )


@dataclass(slots=True)
class _ReloadRecorder:
    """Forwards reload events to the auditor once it exists (the policy is built first)."""

    auditor: DecisionAuditor | None = None

    def loaded(self, compiled: CompiledPolicy) -> None:
        if self.auditor is not None:
            self._record(lambda auditor: auditor.policy_loaded(compiled.packs))

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

    def close(self) -> None:
        """Stop following pack edits, then close the audit log (closing checkpoint, fsync)."""
        if isinstance(self.policy, ReloadingPolicy):
            self.policy.close()
        if self.writer is not None:
            self.writer.close()

    def __enter__(self) -> Deployment:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def _watching_policy(sources: PolicySources, recorder: _ReloadRecorder) -> ReloadingPolicy | LoadFailure:
    """A policy that follows its files. With a deployment file the file itself is watched and
    re-read, so only what the flags added (packs after the file's, ``--param`` values) is passed
    on explicitly; everything else comes from the file at each reload."""
    config = sources.config
    flag_params = {
        key: value for key, value in sources.params.items()
        if key in sources.param_origins and sources.param_origins[key].file == "--param"
    }
    return ReloadingPolicy.load_watching(
        list(sources.packs[len(config.packs):] if config is not None else sources.packs),
        params=flag_params if config is not None else sources.params,
        param_origins=sources.param_origins,
        engine=sources.engine,
        shadow=sources.shadow,
        config=config.path if config is not None else None,
        on_loaded=recorder.loaded,
        on_reload_failed=recorder.failed,
    )


def deploy(
    sources: PolicySources,
    *,
    audit: AuditPlan | None = None,
    watch: bool = True,
    observers: Sequence[GatewayObserver] = (),
) -> Deployment | list[PolicyError]:
    """Build the policy (following edits when ``watch``), open the audit log and the gateway.

    Errors come back as values: every pack error, or one error naming an audit log that cannot be
    opened (a gateway that was asked to keep a log must not run without one)."""
    recorder = _ReloadRecorder()
    policy: Policy | LoadFailure
    if watch:
        policy = _watching_policy(sources, recorder)
        if isinstance(policy, ReloadingPolicy):
            policy.watch_in_background()
    else:
        built = sources.build()
        policy = built if isinstance(built, LoadFailure) else Policy(built)
    if isinstance(policy, LoadFailure):
        return list(policy.errors)
    writer: AuditWriter | None = None
    auditor: DecisionAuditor | None = None
    if audit is not None:
        try:
            writer = open_audit_writer(audit)
        except AuditWriteError as error:
            _close_policy(policy)
            return [PolicyError(audit.path, 0, 0, f"cannot open the audit log: {error}")]
        auditor = DecisionAuditor(writer, policy, fail_closed=audit.fail_closed)
        recorder.auditor = auditor
        try:
            auditor.policy_loaded(policy.packs)
        except AuditUnavailableError as error:
            writer.close()
            _close_policy(policy)
            return [PolicyError(audit.path, 0, 0, f"cannot write the audit log: {error}")]
    gateway = PolicyGateway(policy, auditor=auditor, observers=observers)
    return Deployment(policy=policy, gateway=gateway, writer=writer, auditor=auditor)


def _close_policy(policy: Policy) -> None:
    if isinstance(policy, ReloadingPolicy):
        policy.close()
