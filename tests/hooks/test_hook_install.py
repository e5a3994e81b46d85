"""``dsh-policy init`` merges without clobbering, the shipped examples are what it writes, Codex
trust is read from (and recorded the way of) Codex itself, and ``doctor`` finds what is wrong."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy import cli
from dsh_policy.policy.hooks.codex_trust import upsert_trust
from dsh_policy.policy.hooks.settings_files import (
    SettingsError,
    claude_code_hooks,
    codex_hooks_toml,
    merge_codex_config,
)
from hook_testkit import PACK
from resident_kit import files_for, status

EXAMPLES = Path(__file__).parents[2] / "examples" / "hooks"
FAKE_CODEX = Path(__file__).parent / "fake_codex.py"


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH with dsh-policy (this interpreter's) and a fake ``codex``; a private CODEX_HOME."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    codex = bin_dir / "codex"
    codex.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CODEX}" "$@"\n')
    codex.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def test_the_shipped_examples_are_what_init_writes() -> None:
    shipped = json.loads((EXAMPLES / "claude-code-settings.json").read_text())
    assert shipped == {"hooks": claude_code_hooks()}
    assert all(
        h["onFailure"] == "block" for groups in shipped["hooks"].values() for g in groups for h in g["hooks"]
    )
    assert tomllib.loads((EXAMPLES / "codex-config.toml").read_text()) == tomllib.loads(codex_hooks_toml())


def test_init_claude_code_merges_and_never_clobbers(tools: Path, capsys) -> None:
    project = tools / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".dsh").mkdir()
    mine = {
        "permissions": {"allow": ["Bash(npm test:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "my-linter"}]}]
        },
        "model": "opus",
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(mine))
    (project / ".dsh" / "gateway.yaml").write_text("# mine\n")
    code, out = _cli(capsys, "init", "claude-code", "--project", str(project))
    assert code == 0, out
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == mine["permissions"] and settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"][0] == mine["hooks"]["PreToolUse"][0]
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    assert (project / ".dsh" / "gateway.yaml").read_text() == "# mine\n"
    assert "kept" in out
    before = (project / ".claude" / "settings.json").read_text()
    code, out = _cli(capsys, "init", "claude-code", "--project", str(project))
    assert code == 0 and (project / ".claude" / "settings.json").read_text() == before


def test_init_refuses_a_settings_file_it_cannot_read(tools: Path, capsys) -> None:
    project = tools / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{not json")
    code, out = _cli(capsys, "init", "claude-code", "--project", str(project))
    assert code == 1 and "not valid JSON" in out
    assert (project / ".claude" / "settings.json").read_text() == "{not json"


def test_codex_tables_merge_into_existing_config_or_are_refused() -> None:
    existing = 'model = "o4"\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "other"\n'
    merged = merge_codex_config(existing, codex_hooks_toml())
    config = tomllib.loads(merged.text)
    assert config["model"] == "o4"
    assert config["hooks"]["Stop"][0]["hooks"][0]["command"] == "other"
    assert len(config["hooks"]["Stop"]) == 2
    assert not merge_codex_config(merged.text, codex_hooks_toml()).changed
    with pytest.raises(SettingsError):
        merge_codex_config("hooks = { Stop = [] }\n", codex_hooks_toml())


def test_trust_is_upserted_in_place() -> None:
    hash_a, hash_b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    text = upsert_trust("x = 1\n", "/c.toml:stop:0:0", hash_a)
    assert tomllib.loads(text)["hooks"]["state"]["/c.toml:stop:0:0"]["trusted_hash"] == hash_a
    again = upsert_trust(text + "[other]\ny = 2\n", "/c.toml:stop:0:0", hash_b)
    parsed = tomllib.loads(again)
    assert parsed["hooks"]["state"]["/c.toml:stop:0:0"]["trusted_hash"] == hash_b
    assert parsed["other"] == {"y": 2} and parsed["x"] == 1
    with pytest.raises(ValueError):
        upsert_trust(text, "k", "not-a-hash")


def test_doctor_passes_an_initialized_claude_code_project_and_fails_a_broken_one(tools: Path, capsys) -> None:
    project = tools / "proj"
    project.mkdir()
    assert _cli(capsys, "init", "claude-code", "--project", str(project), "--pack", str(PACK))[0] == 0
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 0, out
    for line in (
        "OK    settings",
        "OK    packs",
        "OK    audit",
        "OK    deny probe",
        "OK    allow probe",
        "OK    gateway",
    ):
        assert line in out, out
    assert "[policy: hook-guard/never-rm-root]" in out
    settings_path = project / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    del settings["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"]
    del settings["hooks"]["Stop"]
    settings_path.write_text(json.dumps(settings))
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 1
    assert "FAIL  settings: no dsh-policy hook for Stop" in out
    assert 'set "onFailure": "block"' in out


def test_doctor_reports_untrusted_codex_hooks_and_init_trusts_them(tools: Path, capsys) -> None:
    project = tools / "proj"
    project.mkdir()
    assert _cli(capsys, "init", "codex", "--project", str(project), "--pack", str(PACK))[0] == 0
    code, out = _cli(capsys, "doctor", "codex", "--project", str(project))
    assert code == 1
    assert "5 of 5 dsh-policy hooks are not trusted" in out and "Trust all and continue" in out
    assert "OK    deny probe" in out  # the hook itself works; Codex just would not run it
    code, out = _cli(capsys, "init", "codex", "--project", str(project), "--pack", str(PACK), "--trust")
    assert code == 0, out
    assert "all 5 dsh-policy hooks are trusted" in out
    state = tomllib.loads((tools / "codex-home" / "config.toml").read_text())["hooks"]["state"]
    assert len(state) == 5 and all(key.startswith(str(project / ".codex" / "config.toml")) for key in state)
    code, out = _cli(capsys, "doctor", "codex", "--project", str(project))
    assert code == 0, out
    assert "OK    codex trust: Codex trusts all 5 dsh-policy hooks" in out


def test_doctor_with_nothing_installed_says_so(tools: Path, capsys) -> None:
    project = tools / "empty"
    project.mkdir()
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 1 and "run `dsh-policy init claude-code`" in out
    assert os.listdir(project) == []


def _http_hook_settings(project: Path, address: str, **hook: Any) -> None:
    """Every event as an http hook to the gateway at ``address`` (the README's example)."""
    entry = {"type": "http", "url": f"http://{address}/hook/claude-code", "timeout": 30, "onFailure": "block"}
    entry.update(hook)
    events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    settings = {"hooks": {event: [{"hooks": [entry]}] for event in events}}
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "settings.local.json").write_text(json.dumps(settings))


