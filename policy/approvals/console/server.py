"""``dsh-policy approvals console``: the queue on a page, on loopback only.

A standard-library HTTP server (one thread per request; an approver's browser makes a handful)
that signs what its approver clicks with the key it was started with. It listens on a loopback
address only (a decision page reachable from the network would make the login secret the only
barrier), sends ``Content-Security-Policy: default-src 'none'`` (no script runs, nothing is
fetched) and ``Cache-Control: no-store``, and routes every POST through :mod:`.sessions`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import sys
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dsh_policy.policy.approvals.console.pages import login_page, queue_page, refusal_page
from dsh_policy.policy.approvals.console.sessions import COOKIE, Sessions, csrf_holds
from dsh_policy.policy.approvals.console.totp import TotpCheck
from dsh_policy.policy.approvals.queue import ApprovalQueue, QueueError
from dsh_policy.policy.approvals.store import ApprovalStoreError
from dsh_policy.policy.approvals.views import parse_duration, queue_view

MAX_FORM_BYTES: Final[int] = 16 * 1024
HEADERS: Final[dict[str, str]] = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self';"
    " frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer: under it Chromium sends ``Origin: null`` on the console's own form posts,
    # which the Origin check must then refuse (found by the browser test).
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Console:
    """What the handler needs: the queue, the signing approver, the sessions."""

    def __init__(
        self, queue: ApprovalQueue, approver: str, key: Ed25519PrivateKey, sessions: Sessions
    ) -> None:
        self.queue, self.approver, self.key, self.sessions = queue, approver, key, sessions
        self.origin = ""  # set once the port is known

    def act(self, action: str, form: dict[str, str]) -> str | QueueError:
        """Carry out one posted action; the note shown afterwards."""
        if action in ("approve", "deny"):
            valid = parse_duration(form.get("valid") or "15m")
            if valid is None:
                return QueueError(f"{form.get('valid')!r} is not a duration")
            verdict: Any = action
            done = self.queue.decide(
                form.get("request", ""),
                self.approver,
                self.key,
                verdict,
                valid_seconds=valid,
                reason=form.get("reason", ""),
            )
            return (
                done
                if isinstance(done, QueueError)
                else f"{done['id']} {done['status']} ({action} by {self.approver})"
            )
        if action == "grant":
            valid = parse_duration(form.get("valid") or "")
            if valid is None:
                return QueueError(f"{form.get('valid')!r} is not a duration (30m, 2h, 1d)")
            rules = tuple(rule.strip() for rule in form.get("rules", "").split(",") if rule.strip())
            done = self.queue.grant(
                self.approver,
                self.key,
                rules=rules,
                seconds=valid,
                session=form.get("session") or None,
                tool=form.get("tool") or None,
                match=form.get("match") or None,
                reason=form.get("reason", ""),
            )
            return (
                done
                if isinstance(done, QueueError)
                else f"{done['id']} granted until {time.strftime('%H:%M', time.gmtime(done['until']))} UTC"
            )
        if action == "revoke":
            done = self.queue.revoke(form.get("grant", ""), self.approver)
            return done if isinstance(done, QueueError) else f"{done['id']} revoked"
        return QueueError(f"no action {action!r}")


def handler_for(console: Console) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to one console."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "dsh-policy-console"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the secret
            return

        def _send(self, status: int, body: str, extra: dict[str, str] | None = None) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            for name, value in {**HEADERS, **(extra or {})}.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _redirect(self, where: str, cookie: str | None = None) -> None:
            self.send_response(HTTPStatus.SEE_OTHER)
            for name, value in HEADERS.items():
                self.send_header(name, value)
            self.send_header("Location", where)
            if cookie is not None:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _session_id(self) -> str | None:
            cookies = SimpleCookie()
            with contextlib.suppress(Exception):
                cookies.load(self.headers.get("Cookie", ""))
            morsel = cookies.get(COOKIE)
            return morsel.value if morsel is not None else None

        def _form(self) -> dict[str, str] | None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_FORM_BYTES:
                return None
            raw = self.rfile.read(length).decode("utf-8", "replace")
            return {key: values[0] for key, values in parse_qs(raw, keep_blank_values=True).items()}

        def _signed_in(self, session_id: str) -> str:
            return f"{COOKIE}={session_id}; HttpOnly; SameSite=Strict; Path=/"

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/login":
                token = (query.get("token") or [""])[0]
                if console.sessions.totp is not None:  # the link fills the secret; the code is typed
                    return self._send(HTTPStatus.OK, login_page(code=True, token=token))
                session_id = console.sessions.log_in(token) if token else None
                if session_id is not None:
                    return self._redirect("/", self._signed_in(session_id))
                return self._send(HTTPStatus.OK, login_page(failed=bool(token)))
            session = console.sessions.find(self._session_id())
            if session is None:
                return self._redirect("/login")
            if url.path != "/":
                return self._send(HTTPStatus.NOT_FOUND, refusal_page(404, "no such page"))
            try:
                now = int(time.time())
                view = queue_view(console.queue, now)
                history = queue_view(console.queue, now, history=True)
            except ApprovalStoreError as error:
                return self._send(HTTPStatus.INTERNAL_SERVER_ERROR, refusal_page(500, str(error)))
            note = (query.get("note") or [""])[0]
            self._send(HTTPStatus.OK, queue_page(view, history, console.approver, session.csrf, note))

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            form = self._form()
            if form is None:
                return self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, refusal_page(413, "form too large"))
            origin = self.headers.get("Origin")
            if origin is not None and origin != console.origin:
                return self._send(
                    HTTPStatus.FORBIDDEN, refusal_page(403, f"cross-origin request from {origin} refused")
                )
            if url.path == "/login":
                session_id = console.sessions.log_in(form.get("token", ""), form.get("code"))
                if session_id is None:
                    totp = console.sessions.totp is not None
                    return self._send(HTTPStatus.FORBIDDEN, login_page(failed=True, code=totp))
                return self._redirect("/", self._signed_in(session_id))
            session = console.sessions.find(self._session_id())
            if session is None:
                return self._send(HTTPStatus.FORBIDDEN, refusal_page(403, "not signed in"))
            if not csrf_holds(session, form.get("csrf")):
                return self._send(
                    HTTPStatus.FORBIDDEN, refusal_page(403, "CSRF token missing or wrong: refused")
                )
            try:
                note = console.act(url.path.strip("/"), form)
            except ApprovalStoreError as error:
                return self._send(HTTPStatus.INTERNAL_SERVER_ERROR, refusal_page(500, str(error)))
            if isinstance(note, QueueError):
                return self._send(HTTPStatus.CONFLICT, refusal_page(409, str(note)))
            self._redirect("/?note=" + quote(note))

    return Handler


def loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def start_console(
    queue: ApprovalQueue,
    approver: str,
    key: Ed25519PrivateKey,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    sessions: Sessions | None = None,
) -> tuple[ThreadingHTTPServer, Console, threading.Thread] | str:
    """Listen and serve on a thread; ``(server, console, thread)`` or why it cannot start."""
    if not loopback(host):
        return f"{host}: the console listens on loopback only"
    console = Console(queue, approver, key, sessions or Sessions())
    try:
        server = ThreadingHTTPServer((host.strip("[]"), port), handler_for(console))
    except OSError as error:
        return f"cannot listen on {host}:{port}: {error}"
    server.daemon_threads = True
    shown = host if ":" not in host.strip("[]") else f"[{host.strip('[]')}]"
    console.origin = f"http://{shown}:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, name="approvals-console", daemon=True)
    thread.start()
    return server, console, thread


def run_console(
    queue: ApprovalQueue,
    approver: str,
    key: Ed25519PrivateKey,
    listen: str,
    *,
    wait: Callable[[], None] | None = None,
    totp: TotpCheck | None = None,
) -> int:
    """``approvals console``: print the sign-in link and serve until interrupted; with ``totp``
    a login also takes a fresh code from the approver's authenticator."""
    host, _, port = listen.rpartition(":")
    if not port.isdigit():
        print(f"dsh-policy approvals console: --listen {listen!r}: HOST:PORT", file=sys.stderr)
        return 2
    sessions = Sessions(totp=totp)
    started = start_console(queue, approver, key, host or "127.0.0.1", int(port), sessions=sessions)
    if isinstance(started, str):
        print(f"dsh-policy approvals console: {started}", file=sys.stderr)
        return 2
    server, console, thread = started
    print(
        f"approvals console for {approver}: {console.origin}/login?token={console.sessions.login_secret}",
        flush=True,
    )
    try:
        (wait or threading.Event().wait)()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    return 0
