"""Turning gateway decisions into audit records (AUDIT.md "Record"), one small step at a time.

The journey of a record reads like a structlog pipeline: gather the facts of a decision, redact the
arguments (keeping only a digest of the original), make every value fit the log's canonical domain,
then hand the fields to :class:`~dsh_policy.audit.writer.AuditWriter`, which owns ``seq``, ``ts``,
``prev`` and ``hash``. Secrets never reach the writer in clear: arguments, prompts and error
messages pass through the policy's redaction (its ``redact`` rules plus every shipped detector).

Both the native harness plugin and the command-hook adapters record through :class:`DecisionAuditor`,
so a log written by Claude Code hooks and one written by our own loop have the same shape.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import structlog
from dsh_policy.audit.losses import ReopeningWriter
from dsh_policy.audit.record import DEPTH_MARKER, MAX_RECORD_DEPTH, MAX_SAFE_INTEGER, fit_to_domain
from dsh_policy.audit.writer import AuditError, AuditRecordError, AuditWriteError, AuditWriter
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import (
    GuardVerdict,
    PolicyStamp,
    ResultVerdict,
    StepEvent,
    StepVerdict,
    ToolCallEvent,
    ToolCallVerdict,
)
from dsh_policy.policy.fingerprint import rule_fingerprints
from dsh_policy.policy.runtime.delivery import current_delivery

__all__ = [
    "DEPTH_MARKER",
    "MAX_RECORD_DEPTH",
    "AuditUnavailableError",
    "CallOutcome",
    "DecisionAuditor",
    "PolicyFacts",
    "ResultFacts",
    "canonical_domain",
    "digest_json",
    "instant",
    "sha256_digest",
]

_log = structlog.get_logger("dsh_policy.audit")

#: Integers the canonical form can hold exactly (AUDIT.md: keep integers within +/-2^53).


class PolicyFacts(Protocol):
    """What the auditor needs to know about the policy in force (``Policy`` satisfies this)."""

    @property
    def digest(self) -> str: ...

    @property
    def engine_name(self) -> str: ...

    def redact_arguments(self, args: Any) -> tuple[Any, int]: ...


@dataclass(frozen=True, slots=True)
class ResultFacts:
    """The normalized tool result as recorded: never its content, only a digest of it."""

    is_error: bool
    text: str
    error_code: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """Everything the gateway learned about one call, gathered at ``tools/result``."""

    call: ToolCallEvent
    pre_execute: ToolCallVerdict | None
    guard: GuardVerdict | None
    approval: str | None
    denied_by: str | None
    review: ResultVerdict | None
    post_action: str | None
    result: ResultFacts
    #: The instant post-execute rules saw as ``now`` (pre-execute and guard see ``call.now``).
    review_now: datetime.datetime | None = None
    #: The agent framework whose call this was (``policy.adapters``); None for our own harness.
    harness: str | None = None

    def deciding_policy(self) -> PolicyStamp | None:
        """The policy that decided this call (the gateway pins one per call; the first stamped
        verdict says which)."""
        for verdict in (self.pre_execute, self.guard, self.review):
            if verdict is not None and verdict.policy.digest:
                return verdict.policy
        return None


class AuditUnavailableError(Exception):
    """The audit log could not take a record; a fail-closed deployment refuses the call."""


def instant(moment: datetime.datetime) -> str:
    """RFC 3339 UTC with microseconds (``2026-05-01T12:00:00.123456Z``), as records spell ``now``."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _now_field(moment: datetime.datetime | None) -> dict[str, str]:
    return {} if moment is None else {"now": instant(moment)}


def sha256_digest(data: bytes) -> str:
    """``sha256:<hex>``, the digest notation used across records."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_json(value: Any) -> str:
    """Digest of a JSON value in sorted-key compact form (stable for equal values).

    Total over everything a model can send: a value orjson refuses (a lone surrogate, nesting
    beyond its 255 levels or beyond the interpreter's stack) is digested by an iterative ASCII
    encoding under its own domain tag, so it can never collide with a fast-path digest and the
    record still commits to every byte of the original."""
    try:
        return sha256_digest(orjson.dumps(_number_safe(value), option=orjson.OPT_SORT_KEYS))
    except (TypeError, ValueError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        return _streamed_digest(value)


def canonical_domain(value: Any) -> Any:
    """Fit a JSON value into the log's canonical domain (:func:`~dsh_policy.audit.record.fit_to_domain`),
    describing anything that is not JSON by its ``repr``: every value a model or a tool can
    produce has a record, and the record always serializes."""
    return fit_to_domain(value, describe_other=True)


def _number_safe(value: Any) -> Any:
    """The digest's view of a value: numbers as :func:`canonical_domain` renders them, nothing
    else changed (no cap, no replacement: the digest must commit to the original)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping):
        return {str(key): _number_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_number_safe(item) for item in value]
    return repr(value)


