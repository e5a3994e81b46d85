"""Secrets in Claude Code's built-in tool output: a Bash call known to print one is rewritten so
its output streams through the gateway's redactor; a Read of such a file is refused; nothing
claims to have withheld what it could not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.policy.gateway_folders import RUNTIME_DIR_VARIABLE
from dsh_policy.policy.hooks.gateway.output_filter import Reviewer, parse_filter_options, split_chunk
from dsh_policy.policy.hooks.review.secret_reads import files_named
from resident_kit import hook_argv, run_client

KEY = "AKIA" + "Z7QK3M5N2P4R6T8V"  # shaped like an AWS access key id; not a real credential
PEM = (  # not a real key: the header and footer are what the pack withholds on
    "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnz\n"
    "-----END RSA PRIVATE KEY-----\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "deploy-notes.txt").write_text(f"aws_access_key_id = {KEY}\nregion = eu-west-1\n")
    (tmp_path / "clean.txt").write_text("nothing to see\n")
    (tmp_path / "id_rsa").write_text(PEM)
    (tmp_path / "sub").mkdir()
    return tmp_path


def _pre(tool: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "s-redact",
        "hook_event_name": "PreToolUse",
        "cwd": str(cwd),
        "transcript_path": "/dev/null",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{abs(hash(json.dumps(tool_input))) % 10**8}",
    }


def _hook(gateway_a, harness: str, event: dict[str, Any], *options: str):
    spec, pack, _ = gateway_a
    return run_client(hook_argv(harness, "--audit", str(spec.audit), *options, pack=pack), event)


def _rewritten(gateway_a, command: str, cwd: Path, *options: str) -> str | None:
    ran = _hook(
        gateway_a, "claude-code", _pre("Bash", {"command": command, "description": "d"}, cwd), *options
    )
    assert ran.code == 0, ran
    if not ran.stdout:
        return None
    specific = ran.json["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in specific  # the user's own permission rules still apply
    assert specific["updatedInput"]["description"] == "d"  # other fields kept
    command_out: str = specific["updatedInput"]["command"]
    return command_out


def _bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=90, check=False
    )


def test_a_bash_call_that_names_a_secret_file_prints_it_redacted(gateway_a, project: Path) -> None:
    command = _rewritten(gateway_a, "cat deploy-notes.txt", project)
    assert command is not None and "redact-output" in command
    done = _bash(command, project)
    assert done.returncode == 0
    assert KEY not in done.stdout + done.stderr
    assert "aws_access_key_id = [REDACTED:aws-access-key]\nregion = eu-west-1\n" in done.stdout
    assert (
        "[dsh-policy withheld 1 secret (aws-access-key) from this output, replaced in place]" in done.stdout
    )
    # the chunk that changed is in the audit log (digest only), and the log still verifies
    _spec, _, audit = gateway_a
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    reviewed = [r for r in records if r["kind"] == "hook_event" and r["hook"]["event"] == "RedactOutput"]
    assert reviewed and reviewed[-1]["answer"]["action"] == "redact"
    assert KEY not in audit.read_text()


def test_the_rewritten_call_keeps_its_exit_status_its_cwd_and_stderr(gateway_a, project: Path) -> None:
    command = _rewritten(gateway_a, "cd sub && cat ../deploy-notes.txt >&2; (exit 3)", project)
    assert command is not None
    done = _bash(f"{command}\necho status=$?\npwd", project)
    assert KEY not in done.stdout + done.stderr
    assert "[REDACTED:aws-access-key]" in done.stdout  # stderr was filtered too
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["status=3", str(project / "sub")]  # cd persists, as Claude Code expects


def test_quotes_in_the_command_cannot_escape_the_filter(gateway_a, project: Path) -> None:
    tricky = "cat deploy-notes.txt; echo '}' \"'\" ; } ; cat deploy-notes.txt; {"
    command = _rewritten(gateway_a, tricky, project)
    assert command is not None
    done = _bash(command, project)
    assert KEY not in done.stdout + done.stderr


def test_withheld_chunks_are_replaced_by_a_notice(gateway_a, project: Path) -> None:
    command = _rewritten(gateway_a, "cat id_rsa", project)
    assert command is not None
    done = _bash(command, project)
    assert "PRIVATE KEY" not in done.stdout
    assert done.stdout.startswith("[dsh-policy withheld ")
    assert "[policy: hook-guard/withhold-private-keys]" in done.stdout


def test_calls_that_name_no_secret_are_left_alone_unless_asked(gateway_a, project: Path) -> None:
    assert _rewritten(gateway_a, "cat clean.txt", project) is None
    assert _rewritten(gateway_a, "cat deploy-notes.txt", project, "--redact-bash-output", "never") is None
    always = _rewritten(gateway_a, "cat clean.txt", project, "--redact-bash-output", "always")
    assert always is not None
    assert _bash(always, project).stdout == "nothing to see\n"


def test_a_read_of_a_secret_file_is_refused_and_says_why(gateway_a, project: Path) -> None:
    ran = _hook(
        gateway_a, "claude-code", _pre("Read", {"file_path": str(project / "deploy-notes.txt")}, project)
    )
    assert ran.code == 2
    assert "dsh-policy withheld the contents of" in ran.stderr
    assert "aws-access-key" in ran.stderr and KEY not in ran.stderr
    clean = _hook(gateway_a, "claude-code", _pre("Read", {"file_path": str(project / "clean.txt")}, project))
    assert (clean.code, clean.stdout) == (0, "")


def test_codex_calls_are_never_rewritten(gateway_a, project: Path) -> None:
    event = {**_pre("Bash", {"command": "cat deploy-notes.txt"}, project), "model": "m", "turn_id": "t"}
    ran = _hook(gateway_a, "codex", event)
    assert (ran.code, ran.stdout) == (0, "")  # Codex withholds at PostToolUse instead


def test_the_filter_reviews_in_process_when_no_gateway_can_be_reached(
    gateway_a, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, pack, _ = gateway_a
    unusable = tmp_path / "not-private"
    unusable.mkdir()
    unusable.chmod(0o755)
    monkeypatch.setenv(RUNTIME_DIR_VARIABLE, str(unusable))
    options = parse_filter_options(["--pack", str(pack), "--call", "c1", "--session", "s1"])
    assert options is not None
    reviewer = Reviewer(options)
    assert reviewer.review(f"id = {KEY}\n".encode()).startswith(b"id = [REDACTED:aws-access-key]\n")
    assert reviewer.review(b"\xff\xfe plain bytes\n") == b"\xff\xfe plain bytes\n"  # not text? unchanged


def test_output_that_cannot_be_reviewed_is_not_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RUNTIME_DIR_VARIABLE, str(tmp_path / "missing" / "folder"))
    options = parse_filter_options(["--pack", str(tmp_path / "missing.yaml"), "--call", "c1"])
    assert options is not None
    shown = Reviewer(options).review(f"id = {KEY}\n".encode())
    assert KEY.encode() not in shown
    assert shown.startswith(b"[dsh-policy withheld 26 bytes of this output: it could not be reviewed (")


def test_chunks_are_whole_lines_unless_the_output_ends_or_stalls() -> None:
    assert split_chunk(b"a\nb", final=False, paused=False) == (b"", b"a\nb")
    assert split_chunk(b"a\nb", final=False, paused=True) == (b"a\n", b"b")
    assert split_chunk(b"a\nb", final=True, paused=False) == (b"a\nb", b"")


def test_files_named_by_a_command(project: Path) -> None:
    named = files_named("grep -i key < deploy-notes.txt && cat *.txt sub -n | head", str(project))
    assert sorted(named) == [str(project / "clean.txt"), str(project / "deploy-notes.txt")]
    assert files_named("cd sub && cat ../clean.txt", str(project)) == [str(project / "clean.txt")]


def test_a_content_grep_whose_matches_hold_a_secret_is_refused(gateway_a, project: Path) -> None:
    (project / "sub" / "config.ini").write_text(f"[aws]\nkey = {KEY}\nregion = eu-west-1\n")
    content = {"pattern": "key", "path": str(project / "sub"), "output_mode": "content"}
    ran = _hook(gateway_a, "claude-code", _pre("Grep", content, project))
    assert ran.code == 2
    assert "dsh-policy refused this Grep" in ran.stderr and "config.ini" in ran.stderr
    assert "aws-access-key" in ran.stderr and KEY not in ran.stderr
    # The same search printing only names, or matching only clean lines, or a context that keeps
    # the secret out: nothing to withhold.
    names = {**content, "output_mode": "files_with_matches"}
    assert _hook(gateway_a, "claude-code", _pre("Grep", names, project)).code == 0
    region = {**content, "pattern": "region"}
    assert _hook(gateway_a, "claude-code", _pre("Grep", region, project)).code == 0
    # ...but context lines that reach the secret count as printed.
    near = {**region, "-B": 1}
    assert _hook(gateway_a, "claude-code", _pre("Grep", near, project)).code == 2
    # A glob that leaves the file out, and hidden folders (as ripgrep skips them), pass.
    assert _hook(gateway_a, "claude-code", _pre("Grep", {**content, "glob": "*.py"}, project)).code == 0
    (project / "sub" / "config.ini").unlink()
    (project / "sub" / ".hidden").mkdir()
    (project / "sub" / ".hidden" / "creds").write_text(f"key = {KEY}\n")
    assert _hook(gateway_a, "claude-code", _pre("Grep", content, project)).code == 0


def test_a_grep_pattern_python_cannot_read_reviews_the_whole_file(gateway_a, project: Path) -> None:
    unreadable = {
        "pattern": "(?<name>key",
        "path": str(project / "deploy-notes.txt"),
        "output_mode": "content",
    }
    ran = _hook(gateway_a, "claude-code", _pre("Grep", unreadable, project))
    assert ran.code == 2 and "deploy-notes.txt" in ran.stderr
