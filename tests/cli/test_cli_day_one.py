"""What a new user types works: the README's option spellings, --version, closed pipes, audit
folders, fresh demo logs, plain wording, colour only for terminals, events in order."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.audit.terminal import Painter, Progress, wants_colour
from dsh_policy.audit.writer import AuditWriteError, AuditWriter
from dsh_policy.policy import cli
from dsh_policy.policy.cli import run as run_cli
from dsh_policy.policy.hooks.hook_command import hook_parser

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "sessions" / "demo.yaml"
BASELINE, SECRETS = str(ROOT / "rules" / "baseline.yaml"), str(ROOT / "rules" / "secrets.yaml")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SMALL_CASES = """\
cases:
  - name: ls is fine
    stage: pre-execute
    tool: shell
    args: {command: ls}
    expect: {decision: allow}
  - name: credentials stay unread
    stage: pre-execute
    tool: read_file
    args: {path: /root/.ssh/id_rsa}
    expect: {decision: deny, rules: [baseline/deny-credential-file-reads]}
"""


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


# ------------------------------------------------------------------------- the command line


@pytest.mark.parametrize("spelling", [["--pack", BASELINE, SECRETS], ["--pack", BASELINE, "--pack", SECRETS]])
def test_run_and_hook_take_pack_lists_and_repeated_packs(spelling: list[str]) -> None:
    args = run_cli._parser().parse_args([str(DEMO), *spelling, "--audit", "x.jsonl"])
    assert args.packs == [BASELINE, SECRETS] and args.session == str(DEMO)
    hook_args = hook_parser().parse_args(["claude-code", *spelling])
    assert hook_args.packs == [BASELINE, SECRETS] and hook_args.harness == "claude-code"


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(r"dsh-policy \d+\.\d+\S*\n", out), out


class _ClosedPipe(io.TextIOBase):
    """stdout whose reader went away: every write and flush raises BrokenPipeError."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", BASELINE, "--cases", "CASES"],
        ["explain", BASELINE, "--event", "EVENT"],
        ["verify", "LOG"],
        ["log", "LOG"],
        ["keygen", "--out", "KEYS"],
        ["--version"],
    ],
)
def test_output_into_a_closed_pipe_ends_quietly_with_status_141(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    event = tmp_path / "event.yaml"
    event.write_text("stage: pre-execute\ntool: shell\nargs: {command: ls}\n")
    log = tmp_path / "log.jsonl"
    with AuditWriter.open(log) as writer:
        writer.append("note", {"text": "hello"})
    cases = tmp_path / "small.cases.yaml"
    cases.write_text(SMALL_CASES)
    names = {"EVENT": str(event), "LOG": str(log), "KEYS": str(tmp_path / "k"), "CASES": str(cases)}
    replaced = [names.get(a, a) for a in argv]
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert cli.main(replaced) == 141
    assert "Traceback" not in capsys.readouterr().err


def test_a_hook_whose_stdout_is_closed_still_only_exits_0_or_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    start = {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup"}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(start).encode())))
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert cli.main(["hook", "claude-code", "--pack", BASELINE, "--announce-packs"]) == 2


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_verify_piped_into_head_prints_no_traceback(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with AuditWriter.open(log) as writer:
        for n in range(3):
            writer.append("note", {"n": n})
    script = (
        f'"{sys.executable}" -m dsh_policy.policy.cli verify "{log}" | head -1;'
        ' echo "status=${PIPESTATUS[0]}" >&2'
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("verdict"), done
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert "status=0" in done.stderr or "status=141" in done.stderr, done.stderr


# ------------------------------------------------------------------------------ audit folders


def test_a_new_logs_folders_are_created(tmp_path: Path) -> None:
    log = tmp_path / "new" / "dir" / "x.jsonl"
    with AuditWriter.open(log) as writer:
        writer.append("note", {"n": 1})
    assert log.is_file()


def test_a_folder_that_cannot_be_created_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(AuditWriteError, match=r"afile/sub: cannot create the audit log's folder"):
        AuditWriter.open(tmp_path / "afile" / "sub" / "x.jsonl")


# ------------------------------------------------------------------------------- run output


def _run(tmp_path: Path, *extra: str, log: str = "audit.jsonl") -> tuple[int, str]:
    out = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        code = cli.main(
            ["run", str(DEMO), "--pack", BASELINE, SECRETS, "--audit", str(tmp_path / log), *extra]
        )
    finally:
        sys.stdout = saved
    return code, out.getvalue()


def test_a_second_run_starts_a_fresh_log_and_says_where_the_old_one_went(tmp_path: Path) -> None:
    first_code, first = _run(tmp_path)
    second_code, second = _run(tmp_path)
    assert first_code == second_code == 0
    assert "starting a fresh log" not in first
    moved = re.search(r"the previous one is now (\S+)", second)
    assert moved, second
    figures = re.compile(r"audit: .*: (\d+) records, INTACT")
    assert figures.search(first)[1] == figures.search(second)[1]  # type: ignore[index]
    assert cli.main(["verify", moved[1]]) == 0  # the previous log is kept whole, and still verifies


def test_append_says_so_and_a_failed_log_gives_its_reason(tmp_path: Path) -> None:
    code, _ = _run(tmp_path)
    assert code == 0
    log = tmp_path / "audit.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"decision":"deny"' in line)
    lines[at] = lines[at].replace('"decision":"deny"', '"decision":"allow"', 1)
    log.write_text("".join(lines))
    code, out = _run(tmp_path, "--append")
    assert code == 1
    assert re.search(r"\d+ records \(\d+ from this run, appended to the \d+ already there\), FAILED", out), (
        out
    )
    assert f"first error: {log}:{at + 1} (seq {at}) HASH_MISMATCH" in out


def test_the_verify_hint_names_the_public_key_after_a_signed_run(tmp_path: Path) -> None:
    assert cli.main(["keygen", "--out", str(tmp_path / "audit")]) == 0
    code, out = _run(tmp_path, "--signing-key", str(tmp_path / "audit.key"))
    assert code == 0
    assert (
        f"verify it yourself: dsh-policy verify {tmp_path / 'audit.jsonl'} --key {tmp_path / 'audit.pub'}"
        in out
    )
    assert "signed, signatures verified" in out
    assert "unsigned-verified" not in out and "anchored" not in out  # no jargon


def test_approval_lines_follow_their_call_and_json_events_carry_redacted_args(tmp_path: Path) -> None:
    code, out = _run(tmp_path)
    assert code == 0
    lines = out.splitlines()
    asked = [i for i, line in enumerate(lines) if "asked for approval" in line]
    assert len(asked) == 2
    for index in asked:  # right under its own call, never before the step's calls
        call = next(
            lines[j] for j in range(index - 1, -1, -1) if lines[j].startswith("    ") and lines[j][4] != " "
        )
        assert call.split()[0] in ("ASK>OK", "ASK>DENY"), (call, lines[index])
    code, out = _run(tmp_path, "--format", "json", log="json.jsonl")
    events = json.loads(out)["events"]
    calls = [event for event in events if event["event"] == "call"]
    assert all("args" in event for event in calls)
    sent = next(event for event in calls if event["tool"] == "send_message")
    assert "[REDACTED:" in json.dumps(sent["args"])
    assert "s3cr3t-Passw0rd" not in out


def test_colour_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, plain = _run(tmp_path)
    assert not ANSI.search(plain)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, coloured = _run(tmp_path, log="coloured.jsonl")
    assert "\x1b[31;1mDENY\x1b[0m" in coloured  # decision words coloured
    assert "\x1b[2mbaseline/" in coloured  # rule ids dimmed
    # The same text beneath (up to the log's file name).
    assert ANSI.sub("", coloured).replace("coloured.jsonl", "audit.jsonl") == plain


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wants_colour(_Tty()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(_Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_colour(_Tty())
    assert Painter(True).decision("ALLOW", 8) == "\x1b[32;1mALLOW\x1b[0m   "  # padding outside the codes


def test_progress_is_drawn_on_a_terminal_and_erased_never_elsewhere() -> None:
    tty, pipe = _Tty(), io.StringIO()
    with Progress("checking", 3, stream=tty) as shown, Progress("checking", 3, stream=pipe) as hidden:
        for _ in range(3):
            shown.advance()
            hidden.advance()
    assert "checking 3/3" in tty.getvalue() and tty.getvalue().endswith("\r\x1b[2K")
    assert pipe.getvalue() == ""


def test_check_progress_goes_to_a_terminals_stderr_never_into_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_policy.policy.cli import check as check_cli

    cases = tmp_path / "small.cases.yaml"
    cases.write_text(SMALL_CASES)
    monkeypatch.setattr(check_cli, "_PROGRESS_FROM", 1)
    out, err = io.StringIO(), _Tty()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(["check", BASELINE, "--cases", str(cases), "--format", "json"]) == 0
    assert json.loads(out.getvalue())["summary"] == {"passed": 2, "failed": 0}
    assert "checking cases 2/2" in err.getvalue()


# ---------------------------------------------------------------------------- cases and keys


def test_a_case_naming_an_unknown_rule_is_an_error_at_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "typo.cases.yaml"
    cases.write_text(
        "cases:\n"
        "  - name: typo\n"
        "    stage: pre-execute\n"
        "    tool: shell\n"
        "    args: {command: ls}\n"
        "    expect:\n"
        "      decision: allow\n"
        "      rules: [baseline/deny-credential-file-read]\n"
    )
    assert cli.main(["check", BASELINE, "--cases", str(cases)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{cases}:8:15: case 'typo': unknown rule 'baseline/deny-credential-file-read'"
        " (did you mean 'baseline/deny-credential-file-reads'?)"
    ) in err


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_keygen_warns_about_a_private_key_git_would_pick_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert cli.main(["keygen", "--out", str(tmp_path / "exposed")]) == 0
    assert "exposed.key is inside the git work tree" in capsys.readouterr().err
    (tmp_path / ".gitignore").write_text("*.key\n")
    assert cli.main(["keygen", "--out", str(tmp_path / "ignored")]) == 0
    assert "warning" not in capsys.readouterr().err
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    assert cli.main(["keygen", "--out", str(outside / "k")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_the_shipped_hook_gateway_works_in_a_fresh_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = tmp_path / "examples" / "hooks"
    hooks.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "hooks" / "gateway.yaml", hooks)
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    payload: dict[str, Any] = json.loads((ROOT / "examples" / "hooks" / "pre-tool-use.json").read_text())
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
    try:
        code = cli.main(["hook", "claude-code", "--config", str(hooks / "gateway.yaml")])
    finally:
        sys.stdin = saved
    err = capsys.readouterr().err
    assert code == 2 and "deny-credential-file-reads" in err and "failed closed" not in err, err
    assert (hooks / "audit" / "hooks.jsonl").is_file()
    assert os.path.isdir(hooks / "audit")


def test_verify_of_many_segments_shows_progress_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "big.jsonl"
    with AuditWriter.open(log, rotate_bytes=2048) as writer:
        for n in range(20):
            writer.append("note", {"text": "x" * 400, "n": n})
    assert len(list(tmp_path.glob("big.jsonl.0*"))) >= 2
    for stderr, shows in ((_Tty(), True), (io.StringIO(), False)):
        out = io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", stderr)
        assert cli.main(["verify", str(log), "--format", "json"]) == 0
        assert json.loads(out.getvalue())["intact"] is True  # progress never enters the report
        assert ("verifying segment" in stderr.getvalue()) is shows


def test_check_and_explain_take_pack_options_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = tmp_path / "event.yaml"
    event.write_text("stage: pre-execute\ntool: read_file\nargs: {path: /root/.ssh/id_rsa}\n")
    assert cli.main(["explain", "--pack", BASELINE, SECRETS, "--event", str(event)]) == 0
    out = capsys.readouterr().out
    assert "decision: deny" in out and "secrets/" in out  # both packs loaded
    assert cli.main(["check", "--pack", BASELINE, "--pack", SECRETS]) == 0
    assert "ok: 2 pack(s)" in capsys.readouterr().out
