"""One deployment for every project on the machine (``init --user`` / ``--managed``), each event
scoped to its own project (``--project auto``), and hooks that say what to install when the
program they name is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from dsh_policy.policy import cli
from dsh_policy.policy.hooks.install import doctor
from dsh_policy.policy.hooks.install.settings_files import claude_code_hooks, codex_hooks_toml
from dsh_policy.policy.hooks.project_scope import expand, find_project
from hook_testkit import PACK

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
# An extra rule a project adds, and one that tries to allow what the machine denies.
PROJECT_PACK = """\
apiVersion: dsh-policy/v1
kind: RulePack
metadata: {name: project-extra, version: "1.0.0", description: what this one project adds}
spec:
  rules:
    - id: no-make-deploy
      stage: pre-execute
      match: {tools: [shell]}
      when: 'args.command.startsWith("make deploy")'
      decision: deny
      message: deploys go through CI in this project
    - id: try-to-allow-everything
      stage: pre-execute
      when: 'true'
      decision: allow
"""


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME with two projects; this interpreter's dsh-policy; no real /etc."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("DSH_POLICY_CLAUDE_MANAGED_SETTINGS", str(tmp_path / "etc" / "managed-settings.json"))
    monkeypatch.setenv("DSH_POLICY_CODEX_REQUIREMENTS", str(tmp_path / "etc" / "requirements.toml"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "home" / ".codex"))
    for name in ("alpha", "beta"):
        (tmp_path / "home" / "src" / name / ".git").mkdir(parents=True)
    return tmp_path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def _pre_tool_use(settings: Path) -> str:
    document = json.loads(settings.read_text())
    return str(document["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


def _event(project: Path, tool: str, tool_input: dict[str, str]) -> bytes:
    return json.dumps(
        {
            "session_id": "machine-wide",
            "transcript_path": os.devnull,
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "t1",
        }
    ).encode()


def test_init_user_covers_two_projects_each_with_its_own_workspace(machine: Path, capsys) -> None:
    home = machine / "home"
    alpha, beta = home / "src" / "alpha", home / "src" / "beta"
    code, out = _cli(capsys, "init", "claude-code", "--user", "--pack", str(PACK))
    assert code == 0, out
    assert "checked" in out and "runs (dsh-policy " in out  # init ran the program it names
    deployment = home / ".config" / "dsh-policy" / "gateway.yaml"
    assert "workspace" not in deployment.read_text().split("# params.workspace")[0]
    command = _pre_tool_use(home / ".claude" / "settings.json")
    program = str(Path(sys.executable).parent / "dsh-policy")
    assert f"{program} hook claude-code --config {deployment} --project auto" in command
    assert not (alpha / ".claude").exists() and not (beta / ".claude").exists()  # nothing per project
    for project in (alpha, beta):
        code, out = _cli(capsys, "doctor", "claude-code", "--project", str(project))
        assert code == 0, out
        assert f"OK    workspace: {project} (from the hook's --project)" in out
        assert "OK    deny probe" in out and "OK    allow probe" in out
    # The same command decides by the event's project: a write into alpha is inside alpha's
    # workspace and outside beta's.
    write = {"file_path": str(alpha / "notes.txt"), "content": "x"}
    for project, expected in ((alpha, 0), (beta, 2)):
        done = doctor.run_probe(command, "claude-code", str(project), _event(project, "Write", write))
        assert done[0] == expected, done
    code, _ = _cli(capsys, "init", "claude-code", "--user", "--pack", str(PACK))
    assert code == 0 and _pre_tool_use(home / ".claude" / "settings.json") == command  # no duplicates


def test_a_project_adds_rules_and_never_removes_the_machines(machine: Path, capsys) -> None:
    home = machine / "home"
    alpha, beta = home / "src" / "alpha", home / "src" / "beta"
    (beta / ".dsh" / "rules").mkdir(parents=True)
    (beta / ".dsh" / "rules" / "extra.yaml").write_text(PROJECT_PACK)
    assert _cli(capsys, "init", "claude-code", "--user", "--pack", str(PACK))[0] == 0
    command = _pre_tool_use(home / ".claude" / "settings.json")
    deploy = {"command": "make deploy"}
    assert doctor.run_probe(command, "claude-code", str(alpha), _event(alpha, "Bash", deploy))[0] == 0
    code, _, err, _ = doctor.run_probe(command, "claude-code", str(beta), _event(beta, "Bash", deploy))
    assert code == 2 and "project-extra/no-make-deploy" in err
    # beta's allow-everything rule cannot undo the machine's deny.
    outside = {"file_path": "/etc/motd", "content": "x"}
    code, _, err, _ = doctor.run_probe(command, "claude-code", str(beta), _event(beta, "Write", outside))
    assert code == 2 and "hook-guard/writes-stay-in-workspace" in err


def test_project_auto_finds_the_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository: never the project
    (home / "src" / "app" / ".git").mkdir(parents=True)
    (home / "src" / "app" / "lib").mkdir()
    (home / "scratch").mkdir()
    env = {"HOME": str(home)}
    assert find_project("auto", env, str(home / "src" / "app" / "lib")) == str(home / "src" / "app")
    assert find_project("auto", env, str(home / "scratch")) == str(home / "scratch")
    assert find_project("auto", {**env, "CLAUDE_PROJECT_DIR": "/srv/x"}, "/") == "/srv/x"
    assert expand(["codex", "--project=/srv/app"], env, "/") == ["codex", "--param", 'workspace="/srv/app"']
    assert expand(["codex", "--project"], env, "/") == ["codex", "--project"]  # the parser refuses it


def test_init_codex_user_and_claude_code_managed(machine: Path, capsys) -> None:
    home = machine / "home"
    code, out = _cli(capsys, "init", "codex", "--user", "--pack", str(PACK))
    assert code == 0, out
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    command = config["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert f"--config {home / '.config' / 'dsh-policy' / 'gateway.yaml'} --project auto" in command
    settings = machine / "etc" / "managed-settings.json"
    etc_deployment = machine / "etc" / "dsh-policy" / "gateway.yaml"
    code, out = _cli(
        capsys, "init", "claude-code", "--managed", "--managed-only", "--config", str(etc_deployment),
        "--pack", str(PACK),
    )
    assert code == 0, out
    managed = json.loads(settings.read_text())
    assert managed["allowManagedHooksOnly"] is True
    command = managed["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert '--project auto --audit "$HOME/.local/state/dsh-policy/audit/hooks.jsonl"' in command
    assert "audit" not in etc_deployment.read_text()  # each user's own log, not one in /etc
    code, out = _cli(capsys, "doctor", "claude-code", "--project", str(home / "src" / "alpha"))
    assert code == 0, out


@pytest.mark.parametrize("program", ["dsh-policy", "/opt/nowhere/bin/dsh-policy"])
@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_machine_without_the_tool_is_refused_with_what_to_install(
    tmp_path: Path, harness: str, program: str
) -> None:
    """The settings committed to a repository, run where dsh-policy is not installed: every event
    fails closed, and the refusal the client shows says what to install and how."""
    if harness == "claude-code":
        commands = {
            event: groups[0]["hooks"][0]["command"]
            for event, groups in claude_code_hooks(program=program).items()
        }
    else:
        parsed = tomllib.loads(codex_hooks_toml(program=program))["hooks"]
        commands = {event: groups[0]["hooks"][0]["command"] for event, groups in parsed.items()}
    assert set(commands) == set(EVENTS)
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(tmp_path), "HOME": str(tmp_path)}
    for event, command in commands.items():
        payload = json.dumps({"hook_event_name": event, "session_id": "s", "cwd": str(tmp_path)})
        done = subprocess.run(
            ["/bin/sh", "-c", command], input=payload.encode(), capture_output=True, cwd=tmp_path,
            env=env, timeout=30, check=False,
        )
        out, err = done.stdout.decode(), done.stderr.decode()
        said = out + err
        assert ": not found" not in said and "command not found" not in said, said
        assert "Install dsh-policy" in said and "pip install" in said and "doctor" in said, said
        if event == "PreToolUse":
            assert done.returncode == 2 and out == "", said
        else:
            answer = json.loads(out)
            assert done.returncode == 0
            assert answer.get("decision") == "block" or answer.get("continue") is False, answer
