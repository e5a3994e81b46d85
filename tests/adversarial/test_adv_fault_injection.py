"""Fault injection: each fault has one defined outcome (the table in THREAT_MODEL.md).

Disk faults are injected by patching ``os.write``/``os.fsync``/``os.open`` for the log's own file
descriptors only (the tests run as root on a shared machine, where chmod and tiny filesystems
prove nothing); engine faults by patching a compiled program's ``evaluate``."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import structlog
from adv_kit import TEST_PACKS, GatewayRig, load, records
from dsh_policy.audit.keys import write_key_pair
from dsh_policy.audit.verify import verify_log
from dsh_policy.audit.writer import AuditWriteError, AuditWriter
from dsh_policy.core import Harness, Message, ScriptedModel, define_tool, reply
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from dsh_policy.policy.runtime.gateway import PolicyGateway
from dsh_policy.policy.runtime.reload import ReloadingPolicy

GATEWAY_PACK = TEST_PACKS[0]


def _failing_on(fd_of: Callable[[], int], real: Callable[..., Any], error: int) -> Callable[..., Any]:
    """``real`` that raises OSError(``error``) on the log's descriptor and works for every other."""

    def patched(fd: int, *args: Any) -> Any:
        if fd == fd_of():
            raise OSError(error, os.strerror(error))
        return real(fd, *args)

    return patched


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[Callable[..., GatewayRig]]:
    made: list[GatewayRig] = []

    def make(fail_closed: bool, **writer: Any) -> GatewayRig:
        rig = GatewayRig(load([GATEWAY_PACK]), tmp_path / "audit.jsonl", fail_closed=fail_closed, **writer)
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.close()


def call(rig: GatewayRig, command: str = "ls") -> Any:
    return anyio.run(rig.call, "shell", {"command": command})


