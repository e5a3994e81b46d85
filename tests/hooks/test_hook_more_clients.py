"""Gemini CLI, Qwen Code and OpenCode: their dialects, event names, tool vocabulary, init and the
OpenCode plugin. The real binaries are driven by the opt-in suite (tools/realclient/run.sh); these
are the fast checks that each spelling holds what the real clients were measured to honour."""

from __future__ import annotations

import json
import shutil
import subprocess
import typing
from pathlib import Path

import pytest
from dsh_policy.policy.cli import init as init_cli
from dsh_policy.policy.hooks.dialects import DIALECTS, parse_for
from dsh_policy.policy.hooks.gemini_cli.dialect import GeminiCliDialect, canonical_input
from dsh_policy.policy.hooks.opencode.dialect import ASK_DEGRADED_SUFFIX, OpenCodeDialect
from dsh_policy.policy.hooks.opencode.plugin import plugin_command, plugin_source
from dsh_policy.policy.hooks.protocol.messages import (
    SUPPORTED_EVENTS,
    Action,
    HookInputError,
    HookVerdict,
    PreToolUseInput,
)
from dsh_policy.policy.hooks.protocol.vocabulary import canonicalize
from dsh_policy.policy.hooks.qwen_code.dialect import ALREADY_SEEN_NOTE, QwenCodeDialect

NEW = [GeminiCliDialect(), QwenCodeDialect(), OpenCodeDialect()]
KEY = "AKIAZ7QK3M5N2P4R6T8V"


@pytest.mark.parametrize("dialect", NEW, ids=lambda d: d.name)
@pytest.mark.parametrize("event", [*SUPPORTED_EVENTS, None])
@pytest.mark.parametrize("action", typing.get_args(Action))
def test_every_verdict_is_exit_0_or_2_and_2_always_has_a_reason(dialect, event, action) -> None:  # type: ignore[no-untyped-def]
    verdict = HookVerdict(
        event,
        action,
        "because",
        contexts=("ctx",),
        redacted_types=("aws-access-key",),
        redacted_output={"llmContent": "x [REDACTED:aws-access-key]"},
        tool_name="t",
        updated_input={"command": "ls"},
    )
    reply = dialect.render(verdict)
    assert reply.exit_code in (0, 2)
    if reply.exit_code == 2:
        assert reply.stderr.strip() and not reply.stdout
    elif reply.stdout:
        assert isinstance(json.loads(reply.stdout), dict)


@pytest.mark.parametrize("dialect", NEW, ids=lambda d: d.name)
def test_a_deny_is_exit_2_with_the_reason_on_stderr(dialect) -> None:  # type: ignore[no-untyped-def]
    reply = dialect.render(HookVerdict("PreToolUse", "deny", "no"))
    assert (reply.exit_code, reply.stdout, reply.stderr) == (2, "", "no\n")


def test_gemini_events_become_ours_and_unknown_input_is_left_for_the_parser() -> None:
    raw = json.dumps(
        {
            "session_id": "s",
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "ls"},
            "timestamp": "t",
        }
    ).encode()
    payload = parse_for("gemini-cli", raw)
    assert isinstance(payload, PreToolUseInput)
    after = parse_for("gemini-cli", raw.replace(b"BeforeTool", b"AfterTool"))
    assert isinstance(after, HookInputError)  # AfterTool without tool_response is malformed
    assert after.event == "PostToolUse"
    assert canonical_input(b"not json") == b"not json"
    assert isinstance(parse_for("gemini-cli", raw.replace(b"BeforeTool", b"BeforeModel")), HookInputError)


def test_gemini_redaction_replaces_the_result_with_the_redacted_text() -> None:
    reply = GeminiCliDialect().render(
        HookVerdict(
            "PostToolUse",
            "redact",
            redacted_types=("aws-access-key",),
            redacted_output={"llmContent": "key = [REDACTED:aws-access-key]", "returnDisplay": "raw"},
        )
    )
    document = json.loads(reply.stdout)
    assert (reply.exit_code, document["decision"], document["reason"]) == (
        0,
        "deny",
        "key = [REDACTED:aws-access-key]",
    )


