"""The resident gateway's core, apart from any transport: decide, record, answer, report.

One :class:`GatewayService` per deployment holds the policy in force (reloaded off the decision
path by :mod:`.server`), the deployment's single audit auditor, and the dialects. Each request is
decided by the same functions the in-process hook uses (``parse_hook_input``, ``decide_hook``,
``record_decision``, the dialects), so a decision does not depend on which path made it.

Everything fails closed: a bug, or an audit log that cannot take a record when the deployment
says ``fail_closed``, becomes the event's safe answer.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from dsh_policy import __version__
from dsh_policy.audit.writer import AuditWriter
from dsh_policy.policy.approvals import ApprovalChannel
from dsh_policy.policy.decide import Policy
from dsh_policy.policy.hooks.dialects import DIALECTS, parse_for
from dsh_policy.policy.hooks.gateway.approvals import gate_ask
from dsh_policy.policy.hooks.gateway.audit import record_decision
from dsh_policy.policy.hooks.gateway.output_filter import redact_output_argv
from dsh_policy.policy.hooks.gateway.runtime_paths import DeploymentSpec
from dsh_policy.policy.hooks.gateway.tamper_watch import TamperWatch
from dsh_policy.policy.hooks.protocol.events import HookDecision, SessionContext, announcement, decide_hook
from dsh_policy.policy.hooks.protocol.messages import (
    EventName,
    HookInputError,
    HookReply,
    HookVerdict,
    deny_reply,
    event_of,
    failure_verdict,
    render_safely,
)
from dsh_policy.policy.hooks.review.output_review import (
    PendingCalls,
    record_chunk,
    review_chunk,
    withheld_notice,
)
from dsh_policy.policy.hooks.review.secret_reads import (
    BASH_OUTPUT_MODES,
    BashOutputMode,
    OutputFilter,
    secret_reads_review,
)
from dsh_policy.policy.runtime.auditing import DecisionAuditor
from dsh_policy.policy.runtime.delivery import recording_delivery

_log = structlog.get_logger("dsh_policy.gateway")


@dataclass(frozen=True, slots=True)
class Answered:
    """A hook request's reply and the event it answered (HTTP spells replies per event)."""

    reply: HookReply
    event: EventName | None


