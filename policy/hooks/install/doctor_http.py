"""Doctor checks for Claude Code ``http`` hooks pointed at ``dsh-policy serve --http``.

An http hook fails differently from a command hook: Claude Code treats a refused connection, a
timeout, a non-2xx status (a wrong token's 401 included) as a non-blocking error, and it fills a
header's ``$VAR`` only for variables the hook lists in ``allowedEnvVars`` (an empty string
otherwise). So the checks are: the URL is loopback, the hook sends a bearer token that the
environment actually provides, and the same synthetic deny and allow the command probes send come
back as Claude Code will read them; then the gateway's ``/status`` behind that URL.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from dsh_policy.policy.hooks.install.doctor import (
    ALLOW_PROBE_COMMAND,
    DENY_PROBE_COMMAND,
    PROBE_SECONDS,
    Finding,
    InstalledHook,
    probe_payload,
)
from dsh_policy.policy.loopback import is_loopback_ip

_ENV_REFERENCE: Final = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def headers_as_sent(hook: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The headers Claude Code will send, and each ``$VAR`` it will send empty (not allowed or
    not set), as ``"header: VAR"``."""
    allowed = {name for name in hook.get("allowedEnvVars") or () if isinstance(name, str)}
    configured = hook.get("headers")
    sent: dict[str, str] = {}
    empty: list[str] = []
    for header, value in configured.items() if isinstance(configured, Mapping) else ():
        if not (isinstance(header, str) and isinstance(value, str)):
            continue
        pieces: list[str] = []
        last = 0
        for match in _ENV_REFERENCE.finditer(value):
            name = match.group(1) or match.group(2)
            filled = os.environ.get(name) if name in allowed else None
            if filled is None:
                empty.append(f"{header}: {name}")
            pieces += [value[last : match.start()], filled or ""]
            last = match.end()
        sent[header] = "".join(pieces) + value[last:]
    return sent, empty


def check_settings(hook: InstalledHook) -> Iterator[Finding]:
    """Loopback, plain http, a bearer token that will really be sent."""
    where = f"{hook.event} http hook in {hook.source}"
    url = hook.url or ""
    if not is_loopback_url(url):
        yield Finding(
            "fail",
            "settings",
            f"{where}: {url} is not http on a loopback address (the gateway listens only there)",
        )
    headers, empty = headers_as_sent(hook.hook)
    for reference in empty:
        header, _, name = reference.partition(": ")
        yield Finding(
            "fail",
            "settings",
            f"{where}: header {header} uses ${name}, which Claude Code sends empty (list it in "
            "allowedEnvVars and set it), so the gateway answers 401 and the call runs unchecked",
        )
    authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    if not authorization.lower().startswith("bearer ") or not authorization[7:].strip():
        yield Finding(
            "fail",
            "settings",
            f"{where}: no `Authorization: Bearer <token>` header (the token is in the gateway's "
            "runtime folder, see `dsh-policy serve --help`)",
        )


def is_loopback_url(url: str) -> bool:
    """Plain http to this machine: the only place a gateway listens, and the only place the doctor
    sends its probes."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    if parts.hostname == "localhost":
        return True
    return parts.hostname is not None and is_loopback_ip(parts.hostname) is True


def request(url: str, headers: Mapping[str, str], body: bytes | None) -> tuple[int, Any, float]:
    """(status, parsed JSON body or the error text, ms); status 0 when nothing answered."""
    prepared = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    for header, value in headers.items():
        prepared.add_header(header, value)
    if body is not None:
        prepared.add_header("Content-Type", "application/json")
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(prepared, timeout=PROBE_SECONDS) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except (OSError, ValueError) as error:
        return 0, str(getattr(error, "reason", error)), (time.perf_counter() - start) * 1000
    elapsed = (time.perf_counter() - start) * 1000
    try:
        return status, json.loads(raw) if raw.strip() else {}, elapsed
    except ValueError:
        return status, raw.decode("utf-8", "replace")[:200], elapsed


def check_probes(hook: InstalledHook, project: str) -> Iterator[Finding]:
    """The synthetic deny and allow, answered the way Claude Code reads an http hook."""
    url = hook.url or ""
    headers, _ = headers_as_sent(hook.hook)
    status, body, ms = request(url, headers, probe_payload("claude-code", DENY_PROBE_COMMAND, project))
    decision = _permission(body)
    reason = str(decision.get("permissionDecisionReason", ""))
    if status == 200 and decision.get("permissionDecision") == "deny" and "[policy:" in reason:
        yield Finding(
            "ok", "deny probe", f"`{DENY_PROBE_COMMAND}` refused over http in {ms:.0f} ms: {reason[:200]}"
        )
    else:
        yield Finding(
            "fail",
            "deny probe",
            f"`{DENY_PROBE_COMMAND}` was not refused over http ({_described(status, body)}, {ms:.0f} ms); "
            "Claude Code runs the call when an http hook fails",
        )
    status, body, ms = request(url, headers, probe_payload("claude-code", ALLOW_PROBE_COMMAND, project))
    if status == 200 and isinstance(body, dict) and _permission(body).get("permissionDecision") != "deny":
        yield Finding("ok", "allow probe", f"`{ALLOW_PROBE_COMMAND}` allowed over http in {ms:.0f} ms")
    else:
        yield Finding(
            "fail",
            "allow probe",
            f"`{ALLOW_PROBE_COMMAND}` was refused over http ({_described(status, body)}, {ms:.0f} ms)",
        )


def status_url(hook_url: str) -> str:
    """The gateway's ``/status`` beside the hook URL."""
    parts = urlsplit(hook_url)
    return urlunsplit((parts.scheme, parts.netloc, "/status", "", ""))


def gateway_status(hook: InstalledHook) -> dict[str, Any] | str:
    """The status answer behind an http hook, or why there is none."""
    headers, _ = headers_as_sent(hook.hook)
    status, body, _ = request(status_url(hook.url or ""), headers, None)
    if status == 200 and isinstance(body, dict):
        return body
    return _described(status, body)


def _permission(body: Any) -> dict[str, Any]:
    specific = body.get("hookSpecificOutput") if isinstance(body, dict) else None
    return specific if isinstance(specific, dict) else {}


def _described(status: int, body: Any) -> str:
    if status == 0:
        return f"no answer: {body}"
    detail = body.get("error") if isinstance(body, dict) and "error" in body else json.dumps(body)[:200]
    return f"HTTP {status}: {detail}"
