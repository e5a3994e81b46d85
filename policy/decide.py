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
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from typing import Any, Literal

import structlog
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.cel.engine import CelEngine, CelEvalError, EventActivation
from dsh_policy.policy.cel.shell import shell_argv0s
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
from dsh_policy.policy.redaction import all_detector_redactions, redact_text, redact_value
from dsh_policy.policy.stages import STAGE_TABLE

_log = structlog.get_logger("dsh_policy.policy")


# --- evaluation -----------------------------------------------------------------------------------

_VARS = frozenset({"vars"})
_RECENT_CALLS = 64


class _EventScope:
    """Activation values for one event, each built on first use and at most once; one activation
    per pack holding the names that pack's selected rules read (``reads``), shared by all their
    expressions so an engine converts it once. Pack variables are evaluated lazily (only those an
    evaluated expression reads) and at most once, and cached per pack."""

    __slots__ = (
        "_activations", "_builders", "_cache", "_deadline", "_held", "_policy", "_programs", "_reads",
        "_seconds", "_var_errors", "_vars",
    )

    def __init__(
        self,
        policy: CompiledPolicy,
        builders: Mapping[str, Callable[[], Any]],
        reads: Mapping[int, frozenset[str]],
        seconds: float,
    ) -> None:
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds
        self._policy = policy
        self._builders = builders
        self._reads = reads
        self._cache: dict[str, Any] = {}
        self._vars: dict[tuple[int, str], Any] = {}
        self._var_errors: dict[tuple[int, str], str] = {}
        # (pack_index, variables read) -> the shared activation; () = without ``vars``.
        self._activations: dict[tuple[int, tuple[str, ...]], EventActivation] = {}
        self._held: dict[int, frozenset[str]] = {}  # names in each pack's base activation, + vars
        self._programs: tuple[str, ...] | None = None  # the shell line's program names, once

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
        self._reads = reads
        return self

    def _value(self, name: str, pack_index: int) -> Any:
        if name == "params":
            return self._policy.packs[pack_index].activation_params
        if name in self._cache:
            return self._cache[name]
        builder = self._builders.get(name)
        value = builder() if builder is not None else None
        self._cache[name] = value
        return value

    def _base(self, expr: CompiledExpr, pack_index: int) -> EventActivation:
        """The pack's shared activation, holding every name the selected rules read."""
        found = self._activations.get((pack_index, ()))
        if found is not None and expr.names <= self._held[pack_index]:
            return found
        names = self._reads.get(pack_index, frozenset()) | (expr.names - _VARS)
        if found is not None:  # an expression outside the selection read more: widen, once
            names |= found.keys()
        built = EventActivation({name: self._value(name, pack_index) for name in names})
        self._activations[(pack_index, ())] = built
        self._held[pack_index] = names | _VARS
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


@dataclass(slots=True)
class _Match:
    """A rule whose condition held (or failed closed), with its message."""

    rule: CompiledRule
    effect: str
    message: str


@dataclass(slots=True)
class _StageRun:
    """Evaluates the rules of one stage against one event and collects matches and trace."""

    scope: _EventScope
    subject: str
    matches: list[_Match] = field(default_factory=list)
    shadow: list[str] = field(default_factory=list)
    trace: list[RuleTrace] = field(default_factory=list)

    def run(self, rules: Sequence[CompiledRule]) -> None:
        """Evaluate every rule, in order (all of them: the trace and shadow rules need it),
        except those whose ``match.programs`` the shell line does not run."""
        self.scope.start_clock()
        for rule in rules:
            if rule.programs is not None and not self.scope.runs_program(rule.programs):
                continue
            self._one(rule)

    def _one(self, rule: CompiledRule) -> None:
        value: Any = True
        error: str | None = None
        if rule.when is not None:
            value = self.scope.evaluate(rule.when, rule.pack_index)
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
        self.matches.append(_Match(rule, effect, self._message(rule, effect, error)))
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

    def with_effect(self, *effects: str) -> list[_Match]:
        """Enforced matches that give one of ``effects``."""
        return [match for match in self.matches if match.effect in effects]


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