_STREAMED_TAG = b"dsh-policy/audit/args-digest/streamed/v1\x00"


class _Token(bytes):
    """Punctuation pushed on the streamed digest's work stack (JSON values are never bytes)."""


_OPEN_OBJECT, _CLOSE_OBJECT = _Token(b"{"), _Token(b"}")
_OPEN_ARRAY, _CLOSE_ARRAY = _Token(b"["), _Token(b"]")
_COMMA, _COLON = _Token(b","), _Token(b":")


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def _streamed_digest(value: Any) -> str:
    """sha256 over an unambiguous ASCII JSON rendering (sorted keys, ``\\uXXXX`` escapes), built
    with an explicit stack so no nesting depth can exhaust the interpreter's."""
    digest = hashlib.sha256(_STREAMED_TAG)
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            digest.update(item)
        elif isinstance(item, Mapping):
            keyed = sorted(((str(key), member) for key, member in item.items()), key=_first)
            work: list[Any] = [_OPEN_OBJECT]
            for index, (key, member) in enumerate(keyed):
                work += [_COMMA] if index else []
                work += [_Token(json.dumps(key).encode("ascii")), _COLON, member]
            work.append(_CLOSE_OBJECT)
            stack.extend(reversed(work))
        elif isinstance(item, list | tuple):
            work = [_OPEN_ARRAY]
            for index, member in enumerate(item):
                work += [_COMMA, member] if index else [member]
            work.append(_CLOSE_ARRAY)
            stack.extend(reversed(work))
        else:
            digest.update(json.dumps(_number_safe(item)).encode("ascii"))
    return "sha256:" + digest.hexdigest()


