"""``dsh-policy diff OLD NEW``: what changes between two rule packs or deployment files.

Exit codes: 0 both sides are the same effective policy (same digest), 1 they differ, 2 invalid
input (either side fails to load, or usage). A change that may let through what OLD stopped is
marked ``WEAKENED`` with why, judged as ``policy-log`` judges a reload. With ``dsh-policy replay``,
reviewing a pack change in CI is: ``diff`` says what changed in the rules, ``replay`` what it
would have changed in traffic.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors, print_json
from dsh_policy.policy.command_line import CommandParser
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.review.diff import PolicyDiff, decision_word, diff_policies, load_policy_file

_WIDTH = 100


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy diff",
        description="Compare two policies, each a rule pack or a deployment file (kind: Gateway): rules "
        "added, removed and changed, params and variables changed, and each side's policy digest.",
        epilog="exit status: 0 the same policy, 1 different, 2 invalid input",
    )
    parser.add_argument("old", metavar="OLD", help="rule pack or deployment file")
    parser.add_argument("new", metavar="NEW", help="rule pack or deployment file")
    parser.add_argument(
        "--engine",
        choices=["auto", "python", "native"],
        default=None,
        help="CEL engine for both sides (default: each deployment file's, else auto)",
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``dsh-policy diff``."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    old = load_policy_file(args.old, engine=args.engine)
    new = load_policy_file(args.new, engine=args.engine)
    if isinstance(old, list) or isinstance(new, list):
        errors: list[PolicyError] = []
        for side in (old, new):
            if isinstance(side, list):
                errors.extend(side)
        print_errors(errors)
        return USAGE_EXIT
    diff = diff_policies(old, new)
    if args.format == "json":
        print_json(diff.to_json())
    else:
        render_text(diff, sys.stdout)
    return diff.exit_code


def render_text(diff: PolicyDiff, out: TextIO) -> None:
    """The diff for people: digests, then rules, params and variables, ``+``/``-``/``~`` marked."""
    say: Callable[[str], None] = lambda line: print(line, file=out)  # noqa: E731
    for label, policy in (("old", diff.old), ("new", diff.new)):
        packs = ", ".join(pack.name for pack in policy.packs)
        say(f"{label}  {policy.digest}  ({packs}; {len(policy.rules)} rules; engine {policy.engine_name})")
    if diff.identical:
        say("same policy: nothing changes")
        return
    for name in diff.packs_added:
        say(f"+ pack {name}")
    for name in diff.packs_removed:
        say(f"- pack {name}")
    for name, before, after in diff.settings:
        say(f"~ {name}: {_value(before)} -> {_value(after)}")
    if diff.rules_added:
        say(f"rules added ({len(diff.rules_added)}):")
        for rule in diff.rules_added:
            say(
                f"  + {rule.id}  [{rule.stage}, {decision_word(rule)}, {rule.mode}]"
                + (f" match {', '.join(rule.tools)}" if rule.tools else "")
            )
            if rule.when is not None:
                say(f"      when: {_short(rule.when.source)}")
    if diff.rules_removed:
        say(f"rules removed ({len(diff.rules_removed)}):")
        for rule in diff.rules_removed:
            say(f"  - {rule.id}  [{rule.stage}, {decision_word(rule)}, {rule.mode}]")
    if diff.rules_changed:
        say(f"rules changed ({len(diff.rules_changed)}):")
        for change in diff.rules_changed:
            say(f"  ~ {change.rule}")
            for name, (before, after) in change.fields.items():
                say(f"      {name}: {_value(before)} -> {_value(after)}")
            if change.via:
                say(f"      condition reads what changed: {', '.join(change.via)}")
    if diff.params:
        say(f"params changed ({len(diff.params)}):")
        for name, before, after in diff.params:
            say(f"  ~ {name}: {_value(before)} -> {_value(after)}")
    if diff.variables:
        say(f"variables changed ({len(diff.variables)}):")
        for name, before, after in diff.variables:
            say(f"  ~ vars {name}: {_value(before)} -> {_value(after)}")
    for why in diff.weakened:
        say(f"WEAKENED  {why}")
    summary = diff.to_json()["summary"]
    say("summary: " + ", ".join(f"{count} {name.replace('_', ' ')}" for name, count in summary.items()))


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    return _short(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _WIDTH else text[: _WIDTH - 3] + "..."