# --- the disk under the log ------------------------------------------------------------------------


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS, errno.EIO], ids=["ENOSPC", "EROFS", "EIO"])
def test_a_failed_log_write_makes_a_fail_closed_gateway_refuse_every_later_call(
    rig_factory: Callable[..., GatewayRig], monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    rig = rig_factory(fail_closed=True)
    assert call(rig).is_error is False  # healthy: runs and is logged
    monkeypatch.setattr(os, "write", _failing_on(lambda: rig.writer._file.fd, os.write, error))
    for command in ("ls", "pwd"):
        refused = call(rig, command)
        assert refused.is_error and refused.error is not None
        assert refused.error.code == "AUDIT_UNAVAILABLE"
        assert os.strerror(error) in refused.text or "failed earlier" in refused.text
    monkeypatch.undo()  # the disk recovers, but the writer must not trust its state again
    assert call(rig, "whoami").error.code == "AUDIT_UNAVAILABLE"
    assert [args["command"] for _, args in rig.ran] == ["ls"]
    assert verify_log([rig.log]).intact  # what was written before the fault still verifies


def test_a_failed_log_write_in_a_fail_open_gateway_runs_the_call_and_logs_an_error(
    rig_factory: Callable[..., GatewayRig], monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = rig_factory(fail_closed=False)
    monkeypatch.setattr(os, "write", _failing_on(lambda: rig.writer._file.fd, os.write, errno.ENOSPC))
    with structlog.testing.capture_logs() as logs:
        first, second = call(rig), call(rig, "pwd")
    assert first.is_error is False and second.is_error is False
    assert len(rig.ran) == 2
    failures = [entry for entry in logs if entry["event"] == "audit write failed"]
    assert len(failures) == 2 and all(entry["log_level"] == "error" for entry in failures)
    assert "No space left on device" in failures[0]["error"]


def test_a_short_write_leaves_a_torn_tail_that_verify_reports_as_a_warning(
    rig_factory: Callable[..., GatewayRig], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills mid-record: part of the line lands. The writer stops; the log verifies with
    a torn-tail warning and the next open moves the fragment aside."""
    rig = rig_factory(fail_closed=True)
    real_write = os.write

    def half(fd: int, data: bytes) -> int:
        if fd == rig.writer._file.fd:
            return real_write(fd, data[: len(data) // 2])
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", half)
    assert call(rig).error.code == "AUDIT_UNAVAILABLE"
    monkeypatch.undo()
    report = verify_log([rig.log])
    assert report.intact and report.torn_tail is not None
    with AuditWriter.open(rig.log, fsync="off") as reopened:
        reopened.append("probe", {"ok": True})
    assert [r["kind"] for r in records(rig.log)][-3:] == ["recovery", "probe", "checkpoint"]
    assert verify_log([rig.log]).intact


@pytest.mark.parametrize("mode", ["always", "batch"])
def test_a_failed_fsync_is_fatal_and_a_fail_closed_gateway_refuses(
    rig_factory: Callable[..., GatewayRig], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    rig = rig_factory(fail_closed=True, fsync=mode, batch_records=1, batch_ms=0.0)
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    refused = [call(rig, f"echo {n}") for n in range(3)]
    monkeypatch.setattr(os, "fsync", real_fsync)
    # "always" fails on the first append; "batch" on the flusher's fsync, seen by a later append.
    assert refused[-1].error is not None and refused[-1].error.code == "AUDIT_UNAVAILABLE"
    assert call(rig, "after").error.code == "AUDIT_UNAVAILABLE"
    with pytest.raises(AuditWriteError, match="fsync failed"):
        rig.writer.append("probe", {})
    assert all(args["command"] != "after" for _, args in rig.ran)


def test_a_failed_fsync_in_a_fail_open_gateway_keeps_running(
    rig_factory: Callable[..., GatewayRig], monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = rig_factory(fail_closed=False, fsync="always")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with structlog.testing.capture_logs() as logs:
        results = [call(rig, f"echo {n}") for n in range(3)]
    assert all(result.is_error is False for result in results) and len(rig.ran) == 3
    assert any(entry["event"] == "audit write failed" and "fsync" in entry["error"] for entry in logs)


def test_a_log_that_cannot_be_opened_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only log (EACCES/EROFS at open): AuditWriteError naming the file, no writer."""
    real_open = os.open
    target = str(tmp_path / "audit.jsonl")

    def read_only(path: Any, flags: int, *args: Any) -> int:
        if str(path) == target and flags & (os.O_RDWR | os.O_WRONLY):
            raise PermissionError(errno.EACCES, "Permission denied", target)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(AuditWriteError, match=r"audit\.jsonl"):
        AuditWriter.open(target, fsync="off")


# --- the signing key ---------------------------------------------------------------------------------


@pytest.mark.parametrize("problem", ["missing", "directory", "junk", "public-half", "world-readable"])
def test_an_unusable_signing_key_refuses_to_open_and_writes_nothing(tmp_path: Path, problem: str) -> None:
    (tmp_path / "keys").mkdir()
    pair = write_key_pair(tmp_path / "keys" / "audit")
    key = {
        "missing": tmp_path / "nope.key",
        "directory": tmp_path / "keys",
        "junk": tmp_path / "junk.key",
        "public-half": pair.public_path,
        "world-readable": pair.private_path,
    }[problem]
    if problem == "junk":
        key.write_bytes(b"-----BEGIN PRIVATE KEY-----\n\x00\xff\n")
        key.chmod(0o600)
    if problem == "world-readable":
        key.chmod(0o644)
    log = tmp_path / "logs" / "audit.jsonl"
    log.parent.mkdir()
    with pytest.raises(AuditWriteError, match="signing key"):
        AuditWriter.open(log, fsync="off", signing_key=key)
    assert list(log.parent.iterdir()) == []  # no unsigned log, not even a lock file


# --- the rule files under a reloading gateway ----------------------------------------------------------

_PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {{name: live, version: "1"}}
spec:
  rules:
    - id: deny-it
      stage: pre-execute
      when: 'has(args.command) && args.command.startsWith("{word}")'
      decision: deny
"""


def test_a_pack_deleted_replaced_by_junk_or_a_directory_keeps_the_last_good_policy(tmp_path: Path) -> None:
    """Plain deletion is covered in tests/gateway; here the file goes through every broken state
    and back, and a loader crash is contained too. Each broken state is reported once."""
    pack = tmp_path / "live.yaml"
    pack.write_text(_PACK.format(word="curl"))
    writer = AuditWriter.open(tmp_path / "audit.jsonl", fsync="off")
    holder: dict[str, DecisionAuditor] = {}
    policy = ReloadingPolicy.load_watching(
        [str(pack)], engine="python", interval=3600,
        on_loaded=lambda compiled: holder["auditor"].policy_loaded(compiled.packs) if holder else None,
        on_reload_failed=lambda errors: holder["auditor"].policy_reload_failed(errors),
    )
    assert isinstance(policy, ReloadingPolicy)
    holder["auditor"] = DecisionAuditor(writer, policy)

    def denies(command: str) -> bool:
        verdict = policy.check_tool_call(ToolCallEvent(tool="shell", args={"command": command}))
        return verdict.decision == "deny"

    good = policy.digest
    pack.unlink()
    assert policy.check_now() is False and denies("curl x") and policy.digest == good
    pack.mkdir()
    assert policy.check_now() is False and denies("curl x")
    pack.rmdir()
    pack.write_bytes(b"\xff\xfe junk \x00")
    assert policy.check_now() is False and denies("curl x")
    assert policy.check_now() is False  # the same broken state is not reported again
    pack.write_text(_PACK.format(word="wget"))
    assert policy.check_now() is True
    assert denies("wget x") and not denies("curl x")
    writer.close()
    kinds = [r["kind"] for r in records(tmp_path / "audit.jsonl")]
    # Missing and a directory are one broken state (no readable content), junk is another.
    assert kinds.count("policy_reload_failed") == 2
    assert kinds.count("policy_loaded") == 1  # the restored edit (the first load predates the auditor)
    assert verify_log([tmp_path / "audit.jsonl"]).intact


def test_a_loader_crash_during_reload_keeps_the_last_good_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = tmp_path / "live.yaml"
    pack.write_text(_PACK.format(word="curl"))
    failures: list[Any] = []
    policy = ReloadingPolicy.load_watching([str(pack)], engine="python", interval=3600,
                                           on_reload_failed=failures.append)
    assert isinstance(policy, ReloadingPolicy)
    import dsh_policy.policy.runtime.reload as reload_module

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("simulated loader crash")

    monkeypatch.setattr(reload_module, "build_policy", crash)
    pack.write_text(_PACK.format(word="wget"))
    assert policy.check_now() is False
    assert policy.check_tool_call(ToolCallEvent(tool="shell", args={"command": "curl"})).decision == "deny"
    ((error,),) = failures
    assert "internal error" in error.message


# --- the engine ------------------------------------------------------------------------------------------


class _ExplodingProgram:
    """Stands in for a compiled CEL program whose engine raises (a bug, not an evaluation error)."""

    def evaluate(self, activation: Any) -> Any:
        raise RuntimeError("engine exploded")


def _explode_stage(policy: Policy, stage: str) -> None:
    rules = [rule for rule in policy.compiled.stages[stage].all_rules if rule.when is not None]
    assert rules
    for rule in rules:  # a fresh policy per test, so no need to restore
        object.__setattr__(rule.when, "program", _ExplodingProgram())


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize(
    ("stage", "outcome"),
    [("pre-step", "blocked"), ("pre-execute", "denied"), ("guard", "denied"), ("post-execute", "withheld")],
)
def test_an_engine_raising_inside_evaluate_fails_its_stage_closed_and_the_loop_survives(
    tmp_path: Path, engine: str, stage: str, outcome: str
) -> None:
    policy = load([GATEWAY_PACK], engine)
    _explode_stage(policy, stage)
    ends, results, ran = anyio.run(_session_with_gateway, policy, tmp_path / "audit.jsonl")
    assert len(ends) == 2, "both turns ran to an end: the loop survived"
    if outcome == "blocked":
        assert ends == ["blocked", "blocked"] and results == [] and ran == []
    else:
        assert ends == ["completed", "completed"]
        assert len(results) == 2 and all(r["is_error"] for r in results)
        assert all("policy evaluation failed (RuntimeError: engine exploded)" in r["content"][0]
                   for r in results)
        assert len(ran) == (2 if outcome == "withheld" else 0)
        assert len(records(tmp_path / "audit.jsonl", "tool_result")) == 2
    assert verify_log([tmp_path / "audit.jsonl"]).intact


async def _session_with_gateway(policy: Policy, log: Path) -> tuple[list[str], list[Any], list[Any]]:
    harness = Harness()
    ran: list[Any] = []

    def body(args: Any, _run: Any) -> str:
        ran.append(args)
        return "ok"

    harness.tools.register(define_tool("shell", description="s", execute=body))
    writer = AuditWriter.open(log, fsync="off")
    harness.plugin(PolicyGateway(policy, auditor=DecisionAuditor(writer, policy)))
    model = ScriptedModel([reply(tool_calls=[("shell", '{"command": "ls"}')]), reply("done")] * 2)
    agent = await harness.create_agent(model=model)
    for prompt in ("first", "second"):
        agent.followup(Message.user(prompt))
        await agent.wait_idle()
    writer.close()
    facts = agent.session.facts
    ends = [str(f.data.get("reason")) for f in facts if f.type == "turn/end"]
    return ends, [f.data for f in facts if f.type == "tool/result"], ran