def test_gemini_ask_is_its_own_ask_and_context_names_its_own_event() -> None:
    ask = json.loads(GeminiCliDialect().render(HookVerdict("PreToolUse", "ask", "a human?")).stdout)
    assert ask["decision"] == "ask"
    ctx = json.loads(
        GeminiCliDialect().render(HookVerdict("UserPromptSubmit", "pass", contexts=("c",))).stdout
    )
    assert ctx["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"


def test_qwen_says_a_flagged_output_was_not_withheld() -> None:
    reply = QwenCodeDialect().render(HookVerdict("PostToolUse", "redact", redacted_types=("aws-access-key",)))
    assert ALREADY_SEEN_NOTE in json.loads(reply.stdout)["reason"]


def test_opencode_redacts_by_replacing_output_and_denies_an_ask() -> None:
    reply = OpenCodeDialect().render(HookVerdict("PostToolUse", "redact", redacted_output="k=[REDACTED:x]"))
    assert json.loads(reply.stdout)["hookSpecificOutput"]["updatedToolOutput"] == "k=[REDACTED:x]"
    ask = OpenCodeDialect().render(HookVerdict("PreToolUse", "ask", "human"))
    assert (ask.exit_code, ask.stderr) == (2, "human" + ASK_DEGRADED_SUFFIX + "\n")


@pytest.mark.parametrize(
    ("harness", "tool", "args", "canonical", "path"),
    [
        ("gemini-cli", "run_shell_command", {"command": "ls"}, "shell", None),
        ("gemini-cli", "read_file", {"file_path": "/a"}, "read_file", "/a"),
        ("qwen-code", "write_file", {"file_path": "/b", "content": "x"}, "write_file", "/b"),
        ("opencode", "bash", {"command": "ls", "description": "d"}, "shell", None),
        ("opencode", "edit", {"filePath": "/c", "oldString": "a", "newString": "b"}, "edit_file", "/c"),
    ],
)
def test_each_client_speaks_the_canonical_vocabulary(harness, tool, args, canonical, path) -> None:  # type: ignore[no-untyped-def]
    call = canonicalize(harness, tool, args)
    assert call.name == canonical  # type: ignore[union-attr]
    if path is not None:
        assert call.args["path"] == path  # type: ignore[union-attr]


def test_every_dialect_is_registered() -> None:
    assert {"gemini-cli", "qwen-code", "opencode"} <= set(DIALECTS)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    return project


@pytest.mark.parametrize("harness", ["gemini-cli", "qwen-code"])
def test_init_wires_settings_and_keeps_what_is_there(tmp_path: Path, harness: str, capsys) -> None:  # type: ignore[no-untyped-def]
    project = _project(tmp_path)
    folder = project / (".gemini" if harness == "gemini-cli" else ".qwen")
    folder.mkdir()
    (folder / "settings.json").write_text('{"theme": "dark"}')
    assert init_cli.main([harness, "--project", str(project)]) == 0
    assert init_cli.main([harness, "--project", str(project)]) == 0  # idempotent
    document = json.loads((folder / "settings.json").read_text())
    assert document["theme"] == "dark"
    tool_event = "BeforeTool" if harness == "gemini-cli" else "PreToolUse"
    hooks = document["hooks"][tool_event]
    assert len(hooks) == 1 and f"hook {harness} --config" in hooks[0]["hooks"][0]["command"]
    command = hooks[0]["hooks"][0]["command"]
    assert command.endswith(">&2; exit 2; }")  # exit 2 with an empty stderr lets the call run
    assert (project / ".dsh" / "gateway.yaml").is_file()


@pytest.mark.parametrize("status", ["exit 1", "exit 3", "kill -9 $$"])
def test_the_wrapped_command_refuses_with_a_reason_whatever_the_hook_dies_of(
    tmp_path: Path, status: str
) -> None:
    from dsh_policy.policy.hooks.gemini_cli.settings import hook_command

    stand_in = tmp_path / "dsh-policy"
    stand_in.write_text(f"#!/bin/sh\n{status}\n")
    stand_in.chmod(0o755)
    done = subprocess.run(
        ["/bin/sh", "-c", hook_command("gemini-cli", "/dev/null", announce=False, program=str(stand_in))],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "dsh-policy failed closed" in done.stderr


def test_init_refuses_settings_that_do_not_parse(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text("{nope")
    assert init_cli.main(["gemini-cli", "--project", str(project)]) == 1
    assert (project / ".gemini" / "settings.json").read_text() == "{nope"


def test_init_opencode_writes_the_plugin_and_never_overwrites_a_foreign_one(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert init_cli.main(["opencode", "--project", str(project)]) == 0
    plugin = project / ".opencode" / "plugin" / "dsh-policy.js"
    argv = plugin_command(plugin.read_text())
    assert argv is not None and argv[:3] == ["dsh-policy", "hook", "opencode"]
    plugin.write_text("export const Mine = async () => ({})\n")
    assert init_cli.main(["opencode", "--project", str(project)]) == 1
    assert "Mine" in plugin.read_text()


NODE = shutil.which("node")
PLUGIN_DRIVER = """
import { DshPolicy } from %s;
const hooks = await DshPolicy({ directory: process.cwd() });
const out = { args: { command: "ls" } };
const results = {};
const call = { tool: "bash", sessionID: "s", callID: "c" };
try { await hooks["tool.execute.before"](call, out); results.before = "ran"; }
catch (error) { results.before = "refused: " + error.message; }
const after = { output: "secret", title: "", metadata: {} };
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "s", callID: "c", args: {} }, after);
results.after = after.output;
console.log(JSON.stringify(results));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize(
    ("script", "before", "after"),
    [
        ("exit 2", "refused: ", "dsh-policy failed closed"),  # exit 2, empty stderr: still refused
        ("exit 1", "refused: dsh-policy failed closed: hook exited 1", "dsh-policy failed closed"),
        ("echo not-json", "refused: dsh-policy failed closed: unreadable", "dsh-policy failed closed"),
        ("exit 0", "ran", "secret"),
    ],
)
def test_the_opencode_plugin_fails_closed(tmp_path: Path, script: str, before: str, after: str) -> None:
    """The shipped plugin, run by node against a stand-in hook: anything but exit 0 with readable
    JSON (or nothing) refuses the call and withholds the output."""
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\n{script}\n")
    hook.chmod(0o755)
    plugin = tmp_path / "dsh-policy.mjs"
    plugin.write_text(plugin_source("/dev/null", program=str(hook)))
    driver = tmp_path / "driver.mjs"
    driver.write_text(PLUGIN_DRIVER % json.dumps(str(plugin)))
    done = subprocess.run([NODE, str(driver)], capture_output=True, text=True, timeout=30, cwd=tmp_path)  # type: ignore[list-item]
    results = json.loads(done.stdout)
    assert results["before"].startswith(before)
    assert results["after"].startswith(after)


@pytest.mark.parametrize("harness", ["gemini-cli", "qwen-code", "opencode"])
def test_doctor_fails_where_nothing_is_wired(tmp_path: Path, harness: str) -> None:
    from dsh_policy.policy.hooks.install import doctor_clients

    found = doctor_clients.findings(harness, str(_project(tmp_path)))
    assert [f.level for f in found] == ["fail"]
