"""An anchor is read only from a regular file: a named pipe (FIFO) given as the anchor or found under
an anchor's name is refused with an error that says what it is, instead of blocking ``verify``.

Each verify runs as its own process with a deadline (``subprocess.run(timeout=...)``): a verifier
that blocks on the FIFO fails the test by that timeout instead of hanging the suite. The deadline
bounds the harness; no assertion is about time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from audit_helpers import WriteLog
from dsh_policy.audit.segments import anchor_path

#: Generous: a verify of a few records takes well under a second even on a loaded machine.
HARNESS_TIMEOUT_SECONDS = 120


def _verify(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh_policy.policy.cli", "verify", *argv],
        capture_output=True,
        text=True,
        timeout=HARNESS_TIMEOUT_SECONDS,
        check=False,
    )


def test_a_fifo_given_as_the_anchor_is_refused_as_unreadable(write_log: WriteLog, tmp_path: Path) -> None:
    path = write_log(3)
    fifo = tmp_path / "exported.anchor"
    os.mkfifo(fifo)
    done = _verify(str(path), "--anchor", str(fifo))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "verdict      UNREADABLE INPUT"
    assert f"unreadable   {fifo}: a named pipe (FIFO), not a regular file" in done.stdout


def test_a_fifo_under_the_logs_anchor_name_is_refused_and_others_beside_it_are_passed_over(
    write_log: WriteLog, tmp_path: Path
) -> None:
    path = write_log(3)
    own = anchor_path(path)
    own.unlink(missing_ok=True)
    os.mkfifo(own)
    os.mkfifo(tmp_path / "another-log.jsonl.anchor")  # read by the search by log id, were it a file
    done = _verify(str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"unreadable   {own}: a named pipe (FIFO), not a regular file" in done.stdout
    assert "another-log" not in done.stdout
