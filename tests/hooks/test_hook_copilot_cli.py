"""GitHub Copilot CLI: its dialect, payload translation, tool vocabulary, hook file, init and doctor.
The real binary is driven by the opt-in suite (``ONLY=copilot-cli bash tools/realclient/run.sh``);
these are the fast checks that each spelling holds what Copilot CLI 1.0.102 was measured to honour."""

from __future__ import annotations

import json
import subprocess
import typing
from pathlib import Path

import pytest
from dsh_policy.policy.cli import init as init_cli
from dsh_policy.policy.hooks.copilot_cli import hooks_file
from dsh_policy.policy.hooks.copilot_cli.dialect import CopilotCliDialect, canonical_input
from dsh_policy.policy.hooks.dialects import DIALECTS, parse_for
from dsh_policy.policy.hooks.gateway import safe_answers
from dsh_policy.policy.hooks.protocol.messages import (
    SUPPORTED_EVENTS,
    Action,
    HookVerdict,
    PostToolUseInput,
    PreToolUseInput,
    failure_verdict,
)
from dsh_policy.policy.hooks.protocol.vocabulary import ToolInputError, canonicalize

DIALECT = CopilotCliDialect()
KEY = "AKIAZ7QK3M5N2P4R6T8V"


@pytest.mark.parametrize("event", [*SUPPORTED_EVENTS, None])
@pytest.mark.parametrize("action", typing.get_args(Action))
def test_every_verdict_is_exit_0_or_2_and_2_carries_the_reason_where_copilot_reads_it(event, action) -> None:  # type: ignore[no-untyped-def]
    verdict = HookVerdict(
        event,
        action,
        "because",
        contexts=("ctx",),
        redacted_types=("aws-access-key",),
        redacted_output="x [REDACTED:aws-access-key]",
        updated_input={"command": "ls"},
    )
    reply = DIALECT.render(verdict)
    assert reply.exit_code in (0, 2)
    if reply.stdout:
        assert isinstance(json.loads(reply.stdout), dict)
    if reply.exit_code == 2:
        # Copilot ignores stderr: the reason must be in stdout, for a call and for a result.
        answer = json.loads(reply.stdout)
        assert answer["permissionDecision"] == "deny" and answer["decision"] == "block"
        assert answer["permissionDecisionReason"] and reply.stderr.strip()


def test_each_verdict_is_spelled_as_measured() -> None:
    ask = json.loads(DIALECT.render(HookVerdict("PreToolUse", "ask", "a person decides")).stdout)
    assert ask == {"permissionDecision": "ask", "permissionDecisionReason": "a person decides"}
    rewrite = DIALECT.render(HookVerdict("PreToolUse", "rewrite", updated_input={"command": "ls"}))
    assert json.loads(rewrite.stdout) == {"modifiedArgs": {"command": "ls"}}
    redact = DIALECT.render(
        HookVerdict("PostToolUse", "redact", redacted_types=("aws",), redacted_output="k=[REDACTED:aws]")
    )
    assert json.loads(redact.stdout) == {
        "modifiedResult": {"resultType": "success", "textResultForLlm": "k=[REDACTED:aws]"}
    }
    block = DIALECT.render(HookVerdict("PostToolUse", "block", "withheld"))
    assert (block.exit_code, json.loads(block.stdout)) == (0, {"decision": "block", "reason": "withheld"})
    context = DIALECT.render(HookVerdict("PostToolUse", "pass", contexts=("note",)))
    assert json.loads(context.stdout) == {"additionalContext": "note"}
    assert DIALECT.render(HookVerdict("PreToolUse", "pass")).stdout == ""


@pytest.mark.parametrize("event", [None, *SUPPORTED_EVENTS])
def test_the_fast_client_refuses_as_the_dialect_does(event: str | None) -> None:
    expected = DIALECT.render(failure_verdict(event, "boom"))  # type: ignore[arg-type]
    answer = safe_answers.safe_answer(event, "boom", "copilot-cli")
    assert (answer.exit_code, answer.stdout, answer.stderr) == (
        expected.exit_code,
        expected.stdout,
        expected.stderr,
    )


def _payload(**fields: object) -> bytes:
    return json.dumps(
        {"session_id": "s", "cwd": "/tmp", "timestamp": "2026-12-02T10:58:26Z", **fields}
    ).encode()


