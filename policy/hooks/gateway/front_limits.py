"""How much the gateway's front ends take from their clients, and for how long: one place.

Each number bounds what a local process can make the gateway spend (``dsh-policy serve`` runs as
the user, so "the attacker" is any process of that user, the agent's tools included):

- ``backlog``: connections the kernel queues before ``accept`` (a burst of 1,000 hooks must queue,
  not fail with ``EAGAIN``; the kernel clamps it to ``net.core.somaxconn``);
- ``max_connections``: connections open at once; past it the accept loop waits (backpressure:
  the kernel's queue holds the rest) instead of opening more;
- ``per_peer``: connections one peer (a process on the Unix socket, an address on HTTP) may hold;
  past it, the peer's oldest connection still waiting for its request is closed to make room,
  or, when none waits, the new one is refused;
- ``header_seconds`` / ``body_seconds`` / ``idle_seconds`` / ``write_seconds``: a connection
  must send its request header, then its body, within these, and take its answer within
  ``write_seconds``; an HTTP keep-alive connection is closed after ``idle_seconds`` between
  requests (slowloris and idle floods cost a connection slot for a bounded time, never a thread);
- ``workers``: decisions run on this many threads (the CPU-bound decision path; one per core),
  never on the event loop, so a slow decision never stops the accept loop;
- ``heartbeat_seconds``: while a Unix-socket request waits for a worker or its decision, the
  gateway tells the client it is alive this often (the client tells a busy gateway from a frozen
  one by it);
- ``behind_seconds``: a request that waited longer than this for a worker counts as the gateway
  falling behind (reported in ``status``, ``doctor`` and the gateway's log).
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass, replace
from typing import Final

_FD_HEADROOM: Final[int] = 64  # the log, the lock, the policy files, the audit writer


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class FrontLimits:
    """The bounds above (defaults for a gateway on a developer machine or a CI runner)."""

    backlog: int = 4096
    max_connections: int = 4096
    per_peer: int = 1024
    header_seconds: float = 5.0
    body_seconds: float = 10.0
    idle_seconds: float = 5.0
    write_seconds: float = 10.0
    workers: int = 0  # 0: one per core
    heartbeat_seconds: float = 0.5
    behind_seconds: float = 1.0

    def resolved(self) -> FrontLimits:
        """Workers sized to the cores, connections to the file descriptors this process may open
        (its soft limit raised to the hard one first)."""
        fds = _raise_fd_limit()
        connections = max(16, min(self.max_connections, fds - _FD_HEADROOM))
        return replace(
            self,
            workers=self.workers or cores(),
            max_connections=connections,
            per_peer=max(1, min(self.per_peer, connections)),
        )


def _raise_fd_limit() -> int:
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            hard = 1 << 16
        if soft == resource.RLIM_INFINITY or soft >= hard:
            return int(hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return int(hard)
    except (ValueError, OSError):
        return 1024
