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
from typing import Any, TextIO

import anyio
from dsh_policy.audit.keys import load_private_key
from dsh_policy.audit.verify import VerificationReport, verify_log
from dsh_policy.core import Harness, Message, ModelReply, ModelRequest, ModelToolCall, ToolExecution
from dsh_policy.policy.cli.options import (
    USAGE_EXIT,
    CommandParser,
    UsageError,
    add_policy_options,
    print_errors,
    sources_from,
)
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.demo.sandbox import Sandbox
from dsh_policy.policy.demo.script import ScriptedTurn, SessionScript, load_session_script
from dsh_policy.policy.demo.tools import sandbox_tools
from dsh_policy.policy.events import StepEvent, StepVerdict
from dsh_policy.policy.runtime.audit_plan import AuditPlan, audit_plan
from dsh_policy.policy.runtime.auditing import CallOutcome
from dsh_policy.policy.runtime.deployment import deploy
from dsh_policy.policy.runtime.gateway import PolicyGateway

_ARG_KEYS = ("command", "path", "url", "channel")
_RAN = frozenset({"ALLOW", "ASK>OK", "REDACT"})


def _brief_args(policy: Policy, args: Any) -> str:
    """One line for a call's arguments, redacted first: the terminal is an exit too."""
    redacted, _ = policy.redact_arguments(args)
    if isinstance(redacted, dict):
        for key in _ARG_KEYS:
            if isinstance(redacted.get(key), str):
                text = redacted[key]
                break
        else:
            text = json.dumps(redacted, ensure_ascii=False)
    else:
        text = json.dumps(redacted, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= 72 else text[:69] + "..."


def _label(outcome: CallOutcome) -> str:
    """The one word a reader scans for: what happened to the call."""
    review = outcome.review
    if outcome.guard is not None and outcome.guard.denied:
        return "DENY"
    if outcome.denied_by == "approval":
        return "ASK>DENY"
    if outcome.denied_by is not None:
        return "DENY"
    if outcome.pre_execute is not None and outcome.pre_execute.decision == "ask":
        return "ASK>OK"
    if review is not None and review.decision == "block":
        return "BLOCK"
    if review is not None and review.redactions:
        return "REDACT"
    if outcome.result.is_error:
        return "ERROR"
    return "ALLOW"


def _deciding(outcome: CallOutcome) -> tuple[list[str], str | None]:
    """The rules and message that explain the label."""
    if outcome.guard is not None and outcome.guard.denied:
        return list(outcome.guard.rules), outcome.guard.message
    review = outcome.review
    if review is not None and (review.decision == "block" or review.redactions):
        return list(review.rules), review.message or f"{review.redactions} redaction(s)"
    pre = outcome.pre_execute
    if pre is not None and (pre.decision != "allow" or pre.rules):
        return list(pre.rules), pre.message
    if outcome.result.is_error:
        return [], outcome.result.error_message
    return [], None


@dataclass(slots=True)
class Narrator:
    """Prints the session as it runs (text) and keeps every event for the summary and JSON."""

    out: TextIO
    text: bool
    policy: Policy | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

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
        self.say(f"    approval asked for {execution.name}: {reason or 'no reason given'} -> {answer}")

    def call_settled(self, outcome: CallOutcome) -> None:
        label = _label(outcome)
        rules, message = _deciding(outcome)
        self.counts[label] += 1
        assert self.policy is not None
        line = f"    {label:<8} {outcome.call.tool:<12} {_brief_args(self.policy, outcome.call.args)}"
        if rules:
            line += f"\n             rules: {', '.join(rules)}"
        if message:
            line += f"\n             {message}"
        if outcome.review is not None and outcome.review.contexts and label in _RAN:
            line += f"\n             + {len(outcome.review.contexts)} context message(s) for the model"
        self.say(line)
        self.events.append(
            {
                "event": "call",
                "turn": outcome.call.turn,
                "step": outcome.call.step,
                "tool": outcome.call.tool,
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
                self.say(f"  CONTEXT  step {event.step}: {len(verdict.contexts)} message(s) added"
                         f" by {', '.join(verdict.rules)}")
            return
        self.counts["REJECT"] += 1
        self.say(f"  REJECT   step {event.step}: {verdict.message or 'rejected by policy'}")
        if verdict.rules:
            self.say(f"             rules: {', '.join(verdict.rules)}")
        self.events.append(
            {"event": "step_rejected", "turn": event.turn, "step": event.step,
             "rules": list(verdict.rules), "message": verdict.message}
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
    return parser


def _print_summary(narrator: Narrator, report: VerificationReport | None, plan: AuditPlan | None) -> None:
    counts = narrator.counts
    calls = sum(n for label, n in counts.items() if label != "REJECT")
    parts = [f"{counts[label]} {label.lower()}" for label in
             ("ALLOW", "ASK>OK", "ASK>DENY", "DENY", "REDACT", "BLOCK", "ERROR") if counts[label]]
    narrator.say(f"\nsummary: {calls} tool call(s): {', '.join(parts) or 'none'}; "
                 f"{counts['REJECT']} step(s) rejected")
    if report is None or plan is None:
        narrator.say("audit: no audit log (use --audit LOG)")
        return
    verdict = "INTACT" if report.intact else "FAILED"
    anchored = (f"anchored through seq {report.anchored_through}" if report.anchored_through is not None
                else "not anchored by a checkpoint")
    narrator.say(f"audit: {plan.path}: {report.records_checked} records, {verdict}; {anchored} "
                 f"({report.signature_mode} checkpoints)")
    narrator.say(f"       verify it yourself: dsh-policy verify {plan.path}")


def main(argv: Sequence[str]) -> int:
    """Entry point of ``dsh-policy run``."""
    try:
        args = _parser().parse_args(list(argv))
    except UsageError as error:
        print(error, file=sys.stderr)
        return USAGE_EXIT
    sources = sources_from(args)
    script = load_session_script(args.session)
    if isinstance(sources, list) or isinstance(script, list):
        print_errors([error for found in (sources, script) if isinstance(found, list) for error in found])
        return USAGE_EXIT
    plan = audit_plan(sources, path=args.audit, fsync=args.fsync, signing_key=args.signing_key,
                      fail_closed=True if args.fail_closed else None)
    narrator = Narrator(sys.stdout, text=args.format == "text")
    deployment = deploy(sources, audit=plan, watch=False, observers=[narrator])
    if isinstance(deployment, list):
        print_errors(deployment)
        return USAGE_EXIT
    policy = narrator.policy = deployment.policy
    narrator.say(f"session {script.name}: {len(script.turns)} turn(s); policy {policy.digest[:19]}... "
                 f"({', '.join(p.name for p in policy.packs)}; engine {policy.engine_name})")
    with deployment:
        anyio.run(run_session, script, deployment.gateway, narrator)
    report = None
    if plan is not None:
        # The signing key's public half makes the closing verification check signatures.
        key = load_private_key(plan.signing_key) if plan.signing_key else None
        report = verify_log([plan.path], public_key=key)
    if args.format == "json":
        print(json.dumps({
            "session": script.name,
            "policy": {"digest": policy.digest, "engine": policy.engine_name,
                       "packs": [p.name for p in policy.packs]},
            "events": narrator.events,
            "summary": dict(narrator.counts),
            "audit": None if report is None else report.to_json(),
        }, indent=2, ensure_ascii=False))
    else:
        _print_summary(narrator, report, plan)
    return 0 if report is None or report.intact else 1