def _join(matches: Sequence[_Match]) -> str:
    return "; ".join(dict.fromkeys(match.message for match in matches))


def _ids(matches: Sequence[_Match]) -> tuple[str, ...]:
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


def _call_builders(event: ToolCallEvent) -> dict[str, Callable[[], Any]]:
    return {
        "session": lambda: {"id": event.session_id},
        "agent": lambda: {"id": event.agent_id or ""},
        "now": lambda: _now(event.now),
        "turn": lambda: event.turn,
        "step": lambda: event.step,
        "tool": lambda: {
            "name": event.tool,
            "call_id": event.call_id,
            "root_call_id": event.root_call_id or event.call_id,
            "nested": event.nested,
            "original_name": event.original_name or event.tool,
        },
        "args": lambda: thaw(event.args),
    }


def _result_builders(event: ToolResultEvent) -> dict[str, Callable[[], Any]]:
    builders = _call_builders(event.call)
    builders["result"] = lambda: {
        "is_error": event.is_error,
        "text": event.text,
        "value": thaw(event.value),
        "error": {"message": event.error_message or "", "code": event.error_code or ""},
    }
    return builders


def _step_builders(event: StepEvent) -> dict[str, Callable[[], Any]]:
    return {
        "session": lambda: {"id": event.session_id},
        "agent": lambda: {"id": event.agent_id or ""},
        "now": lambda: _now(event.now),
        "turn": lambda: event.turn,
        "step": lambda: event.step,
        "messages": lambda: [
            {
                "role": message.role,
                "text": message.text,
                "source": {"kind": message.source_kind, "plugin": message.source_plugin or ""},
            }
            for message in event.messages
        ],
        "prompt": lambda: "\n".join(
            message.text for message in event.messages if message.source_kind == "user"
        ),
    }


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
        "_recent",
        "_recent_lock",
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
        self._stamp = PolicyStamp(policy.digest, policy.engine_name)
        self._max_scan_bytes = max_scan_bytes
        self._event_seconds = event_seconds
        self._recent: dict[int, tuple[ToolCallEvent, _EventScope]] = {}
        self._recent_lock = threading.Lock()
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
            selection = self.policy.stages["pre-step"].select_all()
            run = _StageRun(_EventScope(
                self.policy, _step_builders(event), selection.reads, self._event_seconds
            ), "step")
            run.run(selection.rules)
            rejects = run.with_effect("reject")
            if rejects:
                return StepVerdict(
                    "reject", _ids(rejects), _join(rejects), (), tuple(run.shadow), tuple(run.trace),
                    policy=self._stamp,
                )
            added = [match for match in run.with_effect("enter") if match.rule.context]
            contexts = tuple(match.rule.context for match in added if match.rule.context)
            return StepVerdict(
                "enter", _ids(added), None, contexts, tuple(run.shadow), tuple(run.trace),
                policy=self._stamp,
            )
        except Exception as exc:
            message = _internal(exc, "pre-step")
            return StepVerdict("reject", (), message, internal_error=message, policy=self._stamp)

    def pre_execute(self, event: ToolCallEvent) -> ToolCallVerdict:
        """``tools/pre-execute``: deny > ask > allow > the policy's default decision."""
        try:
            run = self._run_tool_stage("pre-execute", event)
            return self._combine_pre_execute(run, event)
        except Exception as exc:
            message = _internal(exc, "pre-execute")
            return ToolCallVerdict("deny", (), message, internal_error=message, policy=self._stamp)

    def guard(self, event: ToolCallEvent) -> GuardVerdict:
        """``ctx.tools.guard``: any matching guard denies (errors count as matches)."""
        try:
            run = self._run_tool_stage("guard", event)
            denies = run.with_effect("deny")
            return GuardVerdict(
                bool(denies),
                _ids(denies),
                _join(denies) if denies else None,
                tuple(run.shadow),
                tuple(run.trace),
                policy=self._stamp,
            )
        except Exception as exc:
            message = _internal(exc, "guard")
            return GuardVerdict(True, (), message, internal_error=message, policy=self._stamp)

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
        value is withheld whole rather than risk a secret in clear."""
        try:
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
        if isinstance(event, StepEvent):
            scope = _EventScope(self.policy, _step_builders(event), reads, self._event_seconds)
            subject = "step"
        elif isinstance(event, ToolResultEvent):
            scope = _EventScope(self.policy, _result_builders(event), reads, self._event_seconds)
            subject = f'tool "{event.call.tool}"'
        else:
            scope = self._call_scope(event, reads)  # shared by pre-execute and guard of one call
            subject = f'tool "{event.tool}"'
        run = _StageRun(scope, subject)
        run.run(rules)
        return RuleRun(tuple(run.trace), {match.rule.id: match.message for match in run.matches})

    # -- internals --

    def _run_tool_stage(
        self, stage: str, event: ToolCallEvent, result: ToolResultEvent | None = None
    ) -> _StageRun:
        selection: RuleSelection = self.policy.stages[stage].select(event.tool)
        if result is None:
            scope = self._call_scope(event, selection.reads)
        else:
            scope = _EventScope(self.policy, _result_builders(result), selection.reads, self._event_seconds)
        run = _StageRun(scope, f'tool "{event.tool}"')
        run.run(selection.rules)
        return run

    def _call_scope(self, event: ToolCallEvent, reads: Mapping[int, frozenset[str]]) -> _EventScope:
        """One scope per call event, shared by its pre-execute and guard stages (the gateway and
        ``check_tool_call`` decide both on the same event object): its activation is converted
        once and each variable evaluated at most once for the whole call. Kept for the last
        :data:`_RECENT_CALLS` events, by identity."""
        key = id(event)
        with self._recent_lock:
            entry = self._recent.get(key)
            if entry is not None and entry[0] is event:
                return entry[1].for_selection(reads)
            scope = _EventScope(self.policy, _call_builders(event), reads, self._event_seconds)
            if len(self._recent) >= _RECENT_CALLS:
                del self._recent[next(iter(self._recent))]
            self._recent[key] = (event, scope)  # holding the event keeps its id from being reused
        return scope

    def _combine_pre_execute(self, run: _StageRun, event: ToolCallEvent) -> ToolCallVerdict:
        shadow, trace = tuple(run.shadow), tuple(run.trace)
        effects: tuple[Literal["deny", "ask", "allow"], ...] = ("deny", "ask", "allow")
        for effect in effects:
            found = run.with_effect(effect)
            if found:
                return ToolCallVerdict(
                    effect, _ids(found), _join(found), shadow, trace, policy=self._stamp
                )
        default = self.policy.default_decision
        message: str | None = None
        if default != "allow":
            verb = "allows" if default == "deny" else "decides"
            message = f'no policy rule {verb} tool "{event.tool}" (defaults.decision: {default})'
        return ToolCallVerdict(default, (), message, shadow, trace, policy=self._stamp)

    def _oversized(self, event: ToolResultEvent) -> str | None:
        """Why the output is too large to review, when it is and a post-execute rule applies."""
        if not self.policy.stages["post-execute"].select(event.call.tool).rules:
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
        run = self._run_tool_stage("post-execute", event.call, event)
        shadow = tuple(run.shadow)
        blocks = run.with_effect("block")
        if blocks:
            contexts = tuple(match.rule.context for match in blocks if match.rule.context)
            return ResultVerdict(
                "block", _ids(blocks), _join(blocks), None, None, False, 0, contexts, shadow,
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
    ) -> Policy | LoadFailure:
        """Load, validate and compile packs; a :class:`LoadFailure` holds every error.
        ``max_scan_bytes`` caps the tool output post-execute reviews (larger is withheld);
        ``event_seconds`` the evaluation time of one stage of one event (later rules fail closed)."""
        built = build_policy(paths, params=params, engine=engine, shadow=shadow, param_origins=param_origins)
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
