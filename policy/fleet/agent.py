"""The gateway's side of the fleet: follow signed bundles, ship evidence, report status.

One :class:`FleetAgent` per gateway runs an asyncio loop on a thread of its own, so nothing it
does (a slow bus, a compile, a reconnect) is ever on the decision path:

- it watches the bundles bucket; a new bundle is checked (:func:`.bundle.accept`: publisher,
  signature, revision), compiled in a scratch folder and put on disk (:func:`.materialize.install`),
  where the resident gateway's reload path picks it up; a refusal is reported and changes nothing;
- it ships the audit log's lines (:class:`.shipper.Shipper`) every ``ship_interval``;
- it puts a status document in the status bucket every ``status_interval``.

With the bus down every one of these waits and retries; the gateway keeps deciding with the last
good bundle on disk, and the log keeps what waits to be shipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import structlog
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from dsh_policy.policy.fleet.bundle import Refusal, accept
from dsh_policy.policy.fleet.bus import (
    BUNDLE_KEY,
    bundles_bucket,
    connect,
    ensure_evidence,
    report_subject,
    status_bucket,
    status_key,
)
from dsh_policy.policy.fleet.materialize import Active, AuditSection, install, read_active
from dsh_policy.policy.fleet.shipper import Shipper

_log = structlog.get_logger("dsh_policy.fleet")


@dataclass(frozen=True, slots=True)
class AgentSettings:
    url: str
    state: Path
    publishers: Mapping[str, Ed25519PublicKey]
    audit_log: str | None = None
    audit_section: AuditSection | None = None
    host: str = field(default_factory=socket.gethostname)
    user: str = field(default_factory=getpass.getuser)
    gateway: str = "default"
    ship_interval: float = 0.2
    status_interval: float = 2.0
    ship_batch: int = 512


class FleetAgent:
    """See the module docstring. ``in_force()`` tells what the resident gateway decides with
    (``policy_digest``, ``decisions``, ``healthy``); None when no gateway runs in this process."""

    def __init__(
        self, settings: AgentSettings, in_force: Callable[[], dict[str, Any] | None] | None = None
    ) -> None:
        self.settings = settings
        self.in_force = in_force
        settings.state.mkdir(parents=True, exist_ok=True)
        self.active: Active | None = read_active(settings.state)
        self.last_refusal: dict[str, Any] | None = None
        self.refusals: list[Refusal] = []
        self.connected = False
        self.installed = threading.Event()  # set each time a bundle is put in force
        self._pending_reports: list[dict[str, Any]] = []
        self._seen: set[int] = set()
        self.shipper = (
            Shipper(settings.audit_log, settings.host, batch=settings.ship_batch, on_finding=self._finding)
            if settings.audit_log
            else None
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None

    # --- bundles -------------------------------------------------------------------------------

    def consider(self, data: bytes, put: int | None = None) -> Active | Refusal | None:
        """Check and install one bundle; None when the bucket's write ``put`` (its KV revision)
        was considered already (the watch and the periodic read both see each write)."""
        if put is not None:
            if put in self._seen:
                return None
            self._seen.add(put)
        active = self.active
        accepted = accept(
            data,
            self.settings.publishers,
            active.revision if active else None,
            active.policy_digest if active else None,
        )
        verdict = (
            accepted
            if isinstance(accepted, Refusal)
            else install(self.settings.state, accepted, self.settings.audit_section)
        )
        if isinstance(verdict, Refusal):
            if verdict.reason == "REPLAY":
                return verdict  # the revision in force, seen again: nothing to report
            self.refusals.append(verdict)
            self.last_refusal = verdict.to_json()
            _log.error("fleet bundle refused", **verdict.to_json())
            self._pending_reports.append({"kind": "refused", **self._who(), **verdict.to_json()})
            return verdict
        self.active = verdict
        _log.info("fleet bundle installed", revision=verdict.revision, digest=verdict.policy_digest)
        self.installed.set()
        return verdict

    def _finding(self, finding: dict[str, Any]) -> None:
        _log.error("fleet shipper finding", **finding)
        self._pending_reports.append({"kind": "finding", **self._who(), **finding})

    def _who(self) -> dict[str, Any]:
        return {
            "host": self.settings.host,
            "gateway": self.settings.gateway,
            "user": self.settings.user,
            "at": time.time(),
        }

    async def sync_once(self, timeout: float = 5.0) -> bool:
        """Fetch the newest bundle once (start-up); False when the bus did not answer."""
        try:
            connection = await asyncio.wait_for(connect(self.settings.url, max_reconnect_attempts=0), timeout)
        except Exception:
            return False
        try:
            bucket = await bundles_bucket(connection.jetstream())
            with contextlib.suppress(Exception):
                entry = await bucket.get(BUNDLE_KEY)
                if entry.value:
                    await asyncio.to_thread(self.consider, entry.value, entry.revision)
            return True
        except Exception:
            return False
        finally:
            await connection.close()

    # --- the loop ------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        gateway = self.in_force() if self.in_force is not None else None
        shipper = self.shipper
        return {
            **self._who(),
            "reported_at": time.time(),
            "revision": self.active.revision if self.active else None,
            "policy_digest": self.active.policy_digest if self.active else None,
            "publisher": self.active.key_id if self.active else None,
            "deciding_with": gateway.get("policy_digest") if gateway else None,
            "decisions": gateway.get("decisions", 0) if gateway else 0,
            "healthy": bool(gateway.get("ok", True)) if gateway else self.active is not None,
            "log_id": shipper.cursor.log_id if shipper else None,
            "shipped_seq": shipper.cursor.seq if shipper else None,
            "shipped": shipper.state.shipped if shipper else 0,
            "backlog": shipper.state.backlog if shipper else 0,
            "ship_error": shipper.state.last_error if shipper else None,
            "last_refusal": self.last_refusal,
            "pid": os.getpid(),
        }

    async def run(self) -> None:
        """Until :meth:`stop`: reconnecting forever, following bundles, shipping, reporting."""
        self._stopping = asyncio.Event()
        connection = None
        while connection is None:  # the bus may be down when the gateway starts
            try:
                connection = await connect(self.settings.url)
            except Exception:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), 0.5)
                if self._stopping.is_set():
                    return
        try:
            js = connection.jetstream()
            tasks = [
                asyncio.create_task(self._follow(js)),
                asyncio.create_task(self._ship(connection, js)),
                asyncio.create_task(self._report(js)),
            ]
            await self._stopping.wait()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # Leaving: ship what the log holds now and say so, if the bus lets us.
            if self.shipper is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.shipper.ship_all(connection), 5.0)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._put_status(js), 2.0)
        finally:
            with contextlib.suppress(Exception):
                await connection.close()

    async def _follow(self, js: Any) -> None:
        while True:
            try:
                bucket = await bundles_bucket(js)
                with contextlib.suppress(Exception):
                    entry = await bucket.get(BUNDLE_KEY)
                    if entry.value:
                        await asyncio.to_thread(self.consider, entry.value, entry.revision)
                watcher = await bucket.watch(BUNDLE_KEY)
                polled = time.monotonic()
                while True:
                    with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                        entry = await watcher.updates(timeout=1.0)
                        if entry is not None and entry.value:
                            await asyncio.to_thread(self.consider, entry.value, entry.revision)
                    if time.monotonic() - polled > 5.0:  # a watch lost in a server restart
                        polled = time.monotonic()
                        entry = await bucket.get(BUNDLE_KEY)
                        if entry.value:
                            await asyncio.to_thread(self.consider, entry.value, entry.revision)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                _log.debug("fleet bundle watch interrupted; retrying", error=str(error))
                await asyncio.sleep(0.5)

    async def _ship(self, connection: Any, js: Any) -> None:
        ready = False
        while True:
            try:
                if not ready:
                    await ensure_evidence(js)
                    ready = True
                await self._flush_reports(js)
                if self.shipper is not None:
                    shipped = await self.shipper.ship_once(connection)
                    if shipped:
                        continue  # a backlog: keep going
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if self.shipper is not None:
                    self.shipper.state.last_error = f"{type(error).__name__}: {error}"
            await asyncio.sleep(self.settings.ship_interval)

    async def _flush_reports(self, js: Any) -> None:
        while self._pending_reports:
            report = self._pending_reports[0]
            await js.publish(report_subject(self.settings.host), orjson.dumps(report), timeout=2.0)
            self._pending_reports.pop(0)

    async def _report(self, js: Any) -> None:
        while True:
            with contextlib.suppress(Exception):
                await self._put_status(js)
            await asyncio.sleep(self.settings.status_interval)

    async def _put_status(self, js: Any) -> None:
        bucket = await status_bucket(js)
        document = await asyncio.to_thread(self.status)
        await bucket.put(status_key(self.settings.host, self.settings.gateway), orjson.dumps(document))

    # --- on a thread ---------------------------------------------------------------------------

    def start(self) -> None:
        """Run :meth:`run` on a daemon thread with its own event loop."""
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()

        def main() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.call_soon(ready.set)
            try:
                self._loop.run_until_complete(self.run())
            except Exception as error:
                _log.error("fleet agent stopped", error=f"{type(error).__name__}: {error}")
            finally:
                self._loop.close()

        self._thread = threading.Thread(target=main, name="dsh-policy-fleet", daemon=True)
        self._thread.start()
        ready.wait(5)

    def stop(self, timeout: float = 10.0) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        while self._stopping is None and thread.is_alive():
            time.sleep(0.01)
        if self._stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stopping.set)
        thread.join(timeout)
        self._thread = None
