"""A second factor for signing in to the console: time-based one-time passwords (RFC 6238).

The console's login secret is printed where it starts, so anyone who can read that terminal (its
scrollback, a shared tmux, a log that captured it) could sign decisions with the approver's key.
With a TOTP secret configured, signing in also takes the 6-digit code from the approver's
authenticator app: HMAC-SHA1 over the 30-second time step (RFC 4226 truncation), accepted one
step either side for clock drift, and never twice (a code seen once is spent, so one read over a
shoulder or from a proxy log cannot be replayed). Standard library only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final
from urllib.parse import quote

__all__ = ["TotpCheck", "load_totp_secret", "provisioning_uri", "totp", "totp_option"]

STEP_SECONDS: Final[int] = 30
DIGITS: Final[int] = 6
#: Time steps accepted either side of the current one (clock drift between phone and host).
DRIFT_STEPS: Final[int] = 1
#: Shortest secret accepted (RFC 4226 section 4: at least 128 bits; 160 recommended).
MIN_SECRET_BYTES: Final[int] = 16


def totp(key: bytes, at: float, *, digits: int = DIGITS, step: int = STEP_SECONDS) -> str:
    """The code for ``key`` at epoch second ``at`` (RFC 6238 with HMAC-SHA1)."""
    return _hotp(key, int(at // step), digits)


def _hotp(key: bytes, counter: int, digits: int) -> str:
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    number = struct.unpack(">I", mac[offset : offset + 4])[0] & 0x7FFFFFFF
    return str(number % 10**digits).zfill(digits)


def load_totp_secret(path: str | Path) -> bytes | str:
    """The key in a file holding a base32 secret (as authenticator apps take it; spaces, case and
    missing padding tolerated), or why it cannot be used."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        return f"{path}: cannot read the TOTP secret ({error})"
    cleaned = "".join(text.split()).upper().rstrip("=")
    try:
        key = base64.b32decode(cleaned + "=" * (-len(cleaned) % 8))
    except (binascii.Error, ValueError):
        return f"{path}: the TOTP secret is not base32"
    if len(key) < MIN_SECRET_BYTES:
        return f"{path}: the TOTP secret has {len(key)} bytes; at least {MIN_SECRET_BYTES} are needed"
    return key


def provisioning_uri(key: bytes, account: str, issuer: str = "dsh-policy") -> str:
    """The ``otpauth://`` address an authenticator app scans or takes by hand."""
    secret = base64.b32encode(key).decode("ascii").rstrip("=")
    label = quote(f"{issuer}:{account}")
    return f"otpauth://totp/{label}?secret={secret}&issuer={quote(issuer)}&algorithm=SHA1&digits=6&period=30"


class TotpCheck:
    """Checks codes against one secret and remembers the newest step used, so no code (and no
    earlier one) is accepted twice."""

    def __init__(self, key: bytes, *, clock: Callable[[], float] = time.time) -> None:
        self._key = key
        self._clock = clock
        self._last_step = -1
        self._lock = threading.Lock()

    def accept(self, code: str) -> bool:
        """Whether ``code`` is valid now and newer than every code accepted before."""
        offered = code.strip().replace(" ", "")
        if len(offered) != DIGITS or not offered.isdigit():
            return False
        current = int(self._clock() // STEP_SECONDS)
        with self._lock:
            for step in range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1):
                if step <= self._last_step:
                    continue
                if hmac.compare_digest(_hotp(self._key, step, DIGITS), offered):
                    self._last_step = step
                    return True
        return False


def totp_option(path: str | None) -> TotpCheck | str | None:
    """``--totp-secret FILE`` as the console takes it: a check, None without the option, or why the
    file cannot be used (the console then refuses to start rather than run without the factor)."""
    if path is None:
        return None
    key = load_totp_secret(path)
    return key if isinstance(key, str) else TotpCheck(key)
