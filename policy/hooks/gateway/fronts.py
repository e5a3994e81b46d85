"""The gateway's front ends on one anyio event loop, in a thread of its own.

The serving loop of :mod:`.server` stays on the main thread (signals, reloads, idle exit, the
audit log's health); the event loop runs the Unix-socket front (:mod:`.unix_front`) and the
optional loopback HTTP front (:mod:`.http_front`), sharing one :class:`~.connections.ConnectionTable`
(so the bounds hold for both together) and one pool of decision :class:`~.workers.Workers`.

Threads, whatever the load: the main thread, this loop's thread, ``limits.workers`` decision
workers (one per core), the policy watcher and the audit writer's flusher. A slow or idle
connection costs a coroutine and a file descriptor, for at most its deadline.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import anyio
import anyio.from_thread
import structlog
from dsh_policy.policy.hooks.gateway import wire
from dsh_policy.policy.hooks.gateway.connections import ConnectionTable, LoadMonitor
from dsh_policy.policy.hooks.gateway.front_limits import FrontLimits
from dsh_policy.policy.hooks.gateway.http_front import HttpBinding, HttpFront
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.hooks.gateway.unix_front import UnixFront
from dsh_policy.policy.hooks.gateway.workers import Workers

_log = structlog.get_logger("dsh_policy.gateway")


def dispatcher(
    service: GatewayService, on_stop: Callable[[], None]
) -> Callable[[dict[str, Any], bytes], bytes]:
    """What a Unix-socket request asks for, answered (run on a decision worker)."""

    def dispatch(header: dict[str, Any], body: bytes) -> bytes:
        op = header.get("op")
        if op == "hook":
            request = header.get("request")
            answered = service.hook(
                str(header.get("harness")),
                body,
                announce=header.get("announce") is True,
                bash_output=str(header.get("bash_output") or "when-secret"),
                request=request if isinstance(request, str) else None,
            )
            reply = answered.reply
            return wire.encode_hook_reply(reply.exit_code, reply.stdout, reply.stderr)
        if op == "redact":
            action, text = service.redact(
                str(header.get("harness") or "claude-code"),
                str(header.get("session") or ""),
                str(header.get("call") or ""),
                body,
            )
            return wire.encode_reply({"action": action, "text": text})
        if op == "status":
            return wire.encode_reply(service.status())
        if op == "stop":
            on_stop()
            return wire.encode_reply({"ok": True, "stopping": True})
        return wire.encode_reply({"error": f"unknown op {op!r}"})

    return dispatch


class Fronts:
    """Both front ends, started and stopped from the serving loop's thread."""

    def __init__(
        self,
        service: GatewayService,
        limits: FrontLimits,
        unix_sock: socket.socket,
        http: HttpBinding | None,
        on_stop: Callable[[], None],
        *,
        open_to_others: bool = False,
    ) -> None:
        self.service = service
        self.limits = limits
        self.table = ConnectionTable(limits)
        self.monitor = LoadMonitor(limits)
        self.workers = Workers(self.monitor)
        self.unix = UnixFront(
            unix_sock,
            dispatcher(service, on_stop),
            service.status,
            self.table,
            self.workers,
            open_to_others=open_to_others,
        )
        self.http = (
            HttpFront(http, service, service.status, self.table, self.workers) if http is not None else None
        )
        self._portal_cm: Any = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._running: Future[None] | None = None
        self._stopping: anyio.Event | None = None
        self._ready = threading.Event()
        service.load_report = self.load_status

    def load_status(self) -> dict[str, Any]:
        """Connections and decision queue, for ``status`` (read from any thread: plain numbers)."""
        return {"connections": self.table.status(), "decisions": self.monitor.status()}

    def start(self) -> None:
        """Start the event loop thread and begin serving."""
        self._portal_cm = anyio.from_thread.start_blocking_portal(name="gateway-fronts")
        self._portal = self._portal_cm.__enter__()
        self._running = self._portal.start_task_soon(self._run)
        self._ready.wait(30)

    async def _run(self) -> None:
        self._stopping = anyio.Event()
        self._ready.set()
        async with anyio.create_task_group() as fronts:
            fronts.start_soon(self.unix.serve, self._stopping)
            if self.http is not None:
                fronts.start_soon(self.http.serve, self._stopping)

    def failed(self) -> BaseException | None:
        """Why the fronts stopped on their own (a bug), or None while they serve."""
        if self._running is None or not self._running.done():
            return None
        error = self._running.exception() or RuntimeError("the front ends stopped")
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]  # the one failure, named (not "1 sub-exception")
        return error

    def stop(self, timeout: float = 60.0) -> None:
        """Stop accepting, answer what was accepted (and queued, on the Unix socket), then stop
        the loop. Waits at most ``timeout`` seconds for the connections to finish."""
        portal, running = self._portal, self._running
        if portal is None or running is None:
            return
        if self._stopping is not None and not running.done():
            portal.call(self._stopping.set)
        try:
            running.result(timeout)
        except TimeoutError:
            _log.error("connections still open when the gateway left", seconds=timeout)
            portal.call(portal.stop, True)
        except Exception as error:  # a bug in a front, already stopped: leave anyway
            _log.error("front ends stopped with an error", error=f"{type(error).__name__}: {error}")
        try:
            self._portal_cm.__exit__(None, None, None)
        except Exception as error:
            _log.error("event loop did not stop cleanly", error=f"{type(error).__name__}: {error}")
        self._portal = None
        self.workers.stop()
