"""The example hook settings wire every event to the adapter, and the commands in them work."""

from __future__ import annotations

import json
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from hook_testkit import payload

EXAMPLES = Path(__file__).parents[2] / "examples" / "hooks"
EVENTS = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}


def _claude_commands() -> dict[str, list[str]]:
    settings = json.loads((EXAMPLES / "claude-code-settings.json").read_text())
    out: dict[str, list[str]] = {}
    for event, groups in settings["hooks"].items():
        for group in groups:
            if event in ("PreToolUse", "PostToolUse"):
                assert group["matcher"] == "*", "a guard must see every tool"
            out.setdefault(event, []).extend(hook["command"] for hook in group["hooks"])
    return out


def _codex_commands() -> dict[str, list[str]]:
    config = tomllib.loads((EXAMPLES / "codex-config.toml").read_text())
    out: dict[str, list[str]] = {}
    for event, groups in config["hooks"].items():
        for group in groups:
            assert "matcher" not in group, "a guard must see every tool"
            out.setdefault(event, []).extend(hook["command"] for hook in group["hooks"])
    return out


@pytest.mark.parametrize(
    ("harness", "commands"), [("claude-code", _claude_commands()), ("codex", _codex_commands())]
)
def test_examples_wire_all_five_events_to_the_adapter(harness: str, commands: dict[str, list[str]]) -> None:
    assert set(commands) == EVENTS
    for lines in commands.values():
        assert len(lines) == 1
        trap, _, command = lines[0].partition("; ")
        # The wrapping sh must outlive a signal sent to the whole process group and keep the
        # answer: it waits for the hook, then exits 2 unless the hook answered with 0.
        assert shlex.split(trap) == ["trap", "[ $? -eq 0 ] || exit 2", "HUP", "INT", "TERM", "PIPE"]
        # Then the guard that answers with what to install when dsh-policy is missing
        # (tests/hooks/test_hook_machine_wide.py runs it).
        guard, _, command = command.partition(" }; ")
        assert guard.startswith("command -v dsh-policy >/dev/null 2>&1 || { printf ")
        words = shlex.split(command)
        assert words[:3] == ["dsh-policy", "hook", harness]
        # Any other non-zero exit (127 when dsh-policy is not on PATH, 1 on a crash before our
        # code runs) would be a non-blocking error: the wrapper turns it into a refusal.
        assert words[-3:] == ["||", "exit", "2"]


@pytest.mark.parametrize(
    ("harness", "commands"), [("claude-code", _claude_commands()), ("codex", _codex_commands())]
)
def test_example_command_refuses_when_dsh_policy_is_missing(
    tmp_path, harness: str, commands: dict[str, list[str]]
) -> None:
    line = commands["PreToolUse"][0]
    done = subprocess.run(
        ["/bin/sh", "-c", line],
        input=json.dumps(payload(harness, "pre_tool_use_bash_ls")).encode(),
        capture_output=True,
        env={"PATH": str(tmp_path), "CLAUDE_PROJECT_DIR": str(tmp_path)},
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip()


@pytest.mark.parametrize(
    ("harness", "commands", "name", "code"),
    [
        ("claude-code", _claude_commands(), "pre_tool_use_bash_rm_root", 2),
        ("claude-code", _claude_commands(), "session_start", 0),
        ("codex", _codex_commands(), "pre_tool_use_shell_argv_rm_root", 2),
        ("codex", _codex_commands(), "user_prompt_submit", 0),
    ],
)
def test_example_commands_run_against_the_example_gateway(
    run_hook, tmp_path, harness: str, commands: dict[str, list[str]], name: str, code: int
) -> None:
    document = payload(harness, name)
    argv = shlex.split(commands[document["hook_event_name"]][0].partition(" }; ")[2])[:-3]
    config_at = argv.index("--config")
    gateway = (
        (EXAMPLES / "gateway.yaml")
        .read_text()
        .replace("../../rules/", str(EXAMPLES.parents[1] / "rules") + "/")
    )
    (tmp_path / "gateway.yaml").write_text(gateway)
    argv[config_at + 1] = str(tmp_path / "gateway.yaml")
    run = run_hook(harness, document, *argv[3:], pack=None)
    assert run.code == code, run
    assert "failed closed" not in run.stdout + run.stderr
    kinds = [
        json.loads(line)["kind"] for line in (tmp_path / "audit" / "hooks.jsonl").read_text().splitlines()
    ]
    assert kinds[0] == "segment_start"
    assert kinds[1] == "policy_loaded"  # the first hook run on a log records the policy in force
    assert kinds[2] in ("tool_result", "hook_event")
