"""The framework-neutral decision API: plain events in, typed verdicts out.

The harness plugins, the command-hook adapters, ``check --cases`` and ``explain`` all call these
functions, so a decision and its explanation come from one code path (OPA's ``--explain`` idea).
Events and verdicts are frozen dataclasses over plain data; values from ``core`` (``FrozenDict``,
tuples) are accepted anywhere a JSON value is expected.

Combination rules (POLICY.md section 2): pre-step - any enforced reject wins, else enter with the
contexts of matching rules; pre-execute - deny > ask > allow > ``defaults.decision``; guard - any
match denies and beats everything; post-execute - any block wins, else every redaction applies in
pack order and contexts are appended. ``warn``/``audit`` rules are evaluated and reported in
``shadow_rules`` and the trace but change nothing. An evaluation error with ``on_error: deny``
(always for guards) fails closed: it gives the stage's refusing decision and the message says why.
Any unexpected exception fails the whole verdict closed; nothing propagates to the caller.
"""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from os import PathLike
from types import MappingProxyType
from typing import Any, Literal

import structlog
from dsh_policy.cmdline.deadline import stage_deadline
from dsh_policy.cmdline.shell import shell_argv0s
from dsh_policy.policy.cel.engine import CelEngine, CelEvalError, EventActivation
from dsh_policy.policy.compile import (
    CompiledExpr,
    CompiledPolicy,
    CompiledRule,
    ParamOrigin,
    Redaction,
    RuleSelection,
)
from dsh_policy.policy.events import (
    GuardVerdict,
    PolicyStamp,
    ResultVerdict,
    RuleTrace,
    StepEvent,
    StepVerdict,
    ToolCallEvent,
    ToolCallVerdict,
    ToolResultEvent,
)
from dsh_policy.policy.loading import LoadFailure, PackInfo, build_policy
from dsh_policy.policy.plans import Match, RulePlan, StagePlan, StagePlans, plan_rule, plan_selection
from dsh_policy.policy.redaction import all_detector_redactions, redact_text, redact_value
from dsh_policy.policy.stages import STAGE_TABLE

_log = structlog.get_logger("dsh_policy.policy")


# --- evaluation -----------------------------------------------------------------------------------

_VARS = frozenset({"vars"})
_NO_NAMES: frozenset[str] = frozenset()
_WITH_VARS: dict[frozenset[str], frozenset[str]] = {}


def _with_vars(names: frozenset[str]) -> frozenset[str]:
    """``names | {"vars"}``, remembered: the same few name sets recur on every event."""
    found = _WITH_VARS.get(names)
    if found is None:
        found = names | _VARS
        if len(_WITH_VARS) < 4096:
            _WITH_VARS[names] = found
    return found


_RECENT_CALLS = 64


