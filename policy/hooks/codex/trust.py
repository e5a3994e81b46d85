"""Codex hook trust: what Codex itself says about the hooks it would run, and recording trust.

Codex runs a configured hook only once it is trusted; ``codex exec`` with untrusted hooks runs
with **no hooks and no warning** (HOOKS.md), so an installation that looks right can guard
nothing. Trust is stored per hook in ``$CODEX_HOME/config.toml`` as
``[hooks.state."<source>:<event>:<group>:<hook>"] trusted_hash = "sha256:..."``, a hash of the
hook's definition that Codex computes. Rather than re-implement that hash, we ask Codex: ``codex
app-server`` (JSON-RPC on stdio) answers ``hooks/list`` with every hook it loaded for a folder, its
``currentHash`` and its ``trustStatus``. :func:`record_trust` writes Codex's own hash for the hooks
the caller names, exactly as the TUI's "Trust all and continue" does, and lists again to verify.
Managed hooks (:mod:`.managed`) have trust status ``managed`` and need none of this.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dsh_policy import __version__
from dsh_policy.policy.hooks.harness_files import read_text, write_atomically

LIST_SECONDS: Final[float] = 30.0
TRUST_HINT: Final[str] = (
    'trust them: run `codex` in the project and choose "Trust all and continue" when it asks '
    "to review hooks, or run `dsh-policy init codex --trust`"
)
MANAGED_HINT: Final[str] = (
    "or, for every user of this machine, deliver them as managed hooks, which Codex runs without "
    "trust and users cannot switch off: run `dsh-policy init codex --managed` as root (it writes "
    "/etc/codex/requirements.toml)"
)


@dataclass(frozen=True, slots=True)
class CodexHook:
    """One hook as Codex sees it."""

    key: str
    event: str
    command: str
    current_hash: str
    trust_status: str
    source_path: str

    @property
    def trusted(self) -> bool:
        return self.trust_status in ("trusted", "managed")

    @property
    def managed(self) -> bool:
        """Delivered by an administrator (requirements.toml, MDM, system config): Codex runs it
        without trust review and a user cannot disable it."""
        return self.trust_status == "managed"


def codex_home(environ: Mapping[str, str] | None = None) -> str:
    """``$CODEX_HOME``, else ``~/.codex``."""
    env = os.environ if environ is None else environ
    return env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")


def list_hooks(
    cwd: str,
    *,
    codex: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: float = LIST_SECONDS,
) -> list[CodexHook] | str:
    """The hooks Codex loads for ``cwd`` (``hooks/list``), or why they could not be listed."""
    binary = codex or shutil.which("codex")
    if binary is None:
        return "codex is not installed (not on PATH)"
    try:
        process = subprocess.Popen(
            [binary, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(os.environ if environ is None else environ),
        )
    except OSError as error:
        return f"cannot start codex app-server: {error}"
    try:
        return _hooks_list(process, cwd, time.monotonic() + timeout)
    finally:
        with contextlib.suppress(OSError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=5)


def _hooks_list(process: subprocess.Popen[bytes], cwd: str, deadline: float) -> list[CodexHook] | str:
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()

    send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "dsh-policy", "version": __version__}},
        }
    )
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            break
        line = process.stdout.readline()
        if not line:
            return "codex app-server exited before listing hooks"
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("id") == 1:
            send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            send({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}})
        elif message.get("id") == 2:
            if "error" in message:
                return f"codex app-server: hooks/list failed: {message['error']}"
            return list(_parse_hooks(message.get("result") or {}))
    return "codex app-server did not answer hooks/list in time"


def _parse_hooks(result: Mapping[str, Any]) -> Iterable[CodexHook]:
    for entry in result.get("data") or []:
        for hook in entry.get("hooks") or []:
            if not isinstance(hook, Mapping) or not isinstance(hook.get("key"), str):
                continue
            yield CodexHook(
                key=hook["key"],
                event=str(hook.get("eventName") or ""),
                command=str(hook.get("command") or ""),
                current_hash=str(hook.get("currentHash") or ""),
                trust_status=str(hook.get("trustStatus") or "unknown"),
                source_path=str(hook.get("sourcePath") or ""),
            )


def ours(hooks: Sequence[CodexHook]) -> list[CodexHook]:
    """The dsh-policy hooks among ``hooks``."""
    return [hook for hook in hooks if "dsh-policy hook codex" in hook.command]


_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


def upsert_trust(text: str, key: str, value: str) -> str:
    """``text`` (a config.toml) with ``[hooks.state."<key>"] trusted_hash = value`` set: the line
    replaced inside an existing table for that key, else a new table appended."""
    if not _HASH.match(value):
        raise ValueError(f"not a Codex hook hash: {value!r}")
    header = f"[hooks.state.{json.dumps(key)}]"
    line = f"trusted_hash = {json.dumps(value)}"
    lines = text.splitlines(keepends=True)
    try:
        start = next(i for i, text_line in enumerate(lines) if text_line.strip() == header)
    except StopIteration:
        return text + ("\n" if text and not text.endswith("\n") else "") + f"\n{header}\n{line}\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    for index in range(start + 1, end):
        if re.match(r"\s*trusted_hash\s*=", lines[index]):
            lines[index] = line + "\n"
            return "".join(lines)
    lines.insert(start + 1, line + "\n")
    return "".join(lines)


def record_trust(config_path: str, hooks: Sequence[CodexHook]) -> str | None:
    """Trust ``hooks`` in ``config_path`` (Codex's user config); None on success, else why not.
    The file is validated before it replaces the old one."""
    original = read_text(config_path) or ""
    text = original
    for hook in hooks:
        text = upsert_trust(text, hook.key, hook.current_hash)
    if text == original:
        return None
    try:
        state = tomllib.loads(text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError as error:
        return f"cannot record trust in {config_path}: the result would not parse ({error})"
    wrong = [hook.key for hook in hooks if state.get(hook.key, {}).get("trusted_hash") != hook.current_hash]
    if wrong:
        return f"cannot record trust in {config_path} for {wrong}"
    os.makedirs(os.path.dirname(config_path) or ".", exist_ok=True)
    write_atomically(config_path, text, 0o600)
    return None
