"""The auditor's scenarios of docs/auditors-guide.md: what was handed over, the verdict, the exit code.

An untouched, signed, rotated log is handed over in the ways an auditor receives one: without its
anchor, renamed, with an off-host anchor, with the host's own anchor passed as ``--anchor``, with a
foreign anchor, and with ``--require-anchor``. Each case checks the exit status of ``dsh-policy
verify`` in text and JSON modes and the words the guide promises.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import gateway_fields
from dsh_policy.audit.cli import verify_main
from dsh_policy.audit.keys import KeyPairFiles
from dsh_policy.audit.verify.anchors import NO_ANCHOR
from dsh_policy.audit.writer import AuditWriter


@pytest.fixture
def host(tmp_path: Path, key_pair: KeyPairFiles) -> Path:
    """A closed, signed log of three segments as the writer left it on the host."""
    folder = tmp_path / "host"
    folder.mkdir()
    path = folder / "audit.jsonl"
    with AuditWriter.open(
        path, fsync="off", signing_key=key_pair.private_path, rotate_bytes=20_000, checkpoint_every=10
    ) as writer:
        for index in range(40):
            writer.append("tool_result", gateway_fields(index))
    assert len(list(folder.glob("audit.jsonl.0*"))) >= 2
    return path


def _run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict[str, Any]]:
    """Exit status, text report and JSON report (the two modes must agree on the exit status)."""
    capsys.readouterr()
    code = verify_main(list(argv))
    text = capsys.readouterr().out
    assert verify_main([*argv, "--format", "json"]) == code
    return code, text, json.loads(capsys.readouterr().out)


def _hand_over(host: Path, to: Path, name: str, *, with_anchor: bool) -> Path:
    """Copy the log's segments into ``to`` under ``name`` (and its anchor, under its old name)."""
    to.mkdir()
    for item in host.parent.iterdir():
        if item.name == host.name or item.name.startswith(host.name + ".0"):
            shutil.copy(item, to / item.name.replace(host.name, name, 1))
    if with_anchor:
        shutil.copy(host.with_name(host.name + ".anchor"), to / (host.name + ".anchor"))
    return to / name


