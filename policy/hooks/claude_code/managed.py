"""Where Claude Code reads its *managed* settings, and the key that makes it run only their hooks.

Claude Code reads system-wide managed settings from ``/etc/claude-code/managed-settings.json`` on
Linux and WSL and ``/Library/Application Support/ClaudeCode/managed-settings.json`` on macOS (its
settings documentation, "managed settings"); they take precedence over user and project settings,
and users cannot edit them without root. ``allowManagedHooksOnly: true`` there makes Claude Code
ignore user, project and plugin hooks. ``$DSH_POLICY_CLAUDE_MANAGED_SETTINGS`` names another file
for tests and staging (Claude Code itself still reads only its own path).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Final

LINUX_MANAGED_SETTINGS: Final[str] = "/etc/claude-code/managed-settings.json"
MACOS_MANAGED_SETTINGS: Final[str] = "/Library/Application Support/ClaudeCode/managed-settings.json"
MANAGED_SETTINGS_VARIABLE: Final[str] = "DSH_POLICY_CLAUDE_MANAGED_SETTINGS"
MANAGED_ONLY_KEY: Final[str] = "allowManagedHooksOnly"


def managed_settings_path(environ: Mapping[str, str] | None = None) -> str:
    """The managed settings file Claude Code reads on this platform (or the override)."""
    env = os.environ if environ is None else environ
    override = env.get(MANAGED_SETTINGS_VARIABLE)
    if override:
        return override
    return MACOS_MANAGED_SETTINGS if sys.platform == "darwin" else LINUX_MANAGED_SETTINGS
