"""``dsh-policy init claude-code|codex --user`` and ``init claude-code --managed``: one deployment
for every project on the machine.

The hooks go where the client reads them for every project (``~/.claude/settings.json``,
``$CODEX_HOME/config.toml``, or Claude Code's managed settings), and name one deployment file
outside any project (``$XDG_CONFIG_HOME/dsh-policy/gateway.yaml``, shared by both clients; for
``--managed``, ``/etc/dsh-policy/gateway.yaml``, which only root may change). That file sets no
``params.workspace``: the hooks carry ``--project auto``, so each event's project is the workspace
and may add its own packs (``.dsh/rules/``), never remove the machine's
(:mod:`dsh_policy.policy.hooks.project_scope`).

Managed hooks run as whichever user runs the client, so their audit log is each user's own
(``--audit "$HOME/.local/state/dsh-policy/audit/hooks.jsonl"``, expanded by the hook's shell), and
the deployment file names none.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from collections.abc import Callable, Mapping

from dsh_policy.policy.hooks.claude_code import managed as claude_managed
from dsh_policy.policy.hooks.install.settings_files import (
    SettingsError,
    claude_code_hooks,
    merge_claude_code_settings,
    read_text,
    write_atomically,
)

MANAGED_DEPLOYMENT = "/etc/dsh-policy/gateway.yaml"
MANAGED_DEPLOYMENT_VARIABLE = "DSH_POLICY_MANAGED_DEPLOYMENT"  # another default, for tests and staging
PROJECT_OPTION = "--project auto"
USER_AUDIT = '"$HOME/.local/state/dsh-policy/audit/hooks.jsonl"'

#: Writes a deployment file: (path, workspace or None, packs, with an audit log?) -> problems.
WriteDeployment = Callable[[str, str | None, list[str], bool], int]


def user_deployment_path(environ: Mapping[str, str] | None = None) -> str:
    """The machine-wide deployment file of this user (both clients share it)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    base = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return os.path.join(base, "dsh-policy", "gateway.yaml")


def deployment_for(args: argparse.Namespace) -> str:
    """The deployment file a machine-wide set-up names (``--config`` wins)."""
    if args.config:
        return os.path.abspath(args.config)
    if args.managed is not None:
        return os.environ.get(MANAGED_DEPLOYMENT_VARIABLE) or MANAGED_DEPLOYMENT
    return user_deployment_path()


def install_claude_code(
    args: argparse.Namespace, packs: list[str], program: str, write_deployment: WriteDeployment
) -> int:
    """Deployment file and hooks for every project; 0 when done (or already there), 1 otherwise."""
    deployment = deployment_for(args)
    managed = args.managed is not None
    problems = write_deployment(deployment, None, packs, not managed)
    if problems:
        return problems
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if managed:
        path = os.path.abspath(args.managed or claude_managed.managed_settings_path())
        extra = f"{PROJECT_OPTION} --audit {USER_AUDIT}"
    else:
        path = os.path.join(home, ".claude", "settings.json")
        extra = PROJECT_OPTION
    hooks = claude_code_hooks(shlex.quote(deployment), program, extra)
    try:
        merged = merge_claude_code_settings(read_text(path), hooks)
        text = _with_managed_only(merged.text) if args.managed_only else merged.text
    except SettingsError as error:
        _say("FAIL", f"{path}: {error}")
        return 1
    if text == (read_text(path) or ""):
        _say("kept", f"{path} (every dsh-policy hook is already there)")
        return 0
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o755, exist_ok=True)
        write_atomically(path, text)
    except OSError as error:
        root = " (managed settings belong to root: run init as root)" if managed else ""
        _say("FAIL", f"cannot write {path}: {error}{root}")
        return 1
    added = f"hooks for {', '.join(merged.added)}" if merged.added else "no new hooks"
    only = f", {claude_managed.MANAGED_ONLY_KEY}: true" if args.managed_only else ""
    _say("merged", f"{path}: {added}{only} (every project; the workspace is each event's project)")
    if managed and os.path.abspath(path) != claude_managed.managed_settings_path():
        reads = claude_managed.managed_settings_path()
        print(f"note    Claude Code reads only {reads}: deliver {path} there")
    return 0


def _with_managed_only(text: str) -> str:
    document = json.loads(text)
    if document.get(claude_managed.MANAGED_ONLY_KEY) is False:
        raise SettingsError(
            f"it sets {claude_managed.MANAGED_ONLY_KEY} to false, an administrator's choice: "
            "change it by hand"
        )
    document[claude_managed.MANAGED_ONLY_KEY] = True
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _say(status: str, message: str) -> None:
    print(f"{status:<7} {message}")
