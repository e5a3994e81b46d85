"""``dsh-policy serve``: one resident gateway per deployment, in the foreground.

Start-up, in this order so that a client never meets a half-ready gateway:

1. take the deployment's lock (``flock`` on ``<key>.lock``); if another process holds it, this
   deployment is already served: exit :data:`EXIT_ALREADY_RUNNING`;
2. load and compile the policy and open the audit log (the single writer of this deployment: group
   commit and checkpoints on the writer's own schedule); errors are printed and exit 1;
3. bind the Unix socket under a temporary name, ``chmod 0600``, and rename it into place (a
   client only ever sees a socket with the final permissions; ``--socket PATH``, the hardened
   mode: at PATH, ``0666``, in a folder only this user may write, answering other users'
   decisions only); optionally listen on loopback
   HTTP (:mod:`.http_front`); then serve both on an anyio event loop in a thread of its own
   (:mod:`.fronts`: bounded connections, deadlines, decisions on a worker per core).

While serving, the policy follows edits to its files on a background thread (``deploy``'s
watcher: a reload compiles off the decision path, and decisions use the policy in force until the
new one replaces it); SIGHUP checks the files at once. The gateway leaves after ``--idle-exit``
seconds without a request. Every second it appends the notes hooks left about answers they could
not pass on (:mod:`.delivery_notes`) to the log as ``hook_told`` records.

A gateway also leaves when its audit log fails (fail-closed deployments refuse meanwhile) or is
deleted under it, so that the next hook starts one that opens the log afresh.

SIGTERM or SIGINT: unlink the socket first (new hooks then start a new gateway instead of
connecting to a leaving one), answer every connection already accepted or queued, stop HTTP, close
the audit log (closing checkpoint, fsync) and release the lock. SIGKILL loses nothing either:
every acknowledged record was written to the log before its answer left.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.hooks.gateway.audit import audit_target
from dsh_policy.policy.hooks.gateway.delivery_notes import pending_notes, remove_note
from dsh_policy.policy.hooks.gateway.front_limits import FrontLimits
from dsh_policy.policy.hooks.gateway.runtime_paths import (
    DeploymentSpec,
    GatewayFiles,
    gateway_files,
    system_gateway_files,
)
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.hooks.gateway.tamper_watch import TamperWatch, watched_from
from dsh_policy.policy.hooks.gateway.unix_front import bind_unix
from dsh_policy.policy.runtime.audit_plan import AuditPlan
from dsh_policy.policy.runtime.deployment import Deployment, deploy
from dsh_policy.policy.runtime.reload import ReloadingPolicy

if TYPE_CHECKING:
    from dsh_policy.policy.hooks.gateway.fronts import Fronts

_log = structlog.get_logger("dsh_policy.gateway")

EXIT_ALREADY_RUNNING: Final[int] = 3
LOG_GONE_SECONDS: Final[float] = 0.5
LOCK_PATIENCE_SECONDS: Final[float] = 0.5
_TICK_SECONDS: Final[float] = 0.1  # how often the serving loop looks at its flags and the log
_NOTES_SECONDS: Final[float] = 1.0  # how often it records the notes hooks left


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """What ``serve`` was asked to do besides the policy options."""

    idle_exit: float | None = None
    http_host: str | None = None
    http_port: int | None = None
    token_file: str | None = None
    limits: FrontLimits = field(default_factory=FrontLimits)
    #: ``--socket PATH``: serve other users too (the hardened mode; :func:`system_gateway_files`)
    socket: str | None = None


class _Lock:
    """The deployment's lock: whoever holds it serves the deployment."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    def try_acquire(self, patience: float = LOCK_PATIENCE_SECONDS) -> bool:
        """Take the lock, waiting up to ``patience`` seconds: a hook that checks whether a
        gateway holds it takes it for an instant, and that must not turn a starting gateway away."""
        give_up = time.monotonic() + patience
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    return False
                time.sleep(0.01)
        os.ftruncate(self.fd, 0)
        os.write(self.fd, f"{os.getpid()}\n".encode())
        return True

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def serve(
    spec: DeploymentSpec, sources: PolicySources, audit_flag: str | None, settings: ServeSettings
) -> int:
    """Run the gateway until SIGTERM/SIGINT, idle exit or a failed audit log; the exit code."""
    files = system_gateway_files(settings.socket) if settings.socket else gateway_files(spec)
    lock = _Lock(files.lock)
    acquired = lock.try_acquire()
    _release_start_lock()
    if not acquired:
        lock.release()
        _log.info("another process already serves this deployment", socket=files.socket)
        return EXIT_ALREADY_RUNNING
    try:
        return _serve_locked(spec, sources, audit_flag, settings, files)
    finally:
        lock.release()


def _release_start_lock() -> None:
    """Close the start lock a hook handed this gateway (``client._spawn``): from now on the
    deployment's own lock says whether a gateway runs."""
    inherited = os.environ.pop("DSH_POLICY_START_LOCK_FD", None)
    if inherited is not None and inherited.isdigit():
        with contextlib.suppress(OSError):
            os.close(int(inherited))


