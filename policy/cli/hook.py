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
from collections.abc import Mapping, Sequence
from typing import Final

from dsh_policy.policy.cli.options import CommandParser, UsageError, add_policy_options, sources_from
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.hooks.claude_code import ClaudeCodeDialect
from dsh_policy.policy.hooks.codex import CodexDialect
from dsh_policy.policy.hooks.events import HookDecision, SessionContext, announcement, decide_hook
from dsh_policy.policy.hooks.protocol import (
    EXIT_BLOCK,
    EXIT_OK,
    MAX_INPUT_BYTES,
    EventName,
    HookDialect,
    HookInput,
    HookInputError,
    HookReply,
    HookVerdict,
    deny_reply,
    failure_verdict,
    parse_hook_input,
)
from dsh_policy.policy.hooks.runtime_paths import DeploymentSpec
from dsh_policy.policy.hooks.secret_reads import BASH_OUTPUT_MODES, OutputFilter, redact_output_argv
from dsh_policy.policy.hooks.vocabulary import Harness
from dsh_policy.policy.loading import LoadFailure

DIALECTS: Final[Mapping[Harness, HookDialect]] = {
    "claude-code": ClaudeCodeDialect(),
    "codex": CodexDialect(),
}


def _parser() -> CommandParser:
    parser = CommandParser(
        prog="dsh-policy hook",
        description="Act as a Claude Code or Codex command hook: event JSON on stdin, "
        "the harness's decision protocol out (exit 0 or 2).",
    )
    parser.add_argument("harness", choices=list(DIALECTS), help="whose hook protocol to speak")
    add_policy_options(parser, positional_packs=False)
    parser.add_argument("--audit", metavar="LOG", help="append every hook decision to this audit log")
    parser.add_argument(
        "--announce-packs",
        action="store_true",
        help="on SessionStart, tell the model which packs govern the session",
    )
    parser.add_argument(
        "--redact-bash-output",
        choices=list(BASH_OUTPUT_MODES),
        default="when-secret",
        help="Claude Code: route Bash output through the redactor when the command names a file "
        "holding a secret (default), for every call, or never",
    )
    return parser


def main(argv: list[str]) -> int:
    """Entry point; returns 0 or 2, whatever happens."""
    try:
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
        args = _parser().parse_args(argv)
    except UsageError as error:
        # We cannot know the protocol yet; exit 2 with a reason refuses in every harness.
        _emit(deny_reply(str(error)))
        return EXIT_BLOCK
    dialect = DIALECTS[args.harness]
    raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    payload = parse_hook_input(raw)
    event = _event_of(payload)
    try:
        verdict = _decide_and_record(args, raw, payload)
    except Exception as exc:  # a bug, or a fail-closed audit log that cannot write
        verdict = failure_verdict(event, f"{type(exc).__name__}: {exc}")
    return _answer(dialect, verdict)


def _event_of(payload: HookInput | HookInputError) -> EventName | None:
    """The event that fired, when the input says so readably (its answer is spelled for it)."""
    return payload.event if isinstance(payload, HookInputError) else payload.hook_event_name


def _decide_and_record(
    args: argparse.Namespace, raw: bytes, payload: HookInput | HookInputError
) -> HookVerdict:
    """Load the policy, decide, and record the decision when an audit log is configured."""
    event = _event_of(payload)
    sources = sources_from(args)
    policy: Policy | None = None
    if isinstance(sources, list):
        decision = HookDecision(failure_verdict(event, "cannot load policy: " + _summary(sources)))
    else:
        built = sources.build()
        if isinstance(built, LoadFailure):
            decision = HookDecision(failure_verdict(event, "cannot load policy: " + _summary(built.errors)))
        elif isinstance(payload, HookInputError):
            policy = Policy(built)
            decision = HookDecision(failure_verdict(payload.event, str(payload)))
        else:
            policy = Policy(built)
            output_filter = OutputFilter(redact_output_argv(spec_from(args)), args.redact_bash_output)
            session = SessionContext(announcement(policy) if args.announce_packs else None, output_filter)
            decision = decide_hook(policy, args.harness, payload, session)
    configured = not isinstance(sources, list) and sources.config is not None and sources.config.audit
    if args.audit is not None or configured:
        # Imported only when recording: the audit writer is a noticeable share of a hook's start-up,
        # and a hook pays its start-up on every tool call.
        from dsh_policy.policy.hooks.audit import record_invocation

        record_invocation(args.audit, sources, policy, args.harness, payload, raw, decision)
    return decision.verdict


def spec_from(args: argparse.Namespace) -> DeploymentSpec:
    """The deployment these options name (the same one the fast client and ``serve`` compute)."""
    return DeploymentSpec.from_options(
        config=args.config, packs=list(args.packs), params=list(args.params), engine=args.engine,
        shadow=bool(args.shadow), audit=args.audit,
    )


def _summary(errors: Sequence[PolicyError]) -> str:
    shown = "; ".join(str(error) for error in errors[:3])
    more = len(errors) - 3
    return shown + (f"; and {more} more" if more > 0 else "")


def _answer(dialect: HookDialect, verdict: HookVerdict) -> int:
    try:
        reply = dialect.render(verdict)
    except Exception as exc:  # a rendering bug: fall back to the protocol's plainest refusal
        reply = _fallback(dialect, verdict, exc)
    if reply.exit_code not in (EXIT_OK, EXIT_BLOCK):
        reply = deny_reply(f"dsh-policy failed closed: dialect produced exit code {reply.exit_code}")
    _emit(reply)
    return reply.exit_code


def _fallback(dialect: HookDialect, verdict: HookVerdict, exc: Exception) -> HookReply:
    failed = failure_verdict(verdict.event, f"{type(exc).__name__} while answering: {exc}")
    try:
        return dialect.render(failed)
    except Exception:
        return deny_reply(failed.reason)


def _emit(reply: HookReply) -> None:
    if reply.stdout:
        sys.stdout.write(reply.stdout)
        sys.stdout.flush()
    if reply.stderr:
        sys.stderr.write(reply.stderr)
        sys.stderr.flush()
