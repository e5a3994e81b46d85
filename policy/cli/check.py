"""``dsh-policy check PACK... [--cases FILE...]``: compile and lint packs, dry-run cases.

Exit codes (POLICY.md section 5): 0 valid / every case passed, 1 a case failed or two engines
disagreed (``--engine all``), 2 invalid input (a pack, cases file, deployment file or usage).
The type checker's warnings are printed but change the exit code only with ``--strict`` (then
they count as errors: 2). Cases are decided by :func:`~dsh_policy.policy.cases.run_case`, i.e. by
the same decision API the gateway plugins call. ``--coverage`` adds which rules no case or inline
example made match, and which side of each ``matches``/``exists`` no case took
(:mod:`~dsh_policy.policy.coverage`). ``--engine all`` compares what each engine decided (the
decision, the deciding rules, the resulting text, contexts and redactions, and messages that carry
no evaluation error); engines that differ only in the wording of an evaluation error agree, and
the report shows both messages.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any

from dsh_policy.audit.terminal import Painter, Progress
from dsh_policy.policy.cases import Case, CaseOutcome, load_cases, run_case, unknown_rule_errors
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.cli.case_clients import in_canonical_vocabulary
from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors, print_json
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.coverage import CoverageReport, measure_coverage
from dsh_policy.policy.decide import DEFAULT_EVENT_SECONDS, Decider
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.hooks.protocol.vocabulary import HARNESSES
from dsh_policy.policy.loading import LoadFailure

#: Fewer cases than this finish before a progress line would be worth drawing.
_PROGRESS_FROM = 200


@dataclass(slots=True)
class CheckReport:
    """Everything ``check`` found, in the shape of its JSON output."""

    policies: dict[str, CompiledPolicy] = field(default_factory=dict)
    outcomes: dict[str, list[CaseOutcome]] = field(default_factory=dict)
    errors: list[PolicyError] = field(default_factory=list)
    warnings: list[PolicyError] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    #: Cases where the engines agree but word an evaluation error differently (both messages).
    wording: list[dict[str, Any]] = field(default_factory=list)
    coverage: CoverageReport | None = None
    strict: bool = False
    #: Tool names mapped through a client no case named (case_clients), one line each.
    notes: list[str] = field(default_factory=list)

    @property
    def primary(self) -> list[CaseOutcome]:
        """Outcomes on the first engine (the one reported per case)."""
        return next(iter(self.outcomes.values()), [])

    @property
    def failed(self) -> int:
        """Cases that failed on any engine."""
        names = {
            outcome.case.name for runs in self.outcomes.values() for outcome in runs if not outcome.passed
        }
        return len(names)

    def exit_code(self) -> int:
        """0 ok, 1 a case failed or engines disagreed, 2 invalid input (or, with ``--strict``, a
        warning)."""
        if self.errors or (self.strict and self.warnings):
            return USAGE_EXIT
        return 1 if self.failed or self.disagreements else 0

    def to_json(self) -> dict[str, Any]:
        """The JSON document of POLICY.md section 5 (plus engine details)."""
        policy = next(iter(self.policies.values()), None)
        primary = self.primary
        document: dict[str, Any] = {
            "ok": self.exit_code() == 0,
            "packs": [
                {"path": pack.path, "name": pack.name, "digest": pack.digest}
                for pack in (policy.packs if policy else ())
            ],
            "cases": [outcome.to_json() for outcome in primary],
            "summary": {"passed": len(primary) - self.failed if primary else 0, "failed": self.failed},
            "errors": [error.to_json() for error in self.errors],
            "warnings": [error.to_json() for error in self.warnings],
        }
        if self.notes:
            document["notes"] = self.notes
        if policy is not None:
            document["policy"] = {"digest": policy.digest, "engine": policy.engine_name}
        if len(self.policies) > 1:
            document["engines"] = list(self.policies)
            document["disagreements"] = self.disagreements
            document["wording"] = self.wording
        if self.coverage is not None:
            document["coverage"] = self.coverage.to_json()
        return document


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy check",
        description="Compile and lint rule packs; with --cases, dry-run every case and compare with expect.",
    )
    add_policy_options(parser, engines=("auto", "closure", "python", "native", "all"))
    parser.add_argument(
        "--cases", action="extend", nargs="+", default=[], metavar="FILE", help="cases files to dry-run"
    )
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="list rules no case or inline example exercised, and matches/exists sides none took",
    )
    parser.add_argument("--strict", action="store_true", help="treat the type checker's warnings as errors")
    parser.add_argument(
        "--event-seconds",
        type=_positive_seconds,
        default=DEFAULT_EVENT_SECONDS,
        metavar="S",
        help=f"each case's evaluation budget per stage (default {DEFAULT_EVENT_SECONDS:g}, the gateway's); "
        "a rule still unevaluated when it runs out fails closed, so a slow runner may need more",
    )
    parser.add_argument(
        "--client",
        choices=HARNESSES,
        default=None,
        help="read every case's tool call in this agent client's vocabulary (overrides `client:`)",
    )
    return parser


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return seconds


def run_check(args: argparse.Namespace) -> CheckReport:
    """Do the work of ``check`` for parsed arguments."""
    report = CheckReport(strict=bool(args.strict))
    cases: list[Case] = []
    for file in args.cases:
        for item in load_cases(file):
            if isinstance(item, PolicyError):
                report.errors.append(item)
            else:
                cases.append(item)
    mapped = in_canonical_vocabulary(cases, args.client)
    cases, report.notes = mapped.cases, mapped.notes()
    report.errors.extend(mapped.errors)
    engines = available_engines() if args.engine == "all" else [args.engine]
    for engine in engines:
        sources = sources_from(args, engine)
        if isinstance(sources, list):
            report.errors.extend(sources)
            break
        # Cases test the packs: the deployment's self-protection is not theirs to expect.
        built = sources.build(protect=False)
        if isinstance(built, LoadFailure):
            report.errors.extend(built.errors)
            report.warnings = list(built.warnings)
            break
        report.policies[built.engine_name] = built
        report.warnings = list(built.warnings)  # the checker is engine-independent: any run's
    for policy in report.policies.values():
        report.errors.extend(unknown_rule_errors(cases, [rule.id for rule in policy.rules]))
        break
    if report.errors:
        return report
    # Progress only on a terminal's stderr (never in a report or JSON), and only when it helps.
    total = len(cases) * len(report.policies)
    with Progress("checking cases", total, enabled=None if total >= _PROGRESS_FROM else False) as progress:
        for name, policy in report.policies.items():
            decider = Decider(policy, event_seconds=args.event_seconds)
            outcomes = report.outcomes[name] = []
            for case in cases:
                outcomes.append(run_case(decider, case))
                progress.advance(detail=name)
    report.disagreements, report.wording = _compare_engines(report.outcomes)
    if args.coverage:
        name, policy = next(iter(report.policies.items()))
        report.coverage = measure_coverage(policy, cases, report.outcomes[name])
    return report


def _compare_engines(
    outcomes: dict[str, list[CaseOutcome]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Cases the engines decide differently, and cases where they agree but word an evaluation
    error differently (not a disagreement: each runtime has its own error messages)."""
    if len(outcomes) < 2:
        return [], []
    disagreements: list[dict[str, Any]] = []
    wording: list[dict[str, Any]] = []
    runs = list(outcomes.items())
    for index, first in enumerate(runs[0][1]):
        results = {name: run[index] for name, run in runs}
        verdicts = {outcome.comparable() for outcome in results.values()}
        messages = {outcome.message for outcome in results.values()}
        worded = any(entry.error is not None for outcome in results.values() for entry in outcome.trace)
        entry = {"case": first.case.name, "engines": {name: _engine_view(o) for name, o in results.items()}}
        if len(verdicts) > 1 or (len(messages) > 1 and not worded):
            disagreements.append(entry)
        elif len(messages) > 1:
            wording.append(entry)
    return disagreements, wording


