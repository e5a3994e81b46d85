"""Tamper evidence: the resident gateway watches what keeps it in force and records every change it
did not make itself.

Watched: the client hook settings (every supported client's: Claude Code, Codex, Gemini CLI, Qwen
Code, OpenCode's plugins, Copilot CLI's hook file; user, project and managed ones), the deployment
file and its packs, the gateway's install (its package's modules, its command, its environment's
``pyvenv.cfg``) and the audit log's file. Each is seen as a small fingerprint (existence, inode,
size, modification time, mode, owner and, for files up to 4 MiB, a SHA-256 of the contents; a
folder as the fingerprints of its files). A change is appended to the log as a
``tamper_observed`` record naming the path, its part and how it changed.

A change that *weakens* the deployment makes the gateway fail closed (every event gets its safe
answer) until an operator acknowledges it by removing ``LOG.tamper``, the state file beside the
log that says why (one of the log's own files, which self-protection denies the agent): a hook
setting that no longer runs ``dsh-policy hook`` or turns hooks off, any change to the install,
a deployment file or pack removed, and a policy reload that weakens enforcement (reported by the
reload itself through :meth:`TamperWatch.policy_weakened`). The state survives the gateway: the
next one reads it, and the last fingerprints are kept in ``LOG.watch``, so a change made while no
gateway ran is seen by the next one.

The log itself: a log whose active file shrinks or is replaced by another file (not by the
writer's own rotation), or that stops growing while decisions are made, is reported
(``tamper_observed`` with ``part: audit-log``), and logged as an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from dsh_policy.policy.self_protection.locations import PROJECT_HOOK_FILES

TAMPER_SUFFIX: Final[str] = ".tamper"
WATCH_SUFFIX: Final[str] = ".watch"
HASH_LIMIT: Final[int] = 4 << 20  # files up to this size are hashed
TREE_LIMIT: Final[int] = 5000  # files fingerprinted in one watched folder
TICK_SECONDS: Final[float] = 2.0
_HOOK_COMMAND: Final[str] = "dsh-policy hook"
# Harness folders watched whole: hook scripts and plugins (every file there runs) and managed
# settings folders; other harness folders (``~/.codex``) also hold sessions, so only their
# settings files are watched.
_WATCHED_TREES: Final[frozenset[str]] = frozenset(
    {
        "hooks",
        "plugin",
        "plugins",
        "claude-code",
        "ClaudeCode",
        "codex",
        "gemini-cli",
        "qwen-code",
        "GeminiCli",
    }
)


@dataclass(frozen=True, slots=True)
class Seen:
    """One path's fingerprint (``exists`` False: absent)."""

    exists: bool
    inode: int = 0
    size: int = 0
    mtime_ns: int = 0
    mode: int = 0
    uid: int = 0
    digest: str = ""
    hooks: int = -1  # settings files: how many times they run ``dsh-policy hook``
    hooks_off: bool = False  # settings files: turn hooks off (``disableAllHooks``)


@dataclass(frozen=True, slots=True)
class Watched:
    path: str
    part: str  # harness-settings, deployment, pack, gateway-package, audit-log
    tree: bool = False


def fingerprint(item: Watched) -> Seen:
    """The fingerprint of a file, or of a folder's files (never raises)."""
    try:
        info = os.stat(item.path)
    except (OSError, ValueError):
        return Seen(False)
    if item.tree and os.path.isdir(item.path):
        return Seen(True, info.st_ino, 0, 0, info.st_mode, info.st_uid, _tree_digest(item.path))
    digest, hooks, off = "", -1, False
    if item.part != "audit-log" and info.st_size <= HASH_LIMIT:
        with contextlib.suppress(OSError):
            data = Path(item.path).read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if item.part == "harness-settings":
                text = data.decode("utf-8", "replace")
                hooks = text.count(_HOOK_COMMAND)
                off = '"disableAllHooks": true' in text.replace("\n", " ") or 'disableAllHooks":true' in text
    return Seen(
        True, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_uid, digest, hooks, off
    )


def _tree_digest(folder: str) -> str:
    digest = hashlib.sha256()
    count = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "tests", "node_modules")
        )
        for name in sorted(files):
            if not name.endswith((".py", ".pth", ".so", ".yaml", ".json", ".toml", ".cfg")):
                continue
            count += 1
            if count > TREE_LIMIT:
                return digest.hexdigest()
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                info = os.stat(path)
                digest.update(
                    f"{os.path.relpath(path, folder)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode()
                )
    return digest.hexdigest()


