"""An approval queue for the adapters' headless tests (``approvals: {embedded: queue}``): an approver
with a real Ed25519 key, and a thread that approves the first request that shows while a run waits.
(The LangGraph proof with the real ``dsh-policy approvals`` command is tests/approvals/.)"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from dsh_policy.audit.keys import load_private_key, write_key_pair
from dsh_policy.policy.approvals import ApprovalChannel, ApprovalQueue, ApprovalStore, load_approvers
from dsh_policy.policy.approvals.calls import QueueApprover
from dsh_policy.policy.config import ApprovalSettings

T = TypeVar("T")
#: The hook-guard pack asks about fetches from hosts it does not list.
ASKED_URL = "https://paste.example.net/raw/abc"
APPROVERS = """\
apiVersion: dsh-policy/v1
kind: Approvers
approvers:
  - {name: alice, public_key: alice.pub, rules: ["*"]}
"""


def queue_approver_in(folder: Path, wait: float = 60) -> QueueApprover:
    """A queue in ``folder`` with alice as its one approver; calls wait up to ``wait`` seconds
    (an answer ends the wait at once)."""
    write_key_pair(folder / "alice")
    (folder / "approvers.yaml").write_text(APPROVERS)
    settings = ApprovalSettings(
        folder=str(folder / "queue"), approvers=str(folder / "approvers.yaml"), wait_seconds=wait
    )
    return QueueApprover(ApprovalChannel(settings))


def approved_while_waiting(folder: Path, run: Callable[[], T]) -> T:
    """``run()`` while alice approves, with her key, the first request that reaches the queue."""
    stop = threading.Event()

    def approve() -> None:
        store = ApprovalStore(folder / "queue")
        while not stop.is_set():
            pending = [r["id"] for r in store.read()["requests"].values() if r["status"] == "pending"]
            if pending:
                approvers: Any = load_approvers(folder / "approvers.yaml")
                key = load_private_key(folder / "alice.key")
                ApprovalQueue(store, approvers).decide(pending[0], "alice", key, "approve")
                return
            time.sleep(0.05)

    thread = threading.Thread(target=approve)
    thread.start()
    try:
        return run()
    finally:
        stop.set()
        thread.join(timeout=60)


def tool_results(log: Path) -> list[dict[str, Any]]:
    """The ``tool_result`` records of a log, as written."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return [record for record in records if record["kind"] == "tool_result"]
