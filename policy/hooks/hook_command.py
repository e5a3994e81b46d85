"""The ``dsh-policy hook`` command line, parsed alike by the in-process hook
(:mod:`dsh_policy.policy.hooks.in_process.adapter`) and by ``dsh-policy doctor``
(:mod:`.install.doctor`), which must read a configured hook command exactly as the hook will.

It lives in ``hooks`` rather than in the CLI so that doctor reads a hook command without importing
``dsh_policy.policy.cli``: the CLI imports this, never the reverse."""

from __future__ import annotations

from dsh_policy.policy.command_line import CommandParser, add_policy_options
from dsh_policy.policy.hooks.dialects import DIALECTS
from dsh_policy.policy.hooks.review.secret_reads import BASH_OUTPUT_MODES


def hook_parser() -> CommandParser:
    """The parser of ``dsh-policy hook HARNESS [options]`` (raises ``UsageError``, never exits)."""
    parser = CommandParser(
        prog="dsh-policy hook",
        description="Act as a Claude Code or Codex command hook: event JSON on stdin, "
        "the harness's decision protocol out (exit 0 or 2).",
    )
    parser.add_argument("harness", choices=list(DIALECTS), help="whose hook protocol to speak")
    add_policy_options(parser, positional_packs=False)
    parser.add_argument(
        "--project",
        metavar="DIR|auto",
        help="the project the event comes from: params.workspace is DIR, and DIR/.dsh/rules/*.yaml add "
        "rules (auto: $CLAUDE_PROJECT_DIR, else the folder holding .git or .dsh above the working "
        "directory); for one deployment that covers every project",
    )
    parser.add_argument("--audit", metavar="LOG", help="append every hook decision to this audit log")
    parser.add_argument(
        "--no-self-protection",
        action="store_true",
        help="let the agent change this gateway's files (an operator's choice; every audit record says so)",
    )
    parser.add_argument(
        "--announce-packs",
        action="store_true",
        help="on SessionStart, tell the model which packs govern the session",
    )
    parser.add_argument(
        "--redact-bash-output",
        choices=list(BASH_OUTPUT_MODES),
        default="when-secret",
        help="Claude Code: route Bash output through the redactor when the command names a file "
        "holding a secret (default), for every call, or never",
    )
    return parser
