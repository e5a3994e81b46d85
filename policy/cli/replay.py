"""``dsh-policy replay LOG... (--pack PACK... | --config FILE)``: a policy change against real traffic.

Verifies the log, then re-decides every recorded decision under the candidate policy and prints
each one that changes (see :mod:`dsh_policy.policy.review.replay` for how, and what replay cannot
see). Exit codes: 0 nothing changed, 1 a decision changed or could not be determined, 2 invalid
input (packs, deployment file, usage, an unreadable log, or a log that fails verification without
``--allow-unverified``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors, print_json
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.config import policy_sources
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.review.outcomes import Outcome
from dsh_policy.policy.review.records import SKIP_REASONS
from dsh_policy.policy.review.replay import replay_log
from dsh_policy.policy.review.report import ReplayedDecision, ReplayRefusal, ReplayReport

_ARGS_SHOWN = 240
_RULE_COUNTS = (("gained", "now decides"), ("lost", "no longer decides"))


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy replay",
        description="Re-decide every decision an audit log recorded under a candidate policy and "
        "report each one that changes.",
        epilog="exit status: 0 nothing changed, 1 a decision changed or could not be determined, "
        "2 invalid input or a log that fails verification",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="audit log (its rotated segments are found)")
    add_policy_options(parser, positional_packs=False)
    parser.add_argument("--key", metavar="PUB", help="verify checkpoint signatures with this public key")
    parser.add_argument("--anchor", metavar="FILE", help="an exported checkpoint kept off the host")
    parser.add_argument(
        "--live",
        action="store_true",
        help="the log is still being written: with --key, records after the last signed checkpoint "
        "are a warning, not a failure (as verify --live)",
    )
    parser.add_argument(
        "--allow-unverified",
        action="store_true",
        help="replay a log that fails verification (the report says so; its decisions may be forged)",
    )
    parser.add_argument(
        "--evaluate",
        choices=["changed", "all"],
        default="changed",
        help="changed (default): reuse the recorded outcome of every rule the change left alone; "
        "all: evaluate every rule again wherever the log holds its inputs",
    )
    parser.add_argument(
        "--recorded-pack",
        dest="recorded_packs",
        action="append",
        default=[],
        metavar="PACK",
        help="a pack of the policy that wrote the log, for logs without rule fingerprints (hook logs)",
    )
    parser.add_argument(
        "--recorded-config",
        metavar="FILE",
        help="the deployment file that wrote the log (see --recorded-pack)",
    )
    parser.add_argument(
        "--show",
        type=int,
        default=100,
        metavar="N",
        help="text output: list at most N changes and N undetermined decisions (0: all; JSON lists all)",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``dsh-policy replay``."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    packs_as_logs = [log for log in args.logs if log.endswith((".yaml", ".yml"))]
    if packs_as_logs:
        print(
            f"dsh-policy replay: {', '.join(packs_as_logs)} looks like a rule pack, not an audit log; "
            "give each pack with its own --pack",
            file=sys.stderr,
        )
        return USAGE_EXIT
    sources = sources_from(args)
    if isinstance(sources, list):
        print_errors(sources)
        return USAGE_EXIT
    built = sources.build()
    if isinstance(built, LoadFailure):
        print_errors(list(built.errors))
        return USAGE_EXIT
    recorded: list[CompiledPolicy] = []
    if args.recorded_packs or args.recorded_config:
        before = policy_sources(args.recorded_packs, config=args.recorded_config, engine=args.engine)
        loaded = before if isinstance(before, list) else before.build()
        if isinstance(loaded, list | LoadFailure):
            print_errors(list(loaded) if isinstance(loaded, list) else list(loaded.errors))
            return USAGE_EXIT
        recorded.append(loaded)
    progress = _progress(sys.stderr) if sys.stderr.isatty() else None
    result = replay_log(
        args.logs,
        built,
        public_key=args.key,
        anchor=args.anchor,
        allow_unverified=args.allow_unverified,
        live=args.live,
        evaluate=args.evaluate,
        recorded=recorded,
        progress=progress,
    )
    if progress is not None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    if isinstance(result, ReplayRefusal):
        if args.format == "json":
            print_json(result.to_json())
        print(f"dsh-policy replay: {', '.join(args.logs)}: refused: {result.reason}", file=sys.stderr)
        return result.exit_code
    try:
        if args.format == "json":
            print_json(result.to_json())
        else:
            render_text(result, sys.stdout, shown=args.show)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has seen enough; the exit code still tells
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (stdout must stay open until exit)
    return result.exit_code


def _progress(stream: TextIO) -> Callable[[int], None]:
    def report(count: int) -> None:
        print(f"\rreplayed {count:,} decisions...", end="", file=stream, flush=True)

    return report


# --- text ------------------------------------------------------------------------------------------


def render_text(report: ReplayReport, out: TextIO, *, shown: int = 100) -> None:
    """The report for people: the log and policies first, then each change, then the summary."""
    say = lambda line="": print(line, file=out)  # noqa: E731
    verification = report.verification
    if verification.intact:
        state = "INTACT"
        if verification.signature_mode != "signature-verified":
            state += " (chain checked; no --key, so checkpoint signatures were not)"
    else:
        first = verification.first_error
        state = "FAILED VERIFICATION" + (f" ({first.reason.value} at seq {first.seq})" if first else "")
        state += ": replayed anyway (--allow-unverified); its decisions may be forged"
    say(f"log        {', '.join(report.files)}: {verification.records_checked} records, {state}")
    candidate = report.candidate
    say(
        f"candidate  {candidate.digest} ({', '.join(p.name for p in candidate.packs)}; "
        f"engine {candidate.engine_name})"
    )
    for policy in report.recorded_policies:
        known = {
            "same": "the candidate itself",
            "fingerprints": "rule fingerprints recorded",
            "given": "rule fingerprints from --recorded-pack/--recorded-config",
            "none": "no rule fingerprints in the log",
        }[policy.knowledge]
        say(f"recorded   {policy.digest} ({policy.decisions} decisions; {known})")
        for name, old, new in policy.params_changed:
            say(f"           param {name}: recorded {json.dumps(old)}, candidate {json.dumps(new)}")
    summary = report.summary
    now = summary.now_from
    say(
        f"inputs     now: the decision's own instant ({now.get('record', 0)}), the record's ts "
        f"({now.get('ts', 0)}); params and engine: the candidate's; evaluate: {report.evaluate}"
    )
    for title, items in (("CHANGED", report.changes), ("UNDETERMINED", report.undetermined)):
        limit = len(items) if shown <= 0 else shown
        for item in items[:limit]:
            say()
            _render_item(title, item, say)
        if len(items) > limit:
            say(f"\n... and {len(items) - limit} more {title.lower()} (--show 0 or --format json lists all)")
    say()
    _render_summary(report, say)


def _render_item(title: str, item: ReplayedDecision, say: Callable[..., None]) -> None:
    record = item.recorded
    what = record.call.tool if record.call is not None else "step"
    say(f"{title}  seq {record.seq}  {record.stage}  {what}  [{item.direction}]")
    say(
        f"  where     session {record.session or '-'}, agent {record.agent or '-'}, "
        f"turn {record.turn}, step {record.step}, at {record.ts}"
    )
    if record.call is not None:
        shown = json.dumps(record.call.args, ensure_ascii=False)
        if len(shown) > _ARGS_SHOWN:
            shown = shown[: _ARGS_SHOWN - 3] + "..."
        say(f"  args      {shown}" + ("  (redacted when recorded)" if not record.call.args_faithful else ""))
    elif record.messages_recorded:
        texts = [
            row.get("text") if isinstance(row.get("text"), str) else f"<{row.get('text_digest')}>"
            for row in record.messages_recorded
        ]
        say(f"  messages  {json.dumps(texts, ensure_ascii=False)[:_ARGS_SHOWN]}")
    recorded = Outcome(record.verdict.decision, frozenset(record.verdict.rules))
    redactions = record.redactions if record.stage == "post-execute" else None
    count = f" ({redactions} redactions)" if redactions else ""
    say(f"  recorded  {_outcome_text(recorded, item)}{count}")
    if record.verdict.message:
        say(f"            {record.verdict.message}")
    if len(item.replayed) == 1:
        say(f"  replayed  {_outcome_text(item.replayed[0], item)}")
        if item.message:
            say(f"            {item.message}")
    else:
        say("  replayed  one of: " + " | ".join(_outcome_text(o, item) for o in item.replayed))
    for blind in item.blind:
        say(f"  unseen    {blind.rule}: {blind.why}")
    for note in item.notes:
        say(f"  note      {note}")
    if item.told is not None:
        told = item.told
        say(
            f"  told      the agent was told {told.action}, not this decision (hook_told seq {told.seq}):"
            f" {told.why}"
        )


def _outcome_text(outcome: Outcome, item: ReplayedDecision) -> str:
    ordered = [rule for rule in item.rule_order if rule in outcome.rules]
    ordered += sorted(outcome.rules - set(ordered))
    return outcome.decision + (f" by {', '.join(ordered)}" if ordered else " (no rule decides)")


def _render_summary(report: ReplayReport, say: Callable[..., None]) -> None:
    summary = report.summary
    directions = ", ".join(f"{count} {name}" for name, count in summary.by_direction.items() if count)
    skipped = sum(summary.skipped.values())
    say(
        f"summary: {summary.replayed} decision(s) replayed: {summary.unchanged} unchanged, "
        f"{summary.changed} changed, {summary.undetermined} undetermined"
        + (f" ({directions})" if directions else "")
        + f"; {skipped} record(s) skipped"
    )
    stages = ", ".join(
        f"{stage} {counts.get('replayed', 0)} ({counts.get('changed', 0)} changed"
        + (f", {counts['undetermined']} undetermined" if counts.get("undetermined") else "")
        + ")"
        for stage, counts in summary.by_stage.items()
    )
    say(f"  by stage: {stages}")
    for reason, count in sorted(summary.skipped.items()):
        say(f"  skipped {count}: {SKIP_REASONS.get(reason, reason)}")
    if summary.told:
        say(
            f"  told {summary.told}: hook_told record(s), the agent was told a safe answer instead of the"
            " decision recorded for that request (the recorded decision is the one replayed)"
        )
    if summary.in_process:
        say(f"  in process {summary.in_process}: decided by the hook itself, its gateway did not answer")
    for rule, counts in sorted(summary.by_rule.items()):
        parts = [f"{verb} {counts[key]}" for key, verb in _RULE_COUNTS if counts.get(key)]
        say(f"  {rule}: {', '.join(parts)}")
    say(
        f"  rules evaluated {summary.rules_evaluated} (and {summary.evaluations_cached} repeats on equal "
        f"inputs), recorded rule outcomes reused {summary.outcomes_reused}"
    )
    if report.limits:
        say("limits:")
        for limit in report.limits:
            say(f"  - {limit}")
    verdict = "nothing changed" if report.exit_code == 0 else "decisions changed or could not be determined"
    say(f"result: {verdict} (exit {report.exit_code})")
