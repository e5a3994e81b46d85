"""A console over a queue with one pending request, started on 127.0.0.1 and stopped after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from approval_kit import Deployment, binding
from dsh_policy.policy.approvals import ApprovalQueue, Waiting
from dsh_policy.policy.approvals.console.server import Console, start_console
from dsh_policy.policy.approvals.console.sessions import Sessions


@dataclass
class RunningConsole:
    console: Console
    queue: ApprovalQueue
    request: str

    @property
    def origin(self) -> str:
        return self.console.origin

    @property
    def secret(self) -> str:
        return self.console.sessions.login_secret


def pending(queue: ApprovalQueue, command: str) -> str:
    call = binding(command)
    opened: Any = queue.consult(call, message=f"asks about {command}", shown_args=dict(call.args))
    assert isinstance(opened, Waiting)
    return opened.request


@contextmanager
def running_console(deployment: Deployment, sessions: Sessions | None = None) -> Iterator[RunningConsole]:
    import time

    deployment.clock.now = time.time()  # the console's pages read the real clock
    queue = deployment.queue()
    request = pending(queue, "git push origin feature")
    started = start_console(queue, "alice", deployment.keys["alice"], sessions=sessions)
    assert not isinstance(started, str), started
    server, console, thread = started
    try:
        yield RunningConsole(console, queue, request)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
