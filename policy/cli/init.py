"""``dsh-policy init claude-code|codex [--project DIR] [--pack PACK]... [--user] [--trust]``,
``dsh-policy init codex --managed [FILE] [--managed-only] [--config FILE]``,
``dsh-policy init claude-code --user|--managed [FILE] [--managed-only] [--config FILE]``.

Writes into a project what the hooks need, merging with what is there and never clobbering it:

- the deployment file, unless one exists (``.dsh/gateway.yaml`` for Claude Code,
  ``.codex/dsh-gateway.yaml`` for Codex): the shipped ``baseline`` and ``secrets`` packs (or the
  ``--pack`` files), ``params.workspace`` set to the project, and a fail-closed audit log in an
  ``audit/`` folder beside it;
- the hook settings: every event wired to ``dsh-policy hook`` (``.claude/settings.json``, with
  ``onFailure: "block"``; ``.codex/config.toml``, or ``$CODEX_HOME/config.toml`` with ``--user``).
  Hooks already present are not added twice; a settings file that does not parse is left alone
  and reported.

Codex runs hooks only once trusted. ``--trust`` records trust for the hooks init wrote, with the
hashes Codex itself computes (``codex app-server``), exactly as its "Trust all and continue" does;
without it, init says how to trust them. ``--managed`` writes the hooks into Codex's system
``requirements.toml`` instead, where Codex runs them as managed hooks, with no trust at all
(:mod:`.init_managed`). Run ``dsh-policy doctor`` afterwards to check it all.

Every hook command names this installation's ``dsh-policy`` by absolute path, and init runs it
first (:mod:`dsh_policy.policy.hooks.install.program`); where it is missing, each hook's refusal
says what to install. ``--user`` (both clients) and ``--managed`` (Claude Code) write one
deployment for every project instead (:mod:`.init_machine`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from dsh_policy.policy.cli import init_clients, init_machine
from dsh_policy.policy.cli.init_managed import merge_managed
from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command
from dsh_policy.policy.command_line import CommandParser
from dsh_policy.policy.hooks.codex import managed as codex_managed
from dsh_policy.policy.hooks.codex import trust as codex_trust
from dsh_policy.policy.hooks.install import mcp_servers
from dsh_policy.policy.hooks.install.program import checked_program
from dsh_policy.policy.hooks.install.settings_files import (
    SettingsError,
    claude_code_hooks,
    codex_hooks_toml,
    merge_claude_code_settings,
    merge_codex_config,
    read_text,
    write_atomically,
)

SHIPPED_PACKS = ("baseline.yaml", "secrets.yaml")


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy init",
        description="Write hook settings and a deployment file into a project (merging, never clobbering).",
    )
    parser.add_argument("harness", choices=["claude-code", "codex", *init_clients.CLIENTS])
    parser.add_argument("--project", default=".", metavar="DIR", help="the project folder (default: .)")
    parser.add_argument(
        "--pack",
        dest="packs",
        action="append",
        default=[],
        metavar="PACK",
        help="rule pack for a new deployment file (default: the shipped baseline and secrets packs)",
    )
    parser.add_argument(
        "--user",
        action="store_true",
        help="one deployment for every project: the hooks go to ~/.claude/settings.json (claude-code) or "
        "$CODEX_HOME/config.toml (codex) and name $XDG_CONFIG_HOME/dsh-policy/gateway.yaml; each "
        "event's project is its workspace",
    )
    parser.add_argument("--trust", action="store_true", help="codex: record trust for the hooks written")
    parser.add_argument(
        "--system",
        action="store_true",
        help="the hardened mode (as root): deployment, packs, key and log owned by root and the service "
        "user, the gateway run as that user, the client's managed hooks talking only to it "
        "(docs/hardened.md); --project names the workspace",
    )
    parser.add_argument(
        "--service-user",
        default="dsh-policy",
        metavar="NAME",
        help="with --system: the system user the gateway runs as (default: dsh-policy; must exist)",
    )
    parser.add_argument(
        "--mcp",
        choices=["wrap", "unwrap"],
        nargs="?",
        const="wrap",
        default=None,
        help="also put the configured stdio MCP servers (.mcp.json, or config.toml [mcp_servers]) behind "
        "`dsh-policy mcp proxy` (unwrap: restore them)",
    )
    parser.add_argument(
        "--managed",
        nargs="?",
        const="",
        default=None,
        metavar="FILE",
        help="write the hooks as managed hooks: codex into a requirements.toml (default: the one "
        f"Codex reads, {codex_managed.CODEX_REQUIREMENTS}; they then need no trust), claude-code into "
        "its managed-settings.json (default: the one Claude Code reads, "
        "/etc/claude-code/managed-settings.json on Linux), for every project",
    )
    parser.add_argument(
        "--managed-only",
        action="store_true",
        help="with --managed: also set allow_managed_hooks_only = true (codex) or "
        "allowManagedHooksOnly: true (claude-code): the client then ignores user and project hooks",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the deployment file the hooks name (default: .codex/dsh-gateway.yaml in the project; with "
        "--user, $XDG_CONFIG_HOME/dsh-policy/gateway.yaml; claude-code --managed, "
        f"{init_machine.MANAGED_DEPLOYMENT}); written when missing",
    )
    return parser


def deployment_yaml(name: str, packs: list[str], workspace: str | None, *, audit: bool = True) -> str:
    """A new deployment file (paths absolute, so it can be copied). Without ``workspace`` (a
    machine-wide deployment) the hooks' ``--project`` supplies it per event."""
    listed = ", ".join(_yaml_string(pack) for pack in packs)
    text = (
        "# Written by `dsh-policy init`; see docs/deployment.md.\n"
        "apiVersion: dsh-policy/v1\nkind: Gateway\n"
        f"metadata:\n  name: {_yaml_string(name)}\n"
        f"spec:\n  packs: [{listed}]\n"
    )
    if workspace is not None:
        text += f"  params:\n    workspace: {_yaml_string(workspace)}\n"
    else:
        text += "  # params.workspace: each hook's --project (the project of the event)\n"
    if audit:
        text += "  audit:\n    path: audit/hooks.jsonl\n    fsync: batch\n    fail_closed: true\n"
    return text


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _shipped_packs() -> list[str]:
    from dsh_policy import rules

    folder = Path(rules.__file__).parent
    return [str(folder / name) for name in SHIPPED_PACKS]


