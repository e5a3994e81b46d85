"""Codex *managed* hooks: dsh-policy delivered through Codex's enterprise ``requirements.toml``.

Hooks in the system requirements file are "managed": Codex runs them without any trust review,
and a user's ``[hooks.state]`` cannot switch them off; ``allow_managed_hooks_only = true`` there
makes Codex ignore user, project and plugin hooks. Measured with the real Codex CLI 0.171.0
(``codex exec`` with a fresh ``CODEX_HOME`` that never trusted anything): the managed PreToolUse
hook ran and denied, ``hooks/list`` reported ``source: system``, ``isManaged: true``,
``trustStatus: managed``; examples/hooks/README.md has the whole record. For a security team
this is the deployment that cannot silently guard nothing.

Codex reads ``/etc/codex/requirements.toml`` on Linux and macOS (``codex-rs/config``:
``system_requirements_toml_file``); ``$DSH_POLICY_CODEX_REQUIREMENTS`` names another file for
tests and staging (Codex itself still reads only its own path).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tomllib
from collections.abc import Mapping
from typing import Final

from dsh_policy.policy.hooks.harness_files import SettingsError, configured_commands

CODEX_REQUIREMENTS: Final[str] = "/etc/codex/requirements.toml"
REQUIREMENTS_VARIABLE: Final[str] = "DSH_POLICY_CODEX_REQUIREMENTS"
MANAGED_ONLY_KEY: Final[str] = "allow_managed_hooks_only"
MARKER: Final[str] = "dsh-policy hook codex"


def requirements_path(environ: Mapping[str, str] | None = None) -> str:
    """The requirements file Codex reads (or the override)."""
    env = os.environ if environ is None else environ
    return env.get(REQUIREMENTS_VARIABLE) or CODEX_REQUIREMENTS


def is_codex_requirements(path: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether Codex reads ``path`` as its requirements file."""
    return os.path.abspath(path) == os.path.abspath(requirements_path(environ))


def dsh_policy_program() -> str | None:
    """The absolute path of this installation's ``dsh-policy`` command, or None. A managed hook
    names it absolutely: the user's PATH must not decide which program guards them."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "dsh-policy")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("dsh-policy")
    return os.path.abspath(found) if found else None


def conflicting_hooks(existing: str | None, tables: str) -> list[str]:
    """Events that already run a *different* ``dsh-policy hook codex`` command in ``existing``
    (another install, another deployment file): adding ours would decide each event twice."""
    try:
        before = tomllib.loads(existing or "")
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"not valid TOML ({error}); fix or move it, then run init again") from None
    ours = configured_commands(tomllib.loads(tables))
    present = configured_commands(before)
    out = []
    for event, commands in ours.items():
        theirs = {command for command in present.get(event, set()) if MARKER in command}
        if theirs and not commands <= theirs:
            out.append(f"{event}: {sorted(theirs)[0]}")
    return out


def managed_only(text: str | None) -> bool | None:
    """The file's ``allow_managed_hooks_only`` (None: not set, or the file does not parse)."""
    try:
        value = tomllib.loads(text or "").get(MANAGED_ONLY_KEY)
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, bool) else None


def with_managed_only(text: str) -> str:
    """``text`` with ``allow_managed_hooks_only = true`` as a top-level key (inserted before the
    first table, where TOML puts top-level keys). Refused when the file already says false: that
    is an administrator's choice, not ours to overturn."""
    current = managed_only(text)
    if current is True:
        return text
    if re.search(rf"(?m)^\s*{MANAGED_ONLY_KEY}\s*=", text):
        raise SettingsError(f"it sets {MANAGED_ONLY_KEY} to something other than true; change it by hand")
    lines = text.splitlines(keepends=True)
    first_table = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    while first_table and lines[first_table - 1].lstrip().startswith("#"):
        first_table -= 1  # keep a table's own comment lines above it
    insert = f"{MANAGED_ONLY_KEY} = true  # dsh-policy: Codex ignores user and project hooks\n"
    if first_table and not lines[first_table - 1].endswith("\n"):
        lines[first_table - 1] += "\n"
    lines.insert(first_table, insert + ("\n" if first_table < len(lines) else ""))
    merged = "".join(lines)
    if managed_only(merged) is not True:
        raise SettingsError(f"cannot add {MANAGED_ONLY_KEY} to this file; add it by hand")
    return merged
