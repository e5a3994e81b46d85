"""The approval queue's rules: who is asked, what counts as an answer, and when it is used up.

Every question a channel asks goes through :meth:`ApprovalQueue.consult`, inside one store
transaction, just before the tool would run:

1. a **grant** that covers the call (signed by an approver allowed for every asking rule, in
   scope, not expired, not revoked) admits it, as often as it holds;
2. else a **request** for exactly this call (same binding digest) that the listed approvers have
   approved (valid signatures, quorum reached, not expired) admits it **once**: it becomes
   ``used``, and the same call again opens a new request;
3. a request for the same call made under another policy or other rules is **void** (the policy
   changed in between), one past its deadline **expired**, one a listed approver denied refuses;
4. otherwise the call waits on its pending request, or a new one is opened.

The stored ``status`` is bookkeeping for people; admission is recomputed from the signatures every
time, so an entry written by someone who holds no listed key approves nothing.
"""

from __future__ import annotations

import datetime
import fnmatch
import hashlib
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import re2
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from dsh_policy.audit.keys import key_id
from dsh_policy.audit.record import canonical_bytes
from dsh_policy.policy.approvals.approvers import Approver, Approvers
from dsh_policy.policy.approvals.binding import CallBinding
from dsh_policy.policy.approvals.signing import (
    DECISION_FIELDS,
    DECISION_TAG,
    GRANT_FIELDS,
    GRANT_TAG,
    sign,
    verify,
)
from dsh_policy.policy.approvals.store import ApprovalStore

Clock = Callable[[], float]
Verdict = Literal["approve", "deny"]

DEFAULT_PENDING_SECONDS: Final[int] = 3600  #: how long a request waits for an answer
DEFAULT_APPROVAL_SECONDS: Final[int] = 900  #: how long an approval stays usable
MAX_JOURNAL: Final[int] = 10_000  #: unrecorded events kept when no gateway drains them
_CALL_TAG: Final[bytes] = b"dsh-policy/approval/call/v1\x00"


def iso(seconds: int | None) -> str | None:
    """RFC 3339 UTC for an epoch second (how the CLI and the console show instants)."""
    if seconds is None:
        return None
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def call_digest(binding: CallBinding) -> str:
    """The call without the policy and the rules: what makes two requests "the same call", so a
    request made under an older policy can be found and voided."""
    document = binding.document()
    del document["policy_digest"], document["rules"]
    return "sha256:" + hashlib.sha256(_CALL_TAG + canonical_bytes(document)).hexdigest()


@dataclass(frozen=True, slots=True)
class Admitted:
    """The call may run: by a one-time approval (``request``) or a grant (``grant``)."""

    via: Literal["approval", "grant"]
    id: str
    approvers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Waiting:
    """No answer yet: the call's request, and whether this consultation opened it."""

    request: str
    created: bool


@dataclass(frozen=True, slots=True)
class Refused:
    """A listed approver denied this call's request."""

    request: str
    approver: str
    reason: str


Consulted = Admitted | Waiting | Refused


@dataclass(frozen=True, slots=True)
class QueueError:
    """An operation the queue refuses (unknown id, approver not allowed, request not pending)."""

    message: str

    def __str__(self) -> str:
        return self.message