def _engine_view(outcome: CaseOutcome) -> dict[str, Any]:
    return {
        "decision": outcome.decision,
        "rules": list(outcome.rules),
        "message": outcome.message,
        "text": outcome.text,
        "errors": {entry.rule: entry.error for entry in outcome.trace if entry.error is not None},
    }


def _print_text(report: CheckReport) -> None:
    for warning in report.warnings:
        print(f"warning: {warning.display()}", file=sys.stderr)
    for line in report.notes:
        print(f"note: {line}", file=sys.stderr)
    if report.errors:
        print_errors(report.errors)
        return
    paint = Painter.for_stream(sys.stdout)
    policy = next(iter(report.policies.values()))
    rules = len(policy.rules)
    warned = f"; {len(report.warnings)} warning(s)" if report.warnings else ""
    print(
        f"ok: {len(policy.packs)} pack(s), {rules} rule(s); engine {', '.join(report.policies)}; "
        f"policy {policy.digest}{warned}"
    )
    for pack in policy.packs:
        print(f"  {pack.name:<20} {pack.path}  {pack.digest}")
    for outcome in report.primary:
        verdict = outcome.decision + (f" by {paint.rules(outcome.rules)}" if outcome.rules else "")
        status = paint.decision("PASS" if outcome.passed else "FAIL")
        print(f"{status}  {outcome.case.name}  [{outcome.case.stage}] {verdict}")
        for failure in outcome.failures:
            print(f"      {outcome.case.file}:{outcome.case.line}: {failure}")
    for disagreement in report.disagreements:
        engines = "; ".join(
            f"{name}: {result['decision']} {result['rules']}"
            for name, result in disagreement["engines"].items()
        )
        print(f"{paint.decision('DISAGREE')}  {disagreement['case']}  {engines}")
        _print_messages(disagreement)
    for note in report.wording:
        print(f"NOTE  {note['case']}  engines agree; only the wording of an evaluation error differs")
        _print_messages(note)
    if report.primary:
        print(f"{len(report.primary) - report.failed} passed, {report.failed} failed")
    if report.coverage is not None:
        _print_coverage(report.coverage)
    if report.strict and report.warnings:
        print(f"--strict: {len(report.warnings)} warning(s) count as errors", file=sys.stderr)


