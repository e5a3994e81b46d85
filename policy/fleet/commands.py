"""``dsh-policy bundle build|sign|publish`` and ``dsh-policy fleet status|export``.

The publisher's side: build a bundle from packs (and a deployment file's packs and params), sign
it with the publisher key (``dsh-policy keygen --out publisher`` makes one; it is not the audit
key), publish it to the bundles bucket. ``publish`` refuses a revision not above the one on the
bus, as every gateway would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from dsh_policy.audit.keys import KeyFileError, load_private_key
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from
from dsh_policy.policy.fleet.bundle import Bundle, Refusal, new_bundle, pack_files, parse_bundle
from dsh_policy.policy.loading import LoadFailure

USAGE = 2


def _fail(command: str, message: str, code: int = 1) -> int:
    print(f"dsh-policy {command}: {message}", file=sys.stderr)
    return code


def _parse(parser: CommandParser, argv: Sequence[str]) -> argparse.Namespace | int:
    from dsh_policy.audit.arguments import UsageError

    try:
        return parser.parse_args(list(argv))
    except UsageError as error:
        print(error, file=sys.stderr)
        return USAGE
    except SystemExit as exit_request:
        return exit_request.code if isinstance(exit_request.code, int) else 0
    except Exception as error:  # the policy parser's UsageError
        print(error, file=sys.stderr)
        return USAGE


def build_main(argv: Sequence[str]) -> int:
    parser = CommandParser(prog="dsh-policy bundle build", description="Build a policy bundle (unsigned).")
    add_policy_options(parser, positional_packs=False)
    parser.add_argument(
        "--revision", type=int, required=True, metavar="N", help="greater than every earlier one"
    )
    parser.add_argument("--refuse-weakening", action="store_true", help="gateways refuse a weakening reload")
    parser.add_argument("--out", required=True, metavar="BUNDLE")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    if args.revision < 1:
        return _fail("bundle build", "--revision must be >= 1", USAGE)
    sources = sources_from(args, unprotected=True)
    if isinstance(sources, list):
        for error in sources:
            print(error.display(), file=sys.stderr)
        return 1
    built = sources.build(protect=False)
    if isinstance(built, LoadFailure):
        for error in built.errors:
            print(error.display(), file=sys.stderr)
        return 1
    packs = pack_files(list(sources.packs))
    if isinstance(packs, str):
        return _fail("bundle build", packs)
    refuse = bool(args.refuse_weakening) or bool(
        sources.config is not None and sources.config.reload.refuse_weakening
    )
    bundle = new_bundle(
        packs,
        revision=args.revision,
        params=dict(sources.params),
        engine=sources.engine,
        refuse_weakening=refuse,
        policy_digest=built.digest,
    )
    Path(args.out).write_bytes(bundle.to_bytes())
    print(f"bundle {args.out}: revision {bundle.revision}, {len(packs)} pack(s), policy {built.digest}")
    return 0


def _read(path: str) -> Bundle | str:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return f"{path}: {error.strerror or error}"
    parsed = parse_bundle(data)
    return f"{path}: {parsed.message}" if isinstance(parsed, Refusal) else parsed


def sign_main(argv: Sequence[str]) -> int:
    parser = CommandParser(prog="dsh-policy bundle sign", description="Sign a bundle with the publisher key.")
    parser.add_argument("bundle", metavar="BUNDLE")
    parser.add_argument("--key", required=True, metavar="PUBLISHER_KEY", help="Ed25519 private key (PEM)")
    parser.add_argument("--out", metavar="FILE", help="write here (default: over BUNDLE)")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    bundle = _read(args.bundle)
    if isinstance(bundle, str):
        return _fail("bundle sign", bundle)
    try:
        key = load_private_key(args.key)
    except KeyFileError as error:
        return _fail("bundle sign", str(error), USAGE)
    signed = bundle.signed(key)
    Path(args.out or args.bundle).write_bytes(signed.to_bytes())
    assert signed.signature is not None
    print(f"signed revision {signed.revision} with {signed.signature['key_id']}")
    return 0


async def _publish(url: str, bundle: Bundle) -> str | None:
    from dsh_policy.policy.fleet.bus import BUNDLE_KEY, bundles_bucket, connect

    connection = await connect(url, max_reconnect_attempts=3)
    try:
        bucket = await bundles_bucket(connection.jetstream())
        try:
            entry = await bucket.get(BUNDLE_KEY)
            current = parse_bundle(entry.value or b"")
        except Exception:
            current = None
        if isinstance(current, Bundle) and current.revision >= bundle.revision:
            return f"revision {bundle.revision} is not above revision {current.revision} on the bus"
        await bucket.put(BUNDLE_KEY, bundle.to_bytes())
        return None
    finally:
        await connection.close()


def publish_main(argv: Sequence[str]) -> int:
    parser = CommandParser(
        prog="dsh-policy bundle publish", description="Publish a signed bundle to the fleet."
    )
    parser.add_argument("bundle", metavar="BUNDLE")
    parser.add_argument("--fleet", required=True, metavar="URL")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    bundle = _read(args.bundle)
    if isinstance(bundle, str):
        return _fail("bundle publish", bundle)
    if bundle.signature is None:
        return _fail("bundle publish", f"{args.bundle}: unsigned (dsh-policy bundle sign first)")
    try:
        refused = asyncio.run(_publish(args.fleet, bundle))
    except (TimeoutError, OSError) as error:
        return _fail("bundle publish", f"cannot reach {args.fleet}: {error}", USAGE)
    if refused is not None:
        return _fail("bundle publish", refused)
    print(f"published revision {bundle.revision} to {args.fleet}")
    return 0


def export_main(argv: Sequence[str]) -> int:
    from dsh_policy.policy.fleet.collect import pull_evidence, write_archive

    parser = CommandParser(
        prog="dsh-policy fleet export", description="Copy the evidence stream to an archive folder."
    )
    parser.add_argument("--fleet", required=True, metavar="URL")
    parser.add_argument("--out", required=True, metavar="DIR")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    try:
        shipped = asyncio.run(pull_evidence(args.fleet))
    except (TimeoutError, OSError) as error:
        return _fail("fleet export", f"cannot reach {args.fleet}: {error}", USAGE)
    lines = write_archive(Path(args.out), shipped)
    print(json.dumps({"logs": len(shipped), "lines": lines, "out": args.out}))
    return 0


_BUNDLE = {"build": build_main, "sign": sign_main, "publish": publish_main}


def bundle_main(argv: Sequence[str]) -> int:
    """``dsh-policy bundle build|sign|publish ...``."""
    if not argv or argv[0] not in _BUNDLE:
        return _fail("bundle", "usage: dsh-policy bundle build|sign|publish ... (--help on each)", USAGE)
    return _BUNDLE[argv[0]](argv[1:])


def fleet_main(argv: Sequence[str]) -> int:
    """``dsh-policy fleet status|export ...``."""
    from dsh_policy.policy.fleet.status import status_main

    commands = {"status": status_main, "export": export_main}
    if not argv or argv[0] not in commands:
        return _fail("fleet", "usage: dsh-policy fleet status|export --fleet URL ...", USAGE)
    return commands[argv[0]](argv[1:])
