"""``dsh-policy approvals list|show|approve|deny|grant|revoke|console``: the approvers' side of the
queue (docs/approvals.md).

The queue is found through the deployment file (``--config``, its ``approvals:``) or named
directly (``--queue DIR --approvers FILE``). Deciding needs the approver's own private key
(``--as NAME --key FILE``): the decision is signed with it, and the gateway counts it only if the
approvers file lists that key for the rules that asked.
"""

from __future__ import annotations

import getpass
import sys
import time
from typing import Any

from dsh_policy.audit.keys import KeyFileError, load_private_key
from dsh_policy.policy.approvals import ApprovalChannel, ApprovalQueue, ApprovalStoreError, QueueError
from dsh_policy.policy.approvals.views import (
    grant_view,
    parse_duration,
    queue_view,
    request_view,
    scope_text,
)
from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors, print_json
from dsh_policy.policy.command_line import CommandParser
from dsh_policy.policy.config import ApprovalSettings, load_gateway_config


def _parser() -> CommandParser:
    parser = CommandParser(prog="dsh-policy approvals", description="Answer the deployment's approval queue.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, *, signs: bool = False) -> Any:
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.add_argument("--config", metavar="FILE", help="deployment file whose approvals: names the queue")
        sub.add_argument("--queue", metavar="DIR", help="the queue folder (instead of --config)")
        sub.add_argument("--approvers", metavar="FILE", help="the approvers file (instead of --config)")
        sub.add_argument("--format", choices=("text", "json"), default="text")
        if signs:
            sub.add_argument(
                "--as", dest="approver", required=True, metavar="NAME", help="your approver name"
            )
            sub.add_argument(
                "--key", required=True, metavar="FILE", help="your private key (keygen --approver)"
            )
        return sub

    listing = command("list", "pending requests and grants in force")
    listing.add_argument("--all", action="store_true", help="also answered, used, expired and revoked ones")
    command("show", "one request or grant in full").add_argument("id", metavar="ID")
    for verdict in ("approve", "deny"):
        sub = command(verdict, f"{verdict} a pending request (signed with your key)", signs=True)
        sub.add_argument("id", metavar="REQUEST")
        sub.add_argument("--reason", default="", help="why (shown to the agent on a denial)")
        if verdict == "approve":
            sub.add_argument(
                "--for", dest="valid", default="15m", metavar="DURATION", help="usable for (15m)"
            )
    grant = command("grant", "allow asked calls in a scope for a while (signed with your key)", signs=True)
    grant.add_argument(
        "--rule", dest="rules", action="append", required=True, metavar="RULE", help="rule id or pattern"
    )
    grant.add_argument("--for", dest="valid", required=True, metavar="DURATION", help="30m, 2h, 1d, seconds")
    grant.add_argument("--session", help="only this session")
    grant.add_argument("--agent", help="only this agent")
    grant.add_argument("--tool", help="only this canonical tool (shell, web_fetch, ...)")
    grant.add_argument("--match", metavar="RE2", help="the whole command, path or URL must match")
    grant.add_argument("--reason", default="")
    revoke = command("revoke", "end a grant now")
    revoke.add_argument("id", metavar="GRANT")
    revoke.add_argument("--by", default=None, help="who revokes (default: your user name)")
    revoke.add_argument("--reason", default="")
    console = command("console", "serve the web console on loopback (signs with your key)", signs=True)
    console.add_argument("--listen", default="127.0.0.1:0", metavar="HOST:PORT", help="loopback address")
    console.add_argument(
        "--totp-secret", metavar="FILE", help="base32 TOTP secret: a login also needs a code (RFC 6238)"
    )
    return parser


def _settings(args: Any) -> ApprovalSettings | str:
    if args.queue is not None:
        return ApprovalSettings(folder=args.queue, approvers=args.approvers)
    if args.config is None:
        return "name the queue: --config DEPLOYMENT (with approvals:) or --queue DIR --approvers FILE"
    loaded = load_gateway_config(args.config)
    if isinstance(loaded, list):
        print_errors(loaded)
        return f"{args.config}: cannot be read"
    if loaded.approvals is None:
        return f"{args.config}: has no approvals: section"
    if args.approvers is not None:
        return ApprovalSettings(folder=loaded.approvals.folder, approvers=args.approvers)
    return loaded.approvals


def main(argv: list[str]) -> int:
    """Entry point: 0 done, 1 refused (not pending, not allowed, unknown id), 2 usage or unusable files."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    settings = _settings(args)
    if isinstance(settings, str):
        print(f"dsh-policy approvals: {settings}", file=sys.stderr)
        return USAGE_EXIT
    queue = ApprovalChannel(settings).queue()
    if isinstance(queue, str):
        print(f"dsh-policy approvals: {queue}", file=sys.stderr)
        return USAGE_EXIT
    try:
        return _run(args, queue)
    except ApprovalStoreError as error:
        print(f"dsh-policy approvals: {error}", file=sys.stderr)
        return USAGE_EXIT


def _key(args: Any) -> Any:
    try:
        return load_private_key(args.key)
    except KeyFileError as error:
        return f"{error}"


def _run(args: Any, queue: ApprovalQueue) -> int:
    now = int(time.time())
    if args.command == "list":
        view = queue_view(queue, now, history=args.all)
        print_json(view) if args.format == "json" else _print_list(view)
        return 0
    if args.command == "show":
        document = queue.snapshot()
        if args.id in document["requests"]:
            shown = request_view(queue, document["requests"][args.id], now)
        elif args.id in document["grants"]:
            shown = grant_view(queue, document["grants"][args.id], now)
        else:
            print(f"dsh-policy approvals: no request or grant {args.id!r}", file=sys.stderr)
            return 1
        print_json(shown) if args.format == "json" else _print_fields(shown)
        return 0
    if args.command == "revoke":
        return _report(args, queue.revoke(args.id, args.by or getpass.getuser(), args.reason), queue, now)
    key = _key(args)
    if isinstance(key, str):
        print(f"dsh-policy approvals: {key}", file=sys.stderr)
        return USAGE_EXIT
    if args.command == "console":
        from dsh_policy.policy.approvals.console.server import run_console
        from dsh_policy.policy.approvals.console.totp import totp_option

        totp = totp_option(args.totp_secret)
        if isinstance(totp, str):
            print(f"dsh-policy approvals console: {totp}", file=sys.stderr)
            return USAGE_EXIT
        return run_console(queue, args.approver, key, args.listen, totp=totp)
    valid = parse_duration(getattr(args, "valid", "15m") or "15m")
    if valid is None:
        print(f"dsh-policy approvals: --for {args.valid!r}: a duration (90s, 30m, 2h, 1d)", file=sys.stderr)
        return USAGE_EXIT
    if args.command in ("approve", "deny"):
        outcome = queue.decide(
            args.id, args.approver, key, args.command, valid_seconds=valid, reason=args.reason
        )
        return _report(args, outcome, queue, now)
    outcome = queue.grant(
        args.approver,
        key,
        rules=tuple(args.rules),
        seconds=valid,
        session=args.session,
        agent=args.agent,
        tool=args.tool,
        match=args.match,
        reason=args.reason,
    )
    return _report(args, outcome, queue, now)


def _report(args: Any, outcome: dict[str, Any] | QueueError, queue: ApprovalQueue, now: int) -> int:
    if isinstance(outcome, QueueError):
        print(f"dsh-policy approvals: {outcome}", file=sys.stderr)
        return 1
    view = grant_view(queue, outcome, now) if "grant" in outcome else request_view(queue, outcome, now)
    if args.format == "json":
        print_json(view)
    elif "grant" in outcome:
        print(
            f"{view['id']} {view['status']}: {scope_text(view)} until {view['until']} (by {view['approver']})"
        )
    else:
        print(f"{view['id']} {view['status']}: {view['tool']} {view['call']!r} ({', '.join(view['rules'])})")
    return 0


def _print_list(view: dict[str, Any]) -> None:
    requests, grants = view["requests"], view["grants"]
    print(f"{len(requests)} request(s), {len(grants)} grant(s) in {view['queue']}")
    for request in requests:
        print(f"  {request['id']}  {request['status']:<8} {request['tool']} {request['call']!r}")
        print(
            f"      rules {', '.join(request['rules'])}; session {request['session']}; {request['message']}"
        )
    for grant in grants:
        print(f"  {grant['id']}  {grant['status']:<8} {scope_text(grant)} until {grant['until']}")
        print(f"      by {grant['approver']}; used {grant['uses']} time(s)")


def _print_fields(view: dict[str, Any]) -> None:
    for name, value in view.items():
        if name == "decisions":
            for decision in value:
                counts = "counts" if decision["counts"] else f"does not count: {decision['problem']}"
                who = f"{decision['verdict']} by {decision['approver']} at {decision['issued']}"
                print(f"  decision     {who} ({counts})")
        elif value not in (None, [], ""):
            print(f"  {name:<12} {value}")
