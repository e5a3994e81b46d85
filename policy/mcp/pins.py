"""Tool-definition pinning: a tool's whole wire definition is trusted as first seen or approved.

An MCP server can change what a tool says about itself at any time (a "rug pull": a harmless
description swapped for one that instructs the model, or a schema that grows a field). The proxy
keeps, per server and tool, the digest of the definition it trusts (name, description, input and
output schema, annotations: every field the server sent) in a pin file next to the audit log, so
pins outlive one session. A definition whose digest differs from its pin is quarantined (hidden
from listings, refused at call time) until an operator approves it (``dsh-policy mcp approve``),
which moves the pending digest into the pin. A definition the description scan flags on first
sight is quarantined the same way, with no trusted digest.

The file is small JSON, rewritten atomically under an advisory lock, and re-read whenever its
modification time changes, so an approval takes effect in a running proxy at its next decision.
Without a file (no audit log, no ``--pins``) pins live for the session only.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dsh_policy.policy.runtime.auditing import digest_json

PIN_FILE_SUFFIX = ".mcp-pins.json"
_VERSION = 1

Status = Literal["trusted", "pinned", "changed", "flagged", "quarantined"]


def definition_digest(definition: Mapping[str, Any]) -> str:
    """Digest of a tool's whole wire definition (sorted keys, so key order does not matter)."""
    return digest_json(definition)


def pin_file_for(audit_path: str) -> Path:
    """Where a proxy keeps its pins: beside the audit log that records them."""
    return Path(audit_path + PIN_FILE_SUFFIX)


@dataclass(frozen=True, slots=True)
class Observation:
    """What seeing one definition meant. ``status``: ``trusted`` (matches its pin), ``pinned``
    (first seen, now pinned), ``changed`` (differs from its pin: quarantined now), ``flagged`` (the
    scan refused it: quarantined now), ``quarantined`` (still waiting for approval, recorded before)."""

    tool: str
    status: Status
    digest: str
    pinned: str | None = None
    reason: str | None = None

    @property
    def usable(self) -> bool:
        return self.status in ("trusted", "pinned")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class PinBook:
    """The pins of one server's tools, in a file shared by every proxy of that server name."""

    def __init__(self, server: str, path: Path | None) -> None:
        self.server = server
        self.path = path
        self._tools: dict[str, dict[str, Any]] = {}
        self._stamp: tuple[int, int] | None = None
        #: Digest of each tool's definition as last listed in this session.
        self.seen: dict[str, str] = {}

    # --- the file ----------------------------------------------------------------------------------

    def _refresh(self) -> None:
        if self.path is None:
            return
        try:
            status = self.path.stat()
        except FileNotFoundError:
            self._tools, self._stamp = {}, None
            return
        stamp = (status.st_mtime_ns, status.st_size)
        if stamp != self._stamp:
            self._tools = _server_entries(_read(self.path), self.server)
            self._stamp = stamp

    def _update(self, tool: str, entry: dict[str, Any]) -> None:
        self._tools[tool] = entry
        if self.path is not None:
            with _locked(self.path) as document:
                document.setdefault("servers", {}).setdefault(self.server, {})[tool] = entry
            self._stamp = None  # our own write: re-read next time

    # --- decisions ---------------------------------------------------------------------------------

    def observe(self, tool: str, digest: str, flagged: str | None) -> Observation:
        """Record that the server now defines ``tool`` with ``digest``; ``flagged`` is why the
        description scan refused it (None when it passed)."""
        self._refresh()
        self.seen[tool] = digest
        entry = self._tools.get(tool)
        pinned = entry.get("digest") if entry else None
        if pinned == digest:
            if entry is not None and "pending" in entry:
                self._update(tool, {key: value for key, value in entry.items() if key != "pending"})
            return Observation(tool, "trusted", digest, pinned)
        pending = entry.get("pending") if entry else None
        if isinstance(pending, dict) and pending.get("digest") == digest:
            return Observation(tool, "quarantined", digest, pinned, str(pending.get("reason")))
        if entry is None and flagged is None:
            self._update(tool, {"digest": digest, "by": "first-seen", "since": _now()})
            return Observation(tool, "pinned", digest)
        reason = flagged if flagged is not None else "the definition changed since it was pinned"
        self._update(
            tool,
            {**(entry or {"digest": None}), "pending": {"digest": digest, "reason": reason, "seen": _now()}},
        )
        return Observation(tool, "flagged" if flagged is not None else "changed", digest, pinned, reason)

    def quarantine(self, tool: str) -> Observation | None:
        """Why a call to ``tool`` must be refused now (its listed definition is not the trusted
        one), or None. A tool this session never saw listed has nothing to compare: policy decides."""
        digest = self.seen.get(tool)
        if digest is None:
            return None
        self._refresh()
        entry = self._tools.get(tool)
        pinned = entry.get("digest") if entry else None
        if entry is None or pinned == digest:
            return None
        pending = entry.get("pending")
        reason = pending.get("reason") if isinstance(pending, dict) else None
        return Observation(tool, "quarantined", digest, pinned, str(reason or "not approved"))


def approve(path: Path, server: str, tool: str, digest: str | None = None) -> tuple[str | None, str] | str:
    """Trust the pending definition of ``tool`` (or exactly ``digest``): ``(old, new)`` digests,
    or why nothing was approved."""
    with _locked(path) as document:
        tools = document.setdefault("servers", {}).setdefault(server, {})
        entry = tools.get(tool)
        pending = entry.get("pending") if isinstance(entry, dict) else None
        chosen = digest or (pending.get("digest") if isinstance(pending, dict) else None)
        if not isinstance(chosen, str):
            return f"no definition of {tool!r} on server {server!r} is waiting for approval in {path}"
        old = entry.get("digest") if isinstance(entry, dict) else None
        tools[tool] = {"digest": chosen, "by": "operator", "since": _now()}
        return old, chosen


def pending_tools(path: Path, server: str) -> dict[str, dict[str, Any]]:
    """Every tool of ``server`` waiting for approval, with its pending digest and reason."""
    entries = _server_entries(_read(path), server) if path.exists() else {}
    return {
        tool: entry["pending"] for tool, entry in entries.items() if isinstance(entry.get("pending"), dict)
    }


def _server_entries(document: Mapping[str, Any], server: str) -> dict[str, dict[str, Any]]:
    servers = document.get("servers")
    entries = servers.get(server) if isinstance(servers, dict) else None
    if not isinstance(entries, dict):
        return {}
    return {str(tool): entry for tool, entry in entries.items() if isinstance(entry, dict)}


def _read(path: Path) -> dict[str, Any]:
    """The pin file; an unreadable or foreign one trusts nothing (every tool is then unpinned,
    and a changed one is caught again when the file is rewritten)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": _VERSION, "servers": {}}
    return document if isinstance(document, dict) else {"version": _VERSION, "servers": {}}


class _locked:
    """Read-modify-write of the pin file under an advisory lock; written atomically on exit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.document: dict[str, Any] = {}
        self._lock_fd = -1

    def __enter__(self) -> dict[str, Any]:
        self._lock_fd = os.open(str(self.path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        self.document = _read(self.path)
        self.document["version"] = _VERSION
        return self.document

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            if kind is None:
                temporary = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
                temporary.write_text(json.dumps(self.document, indent=2, sort_keys=True) + "\n", "utf-8")
                os.chmod(temporary, 0o600)
                os.replace(temporary, self.path)
        finally:
            os.close(self._lock_fd)