def _serve_locked(
    spec: DeploymentSpec,
    sources: PolicySources,
    audit_flag: str | None,
    settings: ServeSettings,
    files: GatewayFiles,
) -> int:
    plan = audit_target(audit_flag, sources)
    # Reloads run on their own thread; each one put in force becomes the policy recorded beside
    # the log, which a hook deciding in process (no gateway) compares its own with.
    deployed = deploy(sources, audit=plan, watch=True, on_reloaded=_recorder_beside(plan))
    if isinstance(deployed, list):
        _print_errors(deployed)
        return 1
    refusal = _weakening_refused(sources, plan, deployed.policy)
    if refusal is not None:  # hooks then decide in process, and refuse every call, as they must
        deployed.close()
        _print_errors([PolicyError(plan.path if plan else "<policy>", 0, 0, refusal)])
        return 1
    stop = threading.Event()
    limits = settings.limits.resolved()
    log_removed = False
    fronts = None
    stack = contextlib.ExitStack()
    try:
        service = GatewayService(
            spec,
            deployed.policy,
            auditor=deployed.auditor,
            writer=deployed.writer,
            audit_path=plan.path if plan is not None else None,
        )
        if sources.config is not None and sources.config.approvals is not None:
            from dsh_policy.policy.approvals import ApprovalChannel

            service.approvals = ApprovalChannel(sources.config.approvals)
        http = None
        if settings.http_port is not None:
            from dsh_policy.policy.hooks.gateway.http_front import start_http

            host = settings.http_host or "127.0.0.1"
            started = start_http(
                service, host, settings.http_port, settings.token_file or files.token, limits.backlog
            )
            if isinstance(started, str):
                _print_errors([PolicyError("--http", 0, 0, started)])
                return 1
            http = started
            service.http_address = (
                f"{host}:{http.server_port}" if ":" not in host else f"[{host}]:{http.server_port}"
            )
        try:
            # Other users connect to a system gateway's socket (its folder keeps them from
            # replacing it); the front answers them decisions only.
            mode = 0o666 if settings.socket else 0o600
            unix_sock, inode = bind_unix(files.socket, limits.backlog, mode)
        except OSError as error:
            if http is not None:
                http.sock.close()
            _print_errors([PolicyError(files.socket, 0, 0, f"cannot listen: {error}")])
            return 1
        from dsh_policy.policy.hooks.gateway.fronts import Fronts

        service.tamper = _start_tamper_watch(service, sources, plan)
        _record_notes(service, files)  # notes a hook left while no gateway served
        fronts = Fronts(
            service, limits, unix_sock, http, stop.set, open_to_others=settings.socket is not None
        )
        flags = stack.enter_context(_signal_flags())
        fronts.start()
        _log.info(
            "serving",
            deployment=spec.describe(),
            socket=files.socket,
            http=service.http_address,
            policy=service.policy.digest,
            pid=os.getpid(),
            workers=limits.workers,
            max_connections=limits.max_connections,
        )
        log_removed = _run_until_stopped(service, stop, settings, files, fronts, flags)
        _unlink_socket(files.socket, inode)
        fronts.stop()
        fronts = None
        _record_notes(service, files)
        _log.info("stopped", decisions=service.status()["decisions"])
        return 0 if service.writer is None or service.writer.failure is None else 1
    finally:
        if fronts is not None:  # left by an exception: stop serving before closing the log
            fronts.stop(timeout=10)
        stack.close()
        if log_removed:
            # Closing would write a checkpoint into the unlinked file and export its anchor to the
            # log's path, where it would then contradict the next gateway's new log.
            _close_policy_only(deployed)
        else:
            deployed.close()


def _start_tamper_watch(
    service: GatewayService, sources: PolicySources, plan: AuditPlan | None
) -> TamperWatch:
    """Fingerprint what keeps this deployment in force (:mod:`.tamper_watch`) and record what
    changed since the last gateway of this log looked."""
    protection = sources.protection(audit_path=plan.path if plan is not None else None)
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    projects = [*protection.project_dirs, *([project] if project else [])]
    watch = TamperWatch(watched_from(protection.entries, projects), plan.path if plan is not None else None)
    for observed in watch.start():
        service.record_tamper(observed)
    return watch


def _weakening_refused(sources: PolicySources, plan: AuditPlan | None, policy: Policy) -> str | None:
    """The hook's own start-up rule (``policy_state``): with ``reload: {refuse_weakening: true}``,
    a policy that weakens the one last recorded beside the log is not put in force; otherwise it
    becomes the one recorded, so a hook deciding in process later compares against it."""
    if plan is None:
        return None
    from dsh_policy.policy.hooks.gateway.policy_state import remember, state_path, transition

    change = transition(plan.path, policy.compiled)
    refusing = bool(sources.config is not None and sources.config.reload.refuse_weakening)
    if change.refused(refusing):
        return (
            "the policy changed since the one last recorded and weakens enforcement ("
            + "; ".join(change.changes.weakened)
            + f"); this deployment refuses weakening changes until an operator accepts them by "
            f"removing {state_path(plan.path)}"
        )
    if change.changed:
        remember(plan.path, change.summary)
    return None


