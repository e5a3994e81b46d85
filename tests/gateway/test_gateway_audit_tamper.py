"""Tampering with a log the real gateway wrote during a real session is detected, with its line.

The log comes from the README's demo session (the shipped packs, the full loop), signed with a
fresh Ed25519 key, so these tests exercise the records the product actually writes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from dsh_policy.audit.record import seal_record
from dsh_policy.audit.record_hash import genesis_prev
from dsh_policy.audit.verify import VerificationReport, verify_log
from dsh_policy.policy.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def signed_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo session's log and key pair, written once for the module."""
    folder = tmp_path_factory.mktemp("signed-demo")
    assert main(["keygen", "--out", str(folder / "k")]) == 0
    code = main([
        "run", str(ROOT / "examples/sessions/demo.yaml"),
        "--pack", str(ROOT / "rules/baseline.yaml"), "--pack", str(ROOT / "rules/secrets.yaml"),
        "--engine", "python", "--audit", str(folder / "audit.jsonl"),
        "--signing-key", str(folder / "k.key"), "--format", "json",
    ])
    assert code == 0
    return folder


@pytest.fixture
def log(signed_demo: Path, tmp_path: Path) -> Path:
    for item in signed_demo.iterdir():
        if item.name.startswith("audit.jsonl"):
            shutil.copy(item, tmp_path / item.name)
    shutil.copy(signed_demo / "k.pub", tmp_path / "k.pub")
    return tmp_path / "audit.jsonl"


def verify(log: Path) -> VerificationReport:
    return verify_log([log], public_key=str(log.parent / "k.pub"))


def lines(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines(keepends=True)


def first_tool_result(log: Path, decision: str) -> int:
    for index, line in enumerate(lines(log)):
        record = json.loads(line)
        if record["kind"] == "tool_result" and record["decision"]["pre_execute"]["decision"] == decision:
            return index
    raise AssertionError(f"no {decision} record")


def test_the_untouched_log_is_intact(log: Path) -> None:
    report = verify(log)
    assert report.intact and report.signature_mode == "signature-verified"
    assert report.unanchored_records == 0  # the closing checkpoint covers every record


def test_turning_a_deny_into_an_allow_is_a_hash_mismatch_on_that_line(log: Path) -> None:
    index = first_tool_result(log, "deny")
    content = lines(log)
    content[index] = content[index].replace(b'"decision":"deny"', b'"decision":"allow"', 1)
    log.write_bytes(b"".join(content))
    report = verify(log)
    assert not report.intact
    assert report.first_error is not None
    assert (report.first_error.reason, report.first_error.line) == ("HASH_MISMATCH", index + 1)


def test_a_deleted_record_is_detected_where_it_was(log: Path) -> None:
    index = first_tool_result(log, "deny")
    content = lines(log)
    del content[index]
    log.write_bytes(b"".join(content))
    report = verify(log)
    assert report.first_error is not None
    assert report.first_error.reason in {"PREV_MISMATCH", "SEQ_GAP"}
    assert report.first_error.line == index + 1


def test_two_swapped_records_are_detected(log: Path) -> None:
    index = first_tool_result(log, "deny")
    content = lines(log)
    content[index], content[index + 1] = content[index + 1], content[index]
    log.write_bytes(b"".join(content))
    report = verify(log)
    assert report.first_error is not None and report.first_error.line == index + 1


def test_an_inserted_record_is_detected(log: Path) -> None:
    index = first_tool_result(log, "allow")
    content = lines(log)
    content.insert(index + 1, content[index])
    log.write_bytes(b"".join(content))
    report = verify(log)
    assert report.first_error is not None and report.first_error.line == index + 2


def test_a_rehashed_forgery_of_the_whole_log_fails_the_signed_checkpoints(log: Path) -> None:
    forged: list[bytes] = []
    head: str | None = None
    for line in lines(log):
        record = orjson.loads(line)
        del record["hash"]
        if record["kind"] == "tool_result" and record["decision"]["pre_execute"]["decision"] == "deny":
            record["decision"]["pre_execute"]["decision"] = "allow"
        record["prev"] = head if head is not None else genesis_prev(record["log_id"])
        sealed = seal_record(record)
        head = sealed.hash
        forged.append(sealed.line + b"\n")
    log.write_bytes(b"".join(forged))
    report = verify(log)
    assert not report.intact
    assert {"CHECKPOINT_MISMATCH", "CHECKPOINT_SIGNATURE"} & set(report.reason_counts)


def test_a_cut_tail_is_detected_by_the_exported_anchor(log: Path) -> None:
    content = lines(log)
    log.write_bytes(b"".join(content[: len(content) // 2]))
    report = verify(log)
    assert not report.intact
    assert "TRUNCATED" in report.reason_counts


def test_a_torn_last_line_is_a_warning_not_tampering(log: Path) -> None:
    with log.open("ab") as handle:
        handle.write(b'{"v":1,"kind":"tool_res')
    report = verify(log)
    assert report.intact
    assert report.torn_tail is not None