def test_a_post_tool_payload_gets_the_text_the_model_would_read() -> None:
    raw = _payload(
        hook_event_name="PostToolUse",
        tool_name="Read",
        tool_input={"path": "/tmp/notes"},
        tool_result={"result_type": "success", "text_result_for_llm": f"key={KEY}"},
    )
    parsed = parse_for("copilot-cli", raw)
    assert isinstance(parsed, PostToolUseInput) and parsed.tool_response == f"key={KEY}"
    pre = parse_for(
        "copilot-cli", _payload(hook_event_name="PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    )
    assert isinstance(pre, PreToolUseInput)
    assert canonical_input(b"[1]") == b"[1]" and canonical_input(b"{nope") == b"{nope"


@pytest.mark.parametrize(
    ("tool", "args", "canonical", "field", "value"),
    [
        ("Bash", {"command": "ls", "description": "d"}, "shell", "command", "ls"),
        ("bash", {"command": "ls"}, "shell", "command", "ls"),
        ("Read", {"path": "/a"}, "read_file", "path", "/a"),
        ("view", {"path": "/a"}, "read_file", "path", "/a"),
        ("Write", {"path": "/a", "file_text": "x"}, "write_file", "content", "x"),
        ("create", {"path": "/a", "file_text": "x"}, "write_file", "content", "x"),
        ("Edit", {"path": "/a", "old_str": "o", "new_str": "n"}, "edit_file", "new_string", "n"),
        ("edit", {"path": "/a"}, "edit_file", "old_string", ""),
        ("web_fetch", {"url": "https://example.org"}, "web_fetch", "url", "https://example.org"),
        ("grep", {"pattern": "x"}, "grep", "pattern", "x"),
    ],
)
def test_copilot_tools_speak_the_canonical_vocabulary(tool, args, canonical, field, value) -> None:  # type: ignore[no-untyped-def]
    call = canonicalize("copilot-cli", tool, args)
    assert not isinstance(call, ToolInputError)
    assert (call.name, call.args[field], call.original_name) == (canonical, value, tool)


def test_a_copilot_tool_call_of_the_wrong_shape_is_an_error() -> None:
    assert isinstance(canonicalize("copilot-cli", "Edit", {"path": "/a", "new_str": 3}), ToolInputError)
    assert isinstance(canonicalize("copilot-cli", "Read", {}), ToolInputError)


def _run(command: str, stdin: str = "{}") -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], input=stdin, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("status", ["exit 1", "exit 3", "kill -9 $$", "echo half; exit 1", "exit 2"])
def test_the_wrapped_command_refuses_in_stdout_whatever_the_hook_dies_of(tmp_path: Path, status: str) -> None:
    stand_in = tmp_path / "dsh-policy"
    stand_in.write_text(f"#!/bin/sh\ncat >/dev/null\n{status}\n")
    stand_in.chmod(0o755)
    done = _run(hooks_file.hook_command("/dev/null", announce=False, program=str(stand_in)))
    answer = json.loads(done.stdout)  # one document: a half answer is dropped
    assert done.returncode == 2
    assert answer["permissionDecision"] == "deny" and answer["decision"] == "block"
    assert answer["reason"].startswith("dsh-policy failed closed (")


@pytest.mark.parametrize(
    ("script", "code", "stdout"),
    [
        (
            'echo \'{"permissionDecision":"deny","permissionDecisionReason":"r"}\'; exit 2',
            2,
            '{"permissionDecision":"deny","permissionDecisionReason":"r"}\n',
        ),
        ("echo '{\"modifiedArgs\":{}}'", 0, '{"modifiedArgs":{}}\n'),
        ("exit 0", 0, ""),
    ],
)
def test_the_wrapped_command_passes_a_real_answer_on_unchanged(
    tmp_path: Path, script: str, code: int, stdout: str
) -> None:
    stand_in = tmp_path / "dsh-policy"
    stand_in.write_text(f"#!/bin/sh\ncat >/dev/null\n{script}\n")
    stand_in.chmod(0o755)
    done = _run(hooks_file.hook_command("/dev/null", announce=False, program=str(stand_in)))
    assert (done.returncode, done.stdout) == (code, stdout)


def test_init_writes_the_hook_file_and_never_overwrites_a_foreign_one(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert init_cli.main(["copilot-cli", "--project", str(project)]) == 0
    assert init_cli.main(["copilot-cli", "--project", str(project)]) == 0  # idempotent
    path = project / ".github" / "hooks" / "dsh-policy.json"
    document = json.loads(path.read_text())
    assert document["version"] == 1
    wired = hooks_file.wired_commands(document)
    assert set(wired) == {"SessionStart", "PreToolUse", "PostToolUse"}
    assert all(entry[0]["timeoutSec"] == 30 for entry in document["hooks"].values())
    assert "--announce-packs" in wired["SessionStart"][0]
    assert (project / ".dsh" / "gateway.yaml").is_file()
    path.write_text('{"version": 1, "hooks": {}}')
    assert init_cli.main(["copilot-cli", "--project", str(project)]) == 1
    assert path.read_text() == '{"version": 1, "hooks": {}}'


def test_copilot_trust_is_read_from_its_config(tmp_path: Path) -> None:
    text = "// managed automatically\n" + json.dumps({"trustedFolders": [str(tmp_path)]})
    folders = hooks_file.trusted_folders(text)
    assert folders == [str(tmp_path)] and hooks_file.is_trusted(str(tmp_path), folders)
    assert not hooks_file.is_trusted(str(tmp_path / "elsewhere"), folders)
    assert hooks_file.trusted_folders("{nope") is None
    assert hooks_file.trusted_folders("{}") == []
    assert hooks_file.config_path({"COPILOT_HOME": "/x"}) == "/x/config.json"
    assert hooks_file.config_path({"HOME": "/h"}) == "/h/.copilot/config.json"


def test_doctor_fails_where_nothing_is_wired_and_warns_about_an_untrusted_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_policy.policy.hooks.install import doctor_clients

    project = tmp_path / "proj"
    project.mkdir()
    assert [f.level for f in doctor_clients.findings("copilot-cli", str(project))] == ["fail"]
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    (project / ".github" / "hooks").mkdir(parents=True)
    (project / ".github" / "hooks" / "dsh-policy.json").write_text(
        hooks_file.hooks_text("/dev/null", program=str(tmp_path / "missing"))
    )
    found = doctor_clients.findings("copilot-cli", str(project))
    assert [(f.level, f.subject) for f in found[:2]] == [("ok", "hooks"), ("warn", "trust")]
    # The configured command cannot run: the probes say so (the deny probe is still refused).
    assert ("fail", "allow probe") in [(f.level, f.subject) for f in found]


def test_the_dialect_is_registered() -> None:
    assert DIALECTS["copilot-cli"].name == "copilot-cli"
