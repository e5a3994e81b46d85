"""``dsh-policy doctor gemini-cli|qwen-code|opencode|copilot-cli``: the hooks are wired, and the configured
command refuses a destructive call and lets a harmless one through, spoken in the client's own
event and tool names (so the client's dialect and vocabulary are what is probed)."""

from __future__ import annotations

import json
import os
import shlex

from dsh_policy.policy.hooks.copilot_cli import hooks_file as copilot_hooks
from dsh_policy.policy.hooks.copilot_cli.dialect import WIRED_EVENTS as COPILOT_EVENTS
from dsh_policy.policy.hooks.gemini_cli import settings as gemini_settings
from dsh_policy.policy.hooks.install.doctor import (
    ALLOW_PROBE_COMMAND,
    DENY_PROBE_COMMAND,
    PROBE_SESSION,
    Finding,
    run_probe,
)
from dsh_policy.policy.hooks.install.settings_files import configured_commands, read_text
from dsh_policy.policy.hooks.opencode import plugin as opencode_plugin

#: Per client: (event of a tool call, shell tool name) in its own spelling.
PROBE_SPELLING = {
    "gemini-cli": ("BeforeTool", "run_shell_command"),
    "qwen-code": ("PreToolUse", "run_shell_command"),
    "opencode": ("PreToolUse", "bash"),
    "copilot-cli": ("PreToolUse", "Bash"),
}


def findings(harness: str, project: str) -> list[Finding]:
    """Every check for one project, in order."""
    out: list[Finding] = []
    command = _configured(harness, project, out)
    if command is None:
        return out
    event, tool = PROBE_SPELLING[harness]
    for probe, want_refused in ((DENY_PROBE_COMMAND, True), (ALLOW_PROBE_COMMAND, False)):
        payload = json.dumps(
            {
                "session_id": PROBE_SESSION,
                "hook_event_name": event,
                "cwd": project,
                "tool_name": tool,
                "tool_input": {"command": probe},
            }
        ).encode()
        code, stdout, stderr, ms = run_probe(command, harness, project, payload)
        refused = code == 2 and "[policy:" in stderr
        said = (stderr.strip() or stdout.strip()).splitlines()[-1:] or ["(nothing)"]
        subject = "deny probe" if want_refused else "allow probe"
        if refused == want_refused and (want_refused or code == 0):
            out.append(
                Finding("ok", subject, f"`{probe}` {'refused' if refused else 'allowed'} in {ms:.0f} ms")
            )
        else:
            out.append(Finding("fail", subject, f"`{probe}`: exit {code} ({ms:.0f} ms): {said[0][:200]}"))
    return out


def _configured(harness: str, project: str, out: list[Finding]) -> str | None:
    """The PreToolUse-equivalent command, with a finding for what is (not) wired."""
    if harness == "copilot-cli":
        return _copilot_configured(project, out)
    if harness == "opencode":
        path = os.path.join(project, opencode_plugin.PLUGIN_FOLDER, opencode_plugin.PLUGIN_NAME)
        argv = opencode_plugin.plugin_command(read_text(path) or "")
        if argv is None:
            out.append(
                Finding("fail", "plugin", f"{path}: no dsh-policy plugin (run `dsh-policy init opencode`)")
            )
            return None
        out.append(Finding("ok", "plugin", f"{path} runs {shlex.join(argv)}"))
        return shlex.join(argv)
    path = os.path.join(project, gemini_settings.FOLDERS[harness], "settings.json")
    text = read_text(path)
    try:
        wired = configured_commands(json.loads(text)) if text else {}
    except ValueError as error:
        out.append(Finding("fail", "settings", f"{path}: not valid JSON ({error})"))
        return None
    ours = {event: [c for c in commands if f"hook {harness}" in c] for event, commands in wired.items()}
    missing = [event for event, _a, _m in gemini_settings.WIRED[harness] if not ours.get(event)]
    if missing:
        out.append(Finding("fail", "settings", f"{path}: no dsh-policy hook for {', '.join(missing)}"))
    else:
        out.append(Finding("ok", "settings", f"{path}: every event wired"))
    tool_event = PROBE_SPELLING[harness][0]
    return ours[tool_event][0] if ours.get(tool_event) else None


def _copilot_configured(project: str, out: list[Finding]) -> str | None:
    """Copilot CLI: the hook file, and whether Copilot trusts the folder (else it skips the file
    silently in prompt mode, and asks in the TUI)."""
    path = os.path.join(project, copilot_hooks.HOOKS_FOLDER, copilot_hooks.HOOKS_NAME)
    text = read_text(path)
    try:
        wired = copilot_hooks.wired_commands(json.loads(text)) if text else {}
    except ValueError as error:
        out.append(Finding("fail", "hooks", f"{path}: not valid JSON ({error})"))
        return None
    missing = [event for event in COPILOT_EVENTS if not wired.get(event)]
    if not wired:
        hint = "run `dsh-policy init copilot-cli`"
        out.append(Finding("fail", "hooks", f"{path}: no dsh-policy hook ({hint})"))
        return None
    if missing:
        out.append(Finding("fail", "hooks", f"{path}: no dsh-policy hook for {', '.join(missing)}"))
    else:
        out.append(Finding("ok", "hooks", f"{path}: every event wired"))
    config = copilot_hooks.config_path()
    config_text = read_text(config)
    folders = copilot_hooks.trusted_folders(config_text) if config_text is not None else []
    if folders is None:
        out.append(Finding("warn", "trust", f"{config}: not readable as JSON; folder trust unknown"))
    elif copilot_hooks.is_trusted(project, folders):
        out.append(Finding("ok", "trust", f"{project} is a trusted folder ({config})"))
    else:
        out.append(
            Finding(
                "warn",
                "trust",
                f"{project} is not in trustedFolders of {config}: Copilot CLI skips repository hooks "
                "there (silently with -p); trust the folder when Copilot asks, or set "
                "COPILOT_ALLOW_ALL=true",
            )
        )
    return wired["PreToolUse"][0] if wired.get("PreToolUse") else None
