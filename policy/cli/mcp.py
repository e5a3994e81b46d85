"""``dsh-policy mcp proxy|approve``: the MCP gateway in front of one MCP server.

``proxy [policy options] [--audit LOG] [--pins FILE] --name NAME -- COMMAND [ARGS...]`` starts the
server as a child and relays its stdio through the policy (see :mod:`dsh_policy.policy.mcp`); a
client configures this whole line as its MCP server command. ``proxy ... --name NAME --upstream URL
--listen 127.0.0.1:PORT`` serves Streamable HTTP on loopback in front of a server's URL instead.
``approve --name NAME --tool TOOL (--config FILE | --audit LOG | --pins FILE)`` trusts a
quarantined tool definition; ``--list`` shows what waits for approval.

Exit codes: proxy 0 when the client closed the connection, 1 when the server could not start,
2 usage; approve 0 approved (or listed), 1 nothing to approve, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from

_USAGE = "usage: dsh-policy mcp proxy|approve [OPTIONS]  ('dsh-policy mcp proxy --help' for more)"


def _proxy_parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy mcp proxy",
        usage="%(prog)s [--config FILE | --pack PACK... [--audit LOG]] --name NAME "
        "(-- COMMAND [ARGS...] | --upstream URL --listen 127.0.0.1:PORT)",
        description="Relay an MCP server (its stdio, or its Streamable HTTP URL) through the policy: hide "
        "denied tools, refuse denied calls, redact or block results, pin tool definitions, record every "
        "decision.",
    )
    add_policy_options(parser, positional_packs=False)
    parser.add_argument("--name", required=True, help="the server's name: its tools are mcp__NAME__TOOL")
    parser.add_argument("--audit", metavar="LOG", help="audit log (a failed write refuses the call)")
    parser.add_argument(
        "--pins", metavar="FILE", help="tool-definition pin file (default: LOG.mcp-pins.json)"
    )
    parser.add_argument(
        "--max-message-bytes", type=int, default=None, metavar="N", help="largest JSON-RPC message relayed"
    )
    parser.add_argument("--upstream", metavar="URL", help="the server's Streamable HTTP endpoint (HTTP mode)")
    parser.add_argument(
        "--listen", metavar="HOST:PORT", help="loopback address to serve clients on (HTTP mode)"
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser Origin allowed besides loopback ones (repeatable)",
    )
    return parser


def _approve_parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy mcp approve",
        description="Trust the pending (changed or flagged) definition of a quarantined MCP tool.",
    )
    parser.add_argument("--name", required=True, help="the server's name, as given to mcp proxy")
    parser.add_argument("--tool", help="the tool's name on the server (not the mcp__ name)")
    parser.add_argument("--digest", help="approve exactly this definition digest (default: the pending one)")
    parser.add_argument("--config", metavar="FILE", help="deployment file whose audit log the proxy uses")
    parser.add_argument("--audit", metavar="LOG", help="the proxy's audit log")
    parser.add_argument("--pins", metavar="FILE", help="the proxy's pin file")
    parser.add_argument("--list", action="store_true", help="list the tools waiting for approval")
    return parser


def main(argv: list[str]) -> int:
    """Entry point: ``mcp proxy ...`` or ``mcp approve ...``."""
    if not argv or argv[0] not in ("proxy", "approve"):
        print(_USAGE, file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else USAGE_EXIT
    return proxy_main(argv[1:]) if argv[0] == "proxy" else approve_main(argv[1:])


def proxy_main(argv: list[str]) -> int:
    """``mcp proxy``: relay until the client leaves."""
    split = argv.index("--") if "--" in argv else len(argv)
    options, command = argv[:split], argv[split + 1 :]
    args = parse_command(_proxy_parser(), options)
    if isinstance(args, int):
        return args
    from dsh_policy.policy.mcp.proxy import open_gate, server_name_problem
    from dsh_policy.policy.mcp.stdio import DEFAULT_MAX_MESSAGE_BYTES, StdioProxy

    problem = server_name_problem(args.name)
    http_mode = args.upstream is not None or args.listen is not None
    if problem is None and http_mode and command:
        problem = "give either a command after -- (stdio) or --upstream and --listen (HTTP), not both"
    elif problem is None and http_mode and (args.upstream is None or args.listen is None):
        problem = "HTTP mode needs both --upstream URL and --listen 127.0.0.1:PORT"
    elif problem is None and not http_mode and not command:
        problem = "give the server's command after --: ... --name NAME -- COMMAND [ARGS...]"
    if problem is not None:
        print(f"dsh-policy mcp proxy: {problem}", file=sys.stderr)
        return USAGE_EXIT
    if http_mode:
        return _serve_http(args)
    setup = open_gate(args.name, sources_from(args), audit=args.audit, pins=args.pins)
    if setup.gate.unavailable is not None:
        print(f"dsh-policy mcp proxy: refusing every call: {setup.gate.unavailable}", file=sys.stderr)
    try:
        limit = args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES
        return StdioProxy(setup.gate, command, max_message_bytes=limit).run()
    finally:
        setup.close()


def _serve_http(args: argparse.Namespace) -> int:
    """``mcp proxy --upstream URL --listen ADDR``: serve until interrupted (or SIGTERM)."""
    import signal

    from dsh_policy.policy.mcp.proxy import open_gate
    from dsh_policy.policy.mcp.stdio import DEFAULT_MAX_MESSAGE_BYTES
    from dsh_policy.policy.mcp.streamable_http import HttpProxy, listen_address, upstream_problem

    address = listen_address(args.listen)
    problem = upstream_problem(args.upstream) if not isinstance(address, str) else address
    if problem is not None or isinstance(address, str):
        print(f"dsh-policy mcp proxy: {problem}", file=sys.stderr)
        return USAGE_EXIT
    setup = open_gate(args.name, sources_from(args), audit=args.audit, pins=args.pins)
    if setup.gate.unavailable is not None:
        print(f"dsh-policy mcp proxy: refusing every call: {setup.gate.unavailable}", file=sys.stderr)
    try:
        try:
            proxy = HttpProxy(
                setup.gate,
                args.upstream,
                address,
                allowed_origins=args.allow_origin,
                max_message_bytes=args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES,
            )
        except OSError as error:
            print(f"dsh-policy mcp proxy: cannot listen on {args.listen}: {error}", file=sys.stderr)
            return 1
        host, port = proxy.address
        print(
            f"dsh-policy mcp proxy: serving http://{host}:{port}/ -> {args.upstream}",
            file=sys.stderr,
            flush=True,
        )

        def stop(number: int, _frame: object) -> None:
            raise SystemExit(128 + number)

        signal.signal(signal.SIGTERM, stop)
        try:
            proxy.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            proxy.server.server_close()
        return 0
    finally:
        setup.close()


def approve_main(argv: list[str]) -> int:
    """``mcp approve``: move a pending digest into the pin (recorded in the audit log)."""
    args = parse_command(_approve_parser(), argv)
    if isinstance(args, int):
        return args
    from dsh_policy.policy.config import policy_sources
    from dsh_policy.policy.mcp.pins import approve, pending_tools
    from dsh_policy.policy.mcp.proxy import audit_target, pins_path, record_approval
    from dsh_policy.policy.runtime.audit_plan import AuditPlan

    plan = AuditPlan(args.audit, fail_closed=True) if args.audit is not None else None
    if args.config is not None:
        sources = policy_sources([], config=args.config)
        if isinstance(sources, list):
            print(f"dsh-policy mcp approve: {sources[0]}", file=sys.stderr)
            return USAGE_EXIT
        plan = audit_target(args.audit, sources)
    path = pins_path(args.pins, plan)
    if path is None:
        print("dsh-policy mcp approve: name the proxy's --config, --audit or --pins", file=sys.stderr)
        return USAGE_EXIT
    if args.list or args.tool is None:
        print(json.dumps(pending_tools(Path(path), args.name), indent=2, sort_keys=True))
        return 0
    approved = approve(Path(path), args.name, args.tool, args.digest)
    if isinstance(approved, str):
        print(f"dsh-policy mcp approve: {approved}", file=sys.stderr)
        return 1
    old, new = approved
    if plan is not None:
        record_approval(plan, args.name, args.tool, old, new)
    print(f"approved mcp__{args.name}__{args.tool}: {new} (was {old or 'unpinned'})")
    return 0
