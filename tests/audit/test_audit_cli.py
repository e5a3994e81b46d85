"""``dsh-policy verify`` and ``keygen``: exit codes, text for people, JSON for machines."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from audit_helpers import WriteLog, read_lines
from dsh_policy.audit.cli import keygen_main, verify_main
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.policy.cli import main as dsh_policy


def test_an_intact_log_exits_0_with_a_verdict_first(
    write_log: WriteLog, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(12, signing_key=key_pair.private_path, checkpoint_every=5)
    assert dsh_policy(["verify", str(path), "--key", str(key_pair.public_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "verdict      INTACT"
    assert f"checked with key {key_pair.key_id}" in out
    assert "every record is covered by a checkpoint signed by the key" in out
    assert "anchored     through seq" in out


def test_without_a_key_the_text_says_signatures_were_not_checked(
    write_log: WriteLog, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(3)
    assert verify_main([str(path)]) == 0
    assert "NOT CHECKED (no --key)" in capsys.readouterr().out


def test_tampering_exits_1_and_names_file_line_seq_and_reason(
    write_log: WriteLog, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(6)
    lines = read_lines(path)
    lines[3] = lines[3].replace(b'"agent":"main"', b'"agent":"mAin"')
    path.write_bytes(b"".join(lines))
    assert dsh_policy(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "verdict      INTEGRITY FAILURE"
    assert f"first error  {path}:4 (seq 3) HASH_MISMATCH" in out
    assert "reasons      HASH_MISMATCH 1" in out


def test_json_output_carries_the_whole_report(
    write_log: WriteLog, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(4)
    lines = read_lines(path)
    del lines[2]
    path.write_bytes(b"".join(lines))
    assert verify_main([str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["intact"] is False
    assert report["first_error"]["reason"] == "SEQ_GAP"
    assert (report["first_error"]["file"], report["first_error"]["line"]) == (str(path), 3)
    assert report["first_error"]["expected"] == "2" and report["first_error"]["actual"] == "3"
    assert report["checkpoints"]["signatures"] == "unsigned-verified"
    assert set(report) >= {"records", "anchored_through", "unanchored_records", "reason_counts", "warnings"}


def test_a_torn_tail_exits_0_with_a_warning(write_log: WriteLog, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_log(3)
    with path.open("ab") as handle:
        handle.write(b'{"call":')
    assert verify_main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "INTACT (with warnings)" in out and "TORN_TAIL" in out


def test_unreadable_input_and_bad_usage_exit_2(
    tmp_path: Path, write_log: WriteLog, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify_main([str(tmp_path / "missing.jsonl")]) == 2
    assert "unreadable" in capsys.readouterr().out
    assert verify_main([]) == 2
    assert verify_main([str(write_log(1)), "--format", "xml"]) == 2
    assert verify_main([str(write_log(1, name="b.jsonl")), "--key", str(tmp_path / "nope.pub")]) == 2
    assert "cannot read key file" in capsys.readouterr().err


def test_keygen_writes_an_owner_only_private_key_and_a_public_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = tmp_path / "signer"
    assert dsh_policy(["keygen", "--out", str(prefix), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["private_key"] == f"{prefix}.key" and result["public_key"] == f"{prefix}.pub"
    assert stat.S_IMODE(Path(f"{prefix}.key").stat().st_mode) == 0o600
    assert Path(f"{prefix}.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert keygen_main(["--out", str(prefix)]) == 2  # never overwrites a key
    assert "refusing to overwrite" in capsys.readouterr().err


def test_keygen_key_signs_checkpoints_that_verify_checks(
    tmp_path: Path, write_log: WriteLog, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = tmp_path / "k"
    assert keygen_main(["--out", str(prefix)]) == 0
    path = write_log(5, signing_key=f"{prefix}.key")
    assert verify_main([str(path), "--key", f"{prefix}.pub"]) == 0
    other = tmp_path / "other"
    assert keygen_main(["--out", str(other)]) == 0
    capsys.readouterr()
    assert verify_main([str(path), "--key", f"{other}.pub"]) == 1
    assert "CHECKPOINT_SIGNATURE" in capsys.readouterr().out


def test_recoveries_are_listed_for_the_auditor(
    write_log: WriteLog, capsys: pytest.CaptureFixture[str]
) -> None:
    from dsh_policy.audit.writer import AuditWriter

    path = write_log(2)
    with path.open("ab") as handle:
        handle.write(b'{"torn')
    AuditWriter.open(path, fsync="off").close()
    assert verify_main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "the writer moved 6 torn byte(s) from offset" in out and "audit.jsonl.torn-000000-" in out
