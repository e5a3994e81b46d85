"""``dsh-policy run`` end to end: the README's main job, its narration, and a log that verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_policy.audit.verify import verify_log
from dsh_policy.policy.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "sessions" / "demo.yaml"
SHIPPED = [str(ROOT / "rules" / name) for name in ("baseline.yaml", "secrets.yaml")]


def run_demo(tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    log = tmp_path / "audit.jsonl"
    packs = [arg for pack in SHIPPED for arg in ("--pack", pack)]
    return main(["run", str(DEMO), *packs, "--audit", str(log), *extra]), "", log


def test_demo_shows_every_kind_of_decision_and_its_log_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, log = run_demo(tmp_path, "--engine", "python")
    out = capsys.readouterr().out
    assert code == 0, out
    for label in ("ALLOW", "DENY", "ASK>DENY", "REDACT"):
        assert f"    {label} " in out, label
    assert "rules: baseline/" in out and "rules: secrets/" in out
    assert "INTACT" in out
    assert verify_log([log]).intact
    assert main(["verify", str(log)]) == 0


def test_demo_secrets_never_reach_the_log_or_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, log = run_demo(tmp_path, "--engine", "python")
    out = capsys.readouterr().out
    assert code == 0
    raw = log.read_text()
    for secret in ("AKIAIOSFODNN7EXAMPLE", "s3cr3t-Passw0rd", "b3BlbnNzaC1rZXktdjEAAAA"):
        assert secret not in raw
        assert secret not in out


def test_demo_json_output_lists_events_and_the_verification(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run_demo(tmp_path, "--engine", "python", "--format", "json")
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["audit"]["intact"] is True
    labels = {event["label"] for event in document["events"] if event["event"] == "call"}
    assert {"ALLOW", "DENY", "ASK>DENY", "REDACT"} <= labels


def test_signed_demo_log_verifies_with_the_public_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keygen", "--out", str(tmp_path / "demo")]) == 0
    code, _, log = run_demo(tmp_path, "--engine", "python", "--signing-key", str(tmp_path / "demo.key"))
    assert code == 0
    capsys.readouterr()
    assert main(["verify", str(log), "--key", str(tmp_path / "demo.pub")]) == 0


def test_an_invalid_session_script_is_reported_with_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text(
        "apiVersion: dsh-policy/v1\nkind: Session\nmetadata: {name: x}\n"
        "spec:\n  turns:\n    - prompt: hi\n      replys: []\n"
    )
    code = main(["run", str(script), "--pack", SHIPPED[0]])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{script}:7:7:" in err and "replys" in err


def test_a_broken_pack_stops_the_run_before_anything_is_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "broken.yaml"
    pack.write_text("apiVersion: dsh-policy/v1\nkind: RulePack\nmetadata: {name: b}\nspec:\n  rulez: []\n")
    log = tmp_path / "audit.jsonl"
    code = main(["run", str(DEMO), "--pack", str(pack), "--audit", str(log)])
    assert code == 2
    assert "rulez" in capsys.readouterr().err
    assert not log.exists()