class DecisionAuditor:
    """Builds and appends the gateway's audit records. ``fail_closed`` makes a failed write raise
    :class:`AuditUnavailableError` (the caller refuses the call); otherwise the decision stands and
    the loss is counted and logged. Given a :class:`ReopeningWriter`, a fail-open gateway also
    reopens the log and the next record written is preceded by a ``records_lost`` record."""

    def __init__(
        self, writer: AuditWriter | ReopeningWriter, policy: PolicyFacts, *, fail_closed: bool = False
    ) -> None:
        self.writer = writer
        self.policy = policy
        self.fail_closed = fail_closed
        self.records_lost = 0  #: records this auditor could not write
        # The last call's recorded fields: a fail-closed call is recorded twice (tool_dispatch,
        # then tool_result) with the same event, and redacting its arguments is the costly part.
        self._last_call: tuple[ToolCallEvent, dict[str, Any]] | None = None

    # --- building blocks ---------------------------------------------------------------------------

    def _policy_fields(self, stamp: PolicyStamp | None = None) -> dict[str, Any]:
        """The deciding policy: the verdict's stamp when there is one (the policy that decided,
        even if a reload has replaced it since), else the policy in force (reload records). A
        deployment whose self-protection is off says so in every record."""
        if stamp is not None and stamp.digest:
            fields: dict[str, Any] = {"digest": stamp.digest, "engine": stamp.engine}
            unprotected = stamp.unprotected
        else:
            fields = {"digest": self.policy.digest, "engine": self.policy.engine_name}
            protection = getattr(self.policy, "protection", None)
            unprotected = protection is not None and not protection.enabled
        if unprotected:
            fields["self_protection"] = "off"
        return fields

    def redacted(self, value: Any) -> Any:
        """``value`` as it may be recorded: every redaction applied, fitted to the record domain."""
        # No thaw first: redaction walks frozen values itself, and a recursive copy of a deeply
        # nested argument could exhaust the stack outside the policy's fail-closed guard.
        redacted, _ = self.policy.redact_arguments(value)
        return canonical_domain(redacted)

    def _verdict_fields(
        self, rules: Sequence[str], message: str | None, shadow: Sequence[str]
    ) -> dict[str, Any]:
        """Rule ids and message of a verdict. The message is redacted: a ``message_expression``
        can quote the arguments (``"fetching " + args.url``), secrets included."""
        fields: dict[str, Any] = {"rules": list(rules)}
        if message is not None:
            fields["message"] = self.redacted(message)
        if shadow:
            fields["shadow_rules"] = list(shadow)
        return fields

    def call_fields(self, call: ToolCallEvent) -> dict[str, Any]:
        """A call as recorded: identity, redacted arguments and a digest of the originals."""
        last = self._last_call
        if last is not None and last[0] is call:
            return dict(last[1])
        fields: dict[str, Any] = {
            "call_id": call.call_id,
            "root_call_id": call.root_call_id,
            "name": call.tool,
            "nested": call.nested,
            "args": self.redacted(call.args),
            "args_digest": digest_json(call.args),
        }
        if call.original_name is not None:
            fields["original_name"] = call.original_name
        self._last_call = (call, fields)
        return dict(fields)

    @staticmethod
    def _coordinates(session_id: str, agent_id: str | None, turn: int, step: int) -> dict[str, Any]:
        return {"session": session_id, "agent": agent_id, "turn": turn, "step": step}

    def _append(self, kind: str, fields: dict[str, Any], stamp: PolicyStamp | None = None) -> None:
        fields["policy"] = self._policy_fields(stamp)
        delivery = current_delivery()
        if delivery is not None:
            fields["delivery"] = canonical_domain(dict(delivery))
        try:
            try:
                self.writer.append(kind, fields)
            except AuditRecordError:
                # A value the log's domain refuses (a lone surrogate in a message, a huge int in a
                # hook field): record it in its fitted form rather than lose the record.
                self.writer.append(kind, canonical_domain(fields))
        except AuditError as error:
            self.records_lost += 1
            if isinstance(self.writer, ReopeningWriter) and not isinstance(error, AuditWriteError):
                self.writer.note_loss(kind, str(error))  # (write failures it counts itself)
            _log.error(
                "audit write failed",
                kind=kind,
                error=str(error),
                fail_closed=self.fail_closed,
                records_lost=self.records_lost,
            )
            if self.fail_closed:
                raise AuditUnavailableError(str(error)) from None

    # --- records -----------------------------------------------------------------------------------

    def tool_dispatch(
        self, call: ToolCallEvent, stamp: PolicyStamp | None = None, *, harness: str | None = None
    ) -> None:
        """A call is about to run (fail-closed deployments only): proof it was logged first.
        ``harness`` names the agent framework the call came through (``policy.adapters``)."""
        fields: dict[str, Any] = {
            **self._coordinates(call.session_id, call.agent_id, call.turn, call.step),
            "call": self.call_fields(call),
        }
        if harness is not None:
            fields["harness"] = harness
        self._append("tool_dispatch", fields, stamp)

    def approval_event(self, kind: str, fields: dict[str, Any]) -> None:
        """An approval queue event (``approval_requested``, ``approval_decided``, ``approval_used``,
        ``approval_closed``, ``grant_made``, ``grant_used``, ``grant_revoked``: docs/approvals.md).
        Their arguments and messages were redacted before they reached the queue."""
        self._append(kind, canonical_domain(dict(fields)))

    def tool_result(self, outcome: CallOutcome) -> None:
        """Every call's final result with every decision that shaped it."""
        call = outcome.call
        decision: dict[str, Any] = {"denied_by": outcome.denied_by, "approval": outcome.approval}
        if outcome.pre_execute is not None:
            pre = outcome.pre_execute
            decision["pre_execute"] = {
                "decision": pre.decision,
                **self._verdict_fields(pre.rules, pre.message, pre.shadow_rules),
                **_now_field(call.now),
            }
        if outcome.guard is not None:
            guard = outcome.guard
            decision["guard"] = {
                "denied": guard.denied,
                **self._verdict_fields(guard.rules, guard.message, guard.shadow_rules),
            }
        if outcome.review is not None:
            review = outcome.review
            decision["post_execute"] = {
                "decision": review.decision,
                "action": outcome.post_action,
                "redactions": review.redactions,
                **self._verdict_fields(review.rules, review.message, review.shadow_rules),
                **_now_field(outcome.review_now),
            }
        result: dict[str, Any] = {
            "is_error": outcome.result.is_error,
            "error_code": outcome.result.error_code,
            "content_digest": sha256_digest(outcome.result.text.encode("utf-8", "surrogatepass")),
        }
        if outcome.result.error_message is not None:
            result["error_message"] = self.redacted(outcome.result.error_message)
        fields: dict[str, Any] = {
            **self._coordinates(call.session_id, call.agent_id, call.turn, call.step),
            "call": self.call_fields(call),
            "decision": decision,
            "result": result,
        }
        if outcome.harness is not None:
            fields["harness"] = outcome.harness
        self._append("tool_result", fields, outcome.deciding_policy())

    def _step_messages(self, event: StepEvent, *, with_text: bool) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for message in event.messages:
            row: dict[str, Any] = {"role": message.role, "source": message.source_kind}
            if message.source_plugin is not None:
                row["plugin"] = message.source_plugin
            if with_text:
                row["text"] = self.redacted(message.text)
            row["text_digest"] = sha256_digest(message.text.encode("utf-8", "surrogatepass"))
            rows.append(row)
        return rows

    def step_rejected(self, event: StepEvent, verdict: StepVerdict) -> None:
        """A pre-step the policy rejected (no model call happened): the step's messages, redacted."""
        self._append(
            "step_rejected",
            {
                **self._coordinates(event.session_id, event.agent_id, event.turn, event.step),
                "decision": {
                    **self._verdict_fields(verdict.rules, verdict.message, verdict.shadow_rules),
                    **_now_field(event.now),
                },
                "messages": self._step_messages(event, with_text=True),
            },
            verdict.policy,
        )

    def step_entered(self, event: StepEvent, verdict: StepVerdict) -> None:
        """A pre-step the policy let through (with the rules that added context messages). The
        messages are recorded as digests only, like the prompts a hook records: an entered step is
        ordinary conversation, which the log has no business keeping in clear."""
        self._append(
            "step_entered",
            {
                **self._coordinates(event.session_id, event.agent_id, event.turn, event.step),
                "decision": {
                    "decision": verdict.decision,
                    "contexts": len(verdict.contexts),
                    **self._verdict_fields(verdict.rules, verdict.message, verdict.shadow_rules),
                    **_now_field(event.now),
                },
                "messages": self._step_messages(event, with_text=False),
            },
            verdict.policy,
        )

    def policy_loaded(
        self,
        packs: Sequence[Any],
        compiled: CompiledPolicy | None = None,
        *,
        summary: Mapping[str, Any] | None = None,
        changes: Mapping[str, Any] | None = None,
    ) -> None:
        """A policy came into force (at start and after every successful reload); ``packs`` are
        objects with ``path``, ``name`` and ``digest`` (``Policy.packs`` or ``CompiledPolicy.packs``).

        With the compiled policy (``compiled``, else the auditor's policy when it has one) the
        record also holds each rule's match fingerprint and each pack's params in force (redacted),
        so replay knows which rules a later policy change left alone and what the params were.
        ``summary`` (``policy_changes.policy_summary``) lets an auditor diff consecutive policies;
        ``changes`` is that diff from the policy before, ``weakening`` marked."""
        fields: dict[str, Any] = {
            "packs": [{"path": pack.path, "name": pack.name, "digest": pack.digest} for pack in packs]
        }
        if compiled is None:
            found = getattr(self.policy, "compiled", None)
            compiled = found if isinstance(found, CompiledPolicy) else None
        stamp: PolicyStamp | None = None
        if compiled is not None:
            fields["rules"] = rule_fingerprints(compiled)
            fields["params"] = {
                pack.name: self.redacted(thaw(pack.activation_params)) for pack in compiled.packs
            }
            protection = compiled.protection
            unprotected = protection is not None and not protection.enabled
            # the one that came into force
            stamp = PolicyStamp(compiled.digest, compiled.engine_name, unprotected)
        if summary is not None:
            fields["summary"] = canonical_domain(summary)
        if changes is not None:
            fields["changes"] = canonical_domain(changes)
        self._append("policy_loaded", fields, stamp)

    def policy_reload_refused(self, summary: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
        """An edit loaded but would weaken enforcement, and the deployment refuses that: the policy
        in force stays (its digest is this record's), the refused one is summarised."""
        self._append(
            "policy_reload_refused",
            {"refused": canonical_domain(summary), "changes": canonical_domain(changes)},
        )

    def policy_reload_failed(self, errors: Sequence[PolicyError]) -> None:
        """An edit failed to load; the previous policy stays in force (its digest is recorded)."""
        self._append("policy_reload_failed", {"errors": [str(error) for error in errors]})

    def hook_told(self, fields: Mapping[str, Any]) -> None:
        """What a hook told the agent when that was not its gateway's answer (the answer was
        lost, late or broken, and the hook gave the safe answer instead)."""
        self.adapter_event("hook_told", fields)

    def adapter_event(self, kind: str, fields: Mapping[str, Any]) -> None:
        """A record of an adapter's own kind (the MCP proxy's ``mcp_tool`` pins and quarantines,
        the hooks' ``hook_told`` and ``hook_event``), every value fitted to the log's domain and
        the policy in force stamped on it."""
        self._append(kind, {key: canonical_domain(value) for key, value in fields.items()})

    def hook_event(self, fields: Mapping[str, Any]) -> None:
        """A harness hook event with no tool decision of its own (session start, stop)."""
        self.adapter_event("hook_event", fields)