def test_doctor_checks_http_hooks_through_the_gateway_they_name(
    tools: Path, capsys, gateway_a, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, _, _ = gateway_a
    address = status(spec)["http"]  # type: ignore[index]
    token = Path(files_for(spec).token).read_text().strip()
    project = tools / "proj"
    monkeypatch.setenv("DSH_TEST_TOKEN", token)
    bearer = {"headers": {"Authorization": "Bearer $DSH_TEST_TOKEN"}, "allowedEnvVars": ["DSH_TEST_TOKEN"]}
    _http_hook_settings(project, address, **bearer)
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 0, out
    assert "OK    deny probe: `rm -rf /` refused over http" in out and "[policy: hook-guard/" in out
    assert "OK    allow probe: `ls` allowed over http" in out
    assert "OK    http gateway: pid" in out

    # The variable is not listed in allowedEnvVars: Claude Code would send "Bearer " and get 401.
    _http_hook_settings(project, address, headers={"Authorization": "Bearer $DSH_TEST_TOKEN"})
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 1
    assert "uses $DSH_TEST_TOKEN, which Claude Code sends empty" in out
    assert "FAIL  deny probe: `rm -rf /` was not refused over http (HTTP 401" in out

    # Not loopback, no token, no fail-closed switch: each named.
    _http_hook_settings(project, "192.0.2.1:8377", onFailure="ignore")
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 1
    assert "is not http on a loopback address" in out
    assert "no `Authorization: Bearer <token>` header" in out
    assert 'set "onFailure": "block"' in out


def test_doctor_asks_the_gateway_the_hook_itself_would_use(tools: Path, capsys) -> None:
    # Every option that names the deployment counts, --no-self-protection included: a doctor
    # that computed another deployment would look for a gateway no hook ever starts.
    project = tools / "proj"
    project.mkdir()
    assert _cli(capsys, "init", "claude-code", "--project", str(project), "--pack", str(PACK))[0] == 0
    settings_path = project / ".claude" / "settings.json"
    text = settings_path.read_text().replace("hook claude-code", "hook claude-code --no-self-protection")
    settings_path.write_text(text)
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
    assert code == 0, out
    assert "OK    gateway: pid" in out
