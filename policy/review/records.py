"""Reading the decisions an audit log holds, as replay needs them (AUDIT.md "Record").

One record can hold up to two decisions: a native ``tool_result`` records the gate (pre-execute
and guard) and the post-execute review of one call. Hook logs spell the same decisions differently
(HOOKS.md): a refused ``PreToolUse`` is a ``tool_result`` whose pre-execute verdict is the whole
gate, a passed one a ``hook_event``; a ``PostToolUse`` is a ``tool_result`` with only its review.
This module turns every spelling into :class:`RecordedDecision` values and says, for each, which of
the inputs its rules saw the log holds faithfully:

- arguments are recorded redacted: they are faithful only when they still hash to ``args_digest``;
- tool output is never recorded (a digest), so ``result`` is never faithful;
- a rejected step's messages are recorded redacted (faithful when they hash to their digests), an
  entered step's and a hook prompt's only as digests;
- ``now`` is the instant the decision recorded, or else the record's ``ts``.

Records that hold no policy decision are counted by reason, never silently dropped. A
``hook_told`` record (a hook told the agent a safe answer instead of its gateway's decision) is
no decision: :class:`LogReader` keeps it by request id, so a report can say what the agent was
told beside the decision recorded for that request, which is the one replay compares.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from dsh_policy.policy.events import StepMessage
from dsh_policy.policy.runtime.auditing import digest_json

__all__ = [
    "DecisionStage",
    "GateEvidence",
    "LogReader",
    "RecordedCall",
    "RecordedDecision",
    "RecordedPolicy",
    "RecordedVerdict",
    "SkipReason",
    "ToldRecord",
]

DecisionStage = Literal["pre-step", "pre-execute", "post-execute"]
SkipReason = Literal["no-policy", "no-decision", "input-error", "failed-closed", "self-protection"]

#: What each skip reason means, for reports.
SKIP_REASONS: Mapping[str, str] = {
    "no-policy": "recorded while no policy was loaded (the policy failed to load)",
    "no-decision": "an event the policy does not decide (session start, stop, a call that never reached "
    "the gate)",
    "input-error": "hook input that could not be read",
    "failed-closed": "refused before the policy decided (an unreadable tool call, an internal error)",
    "self-protection": "refused by the deployment's self-protection, which no pack edit changes",
}
_DECISION_KINDS = frozenset({"tool_result", "hook_event", "step_rejected", "step_entered"})


@dataclass(frozen=True, slots=True)
class RecordedVerdict:
    """One stage's recorded verdict in the stage's own words (``enter``/``reject``,
    ``allow``/``ask``/``deny``, ``accept``/``block``)."""

    decision: str
    rules: tuple[str, ...]
    message: str | None = None


@dataclass(frozen=True, slots=True)
class GateEvidence:
    """How the gate (pre-execute, then guards) was recorded.

    ``whole`` holds the verdict of the whole gate (hook logs); otherwise ``pre`` is the pre-execute
    verdict and ``guard`` the guards' (``deny``/``allow``), or ``None`` when the call never reached
    the guards (refused at approval or by another plugin: ``denied_by`` says which)."""

    pre: RecordedVerdict | None
    guard: RecordedVerdict | None
    whole: RecordedVerdict | None
    denied_by: str | None
    approval: str | None

    @property
    def by_guard(self) -> bool:
        """Whether a guard made the recorded decision."""
        if self.whole is not None:
            return self.denied_by == "guard"
        return self.guard is not None and self.guard.decision == "deny"

    @property
    def verdict(self) -> RecordedVerdict:
        """The gate's decision as one verdict (a guard's denial beats every pre-execute outcome)."""
        if self.whole is not None:
            return self.whole
        assert self.pre is not None
        if self.guard is not None and self.guard.decision == "deny":
            return self.guard
        return self.pre


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """A tool call as recorded. ``args_faithful``: the recorded arguments are the originals
    (nothing redacted or fitted to the record's domain), so rules reading ``args`` see the truth."""

    tool: str
    args: Any
    call_id: str
    root_call_id: str
    nested: bool
    original_name: str | None
    args_faithful: bool


@dataclass(frozen=True, slots=True)
class RecordedDecision:
    """One policy decision found in the log, with the inputs its rules saw as far as recorded."""

    seq: int
    kind: str
    stage: DecisionStage
    ts: str
    now: str | None  #: the instant the decision recorded; ``None``: only ``ts`` is known
    policy_digest: str
    engine: str | None
    session: str | None
    agent: str | None
    turn: int
    step: int
    verdict: RecordedVerdict
    call: RecordedCall | None = None
    gate: GateEvidence | None = None
    redactions: int | None = None  #: post-execute: replacements made
    messages: tuple[StepMessage, ...] = ()
    messages_faithful: bool = True
    messages_recorded: tuple[Mapping[str, Any], ...] = ()  #: as the log holds them (for reports)
    result: Mapping[str, Any] | None = None
    request: str | None = None  #: the hook client's request id (``delivery``), when recorded
    in_process: bool = False  #: decided by the hook itself because its gateway did not answer

    @property
    def unfaithful(self) -> frozenset[str]:
        """Activation names whose values the log does not hold faithfully for this decision."""
        names: set[str] = set()
        if self.call is not None and not self.call.args_faithful:
            names.add("args")
        if self.stage == "post-execute":
            names.add("result")
        if self.stage == "pre-step" and not self.messages_faithful:
            names |= {"messages", "prompt"}
        return frozenset(names)


@dataclass(frozen=True, slots=True)
class ToldRecord:
    """A ``hook_told`` record: the hook told the agent ``action`` (exit ``exit_code``) instead of
    its gateway's answer to ``request``, and ``why``."""

    seq: int
    request: str
    action: str
    exit_code: int | None
    why: str | None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "seq": self.seq,
            "request": self.request,
            "action": self.action,
            "exit_code": self.exit_code,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class RecordedPolicy:
    """A policy the log says came into force (``policy_loaded``): its digest, engine, pack names,
    each rule's match fingerprint (``None`` in logs written before fingerprints were recorded) and
    each pack's params."""

    digest: str
    engine: str | None
    packs: tuple[str, ...]
    rules: Mapping[str, str] | None
    params: Mapping[str, Any] | None


@dataclass(slots=True)
class LogReader:
    """Streams the decisions of a log's segments in log order and counts everything else.

    ``policies`` fills in as ``policy_loaded`` records go by (a decision always follows the load of
    the policy that made it); ``skipped`` counts decision records that hold no policy decision, by
    reason; ``other`` the records that are not decisions (checkpoints, loads, ``hook_told``, ...),
    by kind; ``told`` the ``hook_told`` records by the request they name."""

    files: list[Path]
    records: int = 0
    unreadable_lines: int = 0
    torn_tails: int = 0
    policies: dict[str, RecordedPolicy] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    other: Counter[str] = field(default_factory=Counter)
    told: dict[str, ToldRecord] = field(default_factory=dict)

    def decisions(self) -> Iterator[RecordedDecision]:
        """Every decision, in log order."""
        for path in self.files:
            yield from self._file(path)

    def _file(self, path: Path) -> Iterator[RecordedDecision]:
        with path.open("rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    self.torn_tails += 1  # a write cut short: verify reports it; nothing decided
                    continue
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    self.unreadable_lines += 1
                    continue
                if not isinstance(record, dict):
                    self.unreadable_lines += 1
                    continue
                self.records += 1
                yield from self._record(record)

    def _record(self, record: dict[str, Any]) -> Iterator[RecordedDecision]:
        kind = record.get("kind")
        if kind == "policy_loaded":
            self._policy_loaded(record)
        elif kind == "hook_told":  # what the agent was told: never compared as a decision
            self._hook_told(record)
        if kind not in _DECISION_KINDS:
            self.other[str(kind)] += 1
            return
        found = _decisions(record)
        if isinstance(found, str):
            self.skipped[found] += 1
            return
        yield from found

    def _hook_told(self, record: Mapping[str, Any]) -> None:
        request = record.get("request")
        if not isinstance(request, str):
            return
        told = _mapping(record.get("told"))
        code = told.get("exit_code")
        self.told[request] = ToldRecord(
            seq=_int(record.get("seq")),
            request=request,
            action=str(told.get("action") or "deny"),
            exit_code=code if isinstance(code, int) else None,
            why=_str(record.get("why")),
        )

    def _policy_loaded(self, record: Mapping[str, Any]) -> None:
        policy = _mapping(record.get("policy"))
        digest = policy.get("digest")
        if not isinstance(digest, str):
            return
        rules = record.get("rules")
        params = record.get("params")
        packs = [row.get("name") for row in _list(record.get("packs")) if isinstance(row, dict)]
        self.policies[digest] = RecordedPolicy(
            digest=digest,
            engine=_str(policy.get("engine")),
            packs=tuple(name for name in packs if isinstance(name, str)),
            rules={key: value for key, value in rules.items() if isinstance(value, str)}
            if isinstance(rules, dict)
            else None,
            params=params if isinstance(params, dict) else None,
        )


# --- one record ---------------------------------------------------------------------------------


def _decisions(record: dict[str, Any]) -> list[RecordedDecision] | SkipReason:
    """The decisions one record holds, or why it holds none."""
    policy = _mapping(record.get("policy"))
    digest = policy.get("digest")
    if not isinstance(digest, str) or digest == "none":
        return "no-policy"
    kind = record["kind"]
    if kind == "tool_result":
        return _tool_result(record) or "no-decision"
    if kind == "hook_event":
        return _hook_event(record)
    return [_step(record)]


def _base(record: Mapping[str, Any]) -> dict[str, Any]:
    policy = _mapping(record.get("policy"))
    delivery = _mapping(record.get("delivery"))
    return {
        "request": _str(delivery.get("request")),
        "in_process": delivery.get("path") == "in-process",
        "seq": _int(record.get("seq")),
        "kind": str(record.get("kind")),
        "ts": str(record.get("ts", "")),
        "policy_digest": str(policy.get("digest")),
        "engine": _str(policy.get("engine")),
        "session": _str(record.get("session")),
        "agent": _str(record.get("agent")),
        "turn": _int(record.get("turn")),
        "step": _int(record.get("step")),
    }


def _verdict(fields: Mapping[str, Any], decision: str | None = None) -> RecordedVerdict:
    word = decision if decision is not None else str(fields.get("decision", ""))
    rules = tuple(rule for rule in _list(fields.get("rules")) if isinstance(rule, str))
    return RecordedVerdict(word, rules, _str(fields.get("message")))


def _call(record: Mapping[str, Any]) -> RecordedCall | None:
    call = record.get("call")
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    args = call.get("args")
    return RecordedCall(
        tool=call["name"],
        args=args,
        call_id=str(call.get("call_id") or ""),
        root_call_id=str(call.get("root_call_id") or ""),
        nested=call.get("nested") is True,
        original_name=_str(call.get("original_name")),
        args_faithful=digest_json(args) == call.get("args_digest"),
    )


def _tool_result(record: dict[str, Any]) -> list[RecordedDecision]:
    decision = _mapping(record.get("decision"))
    call = _call(record)
    if call is None:
        return []
    found: list[RecordedDecision] = []
    pre = decision.get("pre_execute")
    if isinstance(pre, dict):
        denied_by = _str(decision.get("denied_by"))
        guard = decision.get("guard")
        pre_verdict = _verdict(pre)
        if isinstance(guard, dict):
            denied = guard.get("denied") is True
            evidence = GateEvidence(
                pre_verdict,
                _verdict(guard, "deny" if denied else "allow"),
                None,
                denied_by,
                _str(decision.get("approval")),
            )
        elif pre_verdict.decision == "deny":
            # Only a hook records a denial without the guards' verdict: its pre-execute verdict is
            # the whole gate's (check_tool_call), and denied_by says whether a guard made it.
            evidence = GateEvidence(None, None, pre_verdict, denied_by, None)
        else:
            evidence = GateEvidence(pre_verdict, None, None, denied_by, _str(decision.get("approval")))
        found.append(
            RecordedDecision(
                **_base(record),
                stage="pre-execute",
                now=_str(pre.get("now")),
                verdict=evidence.verdict,
                call=call,
                gate=evidence,
            )
        )
    post = decision.get("post_execute")
    if isinstance(post, dict):
        redactions = post.get("redactions")
        found.append(
            RecordedDecision(
                **_base(record),
                stage="post-execute",
                now=_str(post.get("now")),
                verdict=_verdict(post),
                call=call,
                redactions=redactions if isinstance(redactions, int) else None,
                result=_mapping(record.get("result")),
            )
        )
    return found


def _hook_event(record: dict[str, Any]) -> list[RecordedDecision] | SkipReason:
    if "input_error" in record:
        return "input-error"
    hook = _mapping(record.get("hook"))
    answer = _mapping(record.get("answer"))
    event, action = hook.get("event"), answer.get("action")
    if answer.get("failure") is True:
        return "failed-closed"
    base = _base(record)
    verdict = _verdict(answer, {"pass": "allow", "ask": "ask"}.get(str(action), str(action)))
    if event == "PreToolUse" and action in ("pass", "ask"):
        call = _call(record)
        if call is None:
            return "failed-closed"
        evidence = GateEvidence(None, None, verdict, None, None)
        return [
            RecordedDecision(
                **base,
                stage="pre-execute",
                now=_str(answer.get("now")),
                verdict=verdict,
                call=call,
                gate=evidence,
            )
        ]
    if event == "UserPromptSubmit" and action == "pass":
        # The prompt is recorded as a digest only.
        prompt = StepMessage("user", "", "user", None)
        row = {"role": "user", "source": "user", "text_digest": record.get("prompt_digest")}
        return [
            RecordedDecision(
                **base,
                stage="pre-step",
                now=_str(answer.get("now")),
                verdict=RecordedVerdict("enter", verdict.rules, None),
                messages=(prompt,),
                messages_faithful=False,
                messages_recorded=(row,),
            )
        ]
    return "no-decision"


def _step(record: dict[str, Any]) -> RecordedDecision:
    decision = _mapping(record.get("decision"))
    word = "reject" if record["kind"] == "step_rejected" else "enter"
    messages: list[StepMessage] = []
    rows: list[Mapping[str, Any]] = []
    faithful = True
    for row in _list(record.get("messages")):
        if not isinstance(row, dict):
            faithful = False
            continue
        rows.append(row)
        text = row.get("text")
        source = str(row.get("source") or "user")
        plugin = _str(row.get("plugin"))
        if not isinstance(text, str) or _sha256(text) != row.get("text_digest"):
            faithful = False  # redacted, or recorded as a digest only
        if source == "plugin" and plugin is None:
            faithful = False  # written before the plugin name was recorded
        messages.append(
            StepMessage(str(row.get("role") or "user"), text if isinstance(text, str) else "", source, plugin)
        )
    return RecordedDecision(
        **_base(record),
        stage="pre-step",
        now=_str(decision.get("now")),
        verdict=_verdict(decision, word),
        messages=tuple(messages),
        messages_faithful=faithful,
        messages_recorded=tuple(rows),
    )


# --- small readers of untrusted fields ------------------------------------------------------------


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
