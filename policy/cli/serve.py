"""``dsh-policy serve [policy options] [--http [HOST:]PORT] [--idle-exit S] [--status | --stop]``.

Runs the resident gateway of one deployment in the foreground (for a terminal, or a systemd or
launchd unit): hook commands given the same policy options find it through the per-user runtime
folder and answer in milliseconds instead of compiling the packs on every event. A hook starts
one itself when none is running, so running ``serve`` by hand is optional.

``--status`` prints the running gateway's health (policy digest, uptime, decisions served) as
JSON and exits 0, or exits 1 when none answers; ``--stop`` asks it to leave cleanly.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from
from dsh_policy.policy.hooks.gateway.client import query_gateway
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec, RuntimeDirError, spec_from


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy serve",
        description="Run the resident gateway of one deployment in the foreground.",
    )
    add_policy_options(parser, positional_packs=False)
    parser.add_argument("--audit", metavar="LOG", help="audit log (as for dsh-policy hook)")
    parser.add_argument(
        "--no-self-protection",
        action="store_true",
        help="let the agent change this gateway's files (as for dsh-policy hook)",
    )
    parser.add_argument(
        "--http", metavar="[HOST:]PORT", help="also answer Claude Code http hooks on loopback (port 0: any)"
    )
    parser.add_argument(
        "--token-file", metavar="FILE", help="HTTP bearer token file (default: runtime folder)"
    )
    parser.add_argument(
        "--idle-exit", type=float, metavar="SECONDS", help="leave after this long without requests"
    )
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help="hardened mode: listen at PATH (NAME.sock, in a folder of this user that no other may "
        "write) and answer other users' hooks, decisions only (docs/hardened.md)",
    )
    parser.add_argument(
        "--approvals-console",
        metavar="[HOST:]PORT",
        help="also serve the approvals web console on loopback (needs --as and --key; docs/approvals.md)",
    )
    parser.add_argument("--as", dest="approver", metavar="NAME", help="the console's approver")
    parser.add_argument("--key", metavar="FILE", help="the console approver's private key")
    parser.add_argument(
        "--totp-secret", metavar="FILE", help="base32 TOTP secret: a console login also needs a code"
    )
    from dsh_policy.policy.fleet.serving import add_fleet_options

    add_fleet_options(parser)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--status", action="store_true", help="print the running gateway's status and exit")
    action.add_argument("--stop", action="store_true", help="ask the running gateway to stop")
    return parser


def _http_address(value: str) -> tuple[str, int] | str:
    host, _, port = value.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        return f"--http {value!r}: the port must be a number"
    if not 0 <= number <= 65535:
        return f"--http {value!r}: no such port"
    return (host.strip("[]") or "127.0.0.1"), number


def main(argv: list[str]) -> int:
    """Entry point; 0 after a clean stop, 1 when the gateway cannot start, 3 when the
    deployment is already served."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    if not args.fleet or args.status or args.stop:
        return _serve(args)
    from dsh_policy.policy.fleet.serving import start_fleet

    agent = start_fleet(args)  # points args.config at the last good bundle on disk
    if isinstance(agent, int):
        return agent
    try:
        return _serve(args)
    finally:
        agent.stop()


def _serve(args: argparse.Namespace) -> int:
    spec = spec_from(args)
    if args.status or args.stop:
        return _query(spec, "stop" if args.stop else "status", args.socket)
    http = _http_address(args.http) if args.http is not None else None
    if args.socket is not None and http is not None:
        http = (
            "--http goes without --socket: another local user who takes the port first would get the events"
        )
    if isinstance(http, str):
        print(f"dsh-policy serve: {http}", file=sys.stderr)
        return USAGE_EXIT
    sources = sources_from(args, unprotected=bool(args.no_self_protection))
    if isinstance(sources, list):
        print_errors(sources)
        return 1
    from dsh_policy.policy.hooks.gateway.server import ServeSettings, serve

    console = _start_console(args, sources) if args.approvals_console is not None else None
    if isinstance(console, str):
        print(f"dsh-policy serve: {console}", file=sys.stderr)
        return USAGE_EXIT

    settings = ServeSettings(
        idle_exit=args.idle_exit,
        http_host=http[0] if http else None,
        http_port=http[1] if http else None,
        token_file=args.token_file,
        socket=args.socket,
    )
    try:
        return serve(spec, sources, args.audit, settings)
    except RuntimeDirError as error:
        print(f"dsh-policy serve: {error}", file=sys.stderr)
        return 1
    finally:
        if console is not None:
            console.shutdown()
            console.server_close()


def _start_console(args: Any, sources: Any) -> Any:
    """The approvals console on its own thread beside the gateway, or why it cannot start."""
    from dsh_policy.audit.keys import KeyFileError, load_private_key
    from dsh_policy.policy.approvals import ApprovalChannel
    from dsh_policy.policy.approvals.console.server import start_console
    from dsh_policy.policy.approvals.console.sessions import Sessions
    from dsh_policy.policy.approvals.console.totp import totp_option

    approvals = sources.config.approvals if sources.config is not None else None
    if approvals is None:
        return "--approvals-console needs a deployment file (--config) with approvals:"
    if args.approver is None or args.key is None:
        return "--approvals-console needs --as NAME and --key FILE (the approver who signs)"
    address = _http_address(args.approvals_console)
    if isinstance(address, str):
        return address.replace("--http", "--approvals-console")
    try:
        key = load_private_key(args.key)
    except KeyFileError as error:
        return str(error)
    queue = ApprovalChannel(approvals).queue()
    if isinstance(queue, str):
        return queue
    totp = totp_option(args.totp_secret)
    if isinstance(totp, str):
        return totp
    sessions = Sessions(totp=totp)
    started = start_console(queue, args.approver, key, address[0], address[1], sessions=sessions)
    if isinstance(started, str):
        return started
    server, console, _ = started
    link = f"{console.origin}/login?token={console.sessions.login_secret}"
    print(f"approvals console for {args.approver}: {link}", flush=True)
    return server


def _query(spec: DeploymentSpec, op: str, socket: str | None) -> int:
    if socket is not None:
        from dsh_policy.policy.hooks.gateway import system_gateway

        answer = system_gateway.query(socket, op)
    else:
        answer = query_gateway(spec, op)
    if isinstance(answer, str):
        print(f"dsh-policy serve: {answer}", file=sys.stderr)
        return 1
    print(json.dumps(answer, indent=2, sort_keys=True))
    return 0
