"""Security daemons killed through a process listing filtered by a pattern (probe12's class: the
pipeline spelling of ``pkill -f``), in spellings of our own beside the everyday kills of dev
servers by the same pipeline (no corpus entry)."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def defense_off(line: str) -> bool:
    return any(a["kind"] == "defense-off" for a in shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "ps -eo pid,comm | grep -E 'osqueryd|fluentd' | cut -d' ' -f1 | xargs kill",
        "ps aux | egrep '[s]ysmon' | awk '{print $2}' | xargs -r kill -TERM",
        "ps -ef | awk '/rsyslog/ {print $2}' | xargs kill -9",
        "kill -STOP $(ps -e | grep -i clamd | awk '{print $1}')",
        "top -b -n1 | grep -e auditbeat | awk '{print $1}' | xargs kill",
    ],
)
def test_daemons_found_by_a_pattern_and_killed(line: str) -> None:
    assert defense_off(line)


@pytest.mark.parametrize(
    "line",
    [
        "ps aux | grep vite | awk '{print $2}' | xargs kill",
        "ps aux | grep -v auditd | awk '{print $2}' | head -3",
        "ps -ef | grep falcon | awk '{print $2}'",
        "ps aux | grep gunicorn | grep -v grep | awk '{print $2}' | xargs kill -HUP",
        "kill $(ps -o pid= -C uvicorn)",
    ],
)
def test_everyday_kills_and_listings_are_not(line: str) -> None:
    assert not defense_off(line)
