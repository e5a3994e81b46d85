"""Strict verification with a key, anchors and "not a log", as an auditor and a forger would test it.

Each forgery runs on a log the product really writes: one from ``dsh-policy run`` (the README's
demo session, signed) and one from ``dsh-policy hook`` processes (each opens, appends, checkpoints
and closes the log). Every case checks the reason, the exit status of ``dsh-policy verify`` and
that ``--format json`` carries the same verdict.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from audit_helpers import forge_rechained, gateway_fields, read_lines
from dsh_policy.audit.cli import verify_main
from dsh_policy.audit.keys import KeyPairFiles, write_key_pair
from dsh_policy.audit.record import seal_record
from dsh_policy.audit.record_hash import genesis_prev
from dsh_policy.audit.segments import rotated_segments
from dsh_policy.audit.verify import VerificationReport, verify_log
from dsh_policy.audit.writer import AuditWriter

ROOT = Path(__file__).resolve().parents[2]
HOOK_PAYLOADS = ROOT / "tests/hooks/payloads/claude-code"
HOOK_PACK = ROOT / "tests/hooks/packs/hook-guard.yaml"


def _write_run_log(folder: Path) -> Path:
    """Two ``dsh-policy run`` sessions of the README's demo appending to one signed log."""
    from dsh_policy.policy.cli import main

    assert main(["keygen", "--out", str(folder / "k")]) == 0
    for _ in range(2):  # two sessions: the log holds two closing checkpoints
        code = main([
            "run", str(ROOT / "examples/sessions/demo.yaml"),
            "--pack", str(ROOT / "rules/baseline.yaml"), "--pack", str(ROOT / "rules/secrets.yaml"),
            "--engine", "python", "--audit", str(folder / "audit.jsonl"),
            "--signing-key", str(folder / "k.key"), "--format", "json",
            "--append",  # run starts a fresh log by default (issue 16)
        ])  # fmt: skip
        assert code == 0
    return folder / "audit.jsonl"


def _write_hook_log(folder: Path) -> Path:
    """Two real ``dsh-policy hook`` processes appending to one signed log (two checkpoints).
    They decide in process (``DSH_POLICY_GATEWAY=off``): a resident gateway would hold the log
    open, and a log still being written verifies strictly only once closed."""
    write_key_pair(folder / "k")
    config = folder / "gateway.yaml"
    config.write_text(
        "apiVersion: dsh-policy/v1\nkind: Gateway\nmetadata: {name: hooks}\n"
        f"spec:\n  packs: [{HOOK_PACK}]\n  engine: python\n"
        "  audit:\n    path: audit.jsonl\n    checkpoint_key: k.key\n    fail_closed: true\n"
    )
    for payload in ("pre_tool_use_bash_ls.json", "pre_tool_use_bash_rm_root.json"):
        done = subprocess.run(
            [sys.executable, "-m", "dsh_policy.policy.cli", "hook", "claude-code", "--config", str(config)],
            input=(HOOK_PAYLOADS / payload).read_bytes(),
            capture_output=True,
            timeout=60,
            check=False,
            env={**os.environ, "DSH_POLICY_GATEWAY": "off"},
        )
        assert done.returncode in (0, 2), done.stderr.decode()
    return folder / "audit.jsonl"


@pytest.fixture(scope="module", params=["run", "hooks"])
def pristine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(f"pristine-{request.param}")
    writer: Callable[[Path], Path] = _write_run_log if request.param == "run" else _write_hook_log
    return writer(folder)


@pytest.fixture
def log(pristine: Path, tmp_path: Path) -> Path:
    """A fresh copy of the pristine log (segments and anchor) and its public key."""
    for item in pristine.parent.iterdir():
        if item.name.startswith("audit.jsonl") or item.name == "k.pub":
            shutil.copy(item, tmp_path / item.name)
    return tmp_path / "audit.jsonl"


def _key(log: Path) -> Path:
    return log.parent / "k.pub"


def _cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """Exit status of ``verify --format json`` and its JSON; also checks text mode agrees."""
    capsys.readouterr()
    text_code = verify_main(list(argv))
    capsys.readouterr()
    code = verify_main([*argv, "--format", "json"])
    out = capsys.readouterr().out
    assert code == text_code
    return code, json.loads(out)


def _reasons(report: VerificationReport) -> set[str]:
    return {e.reason.value for e in report.errors}


def _forge(lines: list[bytes]) -> list[bytes]:
    """Rehash and rechain lines as a forger without the key can (old signatures kept)."""
    return forge_rechained(lines)


def _kinds(lines: list[bytes]) -> list[str]:
    return [orjson.loads(line)["kind"] for line in lines]


