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
from dsh_policy.policy.hooks.codex.trust import upsert_trust
from dsh_policy.policy.hooks.install.settings_files import (
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
    # The system requirements file Codex (and the fake) read: never the real /etc in tests.
    monkeypatch.setenv("DSH_POLICY_CODEX_REQUIREMENTS", str(tmp_path / "etc-codex" / "requirements.toml"))
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
    assert "dsh-policy init codex --managed" in out  # the route that needs no trust at all
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


# --- Codex managed hooks (requirements.toml) ----------------------------------------------------


def _requirements(tools: Path) -> Path:
    return tools / "etc-codex" / "requirements.toml"


def test_init_codex_managed_merges_into_requirements_and_doctor_needs_no_trust(tools: Path, capsys) -> None:
    project = tools / "proj"
    project.mkdir()
    requirements = _requirements(tools)
    requirements.parent.mkdir()
    theirs = 'allowed_sandbox_modes = ["read-only"]\n\n[hooks]\nmanaged_dir = "/opt/hooks"\n'
    requirements.write_text(theirs)
    code, out = _cli(capsys, "init", "codex", "--project", str(project), "--pack", str(PACK), "--managed")
    assert code == 0, out
    assert "Codex runs 5 dsh-policy hooks from" in out and "as managed" in out
    text = requirements.read_text()
    assert text.startswith(theirs)  # never clobbered
    parsed = tomllib.loads(text)
    assert parsed["allowed_sandbox_modes"] == ["read-only"]
    assert parsed["hooks"]["managed_dir"] == "/opt/hooks"
    commands = {e: g[0]["hooks"][0]["command"] for e, g in parsed["hooks"].items() if isinstance(g, list)}
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    deployment = project / ".codex" / "dsh-gateway.yaml"
    program = Path(sys.executable).parent / "dsh-policy"
    for command in commands.values():  # absolute: the user's PATH and folder choose nothing
        assert f"{program} hook codex --config {deployment}" in command and command.endswith("|| exit 2")
    assert deployment.is_file() and not (project / ".codex" / "config.toml").exists()
    code, out = _cli(capsys, "init", "codex", "--project", str(project), "--pack", str(PACK), "--managed")
    assert code == 0 and "kept" in out and requirements.read_text() == text
    code, out = _cli(capsys, "doctor", "codex", "--project", str(project))
    assert code == 0, out
    assert f"OK    settings: all five events wired in {requirements}" in out
    assert "OK    codex trust: Codex runs 5 dsh-policy hooks as managed" in out
    assert "OK    deny probe" in out and "OK    allow probe" in out
    assert not (tools / "codex-home" / "config.toml").exists()  # no trust was recorded anywhere


def test_managed_hooks_beside_trusted_user_hooks_and_managed_only(tools: Path, capsys) -> None:
    project = tools / "proj"
    project.mkdir()
    base = ("init", "codex", "--project", str(project), "--pack", str(PACK))
    assert _cli(capsys, *base, "--trust")[0] == 0
    code, out = _cli(capsys, *base, "--managed")
    assert code == 0 and "every event is decided twice" in out, out
    code, out = _cli(capsys, "doctor", "codex", "--project", str(project))
    assert code == 0 and "WARN  codex trust: trusted dsh-policy hooks in" in out, out

    code, out = _cli(capsys, *base, "--managed", "--managed-only")
    assert code == 0, out
    parsed = tomllib.loads(_requirements(tools).read_text())
    assert parsed["allow_managed_hooks_only"] is True and len(parsed["hooks"]["PreToolUse"]) == 1
    code, out = _cli(capsys, "doctor", "codex", "--project", str(project))
    assert code == 0, out
    assert "user and project hooks are ignored" in out
    ignored = project / ".codex" / "config.toml"
    assert f"WARN  codex trust: Codex ignores the dsh-policy hooks in {ignored}" in out


def test_init_codex_managed_refuses_what_it_would_clobber_or_double(tools: Path, capsys) -> None:
    project = tools / "proj"
    project.mkdir()
    requirements = _requirements(tools)
    requirements.parent.mkdir()
    base = ("init", "codex", "--project", str(project), "--pack", str(PACK))
    requirements.write_text("allow_managed_hooks_only = false\n")
    code, out = _cli(capsys, *base, "--managed", "--managed-only")
    assert code == 1 and "change it by hand" in out
    assert requirements.read_text() == "allow_managed_hooks_only = false\n"
    other = codex_hooks_toml("/srv/other-gateway.yaml", "/opt/dsh/bin/dsh-policy")
    requirements.write_text(other)
    code, out = _cli(capsys, *base, "--managed")
    assert code == 1 and "would decide every event twice" in out
    assert requirements.read_text() == other
    for mixed in (("--managed", "--trust"), ("--managed-only",)):
        assert _cli(capsys, *base, *mixed)[0] == 2
    assert _cli(capsys, "init", "claude-code", "--project", str(project), "--trust")[0] == 2
    assert _cli(capsys, "init", "claude-code", "--project", str(project), "--config", "x.yaml")[0] == 2


def test_init_codex_managed_into_another_file_says_where_codex_reads(tools: Path, capsys) -> None:
    project = tools / "proj"
    project.mkdir()
    staged = tools / "mdm" / "requirements.toml"
    deployment = tools / "etc-dsh" / "codex.yaml"
    code, out = _cli(
        capsys, "init", "codex", "--project", str(project), "--pack", str(PACK),
        "--managed", str(staged), "--config", str(deployment),
    )  # fmt: skip
    assert code == 0, out
    assert f"Codex reads only {_requirements(tools)}" in out
    assert deployment.is_file() and f"--config {deployment}" in staged.read_text()
    assert not _requirements(tools).exists()


def test_managed_only_is_a_top_level_key_before_any_table() -> None:
    from dsh_policy.policy.hooks.codex.managed import managed_only, with_managed_only

    text = 'model = "x"\n[hooks]\nmanaged_dir = "/opt/h"\n'
    merged = with_managed_only(text)
    assert managed_only(merged) is True and tomllib.loads(merged)["hooks"] == {"managed_dir": "/opt/h"}
    assert with_managed_only(merged) == merged
    assert managed_only(with_managed_only("")) is True
    commented = with_managed_only("# ours\n[[hooks.Stop]]\n")
    assert commented.startswith("allow_managed_hooks_only = true") and "# ours\n[[hooks.Stop]]" in commented
    with pytest.raises(SettingsError):
        with_managed_only('allow_managed_hooks_only = "yes"\n')


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: init run as root in another user's project")
def test_init_as_root_hands_the_folders_it_makes_to_the_project_owner(tools: Path, capsys) -> None:
    project = tools / "someone"
    project.mkdir()
    os.chown(project, 4242, 4243)
    code, out = _cli(capsys, "init", "codex", "--project", str(project), "--pack", str(PACK), "--managed")
    assert code == 0, out
    for folder in (project / ".codex", project / ".codex" / "audit"):
        assert (folder.stat().st_uid, folder.stat().st_gid) == (4242, 4243)
    assert (project / ".codex" / "dsh-gateway.yaml").stat().st_uid == 0  # the policy stays root's
    assert "given to uid 4242" in out
