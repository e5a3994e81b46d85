"""Security daemons killed through a process listing filtered by a pattern (probe12's class: the
pipeline spelling of ``pkill -f``), in spellings of our own beside the everyday kills of dev
servers by the same pipeline (no corpus entry); and data staged in a hidden temp folder packed
into an encrypted archive there (``hidden_staging``), beside encrypted backups of the project."""

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


@pytest.mark.parametrize(
    "line",
    [
        "zip -r -P hunter2 /var/tmp/.cache-x/out.zip /var/tmp/.cache-x/docs",
        "tar cf - /dev/shm/.s | gpg -c --batch --passphrase k -o /dev/shm/.s.gpg",
    ],
)
def test_hidden_staging_encrypted(line: str) -> None:
    assert defense_off(line)


@pytest.mark.parametrize(
    "line",
    [
        "7z a -pS3cret backup.7z ./reports",
        "zip -r /tmp/.cache/site.zip dist",
        "openssl enc -d -aes-256-cbc -in /tmp/.x.enc -out out.tgz",
    ],
)
def test_encrypted_backups_and_plain_archives_are_not(line: str) -> None:
    assert not defense_off(line)
