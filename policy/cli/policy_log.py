"""``dsh-policy policy-log LOG [--key PUB] [--live] [--format text|json] [--strict]``: every policy change in
an audit log, weakening marked, after verifying the log.

An auditor's question is "was enforcement ever weakened, and when?". The log answers it: every
policy put in force has a ``policy_loaded`` record with its summary, a refused weakening edit a
``policy_reload_refused`` record, a broken edit a ``policy_reload_failed`` record, and every other
record carries the digest of the policy it was decided under. This command verifies the chain
first (``verify``'s checks: an edited log is reported, not listed), then recomputes each change
from consecutive summaries (``policy_changes.diff_summaries``) rather than trusting the
``changes`` a writer put in the record, and flags a digest that changes with no ``policy_loaded``
record before it.

It lives in the policy package because judging "weaker" needs the policy's vocabulary; the audit
package, which must verify without the policy engine, keeps only the chain checks it reuses here.
Exit: 0 listed (1 with ``--strict`` when enforcement was weakened), 1 the log failed
verification, 2 unreadable input or usage.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dsh_policy.audit.keys import KeyFileError
from dsh_policy.audit.segments import discover_segments
from dsh_policy.audit.verify import verify_log
from dsh_policy.policy.cli.options import parse_command
from dsh_policy.policy.command_line import CommandParser
from dsh_policy.policy.runtime.policy_changes import diff_summaries

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_POLICY_KINDS = ("policy_loaded", "policy_reload_refused", "policy_reload_failed")


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy policy-log",
        description="List every policy change recorded in an audit log, weakening marked.",
    )
    parser.add_argument("log", metavar="LOG", help="the audit log (its rotated segments are found too)")
    parser.add_argument("--key", metavar="PUB", help="Ed25519 public key: checkpoint signatures are required")
    parser.add_argument("--live", action="store_true", help="the log is still being written (verify --live)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--strict", action="store_true", help="exit 1 when enforcement was ever weakened")
    return parser


def main(argv: Sequence[str]) -> int:
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        report = verify_log([args.log], public_key=args.key, live=args.live)
    except KeyFileError as error:
        print(f"dsh-policy policy-log: {error}", file=sys.stderr)
        return EXIT_USAGE
    if report.unreadable:
        print(f"dsh-policy policy-log: cannot read {args.log}", file=sys.stderr)
        return EXIT_USAGE
    if not report.intact:
        print(
            f"dsh-policy policy-log: {args.log} failed verification; run dsh-policy verify for the details",
            file=sys.stderr,
        )
        return EXIT_FAILED
    entries = list(policy_changes(_records(Path(args.log))))
    weakened = [entry for entry in entries if entry["weakening"]]
    if args.format == "json":
        print(
            json.dumps(
                {"log": args.log, "changes": entries, "weakened_at": [e["seq"] for e in weakened]}, indent=2
            )
        )
    else:
        print(render_text(args.log, entries))
    return EXIT_FAILED if args.strict and weakened else EXIT_OK


def _records(log: Path) -> Iterator[dict[str, Any]]:
    for segment in discover_segments(log):
        with segment.open("rb") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a torn tail: verify already judged it
                if isinstance(record, dict):
                    yield record


def policy_changes(records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """One entry per policy event: loads (with the change from the previous summary), refused and
    failed reloads, and digests that changed with no record saying why."""
    previous: dict[str, Any] | None = None
    digest: str | None = None
    for record in records:
        kind = record.get("kind")
        policy = record.get("policy") if isinstance(record.get("policy"), dict) else {}
        current = policy.get("digest") if isinstance(policy, dict) else None
        base = {"seq": record.get("seq"), "ts": record.get("ts"), "kind": kind, "digest": current}
        if kind == "policy_loaded":
            summary = record.get("summary") if isinstance(record.get("summary"), dict) else None
            changes = (
                diff_summaries(previous, summary) if summary is not None and previous is not None else None
            )
            yield {
                **base,
                "first": previous is None,
                "self_protection": _protection_state(summary, policy),
                "changes": changes.text()
                if changes is not None
                else ("first policy" if previous is None else "no summary recorded"),
                "weakened": list(changes.weakened) if changes is not None else [],
                "weakening": bool(changes and changes.weakening),
            }
            previous = summary or previous
            digest = current
        elif kind == "policy_reload_refused":
            refused = record.get("refused") if isinstance(record.get("refused"), dict) else None
            changes = (
                diff_summaries(previous, refused) if refused is not None and previous is not None else None
            )
            yield {
                **base,
                "first": False,
                "self_protection": _protection_state(previous, policy),
                "changes": "refused: " + (changes.text() if changes is not None else "?"),
                "weakened": list(changes.weakened) if changes is not None else [],
                "weakening": False,
            }
        elif kind == "policy_reload_failed":
            yield {
                **base,
                "first": False,
                "self_protection": _protection_state(previous, policy),
                "changes": "reload failed: " + "; ".join(map(str, record.get("errors") or []))[:300],
                "weakened": [],
                "weakening": False,
            }
        elif current is not None and digest is not None and current != digest and current != "none":
            yield {
                **base,
                "first": False,
                "self_protection": _protection_state(None, policy),
                "changes": f"policy digest changed from {digest[:19]} with no policy_loaded record",
                "weakened": ["unrecorded policy change"],
                "weakening": True,
            }
            digest = current
        elif digest is None and current not in (None, "none"):
            digest = current


def _protection_state(summary: dict[str, Any] | None, policy: Any) -> str:
    if isinstance(policy, dict) and policy.get("self_protection") == "off":
        return "off"
    protection = summary.get("self_protection") if isinstance(summary, dict) else None
    if protection is None:
        return "none"
    return "on" if protection.get("enabled") else "off"


def render_text(log: str, entries: Sequence[dict[str, Any]]) -> str:
    lines = [f"{log}: {len(entries)} policy event(s)"]
    for entry in entries:
        mark = "WEAKENED " if entry["weakening"] else ""
        digest = str(entry["digest"] or "")[:19]
        lines.append(
            f"  seq {entry['seq']:<6} {entry['ts'] or '':<24} {entry['kind']:<22} {digest:<19} "
            f"self-protection {entry['self_protection']:<4} {mark}{entry['changes']}"
        )
        if entry["weakening"]:
            lines.append(
                f"             enforcement weakened at seq {entry['seq']}: {'; '.join(entry['weakened'])}"
            )
    weakened = [str(entry["seq"]) for entry in entries if entry["weakening"]]
    lines.append(
        "enforcement weakened at seq " + ", ".join(weakened) if weakened else "no weakening recorded"
    )
    return "\n".join(lines)