def _recorder_beside(plan: AuditPlan | None) -> Callable[[dict[str, Any]], None] | None:
    if plan is None:
        return None
    from dsh_policy.policy.hooks.gateway.policy_state import remember

    def record(summary: dict[str, Any]) -> None:
        try:
            remember(plan.path, summary)
        except OSError as error:  # the log itself holds the record; the file is a convenience
            _log.error("cannot record the reloaded policy beside the log", error=str(error))

    return record


def _close_policy_only(deployed: Deployment) -> None:
    policy = deployed.policy
    if isinstance(policy, ReloadingPolicy):
        policy.close()


@dataclass(slots=True)
class _SignalFlags:
    """What the serving loop's signal handlers ask for, read by the loop on every tick.

    The handlers only assign an attribute. Taking any lock there (``Event.set`` takes its
    condition's lock) can deadlock: a handler runs in the main thread, and may run right where the
    main thread holds that very lock inside ``stop.wait``; threading's locks are not reentrant.
    A gateway stuck so never leaves and never writes its closing checkpoint.
    """

    stop: bool = False
    reload: bool = False

    def on_stop(self, _signum: int, _frame: object) -> None:
        self.stop = True

    def on_reload(self, _signum: int, _frame: object) -> None:
        self.reload = True


@contextlib.contextmanager
def _signal_flags() -> Iterator[_SignalFlags]:
    """SIGTERM/SIGINT ask to stop, SIGHUP to reload, from before the socket answers (a signal
    sent as soon as the gateway answers must find these handlers) until it has stopped."""
    flags = _SignalFlags()
    previous = {
        sig: signal.signal(sig, handler)
        for sig, handler in (
            (signal.SIGTERM, flags.on_stop),
            (signal.SIGINT, flags.on_stop),
            (signal.SIGHUP, flags.on_reload),
        )
    }
    try:
        yield flags
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_until_stopped(
    service: GatewayService,
    stop: threading.Event,
    settings: ServeSettings,
    files: GatewayFiles,
    fronts: Fronts,
    flags: _SignalFlags,
) -> bool:
    """Serve until stopped (SIGTERM/SIGINT, a ``stop`` request, idle, a failed log, the front
    ends failing); True when it stopped because the audit log was removed. SIGHUP reloads the
    policy now; the notes hooks leave are recorded every :data:`_NOTES_SECONDS`."""
    missing_since: float | None = None
    notes_due = time.monotonic() + _NOTES_SECONDS
    while not stop.wait(_TICK_SECONDS) and not flags.stop:
        failure = fronts.failed()
        if failure is not None:
            _log.error("the front ends failed; leaving", error=f"{type(failure).__name__}: {failure}")
            break
        if time.monotonic() >= notes_due:
            notes_due = time.monotonic() + _NOTES_SECONDS
            _record_notes(service, files)
        if service.tamper is not None:
            for observed in service.tamper.tick(service.decisions()):
                service.record_tamper(observed)
        if _log_was_removed(service):
            missing_since = missing_since or time.monotonic()
            if time.monotonic() - missing_since >= LOG_GONE_SECONDS:
                _log.error(
                    "the audit log was removed; leaving so the next hook reopens it",
                    path=service.audit_path,
                )
                return True
        else:
            missing_since = None
        policy = service.policy
        if flags.reload and isinstance(policy, ReloadingPolicy):
            flags.reload = False
            policy.check_now(blocking=True)
        writer = service.writer
        if writer is not None and writer.failure is not None:
            _log.error("audit log failed; leaving so the next hook starts afresh", error=writer.failure)
            break
        if settings.idle_exit is not None and service.idle_seconds() >= settings.idle_exit:
            _log.info("idle; leaving", idle_seconds=round(service.idle_seconds(), 1))
            break
    return False


def _log_was_removed(service: GatewayService) -> bool:
    """True when the audit log's active segment is gone (deleted under a writer that would go on
    appending to the unlinked file). A rotation recreates it at once, so only a lasting absence
    counts (:data:`LOG_GONE_SECONDS`)."""
    return service.audit_path is not None and not os.path.exists(service.audit_path)


def _unlink_socket(path: str, inode: int) -> None:
    """Unlink the socket if it is still ours (new hooks then start a new gateway)."""
    with contextlib.suppress(OSError):
        if os.lstat(path).st_ino == inode:
            os.unlink(path)


def _record_notes(service: GatewayService, files: GatewayFiles) -> None:
    """Append what hooks told the agent instead of this deployment's answers (``hook_told``)."""
    for path, note in pending_notes(files.folder, files.key):
        if note is None:
            _log.warning("removed an unreadable hook note", path=path)
        elif not service.record_told(note):
            return  # the log cannot take it now; the note waits for the next pass
        remove_note(path)


def _print_errors(errors: Sequence[PolicyError]) -> None:
    for error in errors:
        _log.error("cannot serve", error=str(error))