def _print_messages(entry: dict[str, Any]) -> None:
    for name, result in entry["engines"].items():
        print(f"      {name}: {result['message']}")


def _print_coverage(coverage: CoverageReport) -> None:
    exercised = len(coverage.rules) - len(coverage.unexercised)
    print(f"coverage: {exercised} of {len(coverage.rules)} rules matched by a case or inline example")
    for rule in coverage.unexercised:
        why = f"evaluated {rule.evaluated} time(s), never matched" if rule.evaluated else "never evaluated"
        print(f"  not exercised  {rule.file}:{rule.line}  {rule.rule}  ({why})")
    taken = sum(2 if b.missing is None else 0 if b.missing == "both" else 1 for b in coverage.branches)
    print(f"branches: {taken} of {2 * len(coverage.branches)} sides of matches/exists calls taken")
    for branch in coverage.partial:
        side = "never evaluated" if branch.missing == "both" else f"never {branch.missing}"
        print(f"  {branch.file}:{branch.line}:{branch.col}  {branch.owner}  {branch.text}  {side}")
    for note in coverage.notes:
        print(f"  note: {note}")


def main(argv: list[str]) -> int:
    """Entry point of ``dsh-policy check``."""
    parser = _parser()
    args = parse_command(parser, argv)
    if isinstance(args, int):
        return args
    report = run_check(args)
    if args.format == "json":
        print_json(report.to_json())
    else:
        _print_text(report)
    return report.exit_code()