def weakens(item: Watched, before: Seen, after: Seen) -> str | None:
    """Why a change to ``item`` weakens the deployment (``None``: recorded, not weakening)."""
    if item.part == "gateway-package":
        return "the gateway's install changed"
    if item.part in ("deployment", "pack") and before.exists and not after.exists:
        return f"the {item.part} file was removed"
    if item.part == "harness-settings":
        if before.exists and not after.exists and before.hooks > 0:
            return "a hook settings file that ran the gateway was removed"
        if after.hooks_off and not before.hooks_off:
            return "a hook settings file turns hooks off"
        if before.hooks > 0 and 0 <= after.hooks < before.hooks:
            return "a hook settings file no longer runs the gateway on every event it did"
    return None


def _change(before: Seen, after: Seen) -> str:
    if before.exists and not after.exists:
        return "removed"
    if after.exists and not before.exists:
        return "created"
    if before.inode != after.inode:
        return "replaced"
    if before.uid != after.uid:
        return "owner"
    if before.mode != after.mode:
        return "mode"
    return "modified"


class TamperWatch:
    """The fingerprints of everything watched, compared on every :meth:`tick`."""

    def __init__(self, watched: Iterable[Watched], log_path: str | None) -> None:
        self.items = [item for item in watched if item.part != "audit-log"]
        self.log_path = log_path
        self.state = Path(log_path + TAMPER_SUFFIX) if log_path else None
        self.memory = Path(log_path + WATCH_SUFFIX) if log_path else None
        self.seen: dict[str, Seen] = {}
        self.log_seen: Seen | None = None
        self.ticks: list[tuple[int, Seen]] = []  # (decisions, log fingerprint) at the last two ticks
        self.last_tick = 0.0
        self.stall_reported = False

    # -- state ----------------------------------------------------------------------------------

    def failing_closed(self) -> str | None:
        """Why the gateway refuses everything now (``LOG.tamper`` exists), or ``None``."""
        if self.state is None:
            return None
        try:
            reasons = json.loads(self.state.read_text(encoding="utf-8")).get("reasons", [])
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError, AttributeError):
            reasons = ["the tamper state file is unreadable"]
        shown = "; ".join(str(r) for r in reasons[:3]) or "a weakening change"
        return (
            f"a change this gateway did not make weakened its deployment ({shown}); it refuses "
            f"every call until an operator acknowledges the change by removing {self.state}"
        )

    def _fail_closed(self, reason: str) -> None:
        if self.state is None:
            return
        reasons: list[Any] = []
        with contextlib.suppress(OSError, ValueError, AttributeError):
            reasons = list(json.loads(self.state.read_text(encoding="utf-8")).get("reasons", []))
        reasons.append(reason)
        _write_json(self.state, {"reasons": reasons[-20:], "since": time.time()})

    def policy_weakened(self, weakened: Iterable[str]) -> dict[str, Any]:
        """A reload put a weakening policy in force: fail closed until acknowledged."""
        reason = "the policy was reloaded weaker (" + "; ".join(weakened) + ")"
        self._fail_closed(reason)
        return {"part": "deployment", "path": "", "change": "policy-weakened", "weakening": reason}

    # -- comparing ------------------------------------------------------------------------------

    def start(self) -> list[dict[str, Any]]:
        """Fingerprint everything; compare with what the last gateway saw (``LOG.watch``)."""
        remembered: Mapping[str, Any] = {}
        if self.memory is not None:
            with contextlib.suppress(OSError, ValueError):
                loaded = json.loads(self.memory.read_text(encoding="utf-8"))
                remembered = loaded if isinstance(loaded, dict) else {}
        for path, fields in remembered.items():
            with contextlib.suppress(TypeError):
                self.seen[path] = Seen(**fields)
        observed = self._compare(self.items) if self.seen else []
        self.seen = {item.path: fingerprint(item) for item in self.items}
        self._remember()
        if self.log_path is not None:
            self.log_seen = fingerprint(Watched(self.log_path, "audit-log"))
        return observed

    def tick(self, decisions: int) -> list[dict[str, Any]]:
        """The changes since the last tick (at most every :data:`TICK_SECONDS`), as
        ``tamper_observed`` fields; weakening ones have already put the gateway in fail-closed."""
        now = time.monotonic()
        if now - self.last_tick < TICK_SECONDS:
            return []
        self.last_tick = now
        observed = self._compare(self.items)
        if observed:
            self._remember()
        observed.extend(self._log(decisions))
        return observed

    def _compare(self, items: Iterable[Watched]) -> list[dict[str, Any]]:
        observed = []
        for item in items:
            after = fingerprint(item)
            before = self.seen.get(item.path)
            self.seen[item.path] = after
            if before is None or before == after:
                continue
            reason = weakens(item, before, after)
            if reason is not None:
                self._fail_closed(f"{reason}: {item.path}")
            observed.append(
                {"part": item.part, "path": item.path, "change": _change(before, after), "weakening": reason}
            )
        return observed

    def _log(self, decisions: int) -> list[dict[str, Any]]:
        if self.log_path is None or self.log_seen is None:
            return []
        before, after = self.log_seen, fingerprint(Watched(self.log_path, "audit-log"))
        self.log_seen = after
        found: list[dict[str, Any]] = []
        base = {"part": "audit-log", "path": self.log_path, "weakening": None}
        if (
            after.exists
            and before.exists
            and after.inode != before.inode
            and before.inode not in _rotated(self.log_path)
        ):
            found.append({**base, "change": "replaced"})
        elif after.exists and before.exists and after.inode == before.inode and after.size < before.size:
            found.append({**base, "change": "shrank", "from": before.size, "to": after.size})
        # Decisions counted between the tick before last and the last tick came after the file
        # was looked at then, and their records were written before their answers left: by now
        # the file must differ from what it was two ticks ago.
        if len(self.ticks) == 2:
            (counted_two_ago, seen_two_ago), (counted_last, _seen_last) = self.ticks
            if counted_last > counted_two_ago and after == seen_two_ago and not self.stall_reported:
                self.stall_reported = True
                found.append({**base, "change": "stalled", "decisions": counted_last - counted_two_ago})
            elif after != seen_two_ago:
                self.stall_reported = False
        self.ticks = [*self.ticks[-1:], (decisions, after)]
        return found

    def _remember(self) -> None:
        if self.memory is not None:
            with contextlib.suppress(OSError):
                _write_json(self.memory, {path: asdict(seen) for path, seen in self.seen.items()})


