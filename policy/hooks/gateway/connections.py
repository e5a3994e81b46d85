"""Who holds the gateway's connections, and whether the gateway keeps up: the bookkeeping its
front ends share (all of it on the event loop's thread, so no lock).

:class:`ConnectionTable` admits connections within :class:`~.front_limits.FrontLimits`: at most
``max_connections`` open (the accept loops wait for room: backpressure), at most ``per_peer`` per
peer. A peer at its bound gets room by closing its own oldest connection that has not yet sent a
whole request, however young: a flood of idle or slow connections from one process then evicts
itself, and a prompt request behind it is still served (a connection being decided is never
evicted; a prompt client's connection waits for its request only for the moment it takes to read).

:class:`LoadMonitor` counts how long requests waited for a decision worker. A request that
waited longer than ``behind_seconds`` means the gateway is falling behind its clients; several
in a minute are reported in ``status`` (which ``doctor`` shows) and logged, once a minute.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Final

import anyio
import structlog
from dsh_policy.policy.hooks.gateway.front_limits import FrontLimits

_log = structlog.get_logger("dsh_policy.gateway")

BEHIND_WINDOW_SECONDS: Final[float] = 60.0
BEHIND_COUNT: Final[int] = 5  # this many slow waits in the window: falling behind


class Connection:
    """One open connection: its peer, when it opened, whether it still waits for a request, and
    the scope that closes it when it is evicted."""

    __slots__ = ("idle", "opened", "peer", "released", "scope", "waiting")

    def __init__(self, peer: object) -> None:
        self.peer = peer
        self.opened = time.monotonic()
        self.scope = anyio.CancelScope()  # the current read's (a keep-alive connection has several)
        self.waiting = True  # reading a request: may be evicted
        self.idle = False  # between requests of a keep-alive connection: closed on stop
        self.released = False


class ConnectionTable:
    """Open connections, per peer, within the limits."""

    def __init__(self, limits: FrontLimits) -> None:
        self.limits = limits
        self.open = 0
        self.counts = {"accepted": 0, "refused": 0, "evicted": 0, "timed_out": 0, "framing_errors": 0}
        self._by_peer: dict[object, list[Connection]] = {}
        self._room: anyio.Event | None = None

    async def wait_for_room(self) -> None:
        """Return once another connection may be opened (the caller then accepts one)."""
        while self.open >= self.limits.max_connections:
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()

    def admit(self, peer: object) -> Connection | None:
        """A slot for a new connection of ``peer``, or None when it must be refused."""
        held = self._by_peer.setdefault(peer, [])
        if len(held) >= self.limits.per_peer:
            victim = next((c for c in held if c.waiting), None)  # held is in admission order
            if victim is None:  # every one is being decided: nothing to give way
                self.counts["refused"] += 1
                _log.warning(
                    "connection refused: its peer's connections are all being decided",
                    peer=str(peer),
                    held=len(held),
                    oldest_age_s=round(time.monotonic() - held[0].opened, 1) if held else None,
                )
                return None
            self.counts["evicted"] += 1
            self._forget(victim)
            victim.scope.cancel()
        connection = Connection(peer)
        held.append(connection)
        self.open += 1
        self.counts["accepted"] += 1
        return connection

    def close_idle(self) -> None:
        """Close every keep-alive connection waiting between requests (the gateway is leaving)."""
        for held in list(self._by_peer.values()):
            for connection in list(held):
                if connection.idle:
                    connection.scope.cancel()

    def release(self, connection: Connection) -> None:
        """The connection is closed (idempotent)."""
        if connection.released:
            return
        self._forget(connection)

    def _forget(self, connection: Connection) -> None:
        connection.released = True
        held = self._by_peer.get(connection.peer)
        if held is not None:
            held.remove(connection)
            if not held:
                del self._by_peer[connection.peer]
        self.open -= 1
        if self._room is not None:
            self._room.set()
            self._room = None

    def status(self) -> dict[str, Any]:
        """Open connections and what happened to the others, for ``status``."""
        return {
            "open": self.open,
            "peers": len(self._by_peer),
            "max": self.limits.max_connections,
            "per_peer": self.limits.per_peer,
            **self.counts,
        }


class LoadMonitor:
    """How long requests queue for a decision worker; whether the gateway keeps up."""

    def __init__(self, limits: FrontLimits) -> None:
        self.limits = limits
        self.queued = 0  # waiting for a worker or being decided
        self.decided = 0
        self.max_wait = 0.0
        self.heartbeats = 0
        self._slow: deque[float] = deque(maxlen=1024)  # when each slow wait ended
        self._warned = 0.0

    def waited(self, seconds: float) -> None:
        """A request waited ``seconds`` for its worker."""
        self.max_wait = max(self.max_wait, seconds)
        if seconds <= self.limits.behind_seconds:
            return
        now = time.monotonic()
        self._slow.append(now)
        if self.behind() and now - self._warned >= BEHIND_WINDOW_SECONDS:
            self._warned = now
            _log.warning(
                "falling behind: requests wait for a decision worker",
                waited_s=round(seconds, 3),
                slow_in_last_minute=self._recent(now),
                queued=self.queued,
                workers=self.limits.workers,
            )

    def _recent(self, now: float) -> int:
        return sum(1 for moment in self._slow if now - moment <= BEHIND_WINDOW_SECONDS)

    def behind(self) -> bool:
        """Several requests waited too long in the last minute."""
        return self._recent(time.monotonic()) >= BEHIND_COUNT

    def status(self) -> dict[str, Any]:
        """Queue and worker figures, for ``status`` and ``doctor``."""
        return {
            "workers": self.limits.workers,
            "in_flight": self.queued,
            "decided": self.decided,
            "max_wait_s": round(self.max_wait, 3),
            "slow_waits_last_minute": self._recent(time.monotonic()),
            "behind": self.behind(),
            "heartbeats": self.heartbeats,
        }
