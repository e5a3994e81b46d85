"""Who may use the console: a login secret, then a session cookie and a CSRF token per session.

The console signs decisions with its approver's key, so a page that any local process or any web
page in the approver's browser could drive would sign for them. Three things stop that:

- **login**: the console prints a one-off secret when it starts (as Jupyter does); only someone
  who can read the approver's terminal can start a session; with a TOTP secret configured
  (:mod:`.totp`), also only someone holding the approver's authenticator;
- **the session cookie** is random, ``HttpOnly`` and ``SameSite=Strict``, so another site's page
  cannot ride on it, and it lapses after ``IDLE_SECONDS`` without use;
- **every form** carries the session's CSRF token, compared in constant time, and a request whose
  ``Origin`` is not the console's own is refused, whatever it carries.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Final

from dsh_policy.policy.approvals.console.totp import TotpCheck

IDLE_SECONDS: Final[float] = 8 * 3600
COOKIE: Final[str] = "dsh_console"


@dataclass(slots=True)
class Session:
    """One signed-in browser: its CSRF token and when it was last used."""

    csrf: str
    last_used: float


class Sessions:
    """The console's login secret and live sessions (in memory: a restart signs everyone out)."""

    def __init__(self, login_secret: str | None = None, *, totp: TotpCheck | None = None) -> None:
        self.login_secret = login_secret or secrets.token_urlsafe(24)
        #: The second factor, when configured: a login also needs a fresh code.
        self.totp = totp
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def log_in(self, offered: str, code: str | None = None) -> str | None:
        """A new session id when ``offered`` is the login secret (and, with TOTP, ``code`` a
        fresh code), else None."""
        if not hmac.compare_digest(offered.encode(), self.login_secret.encode()):
            return None
        if self.totp is not None and (code is None or not self.totp.accept(code)):
            return None
        session_id = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[session_id] = Session(secrets.token_urlsafe(32), time.monotonic())
        return session_id

    def find(self, session_id: str | None) -> Session | None:
        """The live session with this id (touching it), or None."""
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            if time.monotonic() - session.last_used > IDLE_SECONDS:
                del self._sessions[session_id]
                return None
            session.last_used = time.monotonic()
            return session

    def log_out(self, session_id: str) -> None:
        """End a session."""
        with self._lock:
            self._sessions.pop(session_id, None)


def csrf_holds(session: Session, offered: str | None) -> bool:
    """Whether a form's token is the session's (constant time)."""
    return offered is not None and hmac.compare_digest(offered.encode(), session.csrf.encode())