def test_log_and_public_key_without_anchor_is_intact_and_says_what_it_cannot_exclude(
    host: Path, tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _hand_over(host, tmp_path / "auditor", "audit.jsonl", with_anchor=False)
    code, text, report = _run(str(log), "--key", str(key_pair.public_path), capsys=capsys)
    assert code == 0 and report["verdict"] == "INTACT" and report["assurance"] == "signed"
    assert report["unsigned_tail"] is None and report["anchor_file"] is None
    assert report["tail_proven"] is False and report["anchor_note"] == NO_ANCHOR
    assert [w["reason"] for w in report["warnings"]] == ["ANCHOR_MISSING"]
    assert text.splitlines()[0].endswith(f"INTACT (with warnings); {NO_ANCHOR}")
    assert "every record is covered by a checkpoint signed by the key" in text
    # --require-anchor: the same hand-over fails.
    code, text, report = _run(str(log), "--key", str(key_pair.public_path), "--require-anchor", capsys=capsys)
    assert code == 1 and report["verdict"] == "INTEGRITY_FAILURE"
    assert report["first_error"]["reason"] == "ANCHOR_MISSING" and report["require_anchor"] is True
    assert "INTEGRITY FAILURE" in text.splitlines()[0]


def test_a_renamed_log_finds_its_anchor_by_log_id(
    host: Path, tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _hand_over(host, tmp_path / "auditor", "laptop42-2026-12.jsonl", with_anchor=True)
    assert not log.with_name(log.name + ".anchor").exists()
    code, text, report = _run(str(log), "--key", str(key_pair.public_path), "--require-anchor", capsys=capsys)
    assert code == 0 and report["verdict"] == "INTACT" and report["warnings"] == []
    assert report["anchor_found_by"] == "log_id" and report["anchor_kind"] == "on-host"
    assert report["tail_proven"] is True and len(report["files"]) >= 3
    assert "found by log id" in text
    # The renamed log cut back: its anchor still proves how far it reached.
    segments = [Path(f) for f in report["files"]]
    segments[-1].write_bytes(b"".join(segments[-1].read_bytes().splitlines(keepends=True)[:2]))
    code, _, report = _run(str(log), "--key", str(key_pair.public_path), capsys=capsys)
    assert code == 1 and report["first_error"]["reason"] == "TRUNCATED"


def test_an_off_host_anchor_supplied_proves_the_end(
    host: Path, tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _hand_over(host, tmp_path / "auditor", "audit.jsonl", with_anchor=False)
    exported = tmp_path / "anchors" / "audit-20261201T120000Z.anchor"
    exported.parent.mkdir()
    shutil.copy(host.with_name("audit.jsonl.anchor"), exported)
    argv = (str(log), "--key", str(key_pair.public_path), "--anchor", str(exported), "--require-anchor")
    code, text, report = _run(*argv, capsys=capsys)
    assert code == 0 and report["verdict"] == "INTACT" and report["warnings"] == []
    assert report["anchor_kind"] == "off-host" and report["anchor_found_by"] == "given"
    assert "(off-host)" in text and NO_ANCHOR not in text


def test_the_hosts_own_anchor_given_as_anchor_stays_on_host(
    host: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    own = host.with_name("audit.jsonl.anchor")
    code, text, report = _run(
        str(host), "--key", str(key_pair.public_path), "--anchor", str(own), capsys=capsys
    )
    assert code == 0 and report["anchor_kind"] == "on-host"
    assert "only a copy kept off the host proves more" in text


def test_a_foreign_anchor_is_recognised_as_foreign(
    host: Path, tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other" / "audit.jsonl"
    other.parent.mkdir()
    with AuditWriter.open(other, fsync="off", signing_key=key_pair.private_path) as writer:
        writer.append("tool_result", gateway_fields(0))
    foreign = other.with_name("audit.jsonl.anchor")
    code, _, report = _run(
        str(host), "--key", str(key_pair.public_path), "--anchor", str(foreign), capsys=capsys
    )
    assert code == 1 and report["first_error"]["reason"] == "ANCHOR_FOREIGN"
    # Beside a renamed log, another log's anchor is not taken for its own ...
    log = _hand_over(host, tmp_path / "auditor", "laptop42.jsonl", with_anchor=False)
    shutil.copy(foreign, log.with_name("laptop17.jsonl.anchor"))
    code, _, report = _run(str(log), "--key", str(key_pair.public_path), capsys=capsys)
    assert code == 0 and report["anchor_file"] is None and report["tail_proven"] is False
    # ... and under the log's own anchor name it is reported as foreign.
    shutil.copy(foreign, log.with_name("laptop42.jsonl.anchor"))
    code, _, report = _run(str(log), "--key", str(key_pair.public_path), capsys=capsys)
    assert code == 1 and report["first_error"]["reason"] == "ANCHOR_FOREIGN"


def test_live_keeps_its_meaning(
    host: Path, tmp_path: Path, key_pair: KeyPairFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    """--live does not stand in for an anchor: without one, the note stays."""
    log = _hand_over(host, tmp_path / "auditor", "audit.jsonl", with_anchor=False)
    code, text, report = _run(str(log), "--key", str(key_pair.public_path), "--live", capsys=capsys)
    assert code == 0 and report["live"] is True and report["tail_proven"] is False
    assert NO_ANCHOR in text.splitlines()[0]
    code, _, _ = _run(
        str(log), "--key", str(key_pair.public_path), "--live", "--require-anchor", capsys=capsys
    )
    assert code == 1


def test_keygen_out_a_folder_writes_into_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dsh_policy.audit.cli import keygen_main

    assert keygen_main(["--out", f"{tmp_path / 'keys'}/", "--format", "json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert Path(made["private_key"]) == tmp_path / "keys" / "audit-signing.key"
    assert (tmp_path / "keys" / "audit-signing.pub").is_file()
    assert not (tmp_path / "keys.key").exists()
    (tmp_path / "existing").mkdir()  # without the slash, a prefix as always (README: --out audit)
    assert keygen_main(["--out", str(tmp_path / "existing"), "--format", "json"]) == 0
    assert (tmp_path / "existing.key").is_file()
    assert keygen_main(["--out", str(tmp_path / "plain"), "--format", "json"]) == 0
    assert (tmp_path / "plain.key").is_file()
