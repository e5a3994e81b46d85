"""``dsh-policy serve``: one resident gateway per deployment, in the foreground.

Start-up, in this order so that a client never meets a half-ready gateway:

1. take the deployment's lock (``flock`` on ``<key>.lock``); if another process holds it, this
   deployment is already served: exit :data:`EXIT_ALREADY_RUNNING`;
2. load and compile the policy and open the audit log (the single writer of this deployment: group
   commit and checkpoints on the writer's own schedule); errors are printed and exit 1;
3. bind the Unix socket under a temporary name, ``chmod 0600``, and rename it into place (a
   client only ever sees a socket with the final permissions); optionally listen on loopback
   HTTP (:mod:`.http_front`).

While serving, the policy follows edits to its files on a background thread (``deploy``'s
watcher: a reload compiles off the decision path, and decisions use the policy in force until the
new one replaces it); SIGHUP checks the files at once. The gateway leaves after ``--idle-exit``
seconds without a request.

A gateway also leaves when its audit log fails (fail-closed deployments refuse meanwhile) or is
deleted under it, so that the next hook starts one that opens the log afresh.

SIGTERM or SIGINT: unlink the socket first (new hooks then start a new gateway instead of
connecting to a leaving one), answer every connection already accepted or queued, stop HTTP, close
the audit log (closing checkpoint, fsync) and release the lock. SIGKILL loses nothing either:
every acknowledged record was written to the log before its answer left.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import signal
import socketserver
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import structlog
from dsh_policy.policy.config import PolicySources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.hooks.gateway.audit import audit_target
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec, GatewayFiles, gateway_files
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.hooks.gateway.wire import (
    WireError,
    check_peer,
    encode_hook_reply,
    encode_reply,
    read_request,
)
from dsh_policy.policy.runtime.audit_plan import AuditPlan
from dsh_policy.policy.runtime.deployment import Deployment, deploy
from dsh_policy.policy.runtime.reload import ReloadingPolicy

_log = structlog.get_logger("dsh_policy.gateway")

EXIT_ALREADY_RUNNING: Final[int] = 3
REQUEST_SECONDS: Final[float] = 30.0  # a client that connects and then says nothing is dropped
LOG_GONE_SECONDS: Final[float] = 0.5
_TICK_SECONDS: Final[float] = 0.1  # how often the serving loop looks at its flags and the log


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """What ``serve`` was asked to do besides the policy options."""

    idle_exit: float | None = None
    http_host: str | None = None
    http_port: int | None = None
    token_file: str | None = None


class _UnixHandler(socketserver.StreamRequestHandler):
    """One request per connection: read it, answer it, close."""

    timeout = REQUEST_SECONDS
    server: _UnixServer

    def handle(self) -> None:
        try:
            check_peer(self.connection)
            header, body = read_request(self.rfile)
        except (WireError, OSError) as error:
            _log.warning("dropped a request", error=str(error))
            return
        try:
            reply = self.server.dispatch(header, body)
        except Exception as exc:  # a bug: no answer at all, which every client spells as a refusal
            _log.error("request failed", op=header.get("op"), error=f"{type(exc).__name__}: {exc}")
            return
        with contextlib.suppress(OSError):
            self.wfile.write(reply)


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = False  # server_close() waits for every accepted request to be answered
    block_on_close = True

    def __init__(self, path: str, service: GatewayService, stop: threading.Event) -> None:
        self.service = service
        self.stop = stop
        super().__init__(path, _UnixHandler, bind_and_activate=False)

    def server_bind(self) -> None:
        """Bind under a temporary name, restrict it, then move it into place atomically."""
        final = self.server_address
        assert isinstance(final, str)
        temporary = f"{final}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        self.socket.bind(temporary)
        os.chmod(temporary, 0o600)
        os.replace(temporary, final)
        self.server_address = final
        self.inode = os.lstat(final).st_ino

    def dispatch(self, header: dict[str, Any], body: bytes) -> bytes:
        """The reply to one request, encoded."""
        op = header.get("op")
        if op == "hook":
            answered = self.service.hook(
                str(header.get("harness")),
                body,
                announce=header.get("announce") is True,
                bash_output=str(header.get("bash_output") or "when-secret"),
            )
            reply = answered.reply
            return encode_hook_reply(reply.exit_code, reply.stdout, reply.stderr)
        return encode_reply(self._json_reply(op, header, body))

    def _json_reply(self, op: object, header: dict[str, Any], body: bytes) -> dict[str, Any]:
        if op == "redact":
            action, text = self.service.redact(
                str(header.get("harness") or "claude-code"),
                str(header.get("session") or ""),
                str(header.get("call") or ""),
                body,
            )
            return {"action": action, "text": text}
        if op == "status":
            return self.service.status()
        if op == "stop":
            self.stop.set()
            return {"ok": True, "stopping": True}
        return {"error": f"unknown op {op!r}"}


class _Lock:
    """The deployment's lock: whoever holds it serves the deployment."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    def try_acquire(self) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
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
    files = gateway_files(spec)
    lock = _Lock(files.lock)
    if not lock.try_acquire():
        lock.release()
        _log.info("another process already serves this deployment", socket=files.socket)
        return EXIT_ALREADY_RUNNING
    try:
        return _serve_locked(spec, sources, audit_flag, settings, files)
    finally:
        lock.release()


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
    http = None
    log_removed = False
    try:
        service = GatewayService(
            spec,
            deployed.policy,
            auditor=deployed.auditor,
            writer=deployed.writer,
            audit_path=plan.path if plan is not None else None,
        )
        if settings.http_port is not None:
            from dsh_policy.policy.hooks.gateway.http_front import start_http

            started = start_http(
                service,
                settings.http_host or "127.0.0.1",
                settings.http_port,
                settings.token_file or files.token,
            )
            if isinstance(started, str):
                _print_errors([PolicyError("--http", 0, 0, started)])
                return 1
            http = started
            service.http_address = f"{settings.http_host or '127.0.0.1'}:{http.server_port}"
        unix = _UnixServer(files.socket, service, stop)
        try:
            unix.server_bind()
            unix.server_activate()
        except OSError as error:
            unix.server_close()
            _print_errors([PolicyError(files.socket, 0, 0, f"cannot listen: {error}")])
            return 1
        threading.Thread(target=unix.serve_forever, name="unix-socket", daemon=True).start()
        if http is not None:
            threading.Thread(target=http.serve_forever, name="http", daemon=True).start()
        _log.info(
            "serving",
            deployment=spec.describe(),
            socket=files.socket,
            http=service.http_address,
            policy=service.policy.digest,
            pid=os.getpid(),
        )
        log_removed = _run_until_stopped(service, stop, settings)
        _stop_unix(unix, files.socket)
        if http is not None:
            http.shutdown()
            http.server_close()
        _log.info("stopped", decisions=service.status()["decisions"])
        return 0 if service.writer is None or service.writer.failure is None else 1
    finally:
        if log_removed:
            # Closing would write a checkpoint into the unlinked file and export its anchor to the
            # log's path, where it would then contradict the next gateway's new log.
            _close_policy_only(deployed)
        else:
            deployed.close()


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