def main(argv: list[str]) -> int:
    """Entry point; 0 when everything was written (or already there), 1 on any problem."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    project = os.path.realpath(args.project)
    mixed = _conflicting_options(args)
    if mixed:
        print(f"dsh-policy init: {mixed}", file=sys.stderr)
        return USAGE_EXIT
    if not os.path.isdir(project):
        print(f"dsh-policy init: {project} is not a folder", file=sys.stderr)
        return 1
    packs = [os.path.realpath(pack) for pack in args.packs] or _shipped_packs()
    program, said = checked_program()
    if program is None:
        _say("FAIL", f"{said}; no hook was written")
        return 1
    _say("checked", f"{program} runs ({said})")
    if args.system:
        from dsh_policy.policy.hooks.install import hardened_install

        return hardened_install.install(args.harness, args.service_user, project, packs, program, _say)
    problems = 0
    machine = args.user or (args.harness == "claude-code" and args.managed is not None)
    if args.harness in init_clients.CLIENTS:
        deployment = os.path.join(project, ".dsh", "gateway.yaml")
        problems += _write_deployment(deployment, project, packs)
        problems += init_clients.install(args.harness, project, deployment, _say)
    elif args.harness == "claude-code" and machine:
        problems += init_machine.install_claude_code(args, packs, program, _write_deployment)
    elif args.harness == "claude-code":
        deployment = os.path.join(project, ".dsh", "gateway.yaml")
        problems += _write_deployment(deployment, project, packs)
        problems += _merge_claude_code(project, program)
        if args.mcp is not None:
            problems += wrap_mcp_servers(
                os.path.join(project, ".mcp.json"), deployment, args.mcp, codex=False
            )
    else:
        if args.user:
            deployment = init_machine.deployment_for(args)
            problems += _write_deployment(deployment, None, packs)
        else:
            deployment = os.path.abspath(args.config or os.path.join(project, ".codex", "dsh-gateway.yaml"))
            problems += _write_deployment(deployment, project, packs)
        if args.managed is not None:
            path = os.path.abspath(args.managed or codex_managed.requirements_path())
            problems += merge_managed(path, project, deployment, managed_only=args.managed_only)
        else:
            problems += _merge_codex(args, project, deployment, program)
        if args.mcp is not None:
            config = os.path.join(
                codex_trust.codex_home() if args.user else os.path.join(project, ".codex"), "config.toml"
            )
            problems += wrap_mcp_servers(config, deployment, args.mcp, codex=True)
    print("next: dsh-policy doctor " + args.harness + f" --project {shlex.quote(project)}")
    return 1 if problems else 0


def wrap_mcp_servers(path: str, deployment: str, mode: str, *, codex: bool) -> int:
    """Wrap (or unwrap) the stdio MCP servers of one client config file; 1 on a problem."""
    edit_file = mcp_servers.edit_codex if codex else mcp_servers.edit_claude_code
    try:
        edit = edit_file(read_text(path), deployment, wrap=mode == "wrap")
    except SettingsError as error:
        _say("FAIL", f"{path}: {error}")
        return 1
    for name, why in edit.skipped.items():
        _say("kept", f"{path}: MCP server {name} ({why})")
    if edit.changed:
        write_atomically(path, edit.text)
        verb = "wrapped" if mode == "wrap" else "unwrapped"
        _say(verb, f"{path}: MCP servers {', '.join(edit.changed)}")
    return 0


def _conflicting_options(args: argparse.Namespace) -> str | None:
    """Why the options do not go together, or None."""
    if args.harness != "codex" and args.trust:
        return "--trust is for codex only"
    machine = args.user or args.managed is not None
    if args.harness == "claude-code" and args.config is not None and not machine:
        return "claude-code: --config goes with --user or --managed (a project's is .dsh/gateway.yaml)"
    if args.managed_only and args.managed is None:
        return "--managed-only needs --managed"
    if args.managed is not None and (args.user or args.trust):
        return "--managed hooks need no trust and live in no user config: drop --user/--trust"
    if args.system and (args.user or args.managed is not None or args.trust or args.mcp or args.config):
        return "--system writes its own hooks and deployment: drop --user/--managed/--trust/--mcp/--config"
    if args.system and args.harness not in ("claude-code", "codex"):
        return "--system is for claude-code and codex"
    return None


def _say(status: str, message: str) -> None:
    print(f"{status:<7} {message}")


def _write_deployment(path: str, project: str | None, packs: list[str], audit: bool = True) -> int:
    """Write a new deployment file (``project`` None: a machine-wide one, no workspace)."""
    try:
        if project is None:
            os.makedirs(
                os.path.join(os.path.dirname(path), "audit") if audit else os.path.dirname(path),
                exist_ok=True,
            )
        else:
            _make_audit_folder(os.path.join(os.path.dirname(path), "audit"), project)
    except OSError as error:
        _say("FAIL", f"cannot make the folder of {path}: {error}")
        return 1
    if os.path.exists(path):
        _say("kept", f"{path} (an existing deployment file is never overwritten)")
        return 0
    missing = [pack for pack in packs if not os.path.isfile(pack)]
    if missing:
        _say("FAIL", f"no such pack: {', '.join(missing)}")
        return 1
    name = "machine" if project is None else os.path.basename(project) or "project"
    try:
        write_atomically(path, deployment_yaml(name, packs, project, audit=audit))
    except OSError as error:
        _say("FAIL", f"cannot write {path}: {error}")
        return 1
    _say("wrote", path)
    return 0


def _make_audit_folder(folder: str, project: str) -> None:
    """Make ``folder`` and its missing parents. Run as root in a project that belongs to someone
    else (``sudo dsh-policy init codex --managed``), the ones made inside the project are handed to
    the project's owner: the hooks run as that user, and a fail-closed audit log they cannot write
    would refuse every call."""
    missing = []
    path = os.path.abspath(folder)
    while not os.path.isdir(path) and os.path.dirname(path) != path:
        missing.append(path)
        path = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    owner = os.stat(project)
    if os.geteuid() != 0 or owner.st_uid == 0:
        return
    inside = [path for path in missing if path.startswith(project + os.sep)]
    for path in inside:
        os.chown(path, owner.st_uid, owner.st_gid)
    if inside:
        _say("owner", f"{', '.join(reversed(inside))} given to uid {owner.st_uid}, who owns {project}")


def _merge_claude_code(project: str, program: str) -> int:
    path = os.path.join(project, ".claude", "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        merged = merge_claude_code_settings(read_text(path), claude_code_hooks(program=program))
    except SettingsError as error:
        _say("FAIL", f"{path}: {error}")
        return 1
    if not merged.changed:
        _say("kept", f"{path} (every dsh-policy hook is already there)")
        return 0
    write_atomically(path, merged.text)
    _say("merged", f"{path}: hooks for {', '.join(merged.added)}")
    return 0


def _merge_codex(args: argparse.Namespace, project: str, deployment: str, program: str) -> int:
    home = codex_trust.codex_home()
    path = os.path.join(home, "config.toml") if args.user else os.path.join(project, ".codex", "config.toml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        extra = init_machine.PROJECT_OPTION if args.user else ""
        merged = merge_codex_config(read_text(path), codex_hooks_toml(deployment, program, extra))
    except SettingsError as error:
        _say("FAIL", f"{path}: {error}")
        return 1
    if merged.changed:
        write_atomically(path, merged.text)
        _say("merged", f"{path}: hooks for {', '.join(merged.added)}")
    else:
        _say("kept", f"{path} (every dsh-policy hook is already there)")
    if not args.user:
        print(
            f"note    Codex reads {path} only once the project folder is trusted (Codex asks on first start)"
        )
    return _trust_codex(project, path, home) if args.trust else _report_trust(project)


def _trust_codex(project: str, config: str, home: str) -> int:
    listed = codex_trust.list_hooks(project)
    if isinstance(listed, str):
        _say("FAIL", f"cannot record Codex hook trust: {listed}")
        return 1
    mine = [hook for hook in codex_trust.ours(listed) if hook.source_path == config]
    if not mine:
        _say(
            "FAIL",
            f"Codex does not load the hooks in {config} for {project} "
            "(is the project folder trusted? run `codex` there once)",
        )
        return 1
    why = codex_trust.record_trust(os.path.join(home, "config.toml"), [h for h in mine if not h.trusted])
    if why is not None:
        _say("FAIL", why)
        return 1
    return _report_trust(project)


def _report_trust(project: str) -> int:
    listed = codex_trust.list_hooks(project)
    if isinstance(listed, str):
        _say("warn", f"cannot check Codex hook trust: {listed}")
        return 0
    mine = codex_trust.ours(listed)
    untrusted = [hook for hook in mine if not hook.trusted]
    if untrusted:
        _say(
            "todo",
            f"{len(untrusted)} of {len(mine)} dsh-policy hooks are not trusted yet, and "
            f"`codex exec` silently skips untrusted hooks: {codex_trust.TRUST_HINT}, "
            f"{codex_trust.MANAGED_HINT}",
        )
        return 0
    _say("trusted", f"all {len(mine)} dsh-policy hooks are trusted by Codex")
    return 0