class ApprovalQueue:
    """Operations on one queue folder, judged against one approvers file (None: nobody is
    listed, so requests are queued and wait, and nothing is ever approved)."""

    def __init__(
        self, store: ApprovalStore, approvers: Approvers | None, *, clock: Clock = time.time
    ) -> None:
        self.store = store
        self.approvers = approvers
        self.clock = clock

    def _now(self) -> int:
        return int(self.clock())

    # --- the channels' question ------------------------------------------------------------

    def consult(
        self,
        binding: CallBinding,
        *,
        message: str,
        shown_args: Any,
        pending_seconds: int = DEFAULT_PENDING_SECONDS,
        create: bool = True,
    ) -> Consulted | None:
        """Admit, refuse or queue one call that a rule asked about (see the module docstring).
        ``shown_args`` are the arguments as people may see them (redacted). ``None`` only when
        ``create`` is false and no request exists."""
        with self.store.transaction() as document:
            now = self._now()
            digest, call = binding.digest(), call_digest(binding)
            granted = self._use_grant(document, binding, digest, now)
            if granted is not None:
                return granted
            for request in list(document["requests"].values()):
                if request.get("call") != call or request.get("status") not in (
                    "pending",
                    "approved",
                    "denied",
                ):
                    continue
                if request.get("closed") is not None:
                    continue
                outcome = self._settle(document, request, digest, now)
                if outcome is not None:
                    return outcome
            if not create:
                return None
            request_id = "apr-" + secrets.token_hex(5)
            document["requests"][request_id] = {
                "id": request_id,
                "digest": digest,
                "call": call,
                "binding": {**binding.document(), "args": shown_args},
                "message": message,
                "status": "pending",
                "created": now,
                "expires": now + pending_seconds,
                "decisions": [],
            }
            _journal(
                document,
                "approval_requested",
                {
                    "request": request_id,
                    "binding": digest,
                    "session": binding.session,
                    "agent": binding.agent,
                    "tool": binding.tool,
                    "args": shown_args,
                    "rules": sorted(binding.rules),
                    "message": message,
                    "expires": iso(now + pending_seconds),
                },
            )
            return Waiting(request_id, created=True)

    def _settle(
        self, document: dict[str, Any], request: dict[str, Any], digest: str, now: int
    ) -> Consulted | None:
        """What one earlier request for the same call means now (None: it no longer counts)."""
        if request.get("digest") != digest:
            _close(
                document,
                request,
                "void",
                now,
                "the policy or the asking rules changed since it was requested",
            )
            return None
        state, names, reason = self.effective(request, now)
        if state == "approved":
            request["status"] = "used"
            request["used"] = now
            _journal(
                document, "approval_used", {"request": request["id"], "binding": digest, "approvers": names}
            )
            return Admitted("approval", request["id"], tuple(names))
        if state == "denied":
            _close(document, request, "denied", now, reason)
            return Refused(request["id"], names[0], reason)
        if request.get("status") == "approved":
            _close(document, request, "expired", now, "its approval expired before the call was made again")
            return None
        if now >= int(request.get("expires", 0)):
            _close(document, request, "expired", now, "nobody answered before its deadline")
            return None
        return Waiting(request["id"], created=False)

    def effective(self, request: Mapping[str, Any], now: int) -> tuple[str, list[str], str]:
        """``(state, approvers, reason)`` from the request's valid decisions only: ``denied`` by
        any listed approver, ``approved`` once a quorum of distinct listed approvers agree."""
        if self.approvers is None:
            return "pending", [], ""
        approving: list[str] = []
        for decision in request.get("decisions", ()):
            approver = self._valid_signer(decision, request, now)
            if approver is None:
                continue
            if decision.get("verdict") == "deny":
                return "denied", [approver.name], str(decision.get("reason") or "denied")
            if approver.name not in approving:
                approving.append(approver.name)
        if len(approving) >= self.approvers.quorum:
            return "approved", approving, ""
        return "pending", approving, ""

    def decision_problem(
        self, decision: Mapping[str, Any], request: Mapping[str, Any], now: int
    ) -> str | None:
        """Why a stored decision does not count (None: it does)."""
        if self.approvers is None:
            return "no approvers file is configured"
        approver = self.approvers.get(str(decision.get("approver")))
        if approver is None:
            return f"{decision.get('approver')!r} is not a listed approver"
        if decision.get("key_id") != approver.key_id:
            return f"signed with {decision.get('key_id')}, not {approver.name}'s listed key"
        if decision.get("request") != request.get("id") or decision.get("binding") != request.get("digest"):
            return "signed for another request"
        if not verify(
            approver.public_key, DECISION_TAG, decision, DECISION_FIELDS, decision.get("signature")
        ):
            return "the signature does not verify"
        if not approver.may_approve(request.get("binding", {}).get("rules", ())):
            return f"{approver.name} may not approve rule(s) {', '.join(request['binding']['rules'])}"
        if decision.get("verdict") == "approve" and int(decision.get("expires") or 0) <= now:
            return "expired"
        if decision.get("verdict") not in ("approve", "deny"):
            return "no verdict"
        return None

    def _valid_signer(self, decision: Any, request: Mapping[str, Any], now: int) -> Approver | None:
        if not isinstance(decision, Mapping) or self.decision_problem(decision, request, now) is not None:
            return None
        assert self.approvers is not None
        return self.approvers.get(str(decision["approver"]))

    def _use_grant(
        self, document: dict[str, Any], binding: CallBinding, digest: str, now: int
    ) -> Admitted | None:
        for grant in document["grants"].values():
            if self.grant_problem(grant, now) is None and grant_covers(grant, binding):
                grant["uses"] = int(grant.get("uses", 0)) + 1
                grant["last_used"] = now
                _journal(
                    document,
                    "grant_used",
                    {
                        "grant": grant["id"],
                        "binding": digest,
                        "approver": grant["approver"],
                        "rules": sorted(binding.rules),
                    },
                )
                return Admitted("grant", grant["id"], (str(grant["approver"]),))
        return None

    def grant_problem(self, grant: Mapping[str, Any], now: int) -> str | None:
        """Why a stored grant does not hold now (None: it does)."""
        if grant.get("status") != "active":
            return str(grant.get("status") or "not active")
        if self.approvers is None:
            return "no approvers file is configured"
        approver = self.approvers.get(str(grant.get("approver")))
        if approver is None:
            return f"{grant.get('approver')!r} is not a listed approver"
        if grant.get("key_id") != approver.key_id:
            return f"signed with {grant.get('key_id')}, not {approver.name}'s listed key"
        if not verify(approver.public_key, GRANT_TAG, grant, GRANT_FIELDS, grant.get("signature")):
            return "the signature does not verify"
        if not approver.may_approve(grant.get("rules", ())):
            return f"{approver.name} may not grant rule(s) {', '.join(grant.get('rules', ()))}"
        if not int(grant.get("issued") or 0) <= now < int(grant.get("until") or 0):
            return "expired"
        return None

    # --- the approvers' side ---------------------------------------------------------------

    def _signer(self, name: str, key: Ed25519PrivateKey) -> Approver | QueueError:
        if self.approvers is None:
            return QueueError("no approvers file is configured for this deployment")
        approver = self.approvers.get(name)
        if approver is None:
            return QueueError(f"{name!r} is not listed in {self.approvers.path}")
        if key_id(key.public_key()) != approver.key_id:
            return QueueError(
                f"this key ({key_id(key.public_key())}) is not {name}'s listed key ({approver.key_id})"
            )
        return approver

    def decide(
        self,
        request_id: str,
        name: str,
        key: Ed25519PrivateKey,
        verdict: Verdict,
        *,
        valid_seconds: int = DEFAULT_APPROVAL_SECONDS,
        reason: str = "",
    ) -> dict[str, Any] | QueueError:
        """Sign and record ``name``'s verdict on a pending request; the updated request."""
        approver = self._signer(name, key)
        if isinstance(approver, QueueError):
            return approver
        with self.store.transaction() as document:
            now = self._now()
            request = document["requests"].get(request_id)
            if request is None:
                return QueueError(f"no request {request_id!r} in {self.store.path}")
            if request.get("status") != "pending" or now >= int(request.get("expires", 0)):
                status = request.get("status") if request.get("status") != "pending" else "expired"
                return QueueError(f"request {request_id} is {status}, not pending")
            rules = request["binding"]["rules"]
            if not approver.may_approve(rules):
                return QueueError(f"{name} may not approve rule(s) {', '.join(rules)}")
            if any(d.get("approver") == name for d in request["decisions"] if isinstance(d, dict)):
                return QueueError(f"{name} has already decided request {request_id}")
            statement: dict[str, Any] = {
                "request": request_id,
                "binding": request["digest"],
                "verdict": verdict,
                "approver": name,
                "key_id": approver.key_id,
                "issued": now,
                "expires": now + valid_seconds if verdict == "approve" else None,
            }
            statement["signature"] = sign(key, DECISION_TAG, statement, DECISION_FIELDS)
            if reason:
                statement["reason"] = reason
            request["decisions"].append(statement)
            state, _, _ = self.effective(request, now)
            if state in ("approved", "denied"):
                request["status"] = state
            _journal(
                document,
                "approval_decided",
                {
                    "request": request_id,
                    "binding": request["digest"],
                    "verdict": verdict,
                    "approver": name,
                    "key_id": approver.key_id,
                    "signature": statement["signature"],
                    "expires": iso(statement["expires"]),
                    "reason": reason or None,
                    "status": request["status"],
                    # exactly what was signed, so the log alone proves who decided
                    "statement": {field: statement[field] for field in DECISION_FIELDS},
                },
            )
            return dict(request)

    def grant(
        self,
        name: str,
        key: Ed25519PrivateKey,
        *,
        rules: tuple[str, ...],
        seconds: int,
        session: str | None = None,
        agent: str | None = None,
        tool: str | None = None,
        match: str | None = None,
        reason: str = "",
    ) -> dict[str, Any] | QueueError:
        """Sign and store a time-boxed grant; the grant."""
        approver = self._signer(name, key)
        if isinstance(approver, QueueError):
            return approver
        if not rules:
            return QueueError("a grant names at least one rule")
        if not approver.may_approve(rules):
            return QueueError(f"{name} may not grant rule(s) {', '.join(rules)}")
        if seconds <= 0:
            return QueueError("a grant must last a positive number of seconds")
        if match is not None:
            problem = pattern_problem(match)
            if problem is not None:
                return QueueError(f"--match {match!r}: {problem}")
        with self.store.transaction() as document:
            now = self._now()
            grant: dict[str, Any] = {
                "grant": "grt-" + secrets.token_hex(5),
                "rules": sorted(rules),
                "session": session,
                "agent": agent,
                "tool": tool,
                "match": match,
                "approver": name,
                "key_id": approver.key_id,
                "issued": now,
                "until": now + seconds,
                "reason": reason,
            }
            grant["signature"] = sign(key, GRANT_TAG, grant, GRANT_FIELDS)
            grant.update(id=grant["grant"], status="active", uses=0)
            document["grants"][grant["id"]] = grant
            _journal(
                document,
                "grant_made",
                {
                    **{field: grant[field] for field in GRANT_FIELDS},
                    "until": iso(grant["until"]),
                    "issued": iso(now),
                    "signature": grant["signature"],
                    "statement": {field: grant[field] for field in GRANT_FIELDS},
                },
            )
            return dict(grant)

    def revoke(self, grant_id: str, by: str, reason: str = "") -> dict[str, Any] | QueueError:
        """End a grant now (anyone who may write the queue may narrow it); the grant."""
        with self.store.transaction() as document:
            grant = document["grants"].get(grant_id)
            if grant is None:
                return QueueError(f"no grant {grant_id!r} in {self.store.path}")
            if grant.get("status") != "active":
                return QueueError(f"grant {grant_id} is already {grant.get('status')}")
            grant.update(status="revoked", revoked=self._now(), revoked_by=by)
            _journal(document, "grant_revoked", {"grant": grant_id, "by": by, "reason": reason or None})
            return dict(grant)

    # --- reading --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The queue document as it is now."""
        return self.store.read()

    def drain_journal(self, record: Callable[[str, dict[str, Any]], None] | None) -> int:
        """Hand every event not yet recorded to ``record`` (an audit writer) and forget it; the
        number recorded. An event whose recording raises stays for the next drain."""
        with self.store.transaction() as document:
            journal = document["journal"]
            done = 0
            for entry in journal:
                if record is not None:
                    try:
                        record(str(entry["kind"]), dict(entry["fields"]))
                    except Exception:
                        break
                done += 1
            document["journal"] = journal[done:]
            return done