class _EventScope:
    """Activation values for one event, each built on first use and at most once; one activation
    per pack holding the names that pack's selected rules read (``reads``), shared by all their
    expressions so an engine converts it once. Pack variables are evaluated lazily (only those an
    evaluated expression reads) and at most once, and cached per pack."""

    __slots__ = (
        "_activations",
        "_builders",
        "_cache",
        "_deadline",
        "_held",
        "_last",
        "_policy",
        "_programs",
        "_reads",
        "_seconds",
        "_source",
        "_var_errors",
        "_vars",
    )

    def __init__(
        self,
        policy: CompiledPolicy,
        builders: Mapping[str, Callable[[Any], Any]],
        source: Any,
        reads: Mapping[int, frozenset[str]],
        seconds: float,
    ) -> None:
        self._seconds = seconds
        self._deadline = 0.0
        self._policy = policy
        self._builders = builders  # name -> function of ``source`` (the event): static, shared
        self._source = source
        self._reads = reads
        self._cache: dict[str, Any] = {}
        self._vars: dict[tuple[int, str], Any] = {}
        self._var_errors: dict[tuple[int, str], str] = {}
        # (pack_index, variables read) -> the shared activation; () = without ``vars``.
        self._activations: dict[tuple[int, tuple[str, ...]], Mapping[str, Any]] = {}
        self._held: dict[int, frozenset[str]] = {}  # names in each pack's base activation, + vars
        self._last: tuple[int, Mapping[str, Any], frozenset[str]] | None = None  # the latest base
        self._programs: tuple[str, ...] | None = None  # the shell line's program names, once

    @property
    def seconds(self) -> float:
        """The time budget of one stage."""
        return self._seconds

    def start_clock(self) -> None:
        """Give the stage about to run the event's time budget (each stage gets its own: a guard
        may run long after pre-execute, once a person approved the call)."""
        self._deadline = time.monotonic() + self._seconds

    def _out_of_time(self) -> CelEvalError | None:
        if time.monotonic() <= self._deadline:
            return None
        return CelEvalError(
            f"the event's evaluation budget of {self._seconds:g} s ran out before this expression ran"
        )

    def runs_program(self, pattern: re.Pattern[str]) -> bool:
        """Whether the event's shell line runs a program ``pattern`` matches (``match.programs``).
        No string ``args.command``: no program. A line the parser refuses (too long, too
        nested): every program, so the rule runs and fails closed on its own."""
        if self._programs is None:
            args = self._value("args", 0)
            command = args.get("command") if isinstance(args, Mapping) else None
            if not isinstance(command, str):
                self._programs = ()
            else:
                try:
                    self._programs = tuple(dict.fromkeys(shell_argv0s(command)))
                except ValueError:
                    self._programs = None
                    return True
        return any(pattern.fullmatch(program) for program in self._programs)

    def for_selection(self, reads: Mapping[int, frozenset[str]]) -> _EventScope:
        """The same event, now for another stage's rules (which may read other names)."""
        if reads is not self._reads:
            self._reads = reads
            self._last = None
        return self

    def _value(self, name: str, pack_index: int) -> Any:
        if name == "params":
            return self._policy.packs[pack_index].activation_params
        if name in self._cache:
            return self._cache[name]
        builder = self._builders.get(name)
        value = builder(self._source) if builder is not None else None
        self._cache[name] = value
        return value

    def _base(self, expr: CompiledExpr, pack_index: int) -> Mapping[str, Any]:
        """The pack's shared activation, holding every name the selected rules read."""
        last = self._last
        if last is not None and last[0] == pack_index and expr.names <= last[2]:
            return last[1]
        found = self._activations.get((pack_index, ()))
        if found is not None and expr.names <= self._held[pack_index]:
            return found
        names = self._reads.get(pack_index, _NO_NAMES)
        if not expr.names <= names:
            names = names | (expr.names - _VARS)
        if found is not None:  # an expression outside the selection read more: widen, once
            names = frozenset(names | found.keys())
        values = {name: self._value(name, pack_index) for name in names}
        # Engines that convert an activation keep the conversion on an EventActivation, to do it
        # once per event; the closure compiler reads values as they are and needs no such place.
        built: Mapping[str, Any] = EventActivation(values) if self._policy.converting else values
        self._activations[(pack_index, ())] = built
        self._held[pack_index] = held = _with_vars(names)
        self._last = (pack_index, built, held)
        return built

    def activation(self, expr: CompiledExpr, pack_index: int) -> Mapping[str, Any]:
        """The names ``expr`` reads (with the variables it needs evaluated), in an activation
        shared with every other expression of this pack that reads the same variables."""
        if not expr.variables and "vars" not in expr.names:
            return self._base(expr, pack_index)
        key = (pack_index, expr.variables)
        found = self._activations.get(key)
        if found is not None and expr.names <= found.keys():
            return found
        values = dict(self._base(expr, pack_index))
        values["vars"] = {
            name: self._vars[(pack_index, name)]
            for name in expr.variables
            if self._variable(pack_index, name)
        }
        built = EventActivation(values)
        self._activations[key] = built
        return built

    def _variable(self, pack_index: int, name: str) -> bool:
        """Evaluate a variable once; False when it failed (the error is kept for messages)."""
        key = (pack_index, name)
        if key in self._vars:
            return True
        if key in self._var_errors:
            return False
        expr = self._policy.packs[pack_index].variables[name]
        # Dependencies come first in ``expr.variables``, so this never recurses deeply.
        value = self._out_of_time() or expr.program.evaluate(self.activation(expr, pack_index))
        if isinstance(value, CelEvalError):
            self._var_errors[key] = value.message
            return False
        self._vars[key] = value
        return True

    def variable_errors(self, expr: CompiledExpr, pack_index: int) -> str:
        """Errors of the variables ``expr`` reads, to explain why ``expr`` failed."""
        failed = [
            f"vars.{name}: {self._var_errors[(pack_index, name)]}"
            for name in expr.variables
            if (pack_index, name) in self._var_errors
        ]
        return f" ({'; '.join(failed)})" if failed else ""

    def evaluate_simple(self, expr: CompiledExpr, pack_index: int) -> Any:
        """:meth:`evaluate` for an expression that reads no pack variables (the common case):
        the base activation, no variable bookkeeping. An error is returned as it is."""
        if time.monotonic() > self._deadline:
            return self._out_of_time()
        last = self._last
        if last is not None and last[0] == pack_index and expr.names <= last[2]:
            return expr.program.evaluate(last[1])
        return expr.program.evaluate(self._base(expr, pack_index))

    def evaluate(self, expr: CompiledExpr, pack_index: int) -> Any:
        """Evaluate ``expr``; a :class:`CelEvalError` result names failing variables too. Once
        the stage's time budget is spent, every later expression is that error (fails closed
        where the rule says so), so N slow rules cost one budget, not N."""
        late = self._out_of_time()
        if late is not None:
            return late
        result = expr.program.evaluate(self.activation(expr, pack_index))
        if isinstance(result, CelEvalError):
            return CelEvalError(result.message + self.variable_errors(expr, pack_index))
        return result


@dataclass(frozen=True, slots=True)
class RuleRun:
    """Rules of one stage evaluated on one event but not combined (:meth:`Decider.trace_rules`):
    the trace of each, and the message of each enforced match by rule id."""

    trace: tuple[RuleTrace, ...]
    messages: Mapping[str, str]