def _run_until_stopped(service: GatewayService, stop: threading.Event, settings: ServeSettings) -> bool:
    """Serve until stopped (SIGTERM/SIGINT, a ``stop`` request, idle, a failed log); True when it
    stopped because the audit log was removed. SIGHUP reloads the policy now."""
    flags = _SignalFlags()
    previous = {
        sig: signal.signal(sig, handler)
        for sig, handler in (
            (signal.SIGTERM, flags.on_stop),
            (signal.SIGINT, flags.on_stop),
            (signal.SIGHUP, flags.on_reload),
        )
    }
    missing_since: float | None = None
    try:
        while not stop.wait(_TICK_SECONDS) and not flags.stop:
            if _log_was_removed(service):
                missing_since = missing_since or time.monotonic()
                if time.monotonic() - missing_since >= LOG_GONE_SECONDS:
                    _log.error("the audit log was removed; leaving so the next hook reopens it",
                               path=service.audit_path)
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
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return False


def _log_was_removed(service: GatewayService) -> bool:
    """True when the audit log's active segment is gone (deleted under a writer that would go on
    appending to the unlinked file). A rotation recreates it at once, so only a lasting absence
    counts (:data:`LOG_GONE_SECONDS`)."""
    return service.audit_path is not None and not os.path.exists(service.audit_path)


def _stop_unix(unix: _UnixServer, path: str) -> None:
    """Unlink the socket (if it is still ours), then answer whatever was already queued."""
    with contextlib.suppress(OSError):
        if os.lstat(path).st_ino == unix.inode:
            os.unlink(path)
    unix.shutdown()
    unix.timeout = 0
    try:
        while select.select([unix.socket], [], [], 0)[0]:
            unix.handle_request()
    except OSError as error:
        if error.errno != errno.EBADF:
            raise
    unix.server_close()  # joins every request thread


def _print_errors(errors: Sequence[PolicyError]) -> None:
    for error in errors:
        _log.error("cannot serve", error=str(error))
