"""Fail-open losses: counted, the log reopened, and the next record written says how many were lost."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import orjson
import pytest
from audit_helpers import gateway_fields, read_lines
from dsh_policy.audit.losses import ReopeningWriter
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditRecordError, AuditWriteError, AuditWriter
from dsh_policy.audit.writer import append as append_module


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_full_disk_loses_records_that_the_next_written_record_accounts_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "audit.jsonl"
    clock = _Clock()
    log = ReopeningWriter(lambda: AuditWriter.open(path, fsync="always"), clock=clock, retry_seconds=5)
    log.append("tool_result", gateway_fields(0))
    real_write = os.write

    def disk_full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(append_module.os, "write", disk_full)
    for index in range(1, 4):
        with pytest.raises(AuditWriteError):
            log.append("tool_result", gateway_fields(index))
    assert log.lost == 3 and log.writer is None
    monkeypatch.setattr(append_module.os, "write", real_write)
    with pytest.raises(AuditWriteError, match="retried shortly"):  # no reopen before retry_seconds
        log.append("step_rejected", gateway_fields(4))
    clock.now += 5
    receipt = log.append("tool_result", gateway_fields(5))
    log.close()

    records = [orjson.loads(line) for line in read_lines(path)]
    lost_at = next(i for i, r in enumerate(records) if r["kind"] == "records_lost")
    assert records[lost_at + 1]["seq"] == receipt.seq  # reported right before the next record
    assert records[lost_at]["lost"]["count"] == 4
    assert records[lost_at]["lost"]["kinds"] == {"step_rejected": 1, "tool_result": 3}
    assert records[lost_at]["lost"]["last_error"].startswith("the audit log failed")  # the newest error
    report = verify_log([path])
    assert report.intact and report.records_lost == 4 and log.losses.total == 4
    assert not list(tmp_path.glob("audit.jsonl.torn-*"))


def test_a_record_the_caller_gives_up_on_is_counted_by_the_caller(tmp_path: Path) -> None:
    log = ReopeningWriter(lambda: AuditWriter.open(tmp_path / "audit.jsonl", fsync="off"), retry_seconds=0)
    with pytest.raises(AuditRecordError):
        log.append("tool_result", {"ratio": 0.5})
    assert log.lost == 0  # a record error is the caller's to count (it may retry a fitted copy)
    log.note_loss("tool_result", "value outside the record domain")
    log.append("tool_result", gateway_fields(1))
    log.close()
    assert verify_log([tmp_path / "audit.jsonl"]).records_lost == 1


def test_a_log_that_cannot_be_opened_counts_every_record(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"  # a file where the folder should be: the folder cannot be made
    blocker.write_text("x")
    missing = blocker / "audit.jsonl"
    log = ReopeningWriter(lambda: AuditWriter.open(missing, fsync="off"), retry_seconds=0)
    for index in range(3):
        with pytest.raises(AuditWriteError):
            log.append("tool_result", gateway_fields(index))
    assert log.lost == 3
    blocker.unlink()
    log.append("tool_result", gateway_fields(3))  # the writer now creates the folder itself
    log.close()
    assert verify_log([missing]).records_lost == 3


def test_a_fail_open_deployment_reports_its_losses_in_the_log_once_it_can_write_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end through deploy(): the gateway keeps deciding while the disk is full, the losses
    are logged on stderr with a running count, and the log says how many records are missing."""
    import structlog
    from dsh_policy.policy.config import policy_sources
    from dsh_policy.policy.runtime.deployment import Deployment, audit_plan, deploy

    pack = tmp_path / "pack.yaml"
    pack.write_text("apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: p}\nspec:\n  rules: []\n")
    sources = policy_sources([str(pack)], engine="python")
    assert not isinstance(sources, list)
    plan = audit_plan(sources, path=str(tmp_path / "audit.jsonl"), fsync="always", fail_closed=False)
    deployment = deploy(sources, audit=plan, watch=False)
    assert isinstance(deployment, Deployment) and deployment.log is not None and deployment.auditor
    auditor = deployment.auditor
    real_write = os.write

    def disk_full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(append_module.os, "write", disk_full)
    with structlog.testing.capture_logs() as logs:
        for step in range(3):
            auditor.hook_event({"session": "s", "step": step})  # fail-open: no exception
    monkeypatch.setattr(append_module.os, "write", real_write)
    failures = [entry for entry in logs if entry["event"] == "audit write failed"]
    assert [entry["records_lost"] for entry in failures] == [1, 2, 3]
    deployment.log._next_attempt = 0.0  # the retry interval has passed
    auditor.hook_event({"session": "s", "step": 3})
    deployment.close()
    report = verify_log([tmp_path / "audit.jsonl"])
    assert report.intact and report.records_lost == 3