class _StageRun:
    """Evaluates the rules of one stage against one event and collects matches and trace. The
    common outcomes append objects the plan prepared; ``signature`` stays the tuple of which
    rules matched while every outcome was one of those, else None (the verdict is then built
    fresh rather than memoized). ``tool`` names the subject (None: the step)."""

    __slots__ = ("matches", "scope", "shadow", "signature", "tool", "trace")

    def __init__(self, scope: _EventScope, tool: str | None) -> None:
        self.scope = scope
        self.tool = tool
        self.matches: list[Match] = []
        self.shadow: list[str] = []
        self.trace: list[RuleTrace] = []
        self.signature: list[bool | None] | None = []

    @property
    def subject(self) -> str:
        """How messages name what is decided: ``tool "x"`` or ``step``."""
        return "step" if self.tool is None else f'tool "{self.tool}"'

    def run(self, plan: StagePlan | Sequence[CompiledRule]) -> None:
        """Evaluate every rule, in order (all of them: the trace and shadow rules need it),
        except those whose ``match.programs`` the shell line does not run. The stage's deadline is
        visible to helpers (``cmdline.deadline``), so one slow helper call on attacker-sized input
        cannot outlast the budget either."""
        scope = self.scope
        scope.start_clock()
        with stage_deadline(scope.seconds):
            self._run_plans(plan)

    def _run_plans(self, plan: StagePlan | Sequence[CompiledRule]) -> None:
        scope = self.scope
        plans = plan.rules if isinstance(plan, StagePlan) else [plan_rule(r, self._static(r)) for r in plan]
        trace = self.trace
        signature = self.signature
        for rule_plan in plans:
            programs = rule_plan.rule.programs
            if programs is not None and not scope.runs_program(programs):
                if signature is not None:
                    signature.append(None)  # not evaluated: the line runs none of its programs
                continue
            when = rule_plan.when
            if when is None:
                value: Any = True
            elif rule_plan.simple:
                value = scope.evaluate_simple(when, rule_plan.rule.pack_index)
            else:
                value = scope.evaluate(when, rule_plan.rule.pack_index)
            if value is False:
                trace.append(rule_plan.no_match)
                if signature is not None:
                    signature.append(False)
            elif value is True and rule_plan.match is not None:
                self.matches.append(rule_plan.match)
                trace.append(rule_plan.matched)
                if signature is not None:
                    signature.append(True)
            else:
                self.signature = signature = None
                self._one(rule_plan, value)

    def _static(self, rule: CompiledRule) -> str:
        return rule.message or rule.description or _default_message(rule, rule.effect, self.subject)

    def _one(self, plan: RulePlan, value: Any) -> None:
        rule = plan.rule
        error: str | None = None
        if isinstance(value, CelEvalError):
            error, value = value.message, None
        elif not isinstance(value, bool):
            error = f"when must be a bool, got {type(value).__name__} {value!r}"
        if error is not None:
            matched = rule.on_error == "deny"
            effect = STAGE_TABLE[rule.stage].closed_effect if matched else rule.effect
        else:
            matched = value is True
            effect = rule.effect
        if not matched:
            self.trace.append(_trace(rule, effect, False, value, error, "no-match"))
            return
        if not rule.enforced:
            self.shadow.append(rule.id)
            if rule.mode == "warn":
                _log.warning(
                    "policy rule matched in warn mode",
                    rule=rule.id,
                    stage=rule.stage,
                    subject=self.subject,
                    error=error,
                )
            self.trace.append(_trace(rule, effect, True, value, error, "shadow"))
            return
        outcome = "failed-closed" if error is not None else "decided"
        self.matches.append(Match(rule, effect, self._message(rule, effect, error)))
        self.trace.append(_trace(rule, effect, True, value, error, outcome))

    def _message(self, rule: CompiledRule, effect: str, error: str | None) -> str:
        if error is not None:
            return f"policy rule {rule.id} could not be evaluated ({error}); failing closed"
        if rule.message_expression is not None:
            text = self.scope.evaluate(rule.message_expression, rule.pack_index)
            if isinstance(text, str):
                return text
            why = text.message if isinstance(text, CelEvalError) else f"gave {type(text).__name__}"
            fallback = rule.message or rule.description or _default_message(rule, effect, self.subject)
            return f"{fallback} (message_expression failed: {why})"
        return rule.message or rule.description or _default_message(rule, effect, self.subject)

    def with_effect(self, *effects: str) -> list[Match]:
        """Enforced matches that give one of ``effects``."""
        return [match for match in self.matches if match.effect in effects]

    def key(self) -> tuple[bool | None, ...] | None:
        """Which rules matched (None: skipped by ``match.programs``), when every outcome was a
        plain true/false (see class doc)."""
        return tuple(self.signature) if self.signature is not None else None


def _trace(
    rule: CompiledRule, effect: str, matched: bool, value: Any, error: str | None, outcome: str
) -> RuleTrace:
    return RuleTrace(rule.id, rule.stage, rule.mode, effect, matched, value, error, outcome)


def _default_message(rule: CompiledRule, effect: str, subject: str) -> str:
    if effect == "reject":
        return f"step rejected by policy rule {rule.id}"
    if rule.stage == "guard":
        return f"{subject} blocked by policy guard {rule.id}"
    if effect == "deny":
        return f"{subject} denied by policy rule {rule.id}"
    if effect == "ask":
        return f"{subject} needs approval (policy rule {rule.id})"
    if effect == "block":
        return f"output of {subject} withheld by policy rule {rule.id}"
    return f"{subject} allowed by policy rule {rule.id}"


def _join(matches: Sequence[Match]) -> str:
    return "; ".join(dict.fromkeys(match.message for match in matches))


