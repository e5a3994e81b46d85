"""An optional webhook: every new approval request is POSTed to an address the deployment names.

A queue nobody looks at makes a headless run wait for nothing, so a deployment can have each new
request announced (a chat bridge, a pager, a ticket). The notice is JSON, and it is signed so the
receiver can tell it came from this deployment and was not replayed: HMAC-SHA256 under a key both
sides hold (the file ``approvals.webhook.secret``), over ``<timestamp>.<body>``, sent as::

    X-Dsh-Policy-Timestamp: 1796200000
    X-Dsh-Policy-Signature: sha256=<hex>

:func:`signature_holds` is the receiver's check. A notice carries what an approver needs to find
the request (id, tool, redacted arguments, rules, message, deadline) and never a way to approve
it: approving takes the approver's own key, on the command line or the console.

A notice never changes a decision: it is sent on a thread with a short timeout, and a webhook that
is down, slow or misconfigured is logged and otherwise ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import structlog
from dsh_policy.policy.config import WebhookSettings

__all__ = ["SIGNATURE_HEADER", "TIMESTAMP_HEADER", "Notifier", "sign_notice", "signature_holds"]

_log = structlog.get_logger("dsh_policy.approvals")

TIMESTAMP_HEADER: Final[str] = "X-Dsh-Policy-Timestamp"
SIGNATURE_HEADER: Final[str] = "X-Dsh-Policy-Signature"
#: How far a notice's timestamp may be from the receiver's clock (seconds).
TOLERANCE_SECONDS: Final[int] = 300


def sign_notice(key: bytes, timestamp: int, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 under ``key`` over ``<timestamp>.<body>``."""
    mac = hmac.new(key, str(timestamp).encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def signature_holds(
    key: bytes, timestamp: str, body: bytes, signature: str, *, now: float | None = None
) -> bool:
    """The receiver's check: the signature is ``key``'s over this body and timestamp, and the
    timestamp is within ``TOLERANCE_SECONDS`` of ``now`` (a replayed old notice fails)."""
    if not timestamp.isdigit():
        return False
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    return hmac.compare_digest(sign_notice(key, int(timestamp), body), signature)


class Notifier:
    """Sends one deployment's notices."""

    def __init__(self, settings: WebhookSettings) -> None:
        self.settings = settings

    def announce(self, notice: dict[str, Any]) -> threading.Thread:
        """Start sending ``notice`` (the request, as the queue journals it) on a thread; join it
        for at most :attr:`timeout` to let it finish."""
        thread = threading.Thread(target=self._send, args=(notice,), name="approvals-webhook", daemon=True)
        thread.start()
        return thread

    @property
    def timeout(self) -> float:
        """The longest one notice may take."""
        return self.settings.timeout_seconds

    def _send(self, notice: dict[str, Any]) -> None:
        try:
            problem = self._post(notice)
        except Exception as error:  # a notice never changes a decision; a lost one is logged
            problem = f"{type(error).__name__}: {error}"
        if problem is not None:
            _log.error(
                "approval webhook failed", url=self.settings.url, request=notice.get("request"), error=problem
            )

    def _post(self, notice: dict[str, Any]) -> str | None:
        try:
            key = Path(self.settings.secret).read_bytes().strip()
        except OSError as error:
            return f"cannot read the webhook secret {self.settings.secret}: {error}"
        if not key:
            return f"the webhook secret {self.settings.secret} is empty"
        document = {"event": "approval_requested", **notice}
        if self.settings.console:
            document["console"] = self.settings.console
        body = json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8")
        stamp = int(time.time())
        url = urlsplit(self.settings.url)
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        connection = kind(url.hostname or "", url.port, timeout=self.settings.timeout_seconds)
        try:
            connection.request(
                "POST",
                (url.path or "/") + (f"?{url.query}" if url.query else ""),
                body=body,
                headers={
                    "Content-Type": "application/json",
                    "User-Agent": "dsh-policy-approvals",
                    TIMESTAMP_HEADER: str(stamp),
                    SIGNATURE_HEADER: sign_notice(key, stamp, body),
                },
            )
            response = connection.getresponse()
            response.read(64 * 1024)
        finally:
            connection.close()
        if not 200 <= response.status < 300:
            return f"the webhook answered HTTP {response.status}"
        return None