class GatewayService:
    """Decisions for one deployment; safe to call from many threads."""

    def __init__(
        self,
        spec: DeploymentSpec,
        policy: Policy,
        *,
        auditor: DecisionAuditor | None,
        writer: AuditWriter | None,
        audit_path: str | None,
        http_address: str | None = None,
    ) -> None:
        self.spec = spec
        self.policy = policy
        self.auditor = auditor
        self.writer = writer
        self.audit_path = audit_path
        self.http_address = http_address
        self.load_report: Callable[[], dict[str, Any]] | None = None  # set by the front ends
        self.tamper: TamperWatch | None = None  # set by the server: fails closed while it says so
        self.pending = PendingCalls()
        #: The deployment's approval queue (``approvals:``), set by the server; None: asks go to
        #: the client's prompt.
        self.approvals: ApprovalChannel | None = None
        self._filter_argv = redact_output_argv(spec)
        self._started_wall = time.time()
        self._started = time.monotonic()
        self._last_request = time.monotonic()
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    # --- bookkeeping ---------------------------------------------------------------------------

    def _count(self, what: str) -> None:
        with self._lock:
            self._counts[what] += 1
            self._last_request = time.monotonic()

    def decisions(self) -> int:
        """Hook events decided so far."""
        with self._lock:
            return sum(n for key, n in self._counts.items() if key.startswith("hook:"))

    def record_tamper(self, fields: dict[str, Any]) -> None:
        """Append a ``tamper_observed`` record (and say so on the gateway's own log)."""
        _log.error("tamper observed", **{k: v for k, v in fields.items() if k != "kind"})
        if self.auditor is None:
            return
        try:
            self.auditor.adapter_event("tamper_observed", fields)
        except Exception as exc:  # a fail-closed log that cannot write refuses calls anyway
            _log.error("cannot record a tamper observation", error=f"{type(exc).__name__}: {exc}")

    def idle_seconds(self) -> float:
        """Seconds since the last request."""
        return time.monotonic() - self._last_request

    def status(self) -> dict[str, Any]:
        """The health answer: policy in force, uptime, decisions served, audit state."""
        with self._lock:
            counts = dict(self._counts)
        decisions = sum(n for key, n in counts.items() if key.startswith("hook:"))
        return {
            "ok": self.writer is None or self.writer.failure is None,
            "version": __version__,
            "pid": os.getpid(),
            "deployment": self.spec.describe(),
            "key": self.spec.key(),
            "policy_digest": self.policy.digest,
            "engine": self.policy.engine_name,
            "packs": [{"name": pack.name, "digest": pack.digest} for pack in self.policy.packs],
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started_wall)),
            "uptime_s": round(time.monotonic() - self._started, 3),
            "decisions": decisions,
            "requests": counts,
            "audit": None
            if self.audit_path is None
            else {
                "path": self.audit_path,
                "failure": self.writer.failure if self.writer is not None else None,
            },
            "http": self.http_address,
            "load": self.load_report() if self.load_report is not None else None,
        }

    # --- hook events ---------------------------------------------------------------------------

    def hook(
        self,
        harness: str,
        raw: bytes,
        *,
        announce: bool = False,
        bash_output: str = "when-secret",
        request: str | None = None,
    ) -> Answered:
        """Decide one hook event and record it (with the client's ``request`` id, which a
        ``hook_told`` record names when the client could not pass the answer on); never raises."""
        dialect = DIALECTS.get(harness)
        if dialect is None:
            return Answered(deny_reply(f"dsh-policy: unknown harness {harness!r}"), None)
        payload = parse_for(harness, raw)
        event = event_of(payload)
        self._count(f"hook:{event}")
        try:
            with recording_delivery({"request": request[:64]} if request else None):
                verdict = self._decide_and_record(harness, raw, payload, announce, bash_output)
        except Exception as exc:  # a bug, or a fail-closed audit log that cannot write
            _log.error("hook decision failed closed", hook_event=event, error=f"{type(exc).__name__}: {exc}")
            verdict = failure_verdict(event, f"{type(exc).__name__}: {exc}")
        _log.debug(
            "hook", harness=harness, hook_event=event, action=verdict.action, rules=list(verdict.rules)
        )
        return Answered(render_safely(dialect, verdict), event)

    def _decide_and_record(
        self, harness: str, raw: bytes, payload: Any, announce: bool, bash_output: str
    ) -> HookVerdict:
        tampered = self.tamper.failing_closed() if self.tamper is not None else None
        if isinstance(payload, HookInputError):
            decision = HookDecision(failure_verdict(payload.event, str(payload)))
        elif tampered is not None:
            decision = HookDecision(failure_verdict(event_of(payload), tampered))
        else:
            mode: BashOutputMode = next((m for m in BASH_OUTPUT_MODES if m == bash_output), "when-secret")
            session = SessionContext(
                announcement(self.policy) if announce else None,
                secret_reads_review(OutputFilter(self._filter_argv, mode)),
            )
            decision = decide_hook(self.policy, harness, payload, session)  # type: ignore[arg-type]
            if decision.verdict.action == "rewrite" and decision.tool_event is not None:
                self.pending.remember(decision.tool_event)
        approval: str | None = None
        answer = decision.verdict
        if self.approvals is not None:
            gated = gate_ask(self.approvals, self.policy, harness, decision, self.auditor)
            decision, answer, approval = gated.recorded, gated.answer, gated.approval
        if self.auditor is not None:
            record_decision(self.auditor, harness, payload, raw, decision, approval)  # type: ignore[arg-type]
        return answer

    # --- output of rewritten calls -------------------------------------------------------------

    def redact(self, harness: str, session_id: str, call_id: str, data: bytes) -> tuple[str, str | None]:
        """One chunk of a rewritten call's output reviewed: ``(action, replacement)``, where
        ``pass`` means "print the bytes as they are" (no replacement); never raises."""
        self._count("redact")
        # Bytes that are not UTF-8 become U+FFFD for the review (CEL cannot read lone surrogates);
        # unchanged output is printed as the original bytes.
        text = data.decode("utf-8", "replace")
        try:
            call = self.pending.find(call_id, session_id)
            reviewed, _ = review_chunk(self.policy, call, text)
            if reviewed.action == "pass":
                return "pass", None
            if self.auditor is not None:
                record_chunk(self.auditor, harness, call, text, reviewed)
            return reviewed.action, reviewed.text
        except Exception as exc:
            _log.error("output review failed closed", error=f"{type(exc).__name__}: {exc}")
            return "block", withheld_notice(len(data), f"{type(exc).__name__}: {exc}")

    # --- what hooks told the agent -------------------------------------------------------------

    def record_told(self, note: dict[str, Any]) -> bool:
        """Append a ``hook_told`` record for a note a hook left (:mod:`.delivery_notes`); False
        when the log cannot take it now (the note is kept for the next try)."""
        if self.auditor is None:
            return True
        fields = {
            "request": note["request"],
            "hook": {"harness": note["harness"], "event": note["event"]},
            "told": note["told"],
            "why": self.auditor.redacted(note["why"]),
        }
        try:
            self.auditor.hook_told(fields)
        except Exception as exc:  # a fail-closed log that cannot write: keep the note
            _log.error("cannot record what a hook told the agent", error=f"{type(exc).__name__}: {exc}")
            return False
        return True
