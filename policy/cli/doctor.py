"""``dsh-policy doctor claude-code|codex [--project DIR]``: check a hook installation end to end.

Prints one line per finding (``OK``, ``WARN``, ``FAIL``) and exits 1 when anything failed. See
:mod:`dsh_policy.policy.hooks.install.doctor` for what is checked and why; the probes go through the
configured hook command itself, so they also start the resident gateway when it is not running.
"""

from __future__ import annotations

import os
import sys

from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command
from dsh_policy.policy.command_line import CommandParser
from dsh_policy.policy.hooks.codex import managed as codex_managed
from dsh_policy.policy.hooks.codex import trust as codex_trust
from dsh_policy.policy.hooks.install import doctor, doctor_clients, doctor_codex, doctor_http, doctor_mcp


def _parser() -> CommandParser:
    parser = CommandParser(prog="dsh-policy doctor", description="Check a hook installation end to end.")
    parser.add_argument(
        "harness", nargs="?", choices=["claude-code", "codex", *doctor_clients.PROBE_SPELLING]
    )
    parser.add_argument("--project", default=".", metavar="DIR", help="the project folder (default: .)")
    parser.add_argument(
        "--hardened",
        action="store_true",
        help="check the hardened mode on this machine (init --system): owners, modes, the key, the log, "
        "who runs the gateway (docs/hardened.md)",
    )
    parser.add_argument(
        "--agent-user", metavar="NAME", help="with --hardened: the user the agent runs as, checked by name"
    )
    return parser


def findings(harness: str, project: str) -> list[doctor.Finding]:
    """Every check, in order (later checks are skipped when there is nothing to check)."""
    if harness in doctor_clients.PROBE_SPELLING:
        return doctor_clients.findings(harness, project)
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if harness == "claude-code":
        files = doctor.claude_code_settings_files(project, home)
    else:
        files = doctor_codex.codex_config_files(project, codex_trust.codex_home())
    hooks, out = doctor.installed_hooks(harness, files)
    out += list(doctor.check_settings(harness, hooks))
    for hook in hooks:
        if hook.url is not None:
            out += list(doctor_http.check_settings(hook))
    if harness == "codex" and hooks:
        out += list(doctor_codex.check_codex_trust(project, hooks))
        requirements = codex_managed.requirements_path()
        if any(hook.source == requirements for hook in hooks):
            out += list(doctor_codex.check_requirements_file(requirements))
    pre_command = next((h for h in hooks if h.event == "PreToolUse" and h.url is None), None)
    if pre_command is not None:
        out += _command_hook_checks(pre_command, harness, project)
    pre_http = next((h for h in hooks if h.event == "PreToolUse" and h.url is not None), None)
    if pre_http is not None:
        out += _http_hook_checks(pre_http, project)
    servers = (
        doctor_mcp.claude_code_servers(project)
        if harness == "claude-code"
        else doctor_mcp.codex_servers(files)
    )
    out += list(doctor_mcp.check_servers(servers, project))
    return out


def _command_hook_checks(pre: doctor.InstalledHook, harness: str, project: str) -> list[doctor.Finding]:
    """Deployment, probes through the command, and the gateway it starts."""
    argv = doctor.hook_argv(pre.command, project)
    if argv is None:
        return [doctor.Finding("fail", "settings", f"cannot read the PreToolUse command: {pre.command}")]
    out, spec, digest = doctor.check_deployment(argv, project)
    out += list(doctor.check_probes(pre.command, harness, project))
    if spec is not None:
        out += list(doctor.check_gateway(spec, digest))
    return out


def _http_hook_checks(pre: doctor.InstalledHook, project: str) -> list[doctor.Finding]:
    """Probes over http (Claude Code cannot start a gateway, so one must be serving) and its status;
    nothing is sent to a URL off this machine."""
    if not doctor_http.is_loopback_url(pre.url or ""):
        return []
    out = list(doctor_http.check_probes(pre, project))
    status = doctor_http.gateway_status(pre)
    if isinstance(status, str):
        out.append(
            doctor.Finding(
                "fail",
                "http gateway",
                f"{doctor_http.status_url(pre.url or '')}: {status} (run `dsh-policy serve --http ...`)",
            )
        )
    else:
        out.append(doctor.describe_status("http gateway", status))
    return out


def main(argv: list[str]) -> int:
    """Entry point; 0 when every check passed (warnings allowed), 1 otherwise."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    if args.hardened:
        from dsh_policy.policy.hooks.install import doctor_hardened

        results = doctor_hardened.findings(args.agent_user)
    elif args.harness is None:
        print("dsh-policy doctor: name a client (claude-code, codex, ...) or --hardened", file=sys.stderr)
        return USAGE_EXIT
    else:
        results = findings(args.harness, os.path.realpath(args.project))
    for finding in results:
        print(finding)
    failed = sum(finding.level == "fail" for finding in results)
    print(f"{failed} problem{'s' if failed != 1 else ''}" if failed else "no problems")
    return 1 if failed else 0
