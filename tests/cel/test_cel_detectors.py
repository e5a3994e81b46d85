"""Secret detectors: true positives redact only the secret; look-alikes stay."""

from __future__ import annotations

import pytest
from dsh_policy.policy import detectors

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("AWS_KEY=AKIAIOSFODNN7EXAMPLE", "AWS_KEY=[REDACTED:aws-access-key]"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            "aws_secret_access_key = [REDACTED:aws-secret-key]\n",
        ),
        (
            '"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
            '"AWS_SECRET_ACCESS_KEY": "[REDACTED:aws-secret-key]"',
        ),
        ("token=ghp_" + "A1b2" * 9, "token=[REDACTED:github-token]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github-token]"),
        ("glpat-abcdefghij0123456789", "[REDACTED:gitlab-token]"),
        ("xoxb-1234567890-abcdefghij", "[REDACTED:slack-token]"),
        (
            "hook https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "hook [REDACTED:slack-webhook]",
        ),
        ("OPENAI_API_KEY=sk-proj-abc123DEF456ghi789JKL012", "OPENAI_API_KEY=[REDACTED:openai-key]"),
        ("sk-" + "a1B2c3" * 8, "[REDACTED:openai-key]"),
        ("sk-ant-api03-" + "Zx9_" * 10, "[REDACTED:anthropic-key]"),
        ("key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "key=[REDACTED:google-api-key]"),
        ("_authToken=npm_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7c", "_authToken=[REDACTED:npm-token]"),
        ("bot 123456789:AAHk3mZq9XwY2vB7nC4dE1fG6hJ8kL0pQrS done", "bot [REDACTED:telegram-bot-token] done"),
        ("VAULT_TOKEN=hvs.CAESIJq2x9Lm4Pz7Rt1Wv6Yb3Nc8Dg5Fh0Kj", "VAULT_TOKEN=[REDACTED:vault-token]"),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe-key]"),
        ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe-key]"),
        (
            "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\ny",
            "x\n[REDACTED:private-key]\ny",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----",
            "[REDACTED:private-key]",
        ),
        ("-----BEGIN EC PRIVATE KEY-----\ntruncated output", "[REDACTED:private-key]"),
        (f"token {JWT} end", "token [REDACTED:jwt] end"),
        ("Authorization: Bearer abc.def-123456", "Authorization: Bearer [REDACTED:bearer-token]"),
        (f'{{"Authorization": "Bearer {JWT}"}}', '{"Authorization": "Bearer [REDACTED:bearer-token]"}'),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:basic-auth-header]"),
        (
            "postgres://app:s3cr3t!@db.internal:5432/app",
            "postgres://app:[REDACTED:connection-string-password]@db.internal:5432/app",
        ),
        (
            "mysql://root:hunter2@localhost/db",
            "mysql://root:[REDACTED:connection-string-password]@localhost/db",
        ),
        (
            "mongodb+srv://u:p4ss@cluster0.x.net",
            "mongodb+srv://u:[REDACTED:connection-string-password]@cluster0.x.net",
        ),
        ("redis://:pw123@cache:6379", "redis://:[REDACTED:connection-string-password]@cache:6379"),
        ("amqp://guest:guest@rabbit/", "amqp://guest:[REDACTED:connection-string-password]@rabbit/"),
    ],
)
def test_true_positives_redact_only_the_secret(text: str, redacted: str) -> None:
    assert detectors.redact(text) == (redacted, 1)


@pytest.mark.parametrize(
    "text",
    [
        "AKIA-not-a-key",
        "MYAKIAIOSFODNN7EXAMPLE",
        "class sk-spinner-fading-circle-extra-large",
        "pip install scikit-learn sk-learn",
        "postgres://db.example.com:5432/app",
        "postgres://user@db.example.com/app",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer <token>",
        "eyJhbGciOiJIUzI1NiJ9",
        "ghp_short",
        "aws_secret_access_key = ${AWS_SECRET}",
        "the BEGIN PUBLIC KEY block",
        "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
    ],
)
def test_benign_look_alikes_are_left_alone(text: str) -> None:
    assert detectors.find(text) == []


def test_overlapping_detectors_report_each_secret_once_by_priority() -> None:
    anthropic = "sk-ant-api03-" + "Zx9_" * 10
    assert [m.name for m in detectors.find(anthropic)] == ["anthropic-key"]
    assert [m.name for m in detectors.find(f"Authorization: Bearer {JWT}")] == ["bearer-token"]


def test_redact_limited_to_named_detectors_and_counts() -> None:
    text = "AKIAIOSFODNN7EXAMPLE and AKIAIOSFODNN7EXAMPLF and ghp_" + "a" * 36
    redacted, count = detectors.redact(text, ["aws-access-key"])
    assert count == 2
    assert "ghp_" in redacted and "AKIA" not in redacted
    with pytest.raises(KeyError):
        detectors.find("x", ["no-such-detector"])


def test_every_preset_named_in_the_contract_exists_with_default_replacement() -> None:
    expected = {
        "aws-access-key", "aws-secret-key", "github-token", "gitlab-token", "slack-token",
        "slack-webhook", "openai-key", "anthropic-key", "google-api-key", "stripe-key",
        "private-key", "jwt", "bearer-token", "basic-auth-header", "connection-string-password",
        "npm-token", "pypi-token", "telegram-bot-token", "vault-token",
    }  # fmt: skip
    assert set(detectors.DETECTORS) == expected
    assert all(d.replacement == f"[REDACTED:{name}]" for name, d in detectors.DETECTORS.items())


def test_every_detector_pattern_compiles_and_none_at_import() -> None:
    """Patterns compile on first use (import stays cheap); each is still a valid RE2 program, and
    the screen of every detector together compiles too."""
    import subprocess
    import sys

    probe = (
        "import dsh_policy.policy.detectors as d; "
        "print(sum('regex' in vars(x) for x in d.DETECTORS.values()))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
    for detector in detectors.DETECTORS.values():
        assert detector.regex.pattern == detector.pattern
    assert detectors.find("nothing secret here") == []


@pytest.mark.parametrize("name", sorted(detectors.DETECTORS))
def test_redaction_is_idempotent_for_every_preset(name: str) -> None:
    """Redacting redacted text changes nothing: a marker is never itself taken for a secret."""
    samples = {
        "connection-string-password": "postgres://app:s3cr3t-EXAMPLE@db:5432/app",
        "bearer-token": "Authorization: Bearer abcdefgh12345678",
        "basic-auth-header": "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
        "aws-secret-key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    }
    text = samples.get(name, f"value: {detectors.DETECTORS[name].replacement}")
    once, _ = detectors.redact(text)
    twice, count = detectors.redact(once)
    assert twice == once
    assert count == 0
