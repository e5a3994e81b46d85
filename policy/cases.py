"""Policy test cases (Kyverno-style, in the vocabulary rules are written in) and one-off events.

A cases file is validated like a pack (JSON Schema with FILE:LINE:COL errors, unknown keys are
errors). Each case becomes the same event type the harness plugins build, and :func:`run_case`
decides it through :class:`~.decide.Decider` - the exact code path the gateway uses - before
comparing the verdict with ``expect``.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_policy.policy.decide import Decider
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import RuleTrace, StepEvent, StepMessage, ToolCallEvent, ToolResultEvent
from dsh_policy.policy.source.schema import schema_errors, schema_issues
from dsh_policy.policy.source.yaml_source import Path as NodePath
from dsh_policy.policy.source.yaml_source import SourceMap, read_yaml_file
from dsh_policy.policy.stages import STAGE_TABLE, TOOL_STAGES

Event = StepEvent | ToolCallEvent | ToolResultEvent


@dataclass(frozen=True, slots=True)
class Expectation:
    """What a case expects; None fields are not checked. ``rules`` compares as a set, ``message``
    as a substring, ``text``/``contexts`` exactly."""

    decision: str | None = None
    rules: frozenset[str] | None = None
    message: str | None = None
    text: str | None = None
    contexts: tuple[str, ...] | None = None
    redactions: int | None = None
    shadow_rules: frozenset[str] | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``expected`` object of the JSON report (only what was given)."""
        out: dict[str, Any] = {}
        for name in ("decision", "message", "text", "redactions"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.rules is not None:
            out["rules"] = sorted(self.rules)
        if self.contexts is not None:
            out["contexts"] = list(self.contexts)
        if self.shadow_rules is not None:
            out["shadow_rules"] = sorted(self.shadow_rules)
        return out


@dataclass(frozen=True, slots=True)
class Case:
    """One event to decide, where it was written, and what it should give."""

    name: str
    stage: str
    event: Event
    expect: Expectation
    file: str
    line: int
    #: Every rule id ``expect`` names (``rules``, ``shadow_rules``) with its line and column, so a
    #: case that expects a rule no loaded pack defines is an error at its position.
    rule_refs: tuple[tuple[str, int, int], ...] = ()
    #: The agent client whose tool names and fields the call is written in (``client:``), or None
    #: for the canonical vocabulary; ``check`` maps it as that client's hook does.
    client: str | None = None


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """The verdict of one case, flattened to what cases compare, and what did not match."""

    case: Case
    decision: str
    rules: tuple[str, ...]
    message: str | None
    text: str | None
    contexts: tuple[str, ...]
    redactions: int
    shadow_rules: tuple[str, ...]
    trace: tuple[RuleTrace, ...]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when every expectation held."""
        return not self.failures

    def comparable(self) -> tuple[Any, ...]:
        """What two engines must agree on, whatever their error wording: the decision, the
        deciding rules, the resulting text, contexts and redactions (``check --engine all``
        compares messages apart, when no evaluation error went into them)."""
        return (self.decision, frozenset(self.rules), self.text, self.contexts, self.redactions)

    def to_json(self) -> dict[str, Any]:
        """The per-case object of ``check --format json`` (POLICY.md section 5)."""
        out: dict[str, Any] = {
            "name": self.case.name,
            "stage": self.case.stage,
            "decision": self.decision,
            "rules": list(self.rules),
            "message": self.message,
            "passed": self.passed,
        }
        if self.case.stage == "post-execute":
            out["text"] = self.text
        if self.contexts:
            out["contexts"] = list(self.contexts)
        if self.shadow_rules:
            out["shadow_rules"] = list(self.shadow_rules)
        if not self.passed:
            out["expected"] = self.case.expect.to_json()
            out["failures"] = list(self.failures)
        return out


# --- reading --------------------------------------------------------------------------------------


def _read(path: str | Path) -> tuple[str, Any, SourceMap] | list[PolicyError]:
    document = read_yaml_file(path)
    if isinstance(document, list):
        return document
    return str(path), document.value, document.source


class _CaseReader:
    """Turns validated case mappings into :class:`Case` values, collecting semantic errors."""

    def __init__(self, file: str, source: SourceMap, client: str | None = None) -> None:
        self.file = file
        self.source = source
        self.client = client  # the file's default ``client:``
        self.errors: list[PolicyError] = []

    def error(self, path: NodePath, message: str, *, at_key: bool = False) -> None:
        line, col = self.source.key_position(path) if at_key else self.source.value_position(path)
        self.errors.append(PolicyError(self.file, line, col, message))

    def case(
        self, raw: dict[str, Any], path: NodePath, with_expect: bool, where: str | None = None
    ) -> Case | None:
        before = len(self.errors)
        stage = raw["stage"]
        name = raw.get("name", Path(self.file).name)
        where = where or f"case {name!r}"
        for key in ("tool", "args", "call_id", "root_call_id", "nested", "original_name", "client"):
            if key in raw and stage not in TOOL_STAGES:
                self.error((*path, key), f"{where}: {key} is not used at stage {stage}", at_key=True)
        if stage in TOOL_STAGES and "tool" not in raw:
            self.error(path, f"{where}: stage {stage} needs a tool")
        for key in ("prompt", "messages"):
            if key in raw and stage != "pre-step":
                self.error((*path, key), f"{where}: {key} is only used at stage pre-step", at_key=True)
        if "prompt" in raw and "messages" in raw:
            self.error((*path, "messages"), f"{where}: give prompt or messages, not both", at_key=True)
        if "result" in raw and stage != "post-execute":
            self.error((*path, "result"), f"{where}: result is only used at stage post-execute", at_key=True)
        now = self._now(raw, path, where)
        expect = self._expect(raw.get("expect", {}), (*path, "expect"), stage, where) if with_expect else None
        if len(self.errors) > before:
            return None
        event = _event(raw, stage, now)
        line = self.source.value_position(path)[0]
        refs: list[tuple[str, int, int]] = []
        expected = raw.get("expect", {}) if with_expect else {}
        for key in ("rules", "shadow_rules"):
            for index, rule in enumerate(expected.get(key) or ()):
                refs.append((str(rule), *self.source.value_position((*path, "expect", key, index))))
        client = raw.get("client", self.client) if stage in TOOL_STAGES else None
        return Case(name, stage, event, expect or Expectation(), self.file, line, tuple(refs), client)

    def _now(self, raw: dict[str, Any], path: NodePath, where: str) -> datetime.datetime | None:
        if "now" not in raw:
            return None
        try:
            parsed = datetime.datetime.fromisoformat(str(raw["now"]).replace("Z", "+00:00"))
        except ValueError:
            self.error((*path, "now"), f"{where}: now must be an RFC 3339 timestamp, got {raw['now']!r}")
            return None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=datetime.UTC)

    def _expect(self, raw: dict[str, Any], path: NodePath, stage: str, where: str) -> Expectation:
        decision = raw.get("decision")
        if decision is not None and decision not in STAGE_TABLE[stage].outcomes:
            allowed = " | ".join(sorted(STAGE_TABLE[stage].outcomes))
            self.error(
                (*path, "decision"),
                f"{where}: decision {decision!r} does not fit stage {stage} (allowed: {allowed})",
            )
        if "text" in raw and stage != "post-execute":
            self.error(
                (*path, "text"), f"{where}: expect.text is only checked at stage post-execute", at_key=True
            )
        if "contexts" in raw and stage not in ("pre-step", "post-execute"):
            self.error(
                (*path, "contexts"), f"{where}: expect.contexts is not used at stage {stage}", at_key=True
            )
        rules = raw.get("rules")
        shadow = raw.get("shadow_rules")
        contexts = raw.get("contexts")
        return Expectation(
            decision=decision,
            rules=frozenset(rules) if rules is not None else None,
            message=raw.get("message"),
            text=raw.get("text"),
            contexts=tuple(contexts) if contexts is not None else None,
            redactions=raw.get("redactions"),
            shadow_rules=frozenset(shadow) if shadow is not None else None,
        )


def _event(raw: dict[str, Any], stage: str, now: datetime.datetime | None) -> Event:
    common: dict[str, Any] = {
        "session_id": raw.get("session", "cases"),
        "agent_id": raw.get("agent", "agent-1"),
        "turn": raw.get("turn", 1),
        "step": raw.get("step", 1),
        "now": now,
    }
    if stage == "pre-step":
        if "prompt" in raw:
            messages: tuple[StepMessage, ...] = (StepMessage("user", raw["prompt"]),)
        else:
            messages = tuple(
                StepMessage(
                    message.get("role", "user"),
                    message["text"],
                    message.get("source", {}).get("kind", "user"),
                    message.get("source", {}).get("plugin"),
                )
                for message in raw.get("messages", ())
            )
        return StepEvent(messages=messages, **common)
    call_id = raw.get("call_id", "call-1")
    call = ToolCallEvent(
        tool=raw["tool"],
        args=raw.get("args", {}),
        call_id=call_id,
        root_call_id=raw.get("root_call_id", call_id),
        nested=raw.get("nested", False),
        original_name=raw.get("original_name"),
        **common,
    )
    if stage != "post-execute":
        return call
    result = raw.get("result", {})
    error = result.get("error", {})
    return ToolResultEvent(
        call=call,
        is_error=result.get("is_error", False),
        text=result.get("text", ""),
        value=result.get("value"),
        error_message=error.get("message"),
        error_code=error.get("code"),
    )


def load_cases(path: str | Path) -> list[Case] | list[PolicyError]:
    """Read and validate a cases file: the cases, or every error with its position."""
    read = _read(path)
    if isinstance(read, list):
        return read
    file, value, source = read
    issues = schema_issues(value, source, file, "cases.schema.json")
    bad_cases = {path[1] for path, _ in issues if len(path) >= 2 and path[0] == "cases"}
    if any(len(path) < 2 or path[0] != "cases" for path, _ in issues):
        return sorted(error for _, error in issues)
    reader = _CaseReader(file, source, value.get("client"))
    reader.errors.extend(error for _, error in issues)
    cases: list[Case] = []
    first: dict[str, int] = {}
    for index, raw in enumerate(value["cases"]):
        if index in bad_cases:  # already reported; still check the others in the same run
            continue
        where: NodePath = ("cases", index)
        name = raw["name"]
        if name in first:
            reader.error((*where, "name"), f"duplicate case name {name!r} (first on line {first[name]})")
        else:
            first[name] = source.value_position((*where, "name"))[0]
        case = reader.case(raw, where, with_expect=True)
        if case is not None:
            cases.append(case)
    if reader.errors:
        return sorted(reader.errors)
    return cases


def event_case(
    raw: dict[str, Any], path: NodePath, file: str, source: SourceMap, where: str
) -> Case | list[PolicyError]:
    """One event given as a mapping inside another document (a rule's inline example, at ``path``
    of ``file``; errors start with ``where``), checked like a case without ``expect``."""
    reader = _CaseReader(file, source)
    case = reader.case(raw, path, with_expect=False, where=where)
    if case is None:
        return sorted(reader.errors)
    return case


def unknown_rule_errors(cases: Sequence[Case], rule_ids: Collection[str]) -> list[PolicyError]:
    """A case that expects a rule no loaded pack defines can never pass and usually means a typo
    or a renamed rule: an error at the rule's position (with the closest known id), not a plain
    mismatch."""
    known = set(rule_ids)
    errors: list[PolicyError] = []
    for case in cases:
        for rule, line, col in case.rule_refs:
            if rule in known:
                continue
            close = difflib.get_close_matches(rule, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            errors.append(
                PolicyError(case.file, line, col, f"case {case.name!r}: unknown rule {rule!r}{hint}")
            )
    return errors


def load_event(path: str | Path) -> Case | list[PolicyError]:
    """Read one event for ``explain``: a case mapping without ``expect`` (``name`` optional)."""
    read = _read(path)
    if isinstance(read, list):
        return read
    file, value, source = read
    errors = schema_errors(value, source, file, "cases.schema.json#event")
    if errors:
        return sorted(errors)
    reader = _CaseReader(file, source)
    case = reader.case(value, (), with_expect=False)
    if case is None:
        return sorted(reader.errors)
    return case


# --- running --------------------------------------------------------------------------------------


def run_case(decider: Decider, case: Case) -> CaseOutcome:
    """Decide ``case`` through the gateway's own decision API and compare with its expectation."""
    event = case.event
    text: str | None = None
    contexts: tuple[str, ...] = ()
    redactions = 0
    decision: str
    if isinstance(event, StepEvent):
        step = decider.gate_step(event)
        decision, rules, message, shadow, trace = (
            step.decision,
            step.rules,
            step.message,
            step.shadow_rules,
            step.trace,
        )
        contexts = step.contexts
    elif isinstance(event, ToolResultEvent):
        result = decider.review_tool_result(event)
        decision, rules, message, shadow, trace = (
            result.decision,
            result.rules,
            result.message,
            result.shadow_rules,
            result.trace,
        )
        contexts, redactions = result.contexts, result.redactions
        if result.decision == "block":
            text = result.message
        else:
            text = result.redacted_text if result.redacted_text is not None else event.text
    elif case.stage == "guard":
        guard = decider.guard(event)
        decision = "deny" if guard.denied else "allow"
        rules, message, shadow, trace = guard.rules, guard.message, guard.shadow_rules, guard.trace
    else:
        call = decider.check_tool_call(event)
        decision, rules, message, shadow, trace = (
            call.decision,
            call.rules,
            call.message,
            call.shadow_rules,
            call.trace,
        )
    failures = _compare(case.expect, decision, rules, message, text, contexts, redactions, shadow)
    return CaseOutcome(
        case, decision, rules, message, text, contexts, redactions, shadow, trace, tuple(failures)
    )


def _compare(
    expect: Expectation,
    decision: str,
    rules: Sequence[str],
    message: str | None,
    text: str | None,
    contexts: tuple[str, ...],
    redactions: int,
    shadow: Sequence[str],
) -> list[str]:
    failures: list[str] = []
    if expect.decision is not None and expect.decision != decision:
        failures.append(f"decision: expected {expect.decision}, got {decision}")
    if expect.rules is not None and expect.rules != frozenset(rules):
        failures.append(f"rules: expected {sorted(expect.rules)}, got {sorted(rules)}")
    if expect.message is not None and expect.message not in (message or ""):
        failures.append(f"message: expected to contain {expect.message!r}, got {message!r}")
    if expect.text is not None and expect.text != text:
        failures.append(f"text: expected {expect.text!r}, got {text!r}")
    if expect.contexts is not None and expect.contexts != contexts:
        failures.append(f"contexts: expected {list(expect.contexts)}, got {list(contexts)}")
    if expect.redactions is not None and expect.redactions != redactions:
        failures.append(f"redactions: expected {expect.redactions}, got {redactions}")
    if expect.shadow_rules is not None and expect.shadow_rules != frozenset(shadow):
        failures.append(f"shadow_rules: expected {sorted(expect.shadow_rules)}, got {sorted(shadow)}")
    return failures