def grant_covers(grant: Mapping[str, Any], binding: CallBinding) -> bool:
    """Whether a grant's scope holds this call (its signature and time are checked apart)."""
    patterns = tuple(str(rule) for rule in grant.get("rules", ()))
    if not binding.rules or not all(any(fnmatch.fnmatchcase(r, p) for p in patterns) for r in binding.rules):
        return False
    for field, value in (("session", binding.session), ("agent", binding.agent), ("tool", binding.tool)):
        if grant.get(field) is not None and grant.get(field) != value:
            return False
    match = grant.get("match")
    if match is None:
        return True
    try:
        return re2.compile(str(match)).fullmatch(binding.subject()) is not None
    except re2.error:
        return False


def pattern_problem(pattern: str) -> str | None:
    """Why a grant's ``match`` pattern cannot be used (None: it can). Patterns are RE2 (linear
    time: a grant is tested on every asked call) and must match the whole command, path or URL."""
    try:
        re.compile(pattern)
    except re.error as error:
        return f"not a regular expression ({error})"
    try:
        re2.compile(pattern)
    except re2.error as error:
        return f"not supported by RE2 ({error})"
    return None


def _close(document: dict[str, Any], request: dict[str, Any], status: str, now: int, why: str) -> None:
    request.update(status=status, closed=now, why=why)
    _journal(
        document,
        "approval_closed",
        {"request": request["id"], "binding": request["digest"], "status": status, "why": why},
    )


def _journal(document: dict[str, Any], kind: str, fields: dict[str, Any]) -> None:
    journal = document["journal"]
    journal.append({"kind": kind, "fields": fields})
    del journal[:-MAX_JOURNAL]