def _rotated(active: str) -> set[int]:
    """The inodes of the log's rotated segments (a rotation replaces the active file, by design)."""
    from dsh_policy.audit.segments import rotated_segments

    found = set()
    for _index, path in rotated_segments(Path(active)):
        with contextlib.suppress(OSError):
            found.add(path.stat().st_ino)
    return found


def _write_json(path: Path, document: Any) -> None:
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(document, out, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def watched_from(entries: Iterable[Any], project_dirs: Iterable[str] = ()) -> list[Watched]:
    """What to watch, from a deployment's protected set (its ``Protected`` entries): every file
    entry of the parts above that exists or should, the package folder as a tree (its modules),
    and each project's own hook settings."""
    out: dict[str, Watched] = {}
    for entry in entries:
        kind, path = entry.kind, entry.path
        if kind == "harness-settings" and os.path.basename(path) == ".claude.json":
            continue  # the client's own state, rewritten all the time (its MCP entries: see docs)
        if kind == "harness-settings" and path.endswith("/.copilot/config.json"):
            continue  # Copilot CLI's state file, rewritten by the client as it runs
        if kind in ("deployment", "pack", "audit-log", "harness-settings") and not entry.tree:
            out[path] = Watched(path, kind)
        elif kind == "harness-settings" and os.path.isdir(path):
            if os.path.basename(path) in _WATCHED_TREES:
                out[path] = Watched(path, kind, tree=True)  # hook scripts, plugins, managed settings
            else:  # a harness's home (``~/.codex``) also holds its sessions: its settings only
                for name in ("config.toml", "hooks.json", "requirements.toml"):
                    out[os.path.join(path, name)] = Watched(os.path.join(path, name), kind)
        elif kind == "gateway-package":
            if os.path.isdir(path) and os.path.exists(os.path.join(path, "pyvenv.cfg")):
                out[path + "/pyvenv.cfg"] = Watched(path + "/pyvenv.cfg", kind)
            elif os.path.isdir(path) and os.path.exists(os.path.join(path, "__init__.py")):
                # An installed package; an editable install is a working copy its developer edits
                # (its command and environment are still watched).
                if "site-packages" in path or "dist-packages" in path:
                    out[path] = Watched(path, kind, tree=True)
            elif os.path.isfile(path) and not path.endswith(".pth"):
                out[path] = Watched(path, kind)
    for project in project_dirs:
        for name in PROJECT_HOOK_FILES:  # every supported client's project wiring
            path = os.path.join(project, name)
            out.setdefault(path, Watched(path, "harness-settings"))
    return list(out.values())
