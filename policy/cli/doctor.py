"""``dsh-policy doctor claude-code|codex [--project DIR]``: check a hook installation end to end.

Prints one line per finding (``OK``, ``WARN``, ``FAIL``) and exits 1 when anything failed. See
:mod:`dsh_policy.policy.hooks.doctor` for what is checked and why; the probes go through the
configured hook command itself, so they also start the resident gateway when it is not running.
"""

from __future__ import annotations

import os
import sys

from dsh_policy.policy.cli.options import USAGE_EXIT, CommandParser, UsageError
from dsh_policy.policy.hooks import codex_trust, doctor


def _parser() -> CommandParser:
    parser = CommandParser(prog="dsh-policy doctor", description="Check a hook installation end to end.")
    parser.add_argument("harness", choices=["claude-code", "codex"])
    parser.add_argument("--project", default=".", metavar="DIR", help="the project folder (default: .)")
    return parser


def findings(harness: str, project: str) -> list[doctor.Finding]:
    """Every check, in order (later checks are skipped when there is nothing to check)."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if harness == "claude-code":
        files = doctor.claude_code_settings_files(project, home)
    else:
        files = doctor.codex_config_files(project, codex_trust.codex_home())
    hooks, out = doctor.installed_hooks(harness, files)
    out += list(doctor.check_settings(harness, hooks))
    if harness == "codex" and hooks:
        out += list(doctor.check_codex_trust(project, hooks))
    pre = next((hook for hook in hooks if hook.event == "PreToolUse"), None)
    if pre is None:
        return out
    argv = doctor.hook_argv(pre.command, project)
    if argv is None:
        return [
            *out,
            doctor.Finding("fail", "settings", f"cannot read the PreToolUse command: {pre.command}"),
        ]
    checked, spec, digest = doctor.check_deployment(argv, project)
    out += checked
    out += list(doctor.check_probes(pre.command, harness, project))
    if spec is not None:
        out += list(doctor.check_gateway(spec, digest))
    return out


def main(argv: list[str]) -> int:
    """Entry point; 0 when every check passed (warnings allowed), 1 otherwise."""
    try:
        args = _parser().parse_args(argv)
    except UsageError as error:
        print(error, file=sys.stderr)
        return USAGE_EXIT
    project = os.path.realpath(args.project)
    results = findings(args.harness, project)
    for finding in results:
        print(finding)
    failed = sum(finding.level == "fail" for finding in results)
    print(f"{failed} problem{'s' if failed != 1 else ''}" if failed else "no problems")
    return 1 if failed else 0
