"""``dsh-policy serve --fleet URL --publisher-key PUB ...``: the resident gateway, fed by the fleet.

Before serving, the newest bundle is fetched once (a few seconds at most); with the bus down the
last good bundle on disk is used, and with neither the gateway does not start. The gateway is then
served from ``STATE/deployment.yaml`` exactly as ``serve --config`` would serve it, while a
:class:`~.agent.FleetAgent` follows new bundles, ships the audit log and reports status.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from dsh_policy.audit.keys import KeyFileError, key_id, load_public_key
from dsh_policy.policy.fleet.agent import AgentSettings, FleetAgent
from dsh_policy.policy.fleet.materialize import DEPLOYMENT

DEFAULT_STATE = "~/.local/state/dsh-policy/fleet"


def add_fleet_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("fleet (docs/fleet.md)")
    group.add_argument("--fleet", metavar="URL", help="follow signed bundles from this NATS JetStream server")
    group.add_argument(
        "--publisher-key",
        action="append",
        default=[],
        metavar="PUB",
        help="an accepted publisher key (repeatable)",
    )
    group.add_argument(
        "--fleet-state", metavar="DIR", default=DEFAULT_STATE, help="last good bundle (%(default)s)"
    )
    group.add_argument(
        "--fleet-name", metavar="NAME", default="default", help="this gateway's name in status"
    )


def start_fleet(args: argparse.Namespace) -> FleetAgent | int:
    """Fetch or find a bundle, point ``args.config`` at it, start the agent; or an exit code."""
    if args.config or args.packs:
        print(
            "dsh-policy serve: --fleet takes its packs from the fleet (no --config or --pack)",
            file=sys.stderr,
        )
        return 2
    try:
        keys = [load_public_key(path) for path in args.publisher_key]
    except KeyFileError as error:
        print(f"dsh-policy serve: {error}", file=sys.stderr)
        return 2
    if not keys:
        print("dsh-policy serve: --fleet needs at least one --publisher-key", file=sys.stderr)
        return 2
    state = Path(os.path.expanduser(args.fleet_state))
    agent = FleetAgent(
        AgentSettings(
            url=args.fleet,
            state=state,
            publishers={key_id(key): key for key in keys},
            audit_log=args.audit,
            gateway=args.fleet_name,
        )
    )
    reached = asyncio.run(agent.sync_once())
    if agent.active is None:
        why = "no accepted bundle on the bus" if reached else f"cannot reach {args.fleet}"
        print(f"dsh-policy serve: {why}, and no earlier bundle in {state}", file=sys.stderr)
        return 1
    args.config = str(state / DEPLOYMENT)

    def in_force() -> dict[str, object] | None:
        from dsh_policy.policy.hooks.gateway.client import query_gateway
        from dsh_policy.policy.hooks.gateway.runtime_paths import spec_from

        answer = query_gateway(spec_from(args), "status")
        return answer if isinstance(answer, dict) else None

    agent.in_force = in_force
    agent.start()
    return agent
