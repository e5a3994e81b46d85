"""The console over plain HTTP: sign-in required, forms need the session's CSRF token, a foreign
Origin is refused, and only loopback addresses are served. (The same flows in a real browser:
test_console_browser.py, opt-in.)"""

from __future__ import annotations

import http.client
import re
from urllib.parse import urlencode, urlsplit

from approval_kit import Deployment
from console_kit import RunningConsole, running_console
from dsh_policy.policy.approvals.console.server import start_console


def request(
    running: RunningConsole, method: str, path: str, form: dict[str, str] | None = None, **headers: str
) -> tuple[int, dict[str, str], str]:
    where = urlsplit(running.origin)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=5)
    body = urlencode(form) if form is not None else None
    sent = {"Content-Type": "application/x-www-form-urlencoded", **headers} if body else dict(headers)
    connection.request(method, path, body=body, headers=sent)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def sign_in(running: RunningConsole) -> tuple[str, str]:
    status, headers, _ = request(running, "POST", "/login", {"token": running.secret})
    assert status == 303
    cookie = headers["set-cookie"].split(";")[0]
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    _, _, page = request(running, "GET", "/", Cookie=cookie)
    csrf = re.search(r'name=csrf value="([^"]+)"', page)
    assert csrf, page
    return cookie, csrf.group(1)


def test_pages_need_a_session_and_the_login_secret(deployment: Deployment) -> None:
    with running_console(deployment) as running:
        status, headers, _ = request(running, "GET", "/")
        assert status == 303 and headers["location"] == "/login"
        status, _, page = request(running, "POST", "/login", {"token": "guess"})
        assert status == 403 and "not the login secret" in page
        cookie, _ = sign_in(running)
        status, headers, page = request(running, "GET", "/", Cookie=cookie)
        assert status == 200 and running.request in page and "git push origin feature" in page
        assert "default-src 'none'" in headers["content-security-policy"]


def test_an_approval_needs_the_sessions_csrf_token(deployment: Deployment) -> None:
    with running_console(deployment) as running:
        cookie, csrf = sign_in(running)
        form = {"request": running.request, "valid": "15m"}
        status, _, page = request(running, "POST", "/approve", form, Cookie=cookie)
        assert status == 403 and "CSRF" in page
        status, _, _ = request(running, "POST", "/approve", {**form, "csrf": "x" * len(csrf)}, Cookie=cookie)
        assert status == 403
        status, _, page = request(
            running, "POST", "/approve", {**form, "csrf": csrf}, Cookie=cookie, Origin="http://evil.example"
        )
        assert status == 403 and "cross-origin" in page
        assert running.queue.snapshot()["requests"][running.request]["decisions"] == []
        status, headers, _ = request(
            running, "POST", "/approve", {**form, "csrf": csrf}, Cookie=cookie, Origin=running.origin
        )
        assert status == 303 and "approved" in headers["location"]
        decided = running.queue.snapshot()["requests"][running.request]
        assert decided["status"] == "approved" and decided["decisions"][0]["approver"] == "alice"


def test_the_console_listens_on_loopback_only(deployment: Deployment) -> None:
    refused = start_console(deployment.queue(), "alice", deployment.keys["alice"], "0.0.0.0", 0)
    assert refused == "0.0.0.0: the console listens on loopback only"
