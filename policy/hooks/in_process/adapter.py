"""``dsh-policy hook claude-code|codex --pack PACK... [--config FILE] [--param K=V] [--audit LOG]``.

Acts as that harness's command hook: one event as JSON on stdin, that harness's decision protocol
out (exit 0 + optional JSON on stdout, or exit 2 + the reason on stderr). See HOOKS.md, and
``hook_claude_code`` / ``hook_codex`` for how each verdict is spelled.

The command fails closed everywhere. A non-zero exit other than 2 is a *non-blocking* error in both
harnesses (the tool call runs), so this entry point can only ever return 0 or 2: bad input, a pack
that does not load, an audit log that cannot be written (when the deployment says fail-closed) and
any exception become the safe verdict for the event that fired (:func:`failure_verdict`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_policy.policy.command_line import UsageError, sources_from
from dsh_policy.policy.config import ApprovalSettings, PolicySources
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.hooks import project_scope
from dsh_policy.policy.hooks.dialects import DIALECTS, parse_for
from dsh_policy.policy.hooks.gateway.output_filter import redact_output_argv
from dsh_policy.policy.hooks.gateway.runtime_paths import spec_from
from dsh_policy.policy.hooks.hook_command import hook_parser
from dsh_policy.policy.hooks.in_process import failsafe
from dsh_policy.policy.hooks.protocol.events import HookDecision, SessionContext, announcement, decide_hook
from dsh_policy.policy.hooks.protocol.messages import (
    EXIT_BLOCK,
    EXIT_OK,
    FAIL_CLOSED_PREFIX,
    MAX_INPUT_BYTES,
    SUPPORTED_EVENTS,
    EventName,
    HookInput,
    HookInputError,
    HookReply,
    HookVerdict,
    deny_reply,
    event_of,
    failure_verdict,
    render_safely,
)
from dsh_policy.policy.hooks.review.secret_reads import OutputFilter, secret_reads_review
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.delivery import recording_delivery

#: Seconds of the decision's budget kept for recording and answering after waiting for an
#: approver (an ``ask`` with ``approvals:`` configured, docs/approvals.md).
APPROVAL_RESERVE_SECONDS: Final[float] = 3.0


class _Budget:
    """When this hook's decision must be answered (``time.monotonic``): a wait for an approver
    ends early enough to record the call and answer before the watcher or the client gives up."""

    end: float | None = None


def main(
    argv: list[str], *, delivery: Mapping[str, str] | None = None, deadline: float | None = None
) -> int:
    """Entry point; returns 0 or 2, whatever happens. ``delivery`` (the hook client's: why it
    decides in process instead of its gateway) goes into the record; ``deadline`` is when the
    client needs the answer (``time.monotonic``; the default decision budget when None)."""
    _Budget.end = deadline if deadline is not None else time.monotonic() + failsafe.deadline_seconds()
    try:
        with recording_delivery(delivery):
            return _run(argv)
    except BaseException as exc:  # the last line of fail-closed defence
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return EXIT_OK
        # Even a broken stderr must not turn the refusal into a traceback (exit 1 fails open).
        with contextlib.suppress(Exception):
            _emit(deny_reply(f"dsh-policy failed closed: {type(exc).__name__}: {exc}"))
        return EXIT_BLOCK


def _run(argv: list[str]) -> int:
    try:
        args = hook_parser().parse_args(project_scope.expand(argv))
    except UsageError as error:
        # We cannot know the protocol yet; exit 2 with a reason refuses in every harness.
        _emit(deny_reply(str(error)))
        return EXIT_BLOCK
    raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    reply = _reply_for(args, raw)
    _emit(reply)
    return reply.exit_code


def _reply_for(args: argparse.Namespace, raw: bytes) -> HookReply:
    """Decide one event and spell the answer; every failure is the event's safe answer."""
    dialect = DIALECTS[args.harness]
    payload = parse_for(args.harness, raw)
    event = event_of(payload)
    try:
        verdict = _decide_and_record(args, raw, payload)
    except MemoryError:
        verdict = failure_verdict(event, "out of memory while deciding")
    except Exception as exc:  # a bug, or a fail-closed audit log that cannot write
        verdict = failure_verdict(event, f"{type(exc).__name__}: {exc}")
    return render_safely(dialect, verdict)


def process_main(
    argv: list[str], *, delivery: Mapping[str, str] | None = None, seconds: float | None = None
) -> int:
    """The console script's ``hook``: the decision runs in a child process under a memory limit
    and a deadline (``seconds``, when the hook client has less time left than the default),
    watched by this one, which gives the event's safe answer on any signal or failure
    (``failsafe``). Returns 0 or 2."""
    failsafe.install_signal_handlers()
    budget = failsafe.deadline_seconds() if seconds is None else min(seconds, failsafe.deadline_seconds())
    _Budget.end = time.monotonic() + budget  # the deciding child inherits it
    try:
        try:
            args = hook_parser().parse_args(project_scope.expand(argv))
        except UsageError as error:
            return failsafe.emit(_plain(deny_reply(str(error))))
        raw = failsafe.stdin_bytes(MAX_INPUT_BYTES + 1)
        dialect = DIALECTS[args.harness]
        claimed = failsafe.sniff_event(raw)
        event: EventName | None = claimed if claimed in SUPPORTED_EVENTS else None

        def safe(reason: str) -> failsafe.Reply:
            return _plain(render_safely(dialect, failure_verdict(event, reason)))

        failsafe.set_safe_answer(safe)
        with recording_delivery(delivery):  # the child inherits it
            return failsafe.supervise(lambda: _plain(_reply_for(args, raw)), seconds)
    except BaseException as exc:  # the watcher's own last line of defence
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return EXIT_OK  # --help
        return failsafe.emit(_plain(deny_reply(f"{FAIL_CLOSED_PREFIX}: {type(exc).__name__}: {exc}")))