def _ids(matches: Sequence[Match]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(match.rule.id for match in matches))


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _strings_size(value: Any, limit: int) -> int:
    """UTF-8 bytes of the strings inside a JSON value, counted until ``limit`` is passed."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += _utf8_size(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return total


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def _now(event_now: datetime.datetime | None) -> datetime.datetime:
    return event_now if event_now is not None else datetime.datetime.now(datetime.UTC)


def _top_level(value: Any) -> Any:
    """A JSON value for an activation: a frozen object as a plain dict at the top level (a C-level
    copy), nested frozen values as they are. Every engine reads any ``Mapping`` and tuple and
    none mutates a value, so a deep copy per event (``thaw``) would buy nothing."""
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return dict(value.items())
    return value


def _condition(program: Any) -> Callable[[Mapping[str, Any]], Any]:
    """The cheapest way to run ``program`` when only a True/False result is used."""
    condition = getattr(program, "condition", None)
    return condition() if condition is not None else program.evaluate


def _tool_values(event: ToolCallEvent) -> dict[str, Any]:
    return {
        "name": event.tool,
        "call_id": event.call_id,
        "root_call_id": event.root_call_id or event.call_id,
        "nested": event.nested,
        "original_name": event.original_name or event.tool,
    }


# Each activation name as a function of the event (static: nothing is built per event until a
# rule reads the name).
_CALL_BUILDERS: Mapping[str, Callable[[ToolCallEvent], Any]] = MappingProxyType({
    "session": lambda event: {"id": event.session_id},
    "agent": lambda event: {"id": event.agent_id or ""},
    "now": lambda event: _now(event.now),
    "turn": lambda event: event.turn,
    "step": lambda event: event.step,
    "tool": _tool_values,
    "args": lambda event: _top_level(event.args),
})  # fmt: skip


def _of_call(build: Callable[[ToolCallEvent], Any]) -> Callable[[ToolResultEvent], Any]:
    return lambda event: build(event.call)


def _result_values(event: ToolResultEvent) -> dict[str, Any]:
    return {
        "is_error": event.is_error,
        "text": event.text,
        "value": _top_level(event.value),
        "error": {"message": event.error_message or "", "code": event.error_code or ""},
    }


_RESULT_BUILDERS: Mapping[str, Callable[[ToolResultEvent], Any]] = MappingProxyType({
    **{name: _of_call(build) for name, build in _CALL_BUILDERS.items()},
    "result": _result_values,
})  # fmt: skip


def _messages(event: StepEvent) -> list[dict[str, Any]]:
    return [
        {
            "role": message.role,
            "text": message.text,
            "source": {"kind": message.source_kind, "plugin": message.source_plugin or ""},
        }
        for message in event.messages
    ]


_STEP_BUILDERS: Mapping[str, Callable[[StepEvent], Any]] = MappingProxyType({
    "session": lambda event: {"id": event.session_id},
    "agent": lambda event: {"id": event.agent_id or ""},
    "now": lambda event: _now(event.now),
    "turn": lambda event: event.turn,
    "step": lambda event: event.step,
    "messages": _messages,
    "prompt": lambda event: "\n".join(m.text for m in event.messages if m.source_kind == "user"),
})  # fmt: skip


def _internal(exc: BaseException, where: str) -> str:
    _log.error("policy evaluation failed; failing closed", stage=where, exc_info=exc)
    return f"policy evaluation failed ({type(exc).__name__}: {exc}); failing closed"


# --- the decisions --------------------------------------------------------------------------------


#: Wall-clock seconds one stage of one event may spend evaluating its rules. Each engine also
#: bounds a single expression; this bounds their sum, so many slow rules cannot add up.
DEFAULT_EVENT_SECONDS = 2.0

#: The most tool output post-execute scans (UTF-8 bytes of the text, or of the strings in the value,
#: whichever is larger). Scanning is linear, but a tool can return gigabytes: a larger output is
#: withheld (block, with a message saying why) rather than scanned for as long as it takes.
DEFAULT_MAX_SCAN_BYTES = 1 << 20


class Decider:
    """Decides events against one immutable :class:`CompiledPolicy`; ``max_scan_bytes`` caps what
    post-execute reviews, ``event_seconds`` the time one stage of one event may spend evaluating
    (see :data:`DEFAULT_MAX_SCAN_BYTES`, :data:`DEFAULT_EVENT_SECONDS`)."""

    __slots__ = (
        "_argument_redactions",
        "_event_seconds",
        "_max_scan_bytes",
        "_plans",
        "_recent",
        "_stamp",
        "policy",
    )

    def __init__(
        self,
        policy: CompiledPolicy,
        *,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
    ) -> None:
        self.policy = policy
        # Stamped on every verdict, so an audit record names the policy that decided, even when a
        # reload has put another one in force by the time the record is written.
        protection = policy.protection
        self._stamp = PolicyStamp(
            policy.digest, policy.engine_name, protection is not None and not protection.enabled
        )
        self._max_scan_bytes = max_scan_bytes
        self._event_seconds = event_seconds
        self._recent: dict[int, tuple[ToolCallEvent, _EventScope]] = {}
        # Per stage, per tool: the rules planned once (see policy/plans.py).
        self._plans = {stage: StagePlans(self._planner(stage)) for stage in STAGE_TABLE}
        # Everything a post-execute rule could redact plus every shipped detector, whatever the
        # rule's mode: the audit log must never hold a secret in clear.
        steps: list[Redaction] = [
            step for rule in policy.stages["post-execute"].all_rules for step in rule.redactions
        ]
        self._argument_redactions = (*steps, *all_detector_redactions())

    @property
    def stamp(self) -> PolicyStamp:
        """Which compiled policy this decider decides by (stamped on each of its verdicts)."""
        return self._stamp

    def gate_step(self, event: StepEvent) -> StepVerdict:
        """``agent/pre-step``: reject if any enforced rule rejects, else enter with contexts."""
        try:
            plan = self._plans["pre-step"].get("")
            size = sum(_utf8_size(message.text) for message in event.messages)
            if plan.rules and size > self._max_scan_bytes:
                message = self._too_large("step messages", size)
                return StepVerdict("reject", (), message, internal_error=message, policy=self._stamp)
            run = _StageRun(
                _EventScope(self.policy, _STEP_BUILDERS, event, plan.reads, self._event_seconds), None
            )
            run.run(plan)
            rejects = run.with_effect("reject")
            if rejects:
                return StepVerdict(
                    "reject",
                    _ids(rejects),
                    _join(rejects),
                    (),
                    tuple(run.shadow),
                    tuple(run.trace),
                    policy=self._stamp,
                )
            added = [match for match in run.with_effect("enter") if match.rule.context]
            contexts = tuple(match.rule.context for match in added if match.rule.context)
            return StepVerdict(
                "enter",
                _ids(added),
                None,
                contexts,
                tuple(run.shadow),
                tuple(run.trace),
                policy=self._stamp,
            )
        except Exception as exc:
            message = _internal(exc, "pre-step")
            return StepVerdict("reject", (), message, internal_error=message, policy=self._stamp)

    def pre_execute(self, event: ToolCallEvent) -> ToolCallVerdict:
        """``tools/pre-execute``: deny > ask > allow > the policy's default decision."""
        try:
            oversized = self._oversized_call("pre-execute", event)
            if oversized is not None:
                return ToolCallVerdict("deny", (), oversized, policy=self._stamp)
            plan = self._plans["pre-execute"].get(event.tool)
            if plan.fast is not None:
                found = plan.fast(event)
                if found is not None:
                    return found
            run = self._run_tool_stage(plan, event)
            return plan.verdict(run.key(), lambda: self._combine_pre_execute(run, event))
        except Exception as exc:
            message = _internal(exc, "pre-execute")
            return ToolCallVerdict("deny", (), message, internal_error=message, policy=self._stamp)

    def guard(self, event: ToolCallEvent) -> GuardVerdict:
        """``ctx.tools.guard``: any matching guard denies (errors count as matches)."""
        try:
            protected = self._self_protection(event)
            oversized = self._oversized_call("guard", event)
            if oversized is not None:
                rules_ = (protected.rule,) if protected is not None else ()
                message = protected.message if protected is not None else oversized
                return GuardVerdict(True, rules_, message, policy=self._stamp)
            plan = self._plans["guard"].get(event.tool)
            if protected is None:
                if plan.fast is not None:
                    found = plan.fast(event)
                    if found is not None:
                        return found
                run = self._run_tool_stage(plan, event)
                return plan.verdict(run.key(), lambda: self._combine_guard(run))
            run = self._run_tool_stage(plan, event)
            denies = run.with_effect("deny")
            rules, message, trace = _ids(denies), _join(denies) if denies else None, tuple(run.trace)
            if protected is not None:
                # The deployment's own invariant, whatever the rules say and in every mode. When a
                # guard rule denies as well, its message stands and the trace shows both.
                outcome = "shadow" if denies else "decided"
                entry = RuleTrace(protected.rule, "guard", "enforce", "deny", True, True, None, outcome)
                trace = (entry, *trace)
                if not denies:
                    rules, message = (protected.rule,), protected.message
            denied = bool(denies) or protected is not None
            return GuardVerdict(denied, rules, message, tuple(run.shadow), trace, policy=self._stamp)
        except Exception as exc:
            message = _internal(exc, "guard")
            return GuardVerdict(True, (), message, internal_error=message, policy=self._stamp)

    def _self_protection(self, event: ToolCallEvent) -> Any:
        """The deployment's self-protection refusal for this call, if any (see
        ``policy.self_protection``); an exception here fails the guard closed."""
        protection = self.policy.protection
        if protection is None:
            return None
        with stage_deadline(self._event_seconds):
            return protection.check(event.tool, event.args, event.cwd)

    def _oversized_call(self, stage: str, event: ToolCallEvent) -> str | None:
        """Why a call's arguments are too large to evaluate, when they are and a rule would read
        them: string operations in a rule cost time and memory in proportion to their input, so
        no more than ``max_scan_bytes`` of argument text reaches CEL (the call is refused)."""
        if not self.policy.stages[stage].select(event.tool).rules:
            return None
        limit = self._max_scan_bytes
        size = _strings_size(event.args, limit)
        return None if size <= limit else self._too_large(f'the arguments of tool "{event.tool}"', size)

    def _too_large(self, what: str, size: int) -> str:
        return (
            f"{what} refused by policy: more than {_mib(self._max_scan_bytes)} ({size:,}+ bytes) is too "
            "large to check"
        )

    def check_tool_call(self, event: ToolCallEvent) -> ToolCallVerdict:
        """The whole gate as one verdict (for cases and hook adapters): pre-execute, then guards;
        a guard denial beats every pre-execute outcome, including ask and allow."""
        pre = self.pre_execute(event)
        guard = self.guard(event)
        trace = pre.trace + guard.trace
        shadow = pre.shadow_rules + guard.shadow_rules
        if guard.denied:
            return ToolCallVerdict(
                "deny",
                guard.rules,
                guard.message,
                shadow,
                trace,
                guard.internal_error or pre.internal_error,
                guard=True,
                policy=self._stamp,
            )
        return replace(pre, shadow_rules=shadow, trace=trace, internal_error=pre.internal_error)

    def review_tool_result(self, event: ToolResultEvent) -> ResultVerdict:
        """``tools/post-execute``: block if any enforced rule blocks; else redact text and value with
        every matching redaction rule (pack order) and append contexts."""
        try:
            oversized = self._oversized(event)
            if oversized is not None:
                return ResultVerdict("block", (), oversized, policy=self._stamp)
            return self._review(event)
        except Exception as exc:
            message = _internal(exc, "post-execute")
            return ResultVerdict("block", (), message, internal_error=message, policy=self._stamp)

    def redact_arguments(self, args: Any) -> tuple[Any, int]:
        """Arguments fit for the audit record: every policy redaction and every shipped detector
        applied to every string. Returns plain JSON and the number of replacements. Works on any
        JSON value, so it also cleans other strings bound for the log (a message built by a
        ``message_expression`` from the arguments, an error text). On an internal failure the
        value is withheld whole rather than risk a secret in clear, and so is a value with more
        than ``max_scan_bytes`` of text (such a call was refused unread; the record's
        ``args_digest`` still commits to it, and the log does not grow by what an agent sent)."""
        try:
            limit = self._max_scan_bytes
            size = _strings_size(args, limit)
            if size > limit:
                return f"[WITHHELD: more than {_mib(limit)} of text, too large to record]", 1
            return redact_value(args, self._argument_redactions)
        except Exception as exc:
            _internal(exc, "redact-arguments")
            return "[REDACTED:unavailable]", 1

    def trace_rules(
        self,
        stage: str,
        event: StepEvent | ToolCallEvent | ToolResultEvent,
        rule_ids: Collection[str],
    ) -> RuleRun:
        """How each of ``rule_ids`` (rules of ``stage`` that apply to the event) fares on
        ``event``, uncombined: one trace entry per rule and the message of each enforced match.

        For replay, which re-evaluates only the rules whose recorded outcome it cannot reuse; the
        evaluation is the decision path's own (same activation, variables, errors, time budget).
        Rules that do not apply to the event's tool are left out."""
        wanted = frozenset(rule_ids)
        if isinstance(event, StepEvent):
            if stage != "pre-step":
                raise TypeError(f"{stage} rules decide a tool call or result, not a step")
            selection = self.policy.stages[stage].select_all()
        else:
            if stage == "pre-step":
                raise TypeError("pre-step rules decide a StepEvent")
            call = event.call if isinstance(event, ToolResultEvent) else event
            selection = self.policy.stages[stage].select(call.tool)
        rules = tuple(rule for rule in selection.rules if rule.id in wanted)
        reads = RuleSelection.of(rules).reads
        scope: _EventScope
        tool: str | None
        if isinstance(event, StepEvent):
            scope = _EventScope(self.policy, _STEP_BUILDERS, event, reads, self._event_seconds)
            tool = None
        elif isinstance(event, ToolResultEvent):
            scope = _EventScope(self.policy, _RESULT_BUILDERS, event, reads, self._event_seconds)
            tool = event.call.tool
        else:
            scope = self._call_scope(event, reads)  # shared by pre-execute and guard of one call
            tool = event.tool
        run = _StageRun(scope, tool)
        run.run(rules)
        return RuleRun(tuple(run.trace), {match.rule.id: match.message for match in run.matches})

    # -- internals --

    def _planner(self, stage: str) -> Callable[[str], StagePlan]:
        index = self.policy.stages[stage]

        def make(tool: str) -> StagePlan:
            selection: RuleSelection = index.select_all() if stage == "pre-step" else index.select(tool)
            subject = "step" if stage == "pre-step" else f'tool "{tool}"'
            plan = plan_selection(
                selection,
                lambda rule: rule.message or rule.description or _default_message(rule, rule.effect, subject),
            )
            if stage in ("pre-execute", "guard"):
                plan.fast = self._shortcut(plan)
            return plan

        return make

    def _shortcut(self, plan: StagePlan) -> Callable[[ToolCallEvent], Any] | None:
        """A function deciding ``plan`` for one call event without the general machinery, for a
        plan whose every condition reads no pack variable and is a program that reads plain
        values (closure): it builds each pack's activation, runs the conditions in order and
        returns the verdict memoized for which matched. It returns None (and the general run
        decides, identically, from scratch) on anything else: an error or non-bool, a match
        that needs more than a prepared record (a shadow rule in warn mode logs; a
        ``message_expression``), a verdict not yet built, the stage's time budget spent.
        Conditions are pure, so running them again there changes nothing."""
        rules = plan.rules
        if any(
            rule_plan.rule.programs is not None  # skipping by the shell line's programs: full run
            # a helper call reads the stage deadline (cmdline.deadline), which the full run sets
            or (rule_plan.when is not None and getattr(rule_plan.when.program, "calls_helpers", True))
            or (
                rule_plan.when is not None
                and (not rule_plan.simple or getattr(rule_plan.when.program, "converts_activation", True))
            )
            for rule_plan in rules
        ):
            return None
        steps = tuple(
            (
                None if rule_plan.when is None else _condition(rule_plan.when.program),
                rule_plan.rule.pack_index,
                rule_plan.match is not None,
            )
            for rule_plan in rules
        )
        names = {index: tuple(sorted(found)) for index, found in plan.reads.items()}
        packs = self.policy.packs
        verdicts = plan.verdicts
        seconds = self._event_seconds
        monotonic = time.monotonic
        builders = _CALL_BUILDERS

        def activation_of(event: ToolCallEvent, pack_index: int, values: dict[str, Any]) -> dict[str, Any]:
            activation: dict[str, Any] = {}
            for name in names.get(pack_index, ()):
                if name == "params":
                    activation[name] = packs[pack_index].activation_params
                    continue
                if name not in values:
                    builder = builders.get(name)
                    values[name] = builder(event) if builder is not None else None
                activation[name] = values[name]
            return activation

        if len(steps) == 1 and steps[0][0] is not None:
            # One rule (a tool with one rule of this stage, the common case): no loop, no lists.
            ((condition_one, pack_one, plain_one),) = steps
            assert condition_one is not None
            evaluate_one: Callable[[Mapping[str, Any]], Any] = condition_one
            matched_key, unmatched_key = (True,), (False,)

            def decide_one(event: ToolCallEvent) -> Any:
                try:
                    result = evaluate_one(activation_of(event, pack_one, {}))
                except Exception:  # an error: the full run reports it as the rule says
                    return None
                if result is False:
                    return verdicts.get(unmatched_key)
                if result is True and plain_one:
                    return verdicts.get(matched_key)
                return None

            return decide_one

        def decide(event: ToolCallEvent) -> Any:
            deadline = 0.0
            values: dict[str, Any] = {}
            activations: dict[int, dict[str, Any]] = {}
            signature: list[bool] = []
            for evaluate, pack_index, plain_match in steps:
                if evaluate is None:
                    result: Any = True
                else:
                    if not deadline:
                        deadline = monotonic() + seconds
                    elif monotonic() > deadline:
                        return None
                    activation = activations.get(pack_index)
                    if activation is None:
                        activation = activations[pack_index] = activation_of(event, pack_index, values)
                    try:
                        result = evaluate(activation)
                    except Exception:  # an error: the full run reports it as the rule says
                        return None
                if result is False:
                    signature.append(False)
                elif result is True and plain_match:
                    signature.append(True)
                else:
                    return None
            return verdicts.get(tuple(signature))

        return decide

    def _run_tool_stage(
        self, plan: StagePlan, event: ToolCallEvent, result: ToolResultEvent | None = None
    ) -> _StageRun:
        if result is None:
            scope = self._call_scope(event, plan.reads)
        else:
            scope = _EventScope(self.policy, _RESULT_BUILDERS, result, plan.reads, self._event_seconds)
        run = _StageRun(scope, event.tool)
        run.run(plan)
        return run

    def _call_scope(self, event: ToolCallEvent, reads: Mapping[int, frozenset[str]]) -> _EventScope:
        """One scope per call event, shared by its pre-execute and guard stages (the gateway and
        ``check_tool_call`` decide both on the same event object): its activation is converted
        once and each variable evaluated at most once for the whole call. Kept for the last
        :data:`_RECENT_CALLS` events, by identity. Lock-free: each dict operation is atomic, and
        a lost race only means one stage builds its own scope."""
        key = id(event)
        recent = self._recent
        entry = recent.get(key)
        if entry is not None and entry[0] is event:
            return entry[1].for_selection(reads)
        scope = _EventScope(self.policy, _CALL_BUILDERS, event, reads, self._event_seconds)
        if len(recent) >= _RECENT_CALLS:
            # Another thread may evict (or change the dict) at the same moment: then it did the job.
            # (try/except, not contextlib.suppress: this runs on every call event.)
            try:  # noqa: SIM105
                del recent[next(iter(recent))]
            except (KeyError, RuntimeError, StopIteration):
                pass
        recent[key] = (event, scope)  # holding the event keeps its id from being reused
        return scope

    def _combine_guard(self, run: _StageRun) -> GuardVerdict:
        denies = run.with_effect("deny")
        return GuardVerdict(
            bool(denies),
            _ids(denies),
            _join(denies) if denies else None,
            tuple(run.shadow),
            tuple(run.trace),
            policy=self._stamp,
        )

    def _combine_pre_execute(self, run: _StageRun, event: ToolCallEvent) -> ToolCallVerdict:
        shadow, trace = tuple(run.shadow), tuple(run.trace)
        effects: tuple[Literal["deny", "ask", "allow"], ...] = ("deny", "ask", "allow")
        for effect in effects:
            found = run.with_effect(effect)
            if found:
                return ToolCallVerdict(effect, _ids(found), _join(found), shadow, trace, policy=self._stamp)
        default = self.policy.default_decision
        message: str | None = None
        if default != "allow":
            verb = "allows" if default == "deny" else "decides"
            message = f'no policy rule {verb} tool "{event.tool}" (defaults.decision: {default})'
        return ToolCallVerdict(default, (), message, shadow, trace, policy=self._stamp)

    def _oversized(self, event: ToolResultEvent) -> str | None:
        """Why the output is too large to review, when it is and a post-execute rule applies."""
        if not self._plans["post-execute"].get(event.call.tool).rules:
            return None
        limit = self._max_scan_bytes
        size = max(_utf8_size(event.text), _strings_size(event.value, limit))
        if size <= limit:
            return None
        return (
            f"tool output withheld by policy: more than {_mib(limit)} ({size:,}+ bytes) is too large "
            "to check for secrets and injected instructions"
        )

    def _review(self, event: ToolResultEvent) -> ResultVerdict:
        run = self._run_tool_stage(self._plans["post-execute"].get(event.call.tool), event.call, event)
        shadow = tuple(run.shadow)
        blocks = run.with_effect("block")
        if blocks:
            contexts = tuple(match.rule.context for match in blocks if match.rule.context)
            return ResultVerdict(
                "block",
                _ids(blocks),
                _join(blocks),
                None,
                None,
                False,
                0,
                contexts,
                shadow,
                tuple(run.trace),
                policy=self._stamp,
            )
        text, value = event.text, event.value
        text_changed = value_changed = False
        total = 0
        deciding: list[str] = []
        contexts_list: list[str] = []
        counts: dict[str, int] = {}
        for match in run.matches:
            rule = match.rule
            changed = False
            if rule.redactions:
                text, in_text = redact_text(text, rule.redactions)
                value, in_value = redact_value(value, rule.redactions)
                counts[rule.id] = counts.get(rule.id, 0) + in_text + in_value
                text_changed |= in_text > 0
                value_changed |= in_value > 0
                total += in_text + in_value
                changed = in_text + in_value > 0
            if rule.context:
                contexts_list.append(rule.context)
                changed = True
            if changed and rule.id not in deciding:
                deciding.append(rule.id)
        trace = tuple(
            replace(entry, redactions=counts[entry.rule]) if counts.get(entry.rule) else entry
            for entry in run.trace
        )
        return ResultVerdict(
            "accept",
            tuple(deciding),
            None,
            text if text_changed else None,
            value if value_changed else None,
            value_changed,
            total,
            tuple(contexts_list),
            shadow,
            trace,
            policy=self._stamp,
        )


