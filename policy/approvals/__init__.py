"""Approvals that leave the terminal (docs/approvals.md).

An ``ask`` in a run nobody watches becomes a request in a durable queue, bound to the exact call
(:mod:`.binding`); people listed in the deployment's approvers file (:mod:`.approvers`) answer it
with Ed25519-signed decisions or time-boxed grants (:mod:`.signing`, :mod:`.queue`); every channel
waits for the answer the same way (:mod:`.channel`). The queue lives on disk (:mod:`.store`).
"""

from dsh_policy.policy.approvals.approvers import Approver, Approvers, load_approvers
from dsh_policy.policy.approvals.binding import CallBinding
from dsh_policy.policy.approvals.channel import ApprovalChannel, Gate
from dsh_policy.policy.approvals.queue import Admitted, ApprovalQueue, QueueError, Refused, Waiting
from dsh_policy.policy.approvals.store import ApprovalStore, ApprovalStoreError

__all__ = [
    "Admitted",
    "ApprovalChannel",
    "ApprovalQueue",
    "ApprovalStore",
    "ApprovalStoreError",
    "Approver",
    "Approvers",
    "CallBinding",
    "Gate",
    "QueueError",
    "Refused",
    "Waiting",
    "load_approvers",
]
