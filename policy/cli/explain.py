"""``dsh-policy explain PACK... --event FILE``: decide one event and show every rule: whether it
was evaluated, whether it matched, the value of ``when``, errors, and what the match did.

The verdict and its trace come from the same decision API the gateway uses (via
:func:`~dsh_policy.policy.cases.run_case`); rules the decision never looked at are listed with the
reason (another stage, or a ``match.tools`` that does not cover the tool). Exit 0, or 2 on invalid
input.
"""

from __future__ import annotations

import sys
from typing import Any

from dsh_policy.audit.terminal import Painter
from dsh_policy.policy.cases import CaseOutcome, load_event, run_case
from dsh_policy.policy.cli.case_clients import in_canonical_vocabulary
from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors, print_json
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from
from dsh_policy.policy.compiled import CompiledPolicy, CompiledRule
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import StepEvent, ToolResultEvent
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.stages import STAGE_TABLE


def _tool_of(outcome: CaseOutcome) -> str | None:
    event = outcome.case.event
    if isinstance(event, StepEvent):
        return None
    return event.call.tool if isinstance(event, ToolResultEvent) else event.tool


def explain_rows(policy: CompiledPolicy, outcome: CaseOutcome) -> list[dict[str, Any]]:
    """One row per rule of the policy, in pack order: its trace entry, or why it was skipped."""
    traced = {entry.rule: entry for entry in outcome.trace}
    tool = _tool_of(outcome)
    rows: list[dict[str, Any]] = []
    for rule in policy.rules:
        when = rule.when.source if rule.when is not None else None
        entry = traced.get(rule.id)
        if entry is not None and entry.stage == rule.stage:
            rows.append({**entry.to_json(), "when": when, "evaluated": True})
            continue
        rows.append(
            {
                "rule": rule.id,
                "stage": rule.stage,
                "mode": rule.mode,
                "effect": rule.effect,
                "when": when,
                "evaluated": False,
                "skipped": _skip_reason(rule, outcome.case.stage, tool),
            }
        )
    return rows


def _skip_reason(rule: CompiledRule, stage: str, tool: str | None) -> str:
    if rule.stage not in STAGE_TABLE[stage].consulted:
        return f"stage {rule.stage} is not consulted for a {stage} event"
    return f"tool {tool!r} does not match {list(rule.tools or ())}"


def _verdict_json(outcome: CaseOutcome) -> dict[str, Any]:
    out: dict[str, Any] = {
        "decision": outcome.decision,
        "rules": list(outcome.rules),
        "message": outcome.message,
        "shadow_rules": list(outcome.shadow_rules),
    }
    if outcome.case.stage == "post-execute":
        out["text"] = outcome.text
        out["redactions"] = outcome.redactions
    if outcome.contexts:
        out["contexts"] = list(outcome.contexts)
    return out


def _describe_value(row: dict[str, Any]) -> str:
    if row.get("error"):
        return f"error: {row['error']}"
    if row.get("when") is None:
        return "always (no when)"
    value = row.get("value")
    return "when=" + ("true" if value is True else "false" if value is False else repr(value))


def _print_text(policy: CompiledPolicy, outcome: CaseOutcome, rows: list[dict[str, Any]]) -> None:
    case = outcome.case
    tool = _tool_of(outcome)
    paint = Painter.for_stream(sys.stdout)
    print(f"event: {case.stage}" + (f" {tool}" if tool else "") + f"  ({case.file})")
    verdict = _verdict_json(outcome)
    word = paint.decision(str(verdict["decision"]))
    print(f"decision: {word}" + (f"  by {paint.rules(outcome.rules)}" if outcome.rules else ""))
    if outcome.message:
        print(f"message: {outcome.message}")
    if "text" in verdict:
        print(f"text: {verdict['text']!r}  ({outcome.redactions} redaction(s))")
    for context in outcome.contexts:
        print(f"context: {context}")
    if outcome.shadow_rules:
        print(f"shadow (warn/audit) matches: {', '.join(outcome.shadow_rules)}")
    print(f"policy: {policy.digest} (engine {policy.engine_name})")
    print("rules:")
    width = max((len(row["rule"]) for row in rows), default=10)
    for row in rows:
        padding = " " * (width - len(row["rule"]))  # outside the colour codes, so columns line up
        head = f"  {paint.dim(row['rule'])}{padding}  {row['stage']:<12}  {row['mode']:<7}"
        if not row["evaluated"]:
            print(f"{head}  skipped    {row['skipped']}")
            continue
        state = "MATCH" if row["matched"] else "no match"
        tail = f"  -> {row['effect']} ({row['outcome']})" if row["matched"] else ""
        redacted = f", {row['redactions']} redaction(s)" if row.get("redactions") else ""
        print(f"{head}  {state:<9}  {_describe_value(row)}{tail}{redacted}")


def main(argv: list[str]) -> int:
    """Entry point of ``dsh-policy explain``."""
    parser = CommandParser(
        prog="dsh-policy explain",
        description="Evaluate one event against every rule and show why the decision came out as it did.",
    )
    add_policy_options(parser)
    parser.add_argument("--event", required=True, metavar="FILE", help="the event (a case without expect)")
    args = parse_command(parser, argv)
    if isinstance(args, int):
        return args
    errors: list[PolicyError] = []
    event = load_event(args.event)
    notes: list[str] = []
    if isinstance(event, list):
        errors.extend(event)
    else:  # a call written in a client's vocabulary is explained as that client's hook maps it
        mapped = in_canonical_vocabulary([event])
        errors.extend(mapped.errors)
        event, notes = (mapped.cases or [event])[0], mapped.notes()
    sources = sources_from(args)
    built: CompiledPolicy | LoadFailure | None = None
    if isinstance(sources, list):
        errors.extend(sources)
    else:
        # With a deployment file the event is explained as that deployment decides it, its
        # self-protection included; packs alone explain the packs.
        built = sources.build(protect=sources.config is not None)
        if isinstance(built, LoadFailure):
            errors.extend(built.errors)
    if errors or isinstance(event, list) or not isinstance(built, CompiledPolicy):
        if args.format == "json":
            print_json({"ok": False, "errors": [error.to_json() for error in errors]})
        else:
            print_errors(errors)
        return USAGE_EXIT
    for line in notes:
        print(f"note: {line}", file=sys.stderr)
    outcome = run_case(Decider(built), event)
    rows = explain_rows(built, outcome)
    if args.format == "json":
        print_json(
            {
                "ok": True,
                "event": {"stage": event.stage, "tool": _tool_of(outcome), "file": event.file},
                "verdict": _verdict_json(outcome),
                "policy": {"digest": built.digest, "engine": built.engine_name},
                "trace": rows,
            }
        )
    else:
        _print_text(built, outcome, rows)
    return 0
