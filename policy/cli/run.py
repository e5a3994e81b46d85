"""``dsh-policy run SESSION --pack PACK... --audit LOG``: a scripted session through the real loop.

The session (``examples/sessions/README.md``) is driven through the ``core`` harness with the
gateway installed as ordinary plugins, tools acting on an in-memory sandbox, and approval requests
answered from the script. As it runs it prints each step and each decision with its rule ids, then a
summary; finally it closes the audit log (writing a closing checkpoint) and verifies it.

Exit codes: 0 the session ran and its audit log verifies, 1 the log failed verification, 2 invalid
input (session script, packs, deployment file, usage) or an audit log that cannot be opened.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
from dsh_policy.audit.archive import MovedLog, move_log_aside
from dsh_policy.audit.keys import load_private_key
from dsh_policy.audit.segments import discover_segments
from dsh_policy.audit.terminal import Painter
from dsh_policy.audit.verify import VerificationReport, verify_log
from dsh_policy.core import Harness, Message, ModelReply, ModelRequest, ModelToolCall, ToolExecution
from dsh_policy.policy.cli.options import USAGE_EXIT, parse_command, print_errors
from dsh_policy.policy.command_line import CommandParser, add_policy_options, sources_from
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.demo.sandbox import Sandbox
from dsh_policy.policy.demo.script import ScriptedTurn, SessionScript, load_session_script
from dsh_policy.policy.demo.tools import sandbox_tools
from dsh_policy.policy.events import StepEvent, StepVerdict
from dsh_policy.policy.runtime.audit_plan import AuditPlan, audit_plan
from dsh_policy.policy.runtime.auditing import CallOutcome
from dsh_policy.policy.runtime.deployment import deploy
from dsh_policy.policy.runtime.gateway import PolicyGateway
from dsh_policy.policy.runtime.narration import call_line, deciding, outcome_label, redacted_args


@dataclass(slots=True)
class Narrator:
    """Prints the session as it runs (text) and keeps every event for the summary and JSON."""

    out: TextIO
    text: bool
    policy: Policy | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    paint: Painter = field(default_factory=lambda: Painter(False))
    #: Approval answers by call id, printed with their call (which settles after the question).
    approvals: dict[str, list[str]] = field(default_factory=dict)

    def say(self, line: str) -> None:
        if self.text:
            print(line, file=self.out, flush=True)

    def turn(self, number: int, prompt: str) -> None:
        self.say(f"\n== turn {number} -- user: {prompt}")
        self.events.append({"event": "turn", "turn": number, "prompt": prompt})

    def model_reply(self, step: int, reply: ModelReply) -> None:
        if reply.text:
            self.say(f"  step {step}  assistant: {reply.text}")
        elif reply.tool_calls:
            self.say(f"  step {step}  assistant calls {len(reply.tool_calls)} tool(s)")

    def approval(self, execution: ToolExecution, reason: str | None, answer: str) -> None:
        # Approvals of a step are asked before its calls settle (parallel calls are committed in
        # model order), so the line waits for its call: the output reads in the order of events.
        line = f"asked for approval ({reason or 'no reason given'}): {answer}"
        self.approvals.setdefault(execution.call_id, []).append(line)

    def unsettled_approvals(self) -> None:
        """Approvals whose call never settled (a turn cut short): still shown, never lost."""
        for call_id, lines in self.approvals.items():
            for line in lines:
                self.say(f"    (call {call_id}) {line}")
        self.approvals.clear()

    def call_settled(self, outcome: CallOutcome) -> None:
        label = outcome_label(outcome)
        rules, message = deciding(outcome)
        self.counts[label] += 1
        assert self.policy is not None
        args = redacted_args(self.policy, outcome.call.args)
        asked = self.approvals.pop(outcome.call.call_id, [])
        self.say(call_line(outcome, self.policy, self.paint, asked))
        self.events.append(
            {
                "event": "call",
                "turn": outcome.call.turn,
                "step": outcome.call.step,
                "tool": outcome.call.tool,
                "call_id": outcome.call.call_id,
                "args": args,
                "label": label,
                "rules": rules,
                "message": message,
                "approval": outcome.approval,
                "redactions": outcome.review.redactions if outcome.review else 0,
            }
        )

    def step_gated(self, event: StepEvent, verdict: StepVerdict) -> None:
        if verdict.decision != "reject":
            if verdict.contexts:
                self.say(
                    f"  {self.paint.decision('CONTEXT', 8)} step {event.step}: "
                    f"{len(verdict.contexts)} message(s) added by {self.paint.rules(verdict.rules)}"
                )
            return
        self.counts["REJECT"] += 1
        self.say(
            f"  {self.paint.decision('REJECT', 8)} step {event.step}: "
            f"{verdict.message or 'rejected by policy'}"
        )
        if verdict.rules:
            self.say(f"             rules: {self.paint.rules(verdict.rules)}")
        self.events.append(
            {
                "event": "step_rejected",
                "turn": event.turn,
                "step": event.step,
                "rules": list(verdict.rules),
                "message": verdict.message,
            }
        )


@dataclass(slots=True)
class ScriptedApprovals:
    """The ``ctx.approval`` service of a scripted session: answers in order, then ``rejected``."""

    answers: list[str]
    narrator: Narrator

    async def request(self, execution: ToolExecution, reason: str | None) -> str:
        answer = self.answers.pop(0) if self.answers else "rejected"
        self.narrator.approval(execution, reason, answer)
        return answer


@dataclass(slots=True)
class SessionModel:
    """The model of a scripted session: the reply for (turn, step) comes from that turn's script,
    so a rejected turn never shifts later turns' replies. A turn whose replies run out ends with
    plain text, as a model that has nothing more to do would."""

    turns: Sequence[ScriptedTurn]
    narrator: Narrator
    agent: Any = None
    _served: Counter[int] = field(default_factory=Counter)

    async def complete(self, request: ModelRequest) -> ModelReply:
        turn = int(self.agent.turn)
        index = self._served[turn]
        self._served[turn] += 1
        replies = self.turns[turn - 1].replies if 0 < turn <= len(self.turns) else ()
        if index >= len(replies):
            reply = ModelReply(text="(the script has no more replies for this turn)")
        else:
            scripted = replies[index]
            calls = tuple(
                ModelToolCall(f"call_t{turn}s{index + 1}_{n + 1}", call.tool, call.arguments)
                for n, call in enumerate(scripted.tool_calls)
            )
            reply = ModelReply(scripted.text, calls, "tool_calls" if calls else "stop")
        self.narrator.model_reply(int(self.agent.step), reply)
        return reply


async def run_session(script: SessionScript, gateway: PolicyGateway, narrator: Narrator) -> None:
    """Drive every scripted turn through a harness with the gateway installed."""
    harness = Harness()
    for tool in sandbox_tools(Sandbox.from_spec(script.files, script.web, script.cwd)):
        harness.tools.register(tool)
    harness.provide("approval", ScriptedApprovals(list(script.approvals), narrator))
    harness.plugin(gateway)
    model = SessionModel(script.turns, narrator)
    agent = await harness.create_agent(model=model)
    model.agent = agent
    for number, turn in enumerate(script.turns, start=1):
        narrator.turn(number, turn.prompt)
        agent.followup(Message.user(turn.prompt))
        await agent.wait_idle()
        narrator.unsettled_approvals()
    agent.close()


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy run",
        description="Run a scripted agent session through the full loop with the gateway installed.",
    )
    parser.add_argument("session", metavar="SESSION", help="session script (kind: Session)")
    add_policy_options(parser, positional_packs=False)
    parser.add_argument("--audit", metavar="LOG", help="audit log to write (default: the config's)")
    parser.add_argument("--signing-key", metavar="KEY", help="Ed25519 private key (PEM) for checkpoints")
    parser.add_argument("--fsync", choices=["always", "batch", "off"], default=None)
    parser.add_argument(
        "--fail-closed", action="store_true", help="refuse a call whose audit record cannot be written"
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="add to an existing audit log (default: move it to LOG.previous-<time> and start afresh)",
    )
    return parser


def existing_records(path: str | Path) -> int:
    """How many records a log already holds (every segment), 0 when it does not exist yet."""
    total = 0
    for segment in discover_segments(Path(path)):
        try:
            with segment.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    total += chunk.count(b"\n")
        except OSError:
            continue
    return total


def public_key_hint(signing_key: str | None) -> str | None:
    """What to pass as ``verify --key`` after a signed run: ``KEY.pub`` beside ``KEY.key`` (as
    ``keygen`` writes them) when it exists, else a placeholder."""
    if not signing_key:
        return None
    candidate = Path(signing_key).with_suffix(".pub")
    return str(candidate) if candidate != Path(signing_key) and candidate.is_file() else "PUBLIC_KEY.pub"


def _print_summary(
    narrator: Narrator, report: VerificationReport | None, plan: AuditPlan | None, before: int
) -> None:
    counts = narrator.counts
    paint = narrator.paint
    calls = sum(n for label, n in counts.items() if label != "REJECT")
    parts = [
        f"{counts[label]} {label.lower()}"
        for label in ("ALLOW", "ASK>OK", "ASK>DENY", "DENY", "REDACT", "BLOCK", "ERROR")
        if counts[label]
    ]
    narrator.say(
        f"\nsummary: {calls} tool call(s): {', '.join(parts) or 'none'}; {counts['REJECT']} step(s) rejected"
    )
    if report is None or plan is None:
        narrator.say("audit: no audit log (use --audit LOG)")
        return
    verdict = paint.decision("INTACT" if report.intact else "FAILED")
    records = f"{report.records_checked} records"
    if before:
        records += (
            f" ({report.records_checked - before} from this run, appended to the {before} already there)"
        )
    covered = (
        f"checkpoints cover seq 0..{report.anchored_through}"
        if report.anchored_through is not None
        else "no valid checkpoint"
    )
    signed = "signed, signatures verified" if report.key_id is not None else "not signed"
    narrator.say(f"audit: {plan.path}: {records}, {verdict}; {covered}, {signed}")
    first = report.first_error
    if first is not None:
        where = first.file if first.line is None else f"{first.file}:{first.line}"
        where += "" if first.seq is None else f" (seq {first.seq})"
        narrator.say(f"       first error: {where} {first.reason.value}: {first.message}")
    for problem in report.unreadable:
        narrator.say(f"       unreadable: {problem}")
    key = public_key_hint(plan.signing_key)
    hint = f"dsh-policy verify {plan.path}" + (f" --key {key}" if key else "")
    narrator.say(f"       verify it yourself: {hint}")


def main(argv: Sequence[str]) -> int:
    """Entry point of ``dsh-policy run``."""
    args = parse_command(_parser(), argv)
    if isinstance(args, int):
        return args
    sources = sources_from(args)
    script = load_session_script(args.session)
    if isinstance(sources, list) or isinstance(script, list):
        print_errors([error for found in (sources, script) if isinstance(found, list) for error in found])
        return USAGE_EXIT
    plan = audit_plan(
        sources,
        path=args.audit,
        fsync=args.fsync,
        signing_key=args.signing_key,
        fail_closed=True if args.fail_closed else None,
    )
    narrator = Narrator(sys.stdout, text=args.format == "text", paint=Painter.for_stream(sys.stdout))
    moved: MovedLog | str | None = None
    if plan is not None and not args.append:
        # Each scripted session starts a fresh log (the README's figures hold on a second run);
        # the previous log is kept whole under a new name, never truncated.
        moved = move_log_aside(Path(plan.path))
        if isinstance(moved, str):
            print(f"dsh-policy run: {moved} (use --append to add to it)", file=sys.stderr)
            return USAGE_EXIT
        if moved is not None:
            narrator.say(
                f"audit: starting a fresh log; the previous one is now {moved.path}"
                " (--append adds to a log instead)"
            )
    before = existing_records(plan.path) if plan is not None else 0
    deployment = deploy(sources, audit=plan, watch=False, observers=[narrator])
    if isinstance(deployment, list):
        print_errors(deployment)
        return USAGE_EXIT
    policy = narrator.policy = deployment.policy
    narrator.say(
        f"session {script.name}: {len(script.turns)} turn(s); policy {policy.digest[:19]}... "
        f"({', '.join(p.name for p in policy.packs)}; engine {policy.engine_name})"
    )
    with deployment:
        anyio.run(run_session, script, deployment.gateway, narrator)
    report = None
    if plan is not None:
        # The signing key's public half makes the closing verification check signatures.
        key = load_private_key(plan.signing_key) if plan.signing_key else None
        report = verify_log([plan.path], public_key=key)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "session": script.name,
                    "policy": {
                        "digest": policy.digest,
                        "engine": policy.engine_name,
                        "packs": [p.name for p in policy.packs],
                    },
                    "events": narrator.events,
                    "summary": dict(narrator.counts),
                    "audit": None
                    if report is None
                    else {
                        **report.to_json(),
                        "records_before_run": before,
                        "previous_log": str(moved.path) if isinstance(moved, MovedLog) else None,
                    },
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        _print_summary(narrator, report, plan, before)
    return 0 if report is None or report.intact else 1
