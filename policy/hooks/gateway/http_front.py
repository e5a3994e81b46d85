"""The resident gateway on loopback HTTP, for Claude Code's ``http`` hook type.

``POST /hook/claude-code`` (or ``/hook/codex``) with the event JSON as the body and
``Authorization: Bearer <token>``; the answer is always ``200`` with one JSON object, read by
Claude Code like a command hook's stdout. HTTP has no exit code, so a refusal is spelled in JSON
for the event that fired (:func:`http_body`): ``permissionDecision: "deny"`` for PreToolUse,
``decision: "block"`` for PostToolUse and UserPromptSubmit, ``continue: false`` for the rest and
for input too broken to name its event. ``GET /status`` answers the health document.

Only loopback addresses are accepted. The token lives in a 0600 file in the runtime folder (made
on first start, 256 bits from ``secrets``); a token file another user owns, or one others can
read, is refused. A port another user already listens on is refused with that user's uid
(Linux), since hooks pointed at it would hand that user every event and let it answer "allow".

Claude Code counts a non-2xx answer, a refused connection and a timeout as a non-blocking error;
set ``onFailure: "block"`` on http hooks so those block the call instead.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import secrets
import stat
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

import structlog
from dsh_policy.policy.hooks.gateway.safe_answers import FAIL_CLOSED_PREFIX
from dsh_policy.policy.hooks.gateway.service import GatewayService
from dsh_policy.policy.hooks.protocol.messages import EXIT_BLOCK, MAX_INPUT_BYTES, EventName, HookReply

_log = structlog.get_logger("dsh_policy.gateway.http")

HOOK_PREFIX: Final[str] = "/hook/"


def http_body(reply: HookReply, event: EventName | None) -> dict[str, Any]:
    """A command-hook reply as the JSON body of an http hook's answer."""
    if reply.exit_code != EXIT_BLOCK:
        text = reply.stdout.strip()
        return json.loads(text) if text else {}
    reason = reply.stderr.strip() or FAIL_CLOSED_PREFIX
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    if event in ("PostToolUse", "UserPromptSubmit"):
        return {"decision": "block", "reason": reason}
    return {"continue": False, "stopReason": reason}


class _Handler(BaseHTTPRequestHandler):
    server: _HttpServer
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("http", request=format % args)

    def _send(self, status: int, document: dict[str, Any]) -> None:
        data = json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        given = self.headers.get("Authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.server.token):
            self._send(401, {"error": "missing or wrong bearer token"})
            return False
        return True

    def do_GET(self) -> None:
        if not self._authorized():
            return
        if self.path == "/status":
            self._send(200, self.server.service.status())
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        if not self._authorized():
            return
        if not self.path.startswith(HOOK_PREFIX):
            self._send(404, {"error": "not found"})
            return
        harness = self.path[len(HOOK_PREFIX) :]
        try:
            size = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._send(411, {"error": "Content-Length required"})
            return
        if not 0 <= size <= MAX_INPUT_BYTES:
            self._send(413, {"error": "hook input too large"})
            return
        body = self.rfile.read(size)
        answered = self.server.service.hook(harness, body)
        self._send(200, http_body(answered.reply, answered.event))


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: GatewayService, token: bytes) -> None:
        self.service = service
        self.token = token
        super().__init__(address, _Handler)


def start_http(service: GatewayService, host: str, port: int, token_file: str) -> _HttpServer | str:
    """A bound (not yet serving) HTTP front, or an error message."""
    try:
        if not ipaddress.ip_address(host).is_loopback:
            return f"{host} is not a loopback address; the gateway listens on loopback only"
    except ValueError:
        return f"{host!r} is not an IP address (use 127.0.0.1 or ::1)"
    token = load_or_make_token(token_file)
    if isinstance(token, str):
        return token
    owner = port_owner(port) if port else None
    if owner is not None and owner != os.geteuid():
        return f"port {port} on {host} is held by uid {owner}; refusing to share it"
    try:
        return _HttpServer((host, port), service, token)
    except OSError as error:
        return f"cannot listen on {host}:{port}: {error.strerror}"


def load_or_make_token(path: str) -> bytes | str:
    """The bearer token in ``path`` (made, 0600, if missing), or an error message."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        return f"cannot read token file {path}: {error.strerror}"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.geteuid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
            return f"refusing token file {path}: it must be a regular file of yours with mode 0600"
        token = handle.read().strip()
    if len(token) < 16:
        return f"token file {path} holds no usable token (at least 16 characters)"
    return token


def port_owner(port: int) -> int | None:
    """The uid of whoever listens on TCP ``port`` (Linux ``/proc/net/tcp*``), or None."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                next(handle, None)
                for line in handle:
                    fields = line.split()
                    if len(fields) > 7 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return int(fields[7])
        except (OSError, ValueError):
            continue
    return None
