"""How every channel waits for an approval: one function, the same answer everywhere.

A hook, the MCP proxy and the framework adapters each reach a point where a rule said ``ask`` and
nobody at a terminal can answer. They hand the call's :class:`~.binding.CallBinding` to
:meth:`ApprovalChannel.admit`, which consults the queue just before the tool would run, waits a
bounded time for an approver (polling the queue file, which changes when someone decides), and
returns a :class:`Gate`: run the call (approved once, or granted), or refuse it with a message that
names the request so a person can find it (``dsh-policy approvals approve apr-...``) and the agent
can make the same call again once it is approved.

Anything that goes wrong (an unreadable queue or approvers file) refuses the call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from dsh_policy.policy.approvals.approvers import Approvers, load_approvers
from dsh_policy.policy.approvals.binding import CallBinding
from dsh_policy.policy.approvals.notify import Notifier
from dsh_policy.policy.approvals.queue import Admitted, ApprovalQueue, Refused, iso
from dsh_policy.policy.approvals.store import ApprovalStore, ApprovalStoreError
from dsh_policy.policy.config import ApprovalSettings

_log = structlog.get_logger("dsh_policy.approvals")

Recorder = Callable[[str, dict[str, Any]], None]
POLL_SECONDS = 0.1
RECHECK_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Gate:
    """A channel's answer: ``allowed`` or refused with ``message``; ``approval`` is what the audit
    record of the call says about it (``approved:apr-...``, ``granted:grt-...``, ``pending:apr-...``,
    ``denied:apr-...``, ``unavailable``)."""

    allowed: bool
    message: str
    approval: str
    approvers: tuple[str, ...] = ()


class ApprovalChannel:
    """One deployment's queue as the channels see it."""

    def __init__(
        self,
        settings: ApprovalSettings,
        *,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.store = ApprovalStore(settings.folder)
        self.clock, self.monotonic, self.sleep = clock, monotonic, sleep
        self.notifier = Notifier(settings.webhook) if settings.webhook is not None else None

    def queue(self) -> ApprovalQueue | str:
        """The queue judged by the approvers file as it is now (edits count from the next call);
        a string when the file cannot be read."""
        approvers: Approvers | None = None
        if self.settings.approvers is not None:
            loaded = load_approvers(self.settings.approvers)
            if isinstance(loaded, list):
                return "; ".join(str(error) for error in loaded)
            approvers = loaded
        return ApprovalQueue(self.store, approvers, clock=self.clock)

    def admit(
        self,
        binding: CallBinding,
        *,
        message: str,
        shown_args: Any,
        record: Recorder | None,
        wait_seconds: float | None = None,
    ) -> Gate:
        """Admit the call if an approval or a grant holds it, else wait up to ``wait_seconds``
        (the deployment's by default) for one; never raises. ``record`` takes the queue's journaled
        events (an audit log); without one they stay journaled for the next channel that records."""
        wait = self.settings.wait_seconds if wait_seconds is None else wait_seconds
        notices: list[threading.Thread] = []
        try:
            return self._admit(binding, message, shown_args, record, wait, notices)
        except ApprovalStoreError as error:
            _log.error("approval queue unusable", error=str(error))
            return Gate(False, f"{message} (approval queue unusable, refusing: {error})", "unavailable")
        finally:
            for notice in notices:  # mostly sent while the call waited; bounded by its timeout
                notice.join(self.notifier.timeout if self.notifier is not None else 0)

    def _admit(
        self,
        binding: CallBinding,
        message: str,
        shown_args: Any,
        record: Recorder | None,
        wait: float,
        notices: list[threading.Thread],
    ) -> Gate:
        deadline = self.monotonic() + wait
        while True:
            queue = self.queue()
            if isinstance(queue, str):
                return Gate(False, f"{message} (approvers file unusable, refusing: {queue})", "unavailable")
            consulted = queue.consult(
                binding, message=message, shown_args=shown_args, pending_seconds=self.settings.pending_seconds
            )
            if record is not None:  # else the events wait for a channel that records them
                queue.drain_journal(record)
            if isinstance(consulted, Admitted):
                kind = "approved" if consulted.via == "approval" else "granted"
                who = ", ".join(consulted.approvers)
                return Gate(
                    True, f"{kind} by {who} ({consulted.id})", f"{kind}:{consulted.id}", consulted.approvers
                )
            if isinstance(consulted, Refused):
                return Gate(
                    False,
                    f"{message} (denied by approver {consulted.approver}, request {consulted.request}:"
                    f" {consulted.reason})",
                    f"denied:{consulted.request}",
                    (consulted.approver,),
                )
            assert consulted is not None  # consult opens a request when none exists
            if consulted.created and self.notifier is not None:
                notices.append(
                    self.notifier.announce(self._notice(consulted.request, binding, message, shown_args))
                )
            if self.monotonic() >= deadline:
                return Gate(
                    False,
                    f"{message} (waiting for approval: request {consulted.request}; an approver runs"
                    f" 'dsh-policy approvals approve {consulted.request}', then the same call may be"
                    " made again)",
                    f"pending:{consulted.request}",
                )
            self._wait_for_change(deadline)

    def _notice(self, request: str, binding: CallBinding, message: str, shown_args: Any) -> dict[str, Any]:
        """What the webhook says of a new request (the arguments as people may see them)."""
        return {
            "request": request,
            "binding": binding.digest(),
            "client": binding.harness,
            "session": binding.session,
            "agent": binding.agent,
            "tool": binding.tool,
            "args": shown_args,
            "rules": sorted(binding.rules),
            "message": message,
            "expires": iso(int(self.clock()) + self.settings.pending_seconds),
            "approve": f"dsh-policy approvals approve {request}",
        }

    def _wait_for_change(self, deadline: float) -> None:
        """Sleep until the queue file changes, the deadline passes, or ``RECHECK_SECONDS`` (a
        change that landed between the last look and this one is caught by the recheck)."""
        seen = self.store.mtime()
        until = min(deadline, self.monotonic() + RECHECK_SECONDS)
        while self.monotonic() < until and self.store.mtime() == seen:
            self.sleep(min(POLL_SECONDS, max(0.0, until - self.monotonic())))