def test_the_untouched_log_is_intact_and_fully_signed(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _cli(str(log), "--key", str(_key(log)), capsys=capsys)
    assert code == 0 and report["verdict"] == "INTACT" and report["assurance"] == "signed"
    assert report["unsigned_tail"] is None and report["anchor_kind"] == "on-host"
    code, report = _cli(str(log), capsys=capsys)
    assert code == 0 and report["assurance"] == "chain-only"
    assert "nothing proves who wrote it" in report["assurance_note"]
    verify_main([str(log)])
    assert "ONLY THE CHAIN WAS CHECKED: nothing proves who wrote this log" in capsys.readouterr().out


def test_stripped_checkpoints_are_unsigned(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = read_lines(log)
    log.write_bytes(b"".join(_forge([line for line in lines if b'"kind":"checkpoint"' not in line])))
    report = verify_log([log], public_key=_key(log))
    assert "UNSIGNED" in _reasons(report) and report.checkpoints_valid == 0
    code, payload = _cli(str(log), "--key", str(_key(log)), capsys=capsys)
    assert code == 1 and payload["verdict"] == "INTEGRITY_FAILURE"
    assert "UNSIGNED" in payload["reason_counts"]
    code, _ = _cli(str(log), "--key", str(_key(log)), "--live", capsys=capsys)
    assert code == 1  # --live never accepts a log that nothing signed


def test_a_fabricated_log_sealed_with_the_projects_own_code_is_unsigned(
    tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    log_id = "fabricated"
    start = {"v": 1, "log_id": log_id, "seq": 0, "ts": "2026-01-01T00:00:00.000000Z", "kind": "segment_start",
             "prev": genesis_prev(log_id), "segment": {"index": 0, "previous": None},
             "tree": {"size": 0, "frontier": []}}  # fmt: skip
    first = seal_record(start)
    call = {**gateway_fields(1), "v": 1, "log_id": log_id, "seq": 1, "ts": "2026-01-01T00:00:01.000000Z",
            "kind": "tool_result", "prev": first.hash}  # fmt: skip
    path = tmp_path / "fake.jsonl"
    path.write_bytes(first.line + b"\n" + seal_record(call).line + b"\n")
    assert verify_log([path]).intact  # a chain anyone can make
    report = verify_log([path], public_key=key_pair.public_path)
    assert _reasons(report) == {"UNSIGNED"}
    assert report.unsigned_tail is not None
    assert (report.unsigned_tail.count, report.unsigned_tail.first_seq) == (2, 0)
    code, payload = _cli(str(path), "--key", str(key_pair.public_path), capsys=capsys)
    assert code == 1 and payload["unsigned_tail"] == {"count": 2, "first_seq": 0}


def test_a_forgery_keeping_the_early_checkpoints_is_an_unsigned_tail(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = read_lines(log)
    kinds = _kinds(lines)
    keep = kinds.index("checkpoint") + 1  # genuine up to and including the first checkpoint
    rewritten = [
        line.replace(b'"decision":"deny"', b'"decision":"allow"')
        for line, kind in zip(lines[keep:], kinds[keep:], strict=True)
        if kind != "checkpoint"
    ]
    forged = _forge(lines[:keep] + rewritten)
    assert forged[:keep] == lines[:keep]
    log.write_bytes(b"".join(forged))
    log.with_name("audit.jsonl.anchor").unlink()  # a careful forger drops the local anchor too
    report = verify_log([log], public_key=_key(log))
    assert report.first_error is not None and report.first_error.reason.value == "UNSIGNED_TAIL"
    assert report.first_error.seq == keep and report.unsigned_tail is not None
    assert (report.unsigned_tail.count, report.unsigned_tail.first_seq) == (len(rewritten), keep)
    assert _reasons(report) == {"UNSIGNED_TAIL", "ANCHOR_MISSING"}
    code, payload = _cli(str(log), "--key", str(_key(log)), capsys=capsys)
    assert code == 1 and payload["unsigned_tail"] == {"count": len(rewritten), "first_seq": keep}
    # What --live gives up: the same forgery passes, reported as an unsigned tail warning.
    live = verify_log([log], public_key=_key(log), live=True)
    assert live.intact
    assert [w.reason.value for w in live.warnings] == ["UNSIGNED_TAIL", "ANCHOR_MISSING"]
    code, payload = _cli(str(log), "--key", str(_key(log)), "--live", capsys=capsys)
    assert code == 0 and payload["live"] and payload["unsigned_tail"]["count"] == len(rewritten)


@pytest.mark.parametrize("content", [b"", b"not json\n", b'{"a":1}\n{"b":2}\n', b"[1,2]\n"])
def test_what_is_not_a_log_gets_its_own_answer_and_exit_2(
    tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(content)
    report = verify_log([path])
    assert report.not_a_log and not report.intact and report.verdict == "NOT_A_LOG"
    for argv in ([str(path)], [str(path), "--key", str(key_pair.public_path)]):
        code, payload = _cli(*argv, capsys=capsys)
        assert code == 2 and payload["verdict"] == "NOT_A_LOG" and payload["not_a_log"]
    verify_main([str(path)])
    assert capsys.readouterr().out.startswith("verdict      NOT A LOG")


def test_an_on_host_anchor_missing_older_or_foreign_is_reported(
    log: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    anchor = log.with_name("audit.jsonl.anchor")
    current = anchor.read_bytes()
    key = str(_key(log))
    anchor.unlink()
    assert _reasons(verify_log([log], public_key=_key(log))) == {"ANCHOR_MISSING"}
    code, payload = _cli(str(log), capsys=capsys)
    assert code == 0 and [w["reason"] for w in payload["warnings"]] == ["ANCHOR_MISSING"]
    assert _cli(str(log), "--key", key, capsys=capsys)[0] == 1

    older = next(line for line in read_lines(log) if b'"kind":"checkpoint"' in line)
    anchor.write_bytes(older)
    assert older != current
    assert _reasons(verify_log([log], public_key=_key(log))) == {"ANCHOR_STALE"}
    assert _cli(str(log), "--key", key, capsys=capsys)[0] == 1
    code, payload = _cli(str(log), capsys=capsys)
    assert code == 0 and [w["reason"] for w in payload["warnings"]] == ["ANCHOR_STALE"]

    other = tmp_path_factory.mktemp("other")
    with AuditWriter.open(other / "audit.jsonl", fsync="off") as writer:
        writer.append("tool_result", gateway_fields(0))
    shutil.copy(other / "audit.jsonl.anchor", anchor)
    assert _reasons(verify_log([log])) == {"ANCHOR_FOREIGN"}
    assert _cli(str(log), capsys=capsys)[0] == 1
    assert _cli(str(log), "--key", key, capsys=capsys)[0] == 1


def test_a_whole_log_rollback_is_caught_only_by_an_off_host_anchor(
    pristine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's threat model: rolling every file (anchor included) back to an older copy is
    undetectable on the host; the exported anchor kept elsewhere proves it."""
    older = tmp_path / "older"
    older.mkdir()
    for item in pristine.parent.iterdir():
        if item.name.startswith("audit.jsonl") or item.name == "k.pub":
            shutil.copy(item, older / item.name)
    log = older / "audit.jsonl"
    key = str(older / "k.pub")
    signer = pristine.parent / "k.key"
    off_host = tmp_path / "exported.anchor"
    # The log goes on; the operator exports the anchor; then the attacker restores the old copy.
    newer = tmp_path / "newer"
    shutil.copytree(older, newer)
    with AuditWriter.open(newer / "audit.jsonl", fsync="off", signing_key=signer) as writer:
        writer.append("tool_result", gateway_fields(7))
    shutil.copy(newer / "audit.jsonl.anchor", off_host)
    assert verify_log([log], public_key=key).intact  # on the host alone, nothing shows
    assert _cli(str(log), "--key", key, capsys=capsys)[0] == 0
    report = verify_log([log], public_key=key, anchor=off_host)
    assert report.first_error is not None and report.first_error.reason.value == "TRUNCATED"
    code, payload = _cli(str(log), "--key", key, "--anchor", str(off_host), capsys=capsys)
    assert code == 1 and payload["first_error"]["reason"] == "TRUNCATED"
    assert payload["anchor_kind"] == "off-host"
    # And a tail cut after the exported anchor is, like the rollback, invisible to it.
    assert verify_log([newer / "audit.jsonl"], public_key=key, anchor=off_host).intact


def test_a_record_in_a_closed_segment_after_its_rotation_checkpoint_fails(
    tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", rotate_bytes=3000, signing_key=key_pair.private_path) as writer:
        for index in range(8):
            writer.append("tool_result", gateway_fields(index))
    closed = rotated_segments(path)[0][1]
    rotation = orjson.loads(read_lines(closed)[-1])
    assert rotation["checkpoint"]["reason"] == "rotation"
    late = {**gateway_fields(99), "v": 1, "log_id": rotation["log_id"], "seq": rotation["seq"] + 1,
            "ts": rotation["ts"], "kind": "tool_result", "prev": rotation["hash"]}  # fmt: skip
    with closed.open("ab") as handle:
        handle.write(seal_record(late).line + b"\n")
    report = verify_log([path], public_key=key_pair.public_path)
    assert report.first_error is not None and report.first_error.reason.value == "AFTER_ROTATION"
    assert report.first_error.file == str(closed)
    assert _cli(str(path), "--key", str(key_pair.public_path), capsys=capsys)[0] == 1
    assert not verify_log([path]).intact  # the chain alone sees it too


def test_an_unsigned_checkpoint_in_a_signed_log_fails(tmp_path: Path, key_pair: KeyPairFiles) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditWriter.open(path, fsync="off", signing_key=key_pair.private_path) as writer:
        writer.append("tool_result", gateway_fields(0))
    with AuditWriter.open(path, fsync="off") as unsigned:  # a writer deployed without the key
        unsigned.append("tool_result", gateway_fields(1))
    report = verify_log([path], public_key=key_pair.public_path)
    assert _reasons(report) == {"UNSIGNED_CHECKPOINT", "UNSIGNED_TAIL"}
    assert report.unsigned_tail is not None and report.unsigned_tail.count == 2  # the record, its checkpoint
    assert report.first_error is not None and report.first_error.reason.value == "UNSIGNED_CHECKPOINT"


def test_a_key_change_needs_a_hand_over_signed_by_the_key_in_force(
    tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    new_key = write_key_pair(tmp_path / "new")
    for handed_over in (False, True):
        path = tmp_path / f"audit-{handed_over}.jsonl"
        with AuditWriter.open(path, fsync="off", signing_key=key_pair.private_path) as writer:
            writer.append("tool_result", gateway_fields(0))
        previous = key_pair.private_path if handed_over else None
        with AuditWriter.open(
            path, fsync="off", signing_key=new_key.private_path, previous_signing_key=previous
        ) as writer:
            writer.append("tool_result", gateway_fields(1))
        report = verify_log([path], public_key=key_pair.public_path)
        if handed_over:
            assert report.intact, report.errors[:3]
            assert report.key_handovers == 1 and report.unsigned_tail is None
            assert _cli(str(path), "--key", str(key_pair.public_path), capsys=capsys)[0] == 0
        else:
            assert report.first_error is not None and report.first_error.reason.value == "KEY_CHANGE"
            assert _cli(str(path), "--key", str(key_pair.public_path), capsys=capsys)[0] == 1
    # A hand-over forged by the holder of a new key alone (no signature of the key in force).
    path = tmp_path / "audit-True.jsonl"
    lines = read_lines(path)
    at = next(i for i, line in enumerate(lines) if b'"kind":"key_handover"' in line)
    record = orjson.loads(lines[at])
    record["handover"]["from_signature"] = record["handover"]["to_signature"]
    del record["hash"]
    lines[at] = seal_record(record).line + b"\n"
    path.write_bytes(b"".join(_forge(lines)))
    assert "KEY_CHANGE" in _reasons(verify_log([path], public_key=key_pair.public_path))


def test_records_lost_by_a_fail_open_writer_are_reported(tmp_path: Path) -> None:
    from dsh_policy.audit.losses import ReopeningWriter

    path = tmp_path / "audit.jsonl"
    log = ReopeningWriter(lambda: AuditWriter.open(path, fsync="off"), retry_seconds=0)
    log.append("tool_result", gateway_fields(0))
    log.note_loss("tool_result", "disk full")
    log.note_loss("step_rejected", "disk full")
    log.append("tool_result", gateway_fields(1))
    log.close()
    report = verify_log([path])
    assert report.intact and report.records_lost == 2
    assert [w.reason.value for w in report.warnings] == ["RECORDS_LOST"]
    assert report.to_json()["records_lost"] == 2
    (lost,) = [orjson.loads(line) for line in read_lines(path) if b'"kind":"records_lost"' in line]
    assert lost["lost"]["count"] == 2 and lost["lost"]["kinds"] == {"step_rejected": 1, "tool_result": 1}


def test_a_log_still_being_written_verifies_only_with_live(
    tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "audit.jsonl"
    writer = AuditWriter.open(path, fsync="off", checkpoint_every=4, signing_key=key_pair.private_path)
    try:
        for index in range(6):  # a checkpoint after 4 (with segment_start), then 3 more records
            writer.append("tool_result", gateway_fields(index))
        key = str(key_pair.public_path)
        code, payload = _cli(str(path), "--key", key, capsys=capsys)
        assert code == 1 and payload["first_error"]["reason"] == "UNSIGNED_TAIL"
        assert payload["unsigned_tail"] == {"count": 3, "first_seq": 5}
        code, payload = _cli(str(path), "--key", key, "--live", capsys=capsys)
        assert code == 0 and payload["verdict"] == "INTACT" and payload["live"] is True
        assert [w["reason"] for w in payload["warnings"]] == ["UNSIGNED_TAIL"]
        verify_main([str(path), "--key", key, "--live"])
        assert "NOT covered by a signed checkpoint (--live: accepted unproven)" in capsys.readouterr().out
    finally:
        writer.close()
    assert _cli(str(path), "--key", str(key_pair.public_path), capsys=capsys)[0] == 0  # closed: all signed
