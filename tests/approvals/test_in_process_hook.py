"""A hook that decides in process (no resident gateway answered) takes the same approval path as
the gateway: the ask is queued, waits a bounded time, an approval admits the call once, and the
audit log holds the same records (the queue's events, ``approval`` on the call's record)."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from approval_kit import Deployment
from dsh_policy.audit.verify import verify_log
from dsh_policy.policy.approvals import ApprovalStore
from dsh_policy.policy.cli import main as cli
from dsh_policy.policy.hooks.in_process import adapter
from test_hook_and_cli import FETCH, PACK, Gateway, queue_args

CONFIG = """\
apiVersion: dsh-policy/v1
kind: Gateway
spec:
  packs: [hook-guard.yaml]
  audit: {{path: audit.jsonl, fsync: "off"}}
  approvals:
    folder: queue
    approvers: approvers.yaml
    wait_seconds: {wait}
"""


class Hook:
    """``dsh-policy hook claude-code --config FILE`` decided in this process, as the hook client's
    fallback runs it."""

    def __init__(self, deployment: Deployment, wait: float = 0) -> None:
        shutil.copy(PACK, deployment.folder / "hook-guard.yaml")
        self.config = deployment.folder / "gateway.yaml"
        self.config.write_text(CONFIG.format(wait=wait))
        self.log = deployment.folder / "audit.jsonl"

    def call(
        self,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
        use: str,
        deadline: float | None = None,
    ) -> tuple[int, str, str]:
        payload = {**FETCH, "tool_use_id": use}
        stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", stdin)
        capsys.readouterr()
        code = adapter.main(["claude-code", "--config", str(self.config)], deadline=deadline)
        out, err = capsys.readouterr()
        return code, out, err


def records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def approve(deployment: Deployment, request: str) -> None:
    key = str(deployment.folder / "alice.key")
    assert cli(["approvals", "approve", request, *queue_args(deployment), "--as", "alice", "--key", key]) == 0


def shape(log: Path) -> list[tuple[str, str | None]]:
    """What the approval path wrote, ids aside: each approval record's kind, and each call record's
    kind with its ``approval`` outcome."""
    shown: list[tuple[str, str | None]] = []
    for record in records(log):
        kind = record["kind"]
        if kind.startswith("approval_") or kind.startswith("grant_"):
            shown.append((kind, record.get("status") or record.get("verdict")))
        elif kind == "tool_result":
            shown.append((kind, re.sub(r"apr-[0-9a-f]+", "apr", str(record["decision"]["approval"]))))
        elif kind == "hook_event" and record.get("answer", {}).get("action") == "ask":
            shown.append((kind, re.sub(r"apr-[0-9a-f]+", "apr", str(record["answer"].get("approval")))))
    return shown


def test_in_process_and_gateway_write_the_same_approval_records(
    deployment: Deployment,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hook = Hook(deployment)
    code, _, err = hook.call(monkeypatch, capsys, "toolu_1")
    assert code == 2 and "waiting for approval" in err
    request = re.search(r"request (apr-[0-9a-f]+)", err)
    assert request is not None
    approve(deployment, request.group(1))
    code, out, _ = hook.call(monkeypatch, capsys, "toolu_2")
    assert code == 0 and out == ""  # admitted: the client's own permissions apply
    code, _, err = hook.call(monkeypatch, capsys, "toolu_3")
    assert code == 2 and request.group(1) not in err  # single use: a new request
    assert verify_log([hook.log]).intact
    in_process = shape(hook.log)
    assert ("approval_used", None) in in_process
    used = [r for r in records(hook.log) if r["kind"] == "approval_used"]
    assert [r["request"] for r in used] == [request.group(1)] and used[0]["approvers"] == ["alice"]
    admitted = [r for r in records(hook.log) if r["kind"] == "hook_event" and r["answer"].get("approval")]
    assert [r["answer"]["approval"] for r in admitted] == [f"approved:{request.group(1)}"]

    # The same sequence through the resident gateway's service, on a queue of its own.
    other = tmp_path / "gateway-side"
    other.mkdir()
    for name in ("alice.key", "alice.pub", "bob.pub", "approvers.yaml"):
        shutil.copy(deployment.folder / name, other / name)
    side = Deployment(other, other / "approvers.yaml")
    gateway = Gateway(side, other / "audit.jsonl")
    first = gateway.call(use="toolu_1")
    found = re.search(r"request (apr-[0-9a-f]+)", first.stderr)
    assert found is not None
    approve(side, found.group(1))
    assert gateway.call(use="toolu_2").exit_code == 0
    assert gateway.call(use="toolu_3").exit_code == 2
    gateway.writer.close()
    assert shape(other / "audit.jsonl") == in_process


def test_an_approval_given_during_the_in_process_wait_admits_the_call(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = Hook(deployment, wait=20)
    store = ApprovalStore(deployment.folder / "queue")
    stop = threading.Event()

    def approver() -> None:  # an approver who answers as soon as the request shows
        while not stop.is_set():
            pending = [r["id"] for r in store.read()["requests"].values() if r["status"] == "pending"]
            if pending:
                approve(deployment, pending[0])
                return
            time.sleep(0.05)

    thread = threading.Thread(target=approver)
    thread.start()
    try:
        code, out, err = hook.call(monkeypatch, capsys, "toolu_1")
    finally:
        stop.set()
        thread.join(timeout=30)
    assert code == 0 and "permissionDecision" not in out, err  # (out also holds the approver's CLI)
    kinds = [r["kind"] for r in records(hook.log)]
    assert kinds.index("approval_requested") < kinds.index("approval_decided") < kinds.index("approval_used")
    assert kinds.index("approval_used") < kinds.index("hook_event")
    assert verify_log([hook.log]).intact


def test_the_wait_ends_in_time_for_the_hook_to_answer(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client with one second left gets its answer now (refused, naming the request), not after
    the deployment's 60 s wait."""
    hook = Hook(deployment, wait=60)
    code, _, err = hook.call(monkeypatch, capsys, "toolu_1", deadline=time.monotonic() + 1.0)
    assert code == 2 and "waiting for approval: request apr-" in err
    (record,) = [r for r in records(hook.log) if r["kind"] == "tool_result"]
    assert record["decision"]["denied_by"] == "approval"
    assert record["decision"]["approval"].startswith("pending:apr-")


def test_without_an_audit_log_the_queue_keeps_its_events_for_the_gateway(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = Hook(deployment)
    audit_line = '  audit: {path: audit.jsonl, fsync: "off"}\n'
    hook.config.write_text(hook.config.read_text().replace(audit_line, ""))
    code, _, _ = hook.call(monkeypatch, capsys, "toolu_1")
    assert code == 2 and not hook.log.exists()
    journal = ApprovalStore(deployment.folder / "queue").read()["journal"]
    assert [entry["kind"] for entry in journal] == ["approval_requested"]