def _plain(reply: HookReply) -> failsafe.Reply:
    return failsafe.Reply(reply.exit_code, reply.stdout, reply.stderr)


def _decide_and_record(
    args: argparse.Namespace, raw: bytes, payload: HookInput | HookInputError
) -> HookVerdict:
    """Load the policy, decide, and record the decision when an audit log is configured."""
    event = event_of(payload)
    sources = sources_from(args, unprotected=bool(args.no_self_protection))
    policy: Policy | None = None
    answer: HookVerdict | None = None  # differs from the recorded verdict when an approval admits
    approval: str | None = None  # what the approval queue said about an asked call
    recording = args.audit is not None or (
        not isinstance(sources, list) and sources.config is not None and sources.config.audit is not None
    )
    events: list[tuple[str, dict[str, Any]]] | None = [] if recording else None
    if isinstance(sources, list):
        decision = HookDecision(failure_verdict(event, "cannot load policy: " + _summary(sources)))
    else:
        built = sources.build(audit_path=args.audit)
        if isinstance(built, LoadFailure):
            decision = HookDecision(failure_verdict(event, "cannot load policy: " + _summary(built.errors)))
        elif isinstance(payload, HookInputError):
            policy = Policy(built)
            decision = HookDecision(failure_verdict(payload.event, str(payload)))
        else:
            policy = Policy(built)
            refusal = _weakening_refused(args, sources, policy)
            if refusal is not None:
                decision = HookDecision(failure_verdict(event, refusal))
            else:
                output_filter = OutputFilter(redact_output_argv(spec_from(args)), args.redact_bash_output)
                text = announcement(policy) if args.announce_packs else None
                decision = decide_hook(
                    policy, args.harness, payload, SessionContext(text, secret_reads_review(output_filter))
                )
                approvals = sources.config.approvals if sources.config is not None else None
                if approvals is not None and decision.verdict.action == "ask":
                    decision, answer, approval = _gate_ask(args, approvals, policy, decision, events)
    configured = not isinstance(sources, list) and sources.config is not None and sources.config.audit
    if args.audit is not None or configured:
        # Imported only when recording: the audit writer is a noticeable share of a hook's start-up,
        # and a hook pays its start-up on every tool call.
        from dsh_policy.policy.hooks.gateway.audit import record_invocation

        record_invocation(
            args.audit, sources, policy, args.harness, payload, raw, decision, approval, events or ()
        )
    return answer if answer is not None else decision.verdict


def _gate_ask(
    args: argparse.Namespace,
    approvals: ApprovalSettings,
    policy: Policy,
    decision: HookDecision,
    events: list[tuple[str, dict[str, Any]]] | None,
) -> tuple[HookDecision, HookVerdict, str | None]:
    """The resident gateway's approval path, in this process: queue the call, wait a bounded
    time for an approver (what is left of the decision's budget, less the time to record and
    answer), admit it once when approved. The queue's events are collected into ``events`` for
    the record this hook writes (None: no audit log, so they stay journaled for the gateway)."""
    from dsh_policy.policy.approvals import ApprovalChannel
    from dsh_policy.policy.hooks.gateway.approvals import HOOK_WAIT_LIMIT, gate_ask

    left = (_Budget.end - time.monotonic()) if _Budget.end is not None else 0.0
    wait = max(0.0, min(HOOK_WAIT_LIMIT, left - APPROVAL_RESERVE_SECONDS))
    record = None if events is None else (lambda kind, fields: events.append((kind, fields)))
    gated = gate_ask(
        ApprovalChannel(approvals), policy, args.harness, decision, None, wait_limit=wait, record=record
    )
    return gated.recorded, gated.answer, gated.approval


def _weakening_refused(args: argparse.Namespace, sources: PolicySources, policy: Policy) -> str | None:
    """Why this run must refuse: the deployment refuses weakening changes, and the policy differs
    from the last one recorded in its log in a way that weakens enforcement."""
    config = sources.config
    from dsh_policy.policy.hooks.gateway.audit import audit_target
    from dsh_policy.policy.hooks.gateway.policy_state import state_path, transition
    from dsh_policy.policy.hooks.gateway.tamper_watch import TamperWatch

    target = audit_target(args.audit, sources)
    if target is None:
        return None
    tampered = TamperWatch((), target.path).failing_closed()  # the resident gateway's verdict
    if tampered is not None or config is None or not config.reload.refuse_weakening:
        return tampered
    change = transition(target.path, policy.compiled)
    if not change.refused(True):
        return None
    return (
        "the policy changed since the one last recorded and weakens enforcement ("
        + "; ".join(change.changes.weakened)
        + f"); this deployment refuses weakening changes until an operator accepts them by removing "
        f"{state_path(target.path)}"
    )


def _summary(errors: Sequence[PolicyError]) -> str:
    shown = "; ".join(str(error) for error in errors[:3])
    more = len(errors) - 3
    return shown + (f"; and {more} more" if more > 0 else "")


def _emit(reply: HookReply) -> None:
    if reply.stdout:
        sys.stdout.write(reply.stdout)
        sys.stdout.flush()
    if reply.stderr:
        sys.stderr.write(reply.stderr)
        sys.stderr.flush()
