"""The third round's mechanisms, each shown on its own: every client's hook files protected and
watched, git moves judged by the target commit's hook files, copies that follow links, names and
text one command hands another, harnesses started where their hooks do not apply, MCP entries in
every client's format, and inline code judged by what it does.

DATA ONLY: the command strings below are decided, never run (written with the file editor).
The layout is ``measure_rates.py``'s per-user one (deployment in ``~/.dsh-policy``, every supported
client wired, a project with a ``cfg`` link to the deployment folder).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.hooks.gateway.tamper_watch import Watched, fingerprint, watched_from, weakens
from dsh_policy.policy.self_protection.locations import PROJECT_HOOK_FILES


def _shell(layout: tuple[Any, dict[str, str]], line: str, cwd: str | None = None) -> Any:
    protection, names = layout
    filled = line.replace("{project}", names["project"]).replace("{deploy}", names["deploy"])
    filled = filled.replace("{pack}", names["pack"]).replace("{home}", names["home"])
    return protection.check("shell", {"command": filled}, cwd or names["project"])


def _write(layout: tuple[Any, dict[str, str]], relative: str, content: str = "{}\n") -> Any:
    protection, names = layout
    return protection.check(
        "write_file", {"path": os.path.join(names["project"], relative), "content": content}, names["project"]
    )


# -- every client's hook files ----------------------------------------------------------------


@pytest.mark.parametrize("relative", PROJECT_HOOK_FILES)
def test_every_clients_project_hook_file_is_protected(
    layout: tuple[Any, dict[str, str]], relative: str
) -> None:
    refusal = _write(layout, relative)
    assert refusal is not None and refusal.rule == "self-protection/harness-settings", relative


def test_files_beside_the_hook_folders_stay_writable(layout: tuple[Any, dict[str, str]]) -> None:
    for relative in (".github/workflows/ci.yml", ".claude/commands/test.md", ".gemini/styleguide.md"):
        assert _write(layout, relative) is None, relative


def test_the_tamper_watch_covers_every_clients_hook_file(layout: tuple[Any, dict[str, str]]) -> None:
    protection, names = layout
    watched = {item.path for item in watched_from(protection.entries, [names["project"]])}
    for relative in PROJECT_HOOK_FILES:
        assert os.path.join(names["project"], relative) in watched, relative
    # Whatever hook file the clients' own installers wrote into the project to run the gateway is
    # watched too, whether or not the list above names it (an installer that moves its file, a
    # client added without updating the list). The project deployment those hooks name is the
    # gateway serving it to watch, not this one.
    project = Path(names["project"])
    wired = [
        path
        for path in project.rglob("*")
        if ".git" not in path.relative_to(project).parts
        and not path.is_symlink()
        and path.is_file()
        and path.name != "gateway.yaml"
        and b"dsh-policy" in path.read_bytes()
    ]
    assert len(wired) >= 4, wired  # Gemini, Qwen, OpenCode and Copilot are wired per project
    for path in wired:
        assert str(path) in watched, path


def test_a_copilot_hook_file_that_stops_running_the_gateway_weakens(tmp_path: Path) -> None:
    hook_file = tmp_path / ".github" / "hooks" / "dsh-policy.json"
    hook_file.parent.mkdir(parents=True)
    command = {"type": "command", "bash": "dsh-policy hook copilot-cli --config g.yaml"}
    hook_file.write_text(json.dumps({"version": 1, "hooks": {"PreToolUse": [command]}}))
    item = Watched(str(hook_file), "harness-settings")
    before = fingerprint(item)
    hook_file.write_text(json.dumps({"version": 1, "hooks": {}}))
    assert weakens(item, before, fingerprint(item)) is not None


# -- git moves of the whole tree ----------------------------------------------------------------

GIT_MOVES_BACK = ("git checkout HEAD~1", "git reset --hard HEAD~1", "git switch --detach HEAD~1")
GIT_STAYS = ("git switch -c feature", "git reset --hard HEAD", "git checkout -b fix HEAD")


def _repository(base: Path, hook_changes: bool) -> Path:
    project = base / "repo"
    (project / ".github" / "hooks").mkdir(parents=True)
    (project / "src").mkdir()
    environment = {"HOME": str(base), "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ["PATH"]}

    def commit(message: str) -> None:
        for argv in (
            ["git", "add", "-A"],
            ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", message],
        ):
            subprocess.run(argv, cwd=project, env=environment, check=True)

    subprocess.run(["git", "init", "-q"], cwd=project, env=environment, check=True)
    (project / ".github" / "hooks" / "dsh-policy.json").write_text('{"hooks": {}}\n')
    (project / "src" / "app.py").write_text("x = 1\n")
    commit("before the hooks")
    if hook_changes:
        (project / ".github" / "hooks" / "dsh-policy.json").write_text('{"hooks": "dsh-policy hook"}\n')
    (project / "src" / "app.py").write_text("x = 2\n")
    commit("the hooks")
    return project


@pytest.mark.parametrize("line", GIT_MOVES_BACK)
def test_git_moving_to_a_commit_with_other_hook_files_is_refused(
    layout: tuple[Any, dict[str, str]], tmp_path: Path, line: str
) -> None:
    project = _repository(tmp_path, hook_changes=True)
    refusal = _shell(layout, line, str(project))
    assert refusal is not None and "hook files" in refusal.message


@pytest.mark.parametrize("line", GIT_MOVES_BACK + GIT_STAYS)
def test_git_moves_that_keep_the_hook_files_are_allowed(
    layout: tuple[Any, dict[str, str]], tmp_path: Path, line: str
) -> None:
    project = _repository(tmp_path, hook_changes=False)
    assert _shell(layout, line, str(project)) is None


# -- copies that follow links -----------------------------------------------------------------

FOLLOWING = ("zip -qr /tmp/app.zip .", "cp -rL {project} /tmp/copy", "rsync -aL ./ /tmp/m/", "grep -R x .")
NOT_FOLLOWING = ("zip -qry /tmp/app.zip .", "cp -r {project} /tmp/copy", "rsync -a ./ /tmp/m/", "grep -r x .")


@pytest.mark.parametrize("line", FOLLOWING)
def test_a_copy_that_follows_a_link_to_the_key_folder_is_refused(
    layout: tuple[Any, dict[str, str]], line: str
) -> None:
    refusal = _shell(layout, line)
    assert refusal is not None and refusal.rule == "self-protection/signing-key"


@pytest.mark.parametrize("line", NOT_FOLLOWING)
def test_the_same_copy_keeping_links_is_allowed(layout: tuple[Any, dict[str, str]], line: str) -> None:
    assert _shell(layout, line) is None


# -- what one command hands another -----------------------------------------------------------

HANDED_ON = (
    "echo {pack} | xargs rm -f",
    "echo {deploy}/gateway.yaml | xargs -I% cp /tmp/x %",
    "find {deploy} | cpio -o > /tmp/d.cpio",
    "echo 'truncate -s 0 {deploy}/audit/hooks.jsonl' | at now",
    "(crontab -l; echo '0 * * * * rm -f {home}/.claude/settings.json') | crontab -",
    "printf 'rm -f %s\\n' {deploy}/gateway.yaml > /tmp/x.sh && sh /tmp/x.sh",
)
HANDED_ON_HARMLESS = (
    "find . -name '*.o' | xargs rm -f",
    "git ls-files -z | xargs -0 wc -l",
    "printf 'echo hello\\n' > /tmp/h.sh && sh /tmp/h.sh",
    "crontab -l",
)


@pytest.mark.parametrize("line", HANDED_ON)
def test_names_and_text_handed_to_another_command_are_judged(
    layout: tuple[Any, dict[str, str]], line: str
) -> None:
    assert _shell(layout, line) is not None


@pytest.mark.parametrize("line", HANDED_ON_HARMLESS)
def test_harmless_names_and_text_handed_on_are_allowed(layout: tuple[Any, dict[str, str]], line: str) -> None:
    assert _shell(layout, line) is None


# -- harnesses started where their hooks do not apply -------------------------------------------

UNHOOKED_STARTS = (
    "cd /tmp && opencode run go",
    "copilot -p go --allow-all-tools",
    "gemini --dir /tmp -p go",
    "sudo -u nobody claude -p go",
    "docker run --rm node:22 npx -y @anthropic-ai/claude-code -p go",
    "codex --profile open exec go",
    'python3 -c "import claude_agent_sdk"',
)
HOOKED_STARTS = (
    "opencode run go",
    "cd src && copilot -p go",
    "claude -p go",
    "codex exec go",
    "gemini --version",
    "opencode run go; cd /tmp",  # the move comes after the harness ran in the project
)


@pytest.mark.parametrize("line", UNHOOKED_STARTS)
def test_a_harness_started_without_this_gateways_hooks_is_refused(
    layout: tuple[Any, dict[str, str]], line: str
) -> None:
    refusal = _shell(layout, line)
    assert refusal is not None and refusal.rule == "self-protection/harness-settings"


@pytest.mark.parametrize("line", HOOKED_STARTS)
def test_a_harness_started_under_the_hooks_is_allowed(layout: tuple[Any, dict[str, str]], line: str) -> None:
    assert _shell(layout, line) is None


# -- the gateway's cgroup, through every writing operator ---------------------------------------

FREEZES = (
    "echo 1 > /sys/fs/cgroup/user.slice/user-$(id -u).slice/cgroup.freeze",
    "echo 1 &> /sys/fs/cgroup/user.slice/user-$(id -u).slice/cgroup.freeze",
    "echo 1 >| /sys/fs/cgroup/user.slice/user-$(id -u).slice/cgroup.kill",
    "echo 1 | tee /sys/fs/cgroup/user.slice/user-$(id -u).slice/cgroup.freeze",
)


@pytest.mark.parametrize("line", FREEZES)
def test_a_write_into_a_computed_cgroup_freeze_file_is_refused_by_any_operator(
    layout: tuple[Any, dict[str, str]], line: str
) -> None:
    refusal = _shell(layout, line)
    assert refusal is not None and refusal.rule == "self-protection/gateway-runtime"


# -- MCP entries in every client's format ------------------------------------------------------


def test_mcp_add_json_with_a_scope_is_judged_as_its_command(layout: tuple[Any, dict[str, str]]) -> None:
    entry = json.dumps({"command": "sh", "args": ["-c", "rm -f {deploy}/gateway.yaml"]})
    assert _shell(layout, f"claude mcp add-json -s user t '{entry}'") is not None


def test_an_opencode_local_server_is_judged_as_its_argv(layout: tuple[Any, dict[str, str]]) -> None:
    _protection, names = layout
    server = {"type": "local", "command": ["rm", "-f", os.path.join(names["deploy"], "gateway.yaml")]}
    assert _write(layout, "opencode.json", json.dumps({"mcp": {"x": server}})) is not None
    harmless = {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-memory"]}
    assert _write(layout, "opencode.json", json.dumps({"mcp": {"x": harmless}})) is None


# -- inline code by what it does ----------------------------------------------------------------


def test_inline_code_that_only_reads_protected_files_is_allowed(layout: tuple[Any, dict[str, str]]) -> None:
    assert _shell(layout, "python3 -c \"print(open('{deploy}/gateway.yaml').read())\"") is None
    assert _shell(layout, "node -e \"console.log(require('fs').readFileSync('{pack}','utf8'))\"") is None


def test_inline_code_that_writes_or_reads_the_key_folder_is_refused(
    layout: tuple[Any, dict[str, str]],
) -> None:
    assert _shell(layout, "python3 -c \"open('{deploy}/gateway.yaml','w').close()\"") is not None
    assert _shell(layout, "python3 -c \"import pathlib; print(list(pathlib.Path('{deploy}').rglob('*')))\"")
    assert _shell(layout, "awk 'BEGIN { print 1 > \"cfg/gateway.yaml\" }'") is not None
