"""TOTP as the console's second factor (RFC 6238, standard library): the RFC's own test vectors, the
secret file, and a login over HTTP that needs the printed secret and a fresh code, once."""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path

import pytest
from approval_kit import Deployment
from console_kit import running_console
from dsh_policy.policy.approvals.console.sessions import Sessions
from dsh_policy.policy.approvals.console.totp import (
    TotpCheck,
    load_totp_secret,
    provisioning_uri,
    totp,
    totp_option,
)
from dsh_policy.policy.cli import main as cli
from test_console_http import request

RFC_KEY = b"12345678901234567890"  # RFC 6238 appendix B, SHA-1


@pytest.mark.parametrize(
    ("at", "code"),
    [
        (59, "94287082"),
        (1111111109, "07081804"),
        (1111111111, "14050471"),
        (1234567890, "89005924"),
        (2000000000, "69279037"),
        (20000000000, "65353130"),
    ],
)
def test_the_rfc_6238_vectors(at: int, code: str) -> None:
    assert totp(RFC_KEY, at, digits=8) == code
    assert totp(RFC_KEY, at) == code[-6:]


def test_a_code_is_accepted_within_one_step_of_drift_and_never_twice() -> None:
    now = [1_800_000_000.0]
    check = TotpCheck(RFC_KEY, clock=lambda: now[0])
    assert not check.accept("12345") and not check.accept("abcdef")
    assert not check.accept(totp(RFC_KEY, now[0] + 90))  # three steps ahead
    assert check.accept(totp(RFC_KEY, now[0] - 30))  # the phone runs a step behind
    assert check.accept(totp(RFC_KEY, now[0]))
    assert not check.accept(totp(RFC_KEY, now[0]))  # the same code again: spent
    assert not check.accept(totp(RFC_KEY, now[0] - 30))  # an older one: spent too
    now[0] += 30
    assert check.accept(totp(RFC_KEY, now[0]))


def test_the_secret_file(tmp_path: Path) -> None:
    secret = tmp_path / "totp.secret"
    secret.write_text(base64.b32encode(RFC_KEY).decode().lower().rstrip("=") + "\n")
    assert load_totp_secret(secret) == RFC_KEY
    assert "secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" in provisioning_uri(RFC_KEY, "alice")
    secret.write_text("not base32 at all!")
    assert "not base32" in str(load_totp_secret(secret))
    secret.write_text(base64.b32encode(b"short").decode())
    assert "at least 16" in str(load_totp_secret(secret))
    assert totp_option(None) is None and isinstance(totp_option(str(tmp_path / "missing")), str)


def test_the_console_login_needs_the_secret_and_a_fresh_code(deployment: Deployment) -> None:
    key = b"a-totp-key-of-twenty-b"
    with running_console(deployment, Sessions(totp=TotpCheck(key))) as running:
        status, _, page = request(running, "GET", f"/login?token={running.secret}")
        assert status == 200 and "id=code" in page and running.secret in page  # no session from the link
        status, _, _ = request(running, "POST", "/login", {"token": running.secret})
        assert status == 403  # the secret alone
        wrong = str((int(totp(key, time.time())) + 1) % 1_000_000).zfill(6)
        status, _, _ = request(running, "POST", "/login", {"token": running.secret, "code": wrong})
        assert status == 403
        code = totp(key, time.time())
        status, _, _ = request(running, "POST", "/login", {"token": "guess", "code": code})
        assert status == 403  # a code without the secret
        status, headers, _ = request(running, "POST", "/login", {"token": running.secret, "code": code})
        assert status == 303
        cookie = headers["set-cookie"].split(";")[0]
        status, _, page = request(running, "GET", "/", Cookie=cookie)
        assert status == 200 and running.request in page and re.search(r"name=csrf", page)
        status, _, _ = request(running, "POST", "/login", {"token": running.secret, "code": code})
        assert status == 403  # replayed


def test_the_console_command_refuses_an_unusable_secret(
    deployment: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = deployment.folder / "totp.secret"
    bad.write_text("!!")
    queue = ["--queue", str(deployment.folder / "queue"), "--approvers", str(deployment.approvers_file)]
    signer = ["--as", "alice", "--key", str(deployment.folder / "alice.key")]
    assert cli(["approvals", "console", *queue, *signer, "--totp-secret", str(bad)]) == 2
    assert "not base32" in capsys.readouterr().err
