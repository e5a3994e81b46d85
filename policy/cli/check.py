"""``dsh-policy check PACK... [--cases FILE...]``: compile and lint packs, dry-run cases.

Exit codes (POLICY.md section 5): 0 valid / every case passed, 1 a case failed or two engines
disagreed (``--engine all``), 2 invalid input (a pack, cases file, deployment file or usage).
Cases are decided by :func:`~dsh_policy.policy.cases.run_case`, i.e. by the same decision API the
gateway plugins call.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any

from dsh_policy.audit.terminal import Painter, Progress
from dsh_policy.policy.cases import Case, CaseOutcome, load_cases, run_case, unknown_rule_errors
from dsh_policy.policy.cel import available_engines
from dsh_policy.policy.cli.options import (
    USAGE_EXIT,
    CommandParser,
    UsageError,
    add_policy_options,
    print_errors,
    print_json,
    sources_from,
)
from dsh_policy.policy.compile import CompiledPolicy
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure

#: Fewer cases than this finish before a progress line would be worth drawing.
_PROGRESS_FROM = 200


@dataclass(slots=True)
class CheckReport:
    """Everything ``check`` found, in the shape of its JSON output."""

    policies: dict[str, CompiledPolicy] = field(default_factory=dict)
    outcomes: dict[str, list[CaseOutcome]] = field(default_factory=dict)
    errors: list[PolicyError] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)

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
        """0 ok, 1 a case failed or engines disagreed, 2 invalid input."""
        if self.errors:
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
        }
        if policy is not None:
            document["policy"] = {"digest": policy.digest, "engine": policy.engine_name}
        if len(self.policies) > 1:
            document["engines"] = list(self.policies)
            document["disagreements"] = self.disagreements
        return document


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy check",
        description="Compile and lint rule packs; with --cases, dry-run every case and compare with expect.",
    )
    add_policy_options(parser, engines=("auto", "python", "native", "all"))
    parser.add_argument(
        "--cases", action="extend", nargs="+", default=[], metavar="FILE", help="cases files to dry-run"
    )
    return parser


def run_check(args: argparse.Namespace) -> CheckReport:
    """Do the work of ``check`` for parsed arguments."""
    report = CheckReport()
    cases: list[Case] = []
    for file in args.cases:
        for item in load_cases(file):
            if isinstance(item, PolicyError):
                report.errors.append(item)
            else:
                cases.append(item)
    engines = available_engines() if args.engine == "all" else [args.engine]
    for engine in engines:
        sources = sources_from(args, engine)
        if isinstance(sources, list):
            report.errors.extend(sources)
            break
        built = sources.build()
        if isinstance(built, LoadFailure):
            report.errors.extend(built.errors)
            break
        report.policies[built.engine_name] = built
    for policy in report.policies.values():
        report.errors.extend(unknown_rule_errors(cases, [rule.id for rule in policy.rules]))
        break
    if report.errors:
        return report
    # Progress only on a terminal's stderr (never in a report or JSON), and only when it helps.
    total = len(cases) * len(report.policies)
    with Progress("checking cases", total, enabled=None if total >= _PROGRESS_FROM else False) as progress:
        for name, policy in report.policies.items():
            decider = Decider(policy)
            outcomes = report.outcomes[name] = []
            for case in cases:
                outcomes.append(run_case(decider, case))
                progress.advance(detail=name)
    report.disagreements = _disagreements(report.outcomes)
    return report


def _disagreements(outcomes: dict[str, list[CaseOutcome]]) -> list[dict[str, Any]]:
    if len(outcomes) < 2:
        return []
    found: list[dict[str, Any]] = []
    runs = list(outcomes.items())
    for index, first in enumerate(runs[0][1]):
        results = {name: run[index] for name, run in runs}
        if len({outcome.comparable() for outcome in results.values()}) > 1:
            found.append(
                {
                    "case": first.case.name,
                    "engines": {
                        name: {
                            "decision": o.decision,
                            "rules": list(o.rules),
                            "message": o.message,
                            "text": o.text,
                        }
                        for name, o in results.items()
                    },
                }
            )
    return found


def _print_text(report: CheckReport) -> None:
    if report.errors:
        print_errors(report.errors)
        return
    paint = Painter.for_stream(sys.stdout)
    policy = next(iter(report.policies.values()))
    rules = len(policy.rules)
    print(
        f"ok: {len(policy.packs)} pack(s), {rules} rule(s); engine {', '.join(report.policies)}; "
        f"policy {policy.digest}"
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
    if report.primary:
        print(f"{len(report.primary) - report.failed} passed, {report.failed} failed")


def main(argv: list[str]) -> int:
    """Entry point of ``dsh-policy check``."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return USAGE_EXIT
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    report = run_check(args)
    if args.format == "json":
        print_json(report.to_json())
    else:
        _print_text(report)
    return report.exit_code()