# --- the facade the plugins hold ------------------------------------------------------------------


class Policy:
    """The decision API the gateway plugins and hook adapters hold: the decide methods of
    :class:`Decider` over the policy currently in force (see ``reload.ReloadingPolicy`` for one
    that follows edits to its pack files)."""

    def __init__(
        self,
        compiled: CompiledPolicy,
        *,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
    ) -> None:
        self._decider = Decider(compiled, max_scan_bytes=max_scan_bytes, event_seconds=event_seconds)

    @classmethod
    def load(
        cls,
        paths: Sequence[str | PathLike[str]],
        *,
        params: Mapping[str, Any] | None = None,
        engine: CelEngine | str = "auto",
        shadow: bool = False,
        param_origins: Mapping[str, ParamOrigin] | None = None,
        max_scan_bytes: int = DEFAULT_MAX_SCAN_BYTES,
        event_seconds: float = DEFAULT_EVENT_SECONDS,
        protection: Any = None,
    ) -> Policy | LoadFailure:
        """Load, validate and compile packs; a :class:`LoadFailure` holds every error.
        ``max_scan_bytes`` caps the tool output post-execute reviews (larger is withheld);
        ``event_seconds`` the evaluation time of one stage of one event (later rules fail closed);
        ``protection`` a deployment's self-protection (``PolicySources.protection()``)."""
        built = build_policy(
            paths,
            params=params,
            engine=engine,
            shadow=shadow,
            param_origins=param_origins,
            protection=protection,
        )
        if isinstance(built, LoadFailure):
            return built
        return cls(built, max_scan_bytes=max_scan_bytes, event_seconds=event_seconds)

    def current(self) -> Decider:
        """The decider for the policy in force now."""
        return self._decider

    @property
    def compiled(self) -> CompiledPolicy:
        """The compiled policy in force."""
        return self.current().policy

    @property
    def digest(self) -> str:
        """``sha256:...`` over packs, params, engine and shadow flag (recorded by the audit log)."""
        return self.compiled.digest

    @property
    def engine_name(self) -> str:
        """The CEL engine in use (``python`` or ``native``)."""
        return self.compiled.engine_name

    @property
    def protection(self) -> Any:
        """The deployment's self-protection in force (``None`` without a deployment)."""
        return self.compiled.protection

    @property
    def packs(self) -> tuple[PackInfo, ...]:
        """The packs in force, in load order."""
        return tuple(PackInfo(pack.path, pack.name, pack.digest) for pack in self.compiled.packs)

    def gate_step(self, event: StepEvent) -> StepVerdict:
        """See :meth:`Decider.gate_step`."""
        return self.current().gate_step(event)

    def pre_execute(self, event: ToolCallEvent) -> ToolCallVerdict:
        """See :meth:`Decider.pre_execute`."""
        return self.current().pre_execute(event)

    def guard(self, event: ToolCallEvent) -> GuardVerdict:
        """See :meth:`Decider.guard`."""
        return self.current().guard(event)

    def check_tool_call(self, event: ToolCallEvent) -> ToolCallVerdict:
        """See :meth:`Decider.check_tool_call`."""
        return self.current().check_tool_call(event)

    def review_tool_result(self, event: ToolResultEvent) -> ResultVerdict:
        """See :meth:`Decider.review_tool_result`."""
        return self.current().review_tool_result(event)

    def redact_arguments(self, args: Any) -> tuple[Any, int]:
        """See :meth:`Decider.redact_arguments`."""
        return self.current().redact_arguments(args)
