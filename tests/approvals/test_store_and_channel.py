"""The queue file fails closed when damaged, and a channel waits for an approver a bounded time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from approval_kit import Deployment, binding
from dsh_policy.policy.approvals import ApprovalChannel, ApprovalStore, ApprovalStoreError, Waiting
from dsh_policy.policy.config import ApprovalSettings


def channel_for(deployment: Deployment, wait: float = 0.0) -> ApprovalChannel:
    settings = ApprovalSettings(
        folder=str(deployment.folder / "queue"), approvers=str(deployment.approvers_file), wait_seconds=wait
    )
    return ApprovalChannel(settings)


def admit(channel: ApprovalChannel, record: Any = None, **kwargs: Any) -> Any:
    call = binding()
    return channel.admit(call, message="push asks", shown_args=dict(call.args), record=record, **kwargs)


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"{not json", "not valid JSON"),
        (b'{"format": "something else"}', "not an approval queue"),
        (b'{"format": "dsh-policy/approvals/v1", "requests": [], "grants": {}, "journal": []}', "'requests'"),
    ],
)
def test_a_damaged_queue_is_an_error_naming_the_file_and_is_left_alone(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    store = ApprovalStore(tmp_path)
    store.path.write_bytes(content)
    with pytest.raises(ApprovalStoreError, match=problem) as raised:
        store.read()
    assert str(store.path) in str(raised.value)
    assert store.path.read_bytes() == content


def test_a_damaged_queue_refuses_the_call(deployment: Deployment) -> None:
    channel = channel_for(deployment)
    channel.store.folder.mkdir(parents=True)
    channel.store.path.write_bytes(b"\x00garbage")
    gate = admit(channel)
    assert not gate.allowed and gate.approval == "unavailable" and "queue.json" in gate.message


def test_an_unreadable_approvers_file_refuses_the_call(deployment: Deployment) -> None:
    deployment.approvers_file.write_text("apiVersion: dsh-policy/v1\nkind: Approvers\nquorum: 0\n")
    gate = admit(channel_for(deployment))
    assert not gate.allowed and "approvers.yaml" in gate.message and "quorum" in gate.message


def test_a_call_nobody_answers_is_refused_naming_its_request(deployment: Deployment) -> None:
    gate = admit(channel_for(deployment, wait=0.0))
    assert not gate.allowed and gate.approval.startswith("pending:apr-")
    request = gate.approval.split(":", 1)[1]
    assert f"dsh-policy approvals approve {request}" in gate.message


def test_a_waiting_call_runs_when_an_approver_answers_in_time(deployment: Deployment) -> None:
    channel = channel_for(deployment, wait=5.0)
    deployment.clock.now = time.time()  # the channel reads the real clock
    recorded: list[str] = []

    def approve_when_queued() -> None:
        for _ in range(100):
            pending = [
                r for r in deployment.queue().snapshot()["requests"].values() if r["status"] == "pending"
            ]
            if pending:
                deployment.queue().decide(pending[0]["id"], "alice", deployment.keys["alice"], "approve")
                return
            time.sleep(0.02)

    approver = threading.Thread(target=approve_when_queued)
    approver.start()
    started = time.monotonic()
    gate = admit(channel, record=lambda kind, _fields: recorded.append(kind))
    approver.join()
    assert gate.allowed and gate.approvers == ("alice",), gate
    assert time.monotonic() - started < 4
    assert recorded == ["approval_requested", "approval_decided", "approval_used"]
    # used once: the same call again waits on a new request
    again = deployment.queue().consult(binding(), message="m", shown_args={}, create=False)
    assert again is None or isinstance(again, Waiting)
