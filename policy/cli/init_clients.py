"""``dsh-policy init gemini-cli|qwen-code|opencode|copilot-cli [--project DIR] [--pack PACK]...``.

The clients beyond Claude Code and Codex, each set up in its own project folder: the deployment
file ``.dsh/gateway.yaml`` (as for Claude Code, written only when missing), then

- Gemini CLI / Qwen Code: the hooks merged into ``.gemini/settings.json`` / ``.qwen/settings.json``
  (existing keys and hooks kept; a file that does not parse is refused). Both load project hooks
  only in a folder the user has trusted (their folder-trust prompt, or ``trustedFolders.json``);
- OpenCode: the plugin ``.opencode/plugin/dsh-policy.js`` (an existing file that is not ours is
  refused, never overwritten);
- GitHub Copilot CLI: the hook file ``.github/hooks/dsh-policy.json`` (the same rule). Copilot
  loads repository hooks only in a folder the user trusted.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from dsh_policy.policy.hooks.copilot_cli import hooks_file as copilot_hooks
from dsh_policy.policy.hooks.gemini_cli import settings as gemini_settings
from dsh_policy.policy.hooks.install.settings_files import (
    SettingsError,
    merge_claude_code_settings,
    read_text,
    write_atomically,
)
from dsh_policy.policy.hooks.opencode import plugin as opencode_plugin

CLIENTS = ("gemini-cli", "qwen-code", "opencode", "copilot-cli")


def install(harness: str, project: str, deployment: str, say: Callable[[str, str], None]) -> int:
    """Wire ``harness`` in ``project`` to ``deployment``; the number of problems (0 or 1)."""
    if harness == "opencode":
        return _install_plugin(project, deployment, say)
    if harness == "copilot-cli":
        return _install_copilot_hooks(project, deployment, say)
    path = os.path.join(project, gemini_settings.FOLDERS[harness], "settings.json")
    try:
        merged = merge_claude_code_settings(
            read_text(path), gemini_settings.settings_hooks(harness, deployment)
        )
    except SettingsError as error:
        say("FAIL", f"{path}: {error}")
        return 1
    if merged.changed:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, merged.text)
        say("wrote", f"{path}: hooks for {', '.join(merged.added)}")
    else:
        say("kept", f"{path} (the hooks are already there)")
    say("note", f"{harness} loads project hooks only in a trusted folder: trust {project} when it asks")
    return 0


def _install_plugin(project: str, deployment: str, say: Callable[[str, str], None]) -> int:
    path = os.path.join(project, opencode_plugin.PLUGIN_FOLDER, opencode_plugin.PLUGIN_NAME)
    text = opencode_plugin.plugin_source(deployment)
    existing = read_text(path)
    if existing is not None and opencode_plugin.MARKER not in existing:
        say("FAIL", f"{path} exists and is not the dsh-policy plugin; move it, then run init again")
        return 1
    if existing == text:
        say("kept", f"{path} (already up to date)")
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomically(path, text)
    say("wrote", path)
    return 0


def _install_copilot_hooks(project: str, deployment: str, say: Callable[[str, str], None]) -> int:
    path = os.path.join(project, copilot_hooks.HOOKS_FOLDER, copilot_hooks.HOOKS_NAME)
    text = copilot_hooks.hooks_text(deployment)
    existing = read_text(path)
    if existing is not None and not copilot_hooks.is_ours(existing):
        say("FAIL", f"{path} exists and is not the dsh-policy hook file; move it, then run init again")
        return 1
    if existing == text:
        say("kept", f"{path} (already up to date)")
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, text)
        say("wrote", f"{path}: hooks for {', '.join(copilot_hooks.hooks_document(deployment)['hooks'])}")
    say(
        "note",
        f"copilot-cli runs repository hooks only in a trusted folder: trust {project} when it asks "
        "(an untrusted folder skips them silently)",
    )
    return 0
