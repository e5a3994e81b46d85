"""``dsh-policy log``: one line per decision, verified as it reads, filters that never hide a
failed record, JSON for machines, and ``--follow`` on a live (rotating) log."""

from __future__ import annotations

import datetime
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from dsh_policy.audit.logview import log_main, parse_since
from dsh_policy.audit.writer import AuditWriter


def _call(
    tool: str,
    args: dict[str, Any],
    *,
    pre: str = "allow",
    rules: list[str] | None = None,
    guard: bool = False,
) -> dict[str, Any]:
    denied = guard or pre == "deny"
    return {
        "session": "sess-alpha-1234",
        "agent": "a",
        "turn": 1,
        "step": 1,
        "call": {"name": tool, "args": args, "call_id": "c", "root_call_id": "c", "nested": False},
        "decision": {
            "approval": None,
            "denied_by": "tools/pre-execute" if denied else None,
            "guard": {
                "denied": guard,
                "rules": rules if guard else [],
                **({"message": "never"} if guard else {}),
            },
            "pre_execute": {"decision": pre, "rules": [] if guard else (rules or [])},
            "post_execute": {"action": "accept", "decision": "accept", "redactions": 0, "rules": []},
        },
        "result": {"is_error": denied, "error_code": None},
    }


def _demo_log(path: Path) -> Path:
    with AuditWriter.open(path) as writer:
        writer.append("tool_result", _call("shell", {"command": "ls -la"}))
        writer.append(
            "tool_result",
            _call("shell", {"command": "cat [REDACTED:aws-access-key]"}, pre="deny", rules=["p/no-cat"]),
        )
        writer.append(
            "tool_result", _call("shell", {"command": "mkfs /dev/sda"}, guard=True, rules=["p/no-mkfs"])
        )
        writer.append(
            "step_rejected",
            {
                "session": "sess-beta",
                "agent": "a",
                "turn": 2,
                "step": 1,
                "decision": {"rules": ["p/no-bypass"], "message": "refused"},
                "messages": [
                    {"role": "user", "source": "user", "text": "disable the gateway", "text_digest": "x"}
                ],
            },
        )
    return path


def test_one_line_per_decision_with_the_redacted_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _demo_log(tmp_path / "a.jsonl")
    assert log_main([str(log)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5  # four decisions and the summary; checkpoints and segment starts hidden
    assert "pre-execute" in lines[0] and "ALLOW" in lines[0] and "ls -la" in lines[0]
    assert "DENY" in lines[1] and "cat [REDACTED:aws-access-key]" in lines[1] and "p/no-cat" in lines[1]
    assert "guard" in lines[2] and "p/no-mkfs" in lines[2] and "never" in lines[2]
    assert "pre-step" in lines[3] and "REJECT" in lines[3] and "refused" in lines[3]
    assert lines[0].split()[2] == "sess-alp"  # time, then the session (shortened)
    assert lines[-1].startswith("4 of ") and "every record verified" in lines[-1]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--decision", "deny"], 2),
        (["--decision", "reject", "--decision", "allow"], 2),
        (["--rule", "p/no-mkfs"], 1),
        (["--rule", "no-cat"], 1),  # a bare id matches in any pack
        (["--rule", "p/*"], 3),
        (["--session", "sess-beta"], 1),
        (["--since", "1h"], 4),
        (["--since", "2999-01-01"], 0),
    ],
)
def test_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], expected: int) -> None:
    log = _demo_log(tmp_path / "a.jsonl")
    assert log_main([str(log), "--format", "json", *flags]) == 0
    assert len(capsys.readouterr().out.splitlines()) == expected


def test_a_tampered_record_is_marked_and_no_filter_hides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _demo_log(tmp_path / "a.jsonl")
    lines = log.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"decision":"deny"', '"decision":"allow"', 1)
    log.write_text("".join(lines))
    assert log_main([str(log), "--decision", "reject"]) == 1
    out = capsys.readouterr().out
    assert f"FAILED VERIFICATION {log}:3 (seq 2): HASH_MISMATCH" in out
    assert "REJECT" in out and "1 record(s) failed verification" in out
    assert log_main([str(log), "--format", "json", "--session", "nobody"]) == 1
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(entry["seq"], entry["verified"]) for entry in shown] == [(2, False)]
    assert shown[0]["failures"][0].startswith("HASH_MISMATCH")


def test_json_lines_carry_the_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _demo_log(tmp_path / "a.jsonl")
    assert log_main([str(log), "--format", "json", "--decision", "deny", "--rule", "p/no-cat"]) == 0
    (entry,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert entry["args"] == {"command": "cat [REDACTED:aws-access-key]"}
    assert entry["decision"] == "deny" and entry["rules"] == ["p/no-cat"] and entry["verified"] is True


def test_unreadable_input_and_bad_since_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert log_main([str(tmp_path / "missing.jsonl")]) == 2
    log = _demo_log(tmp_path / "a.jsonl")
    assert log_main([str(log), "--since", "yesterday-ish"]) == 2
    assert "--since" in capsys.readouterr().err


def test_since_reads_times_dates_and_ages() -> None:
    now = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)
    assert parse_since("30m", now) == now - datetime.timedelta(minutes=30)
    assert parse_since("2026-11-30", now) == datetime.datetime(2026, 11, 30, tzinfo=datetime.UTC)
    assert parse_since("2026-12-01T10:00:00Z", now) == datetime.datetime(2026, 12, 1, 10, tzinfo=datetime.UTC)
    assert parse_since("soon", now) is None


def _reader(process: subprocess.Popen[str]) -> queue.Queue[str]:
    """Lines of the child's stdout, read on a thread so the test can wait with a deadline."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _read_until(lines: queue.Queue[str], count: int, deadline: float) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    while len(seen) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"follow showed only {seen}"
        try:
            seen.append(json.loads(lines.get(timeout=left)))
        except queue.Empty:
            continue
    return seen


def test_follow_tails_a_live_log_across_rotation(tmp_path: Path) -> None:
    log = tmp_path / "live.jsonl"
    writer = AuditWriter.open(
        log, fsync="off", rotate_bytes=4096, checkpoint_every=None, checkpoint_seconds=None
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "dsh_policy.policy.cli", "log", str(log), "--follow", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60  # bounded: the test fails rather than hangs
    lines = _reader(process)
    try:
        writer.append("tool_result", _call("shell", {"command": "echo first"}))
        assert _read_until(lines, 1, deadline)[0]["args"] == {"command": "echo first"}
        for n in range(12):  # ~1 KiB each: crosses rotate_bytes at least twice
            writer.append("tool_result", _call("shell", {"command": f"echo {n} " + "x" * 900}))
        writer.append("tool_result", _call("shell", {"command": "echo last"}))
        rest = _read_until(lines, 13, deadline)
        assert rest[-1]["args"] == {"command": "echo last"}
        assert all(entry["verified"] for entry in rest), rest  # segment links checked across rotations
        assert [entry["args"]["command"].split()[1] for entry in rest[:-1]] == [str(n) for n in range(12)]
        assert sorted(
            p.name for p in tmp_path.iterdir() if p.name.startswith("live.jsonl.0")
        )  # it did rotate
    finally:
        writer.close()
        process.terminate()
        process.wait(timeout=30)
