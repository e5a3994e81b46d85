"""The decider: one compiled policy's decisions, each stage run and combined, failing closed.

The harness plugins, the command-hook adapters, ``check --cases`` and ``explain`` all call these
methods, so a decision and its explanation come from one code path (OPA's ``--explain`` idea).
Each call decision starts at the tool index: a tool no rule of the stage can apply to gets the
verdict built at load, before anything is read or built (pre-execute: when no rule applies to
every tool or by a glob and the default is ``allow``; guard: the same, without self-protection).
Otherwise it goes: size limits (too much text to scan is refused unread), the deployment's
self-protection (guard), the lean path where a plan has one (:mod:`.fast_path`), else a stage run
(:mod:`.stage_run`) over the event's scope (:mod:`.scope`) combined into the stage's verdict
(:mod:`.combine`). An evaluation error with ``on_error: deny`` (always for guards) fails closed;
any unexpected exception fails the whole verdict closed, and nothing propagates to the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from typing import Any

from dsh_policy.cmdline.deadline import stage_deadline
from dsh_policy.policy.compiled import CompiledPolicy, Redaction, RuleSelection, StageIndex
from dsh_policy.policy.decide.bindings import CALL_BUILDERS, RESULT_BUILDERS, STEP_BUILDERS
from dsh_policy.policy.decide.combine import (
    combine_guard,
    combine_pre_execute,
    combine_protected_guard,
    combine_result,
    combine_step,
)
from dsh_policy.policy.decide.fast_path import shortcut
from dsh_policy.policy.decide.later_calls import is_writer, judge_implied
from dsh_policy.policy.decide.scope import EventScope
from dsh_policy.policy.decide.sizes import mib, strings_size, utf8_size
from dsh_policy.policy.decide.stage_run import RuleRun, StageRun, default_message
from dsh_policy.policy.decide.tool_views import CANONICAL_TOOLS, ToolViews
from dsh_policy.policy.decide.tool_views import views as tool_views
from dsh_policy.policy.decide.view_calls import first_guard_denial, strictest_pre_execute
from dsh_policy.policy.events import (
    GuardVerdict,
    PolicyStamp,
    ResultVerdict,
    StepEvent,
    StepVerdict,
    ToolCallEvent,
    ToolCallVerdict,
    ToolResultEvent,
)
from dsh_policy.policy.plans import StagePlan, StagePlans, plan_selection
from dsh_policy.policy.redaction import all_detector_redactions, redact_value
from dsh_policy.policy.stages import STAGE_TABLE

_RECENT_CALLS = 64
"""Call events whose scope is kept (by identity), so pre-execute and guard of one call share it."""


def _internal(exc: BaseException, where: str) -> str:
    # Imported on this failure path only: structlog (which pulls in rich) cost more CPU to import
    # than loading the shipped packs, and every command that loads packs imports the decider.
    import structlog

    structlog.get_logger("dsh_policy.policy").error(
        "policy evaluation failed; failing closed", stage=where, exc_info=exc
    )
    return f"policy evaluation failed ({type(exc).__name__}: {exc}); failing closed"


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
        "_guard_named",
        "_guard_unruled",
        "_max_scan_bytes",
        "_plans",
        "_pre_named",
        "_pre_plain",
        "_pre_planned",
        "_pre_plans",
        "_pre_unruled",
        "_recent",
        "_stamp",
        "_views_judged",
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
        if any(rule.mode == "warn" for rule in policy.rules):
            # A warn-mode match logs through structlog; imported here, never inside a timed stage.
            import structlog  # noqa: F401
        self._recent: dict[int, tuple[ToolCallEvent, EventScope]] = {}
        # Per stage, per tool: the rules planned once (see policy/plans.py).
        self._plans = {stage: StagePlans(self._planner(stage)) for stage in STAGE_TABLE}
        self._pre_plans = self._plans["pre-execute"]
        self._pre_planned = self._pre_plans.plans
        pre_index = policy.stages["pre-execute"]
        self._pre_named = frozenset(pre_index.exact)
        self._pre_unruled = self._unruled_verdict(pre_index)
        # Tool names seen that no pre-execute rule names and that write no file: their verdict is
        # ``_pre_unruled``, found with one lookup (bounded; fixed for this policy's lifetime).
        self._pre_plain: dict[str, ToolCallVerdict] = {}
        guard_index = policy.stages["guard"]
        self._guard_named = frozenset(guard_index.exact)
        self._guard_unruled = self._unguarded_verdict(guard_index)
        # A call's views (.tool_views) are built only when a rule could judge one: a canonical
        # tool has rules, or a glob or an unscoped rule could match a view's name, or the
        # deployment's self-protection checks every call.
        self._views_judged = protection is not None or any(
            index.every or index.globs or any(index.select(name).rules for name in CANONICAL_TOOLS)
            for index in (pre_index, guard_index)
        )
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
            size = sum(utf8_size(message.text) for message in event.messages)
            if plan.rules and size > self._max_scan_bytes:
                message = self._too_large("step messages", size)
                return StepVerdict("reject", (), message, internal_error=message, policy=self._stamp)
            run = StageRun(
                EventScope(self.policy, STEP_BUILDERS, event, plan.reads, self._event_seconds), None
            )
            run.run(plan)
            return combine_step(run, self._stamp)
        except Exception as exc:
            message = _internal(exc, "pre-step")
            return StepVerdict("reject", (), message, internal_error=message, policy=self._stamp)

    def pre_execute(self, event: ToolCallEvent) -> ToolCallVerdict:
        """``tools/pre-execute``: deny > ask > allow > the policy's default decision. A call is
        also judged as each canonical call its arguments describe (:mod:`.tool_views`), and
        takes the strictest answer (:mod:`.view_calls`)."""
        try:
            if not self._views_judged:
                # No rule could judge a view: the call is judged as named, and a tool remembered
                # as one no rule names is answered here, before any further call is made.
                plain = self._pre_plain.get(event.tool)
                return plain if plain is not None else self._pre_execute_own(event)
            return self._pre_execute_viewed(event, self._views(event))
        except Exception as exc:
            message = _internal(exc, "pre-execute")
            return ToolCallVerdict("deny", (), message, internal_error=message, policy=self._stamp)

    def _pre_execute_viewed(self, event: ToolCallEvent, found: ToolViews | None) -> ToolCallVerdict:
        """Pre-execute on the call and on ``found``, its views (read once by the caller)."""
        if found is None:
            return self._pre_execute_own(event)
        own = None if found.replaces else self._pre_execute_own(event)
        return strictest_pre_execute(event, found, own, self._pre_execute_own)

    def _views(self, event: ToolCallEvent) -> ToolViews | None:
        tool = event.tool
        if not self._views_judged or tool.__class__ is not str:
            return None
        return tool_views(tool, event.args)

    def _pre_execute_own(self, event: ToolCallEvent) -> ToolCallVerdict:
        """Pre-execute on the call as named (its views aside)."""
        try:
            tool = event.tool
            # The tool index first: a tool no rule of the stage can apply to gets the verdict
            # built at load, before anything is looked at or built (see ``_unruled_verdict``).
            plain = self._pre_plain.get(tool)
            if plain is not None:
                return plain
            unruled = self._pre_unruled
            if unruled is not None and tool not in self._pre_named:
                if tool.__class__ is not str:
                    return unruled
                if not is_writer(tool):  # a write may imply shell calls (``_with_implied_calls``)
                    return self._plain(tool, unruled)
                return judge_implied(event, unruled, self._implied_line)
            plan = self._pre_planned.get(tool) or self._pre_plans.get(tool)
            if plan.rules:  # a call no rule reads is never measured
                oversized = self._oversized_call(event)
                if oversized is not None:
                    return ToolCallVerdict("deny", (), oversized, policy=self._stamp)
            fast = plan.fast
            if fast is not None:
                found = fast(event)
                if found is not None:
                    return self._with_implied_calls(event, found)
            run = self._run_tool_stage(plan, event)
            verdict = plan.verdict(
                run.key(),
                lambda: combine_pre_execute(run, tool, self.policy.default_decision, self._stamp),
            )
            return self._with_implied_calls(event, verdict)
        except Exception as exc:
            message = _internal(exc, "pre-execute")
            return ToolCallVerdict("deny", (), message, internal_error=message, policy=self._stamp)

    def _with_implied_calls(self, event: ToolCallEvent, verdict: ToolCallVerdict) -> ToolCallVerdict:
        """A write of a file that runs later is judged like the shell commands it will run
        (:mod:`.later_calls`); any other call's verdict is returned as it is."""
        tool = event.tool
        if tool.__class__ is not str or not is_writer(tool):
            return verdict
        return judge_implied(event, verdict, self._implied_line)

    def _implied_line(self, event: ToolCallEvent) -> ToolCallVerdict:
        """A command line a written file will run, judged as the whole gate judges that shell
        call: pre-execute, then the guards (a hook or script running `rm -rf` on the workspace is
        refused by the guard that refuses the same line typed; probe25). The line is a shell
        call, so it implies nothing further."""
        return self.check_tool_call(event)

    def pre_execute_call(self, tool: str, args: Any = None) -> ToolCallVerdict:
        """:meth:`pre_execute` of ``ToolCallEvent(tool, args)``, for a caller holding only a tool
        name and its arguments (a framework's tool hook): the event is built only when a rule of
        the stage applies to ``tool``, so a call for a tool no rule names costs a dict lookup.
        The verdict is the one ``pre_execute`` gives for that event."""
        if tool.__class__ is not str:
            return self.pre_execute(ToolCallEvent(tool, args))
        try:
            found = tool_views(tool, args) if self._views_judged else None
            if found is None:
                plain = self._pre_plain.get(tool)
                if plain is not None:
                    return plain
                unruled = self._pre_unruled
                if unruled is not None and tool not in self._pre_named and not is_writer(tool):
                    return self._plain(tool, unruled)
            return self._pre_execute_viewed(ToolCallEvent(tool, args), found)
        except Exception as exc:
            message = _internal(exc, "pre-execute")
            return ToolCallVerdict("deny", (), message, internal_error=message, policy=self._stamp)

    def _plain(self, tool: str, unruled: ToolCallVerdict) -> ToolCallVerdict:
        """``unruled``, remembered as ``tool``'s verdict (up to 4,096 names: attacker-chosen
        names beyond that take the two lookups above instead of one)."""
        if len(self._pre_plain) < 4096:
            self._pre_plain[tool] = unruled
        return unruled

    def guard(self, event: ToolCallEvent) -> GuardVerdict:
        """``ctx.tools.guard``: any matching guard denies (errors count as matches), on the call and
        on each canonical call its arguments describe (:mod:`.tool_views`)."""
        try:
            found = self._views(event)
            if found is None:
                return self._guard_own(event)
            own = None if found.replaces else self._guard_own(event)
            return first_guard_denial(event, found, own, self._guard_own)
        except Exception as exc:
            message = _internal(exc, "guard")
            return GuardVerdict(True, (), message, internal_error=message, policy=self._stamp)

    def _guard_own(self, event: ToolCallEvent) -> GuardVerdict:
        """The guard on the call as named (its views aside)."""
        try:
            # The tool index first, when there is no self-protection to consult: a tool no guard
            # rule can apply to gets the verdict built at load (see ``_unguarded_verdict``).
            unguarded = self._guard_unruled
            if unguarded is not None and event.tool not in self._guard_named:
                return unguarded
            protected = self._self_protection(event)
            plan = self._plans["guard"].get(event.tool)
            oversized = self._oversized_call(event) if plan.rules else None
            if oversized is not None:
                rules_ = (protected.rule,) if protected is not None else ()
                message = protected.message if protected is not None else oversized
                return GuardVerdict(True, rules_, message, policy=self._stamp)
            if protected is None:
                if plan.fast is not None:
                    found = plan.fast(event)
                    if found is not None:
                        return found
                run = self._run_tool_stage(plan, event)
                return plan.verdict(run.key(), lambda: combine_guard(run, self._stamp))
            run = self._run_tool_stage(plan, event)
            return combine_protected_guard(run, protected, self._stamp)
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

    def _oversized_call(self, event: ToolCallEvent) -> str | None:
        """Why a call's arguments are too large to evaluate, when they are (the callers ask only
        when a rule of the stage would read them): string operations in a rule cost time and
        memory in proportion to their input, so no more than ``max_scan_bytes`` of argument text
        reaches CEL (the call is refused)."""
        limit = self._max_scan_bytes
        size = strings_size(event.args, limit)
        return None if size <= limit else self._too_large(f'the arguments of tool "{event.tool}"', size)

    def _too_large(self, what: str, size: int) -> str:
        return (
            f"{what} refused by policy: more than {mib(self._max_scan_bytes)} ({size:,}+ bytes) is too "
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
            size = strings_size(args, limit)
            if size > limit:
                return f"[WITHHELD: more than {mib(limit)} of text, too large to record]", 1
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
        scope: EventScope
        tool: str | None
        if isinstance(event, StepEvent):
            scope = EventScope(self.policy, STEP_BUILDERS, event, reads, self._event_seconds)
            tool = None
        elif isinstance(event, ToolResultEvent):
            scope = EventScope(self.policy, RESULT_BUILDERS, event, reads, self._event_seconds)
            tool = event.call.tool
        else:
            scope = self._call_scope(event, reads)  # shared by pre-execute and guard of one call
            tool = event.tool
        run = StageRun(scope, tool)
        run.run(rules)
        return RuleRun(tuple(run.trace), {match.rule.id: match.message for match in run.matches})

    # -- internals --

    def _unruled_verdict(self, index: StageIndex) -> ToolCallVerdict | None:
        """The pre-execute verdict of every tool no rule names, built once, when it is one object:
        no rule applies to every tool or by a glob (then only the names in ``index.exact`` have
        rules), and the default decision is ``allow`` (whose verdict names no tool). It is what
        the full run gives for an empty selection (:func:`.combine.combine_pre_execute`: no
        matches, no shadow rules, no trace), and the size limit does not apply to a call no rule
        reads. None otherwise: every call then takes the plan path."""
        if index.every or index.globs or self.policy.default_decision != "allow":
            return None
        return ToolCallVerdict("allow", (), None, (), (), policy=self._stamp)

    def _unguarded_verdict(self, index: StageIndex) -> GuardVerdict | None:
        """The guard verdict of every tool no guard rule names, built once, when the policy has
        no self-protection (which is checked on every call before any rule) and no guard rule
        applies to every tool or by a glob: what :func:`.combine.combine_guard` gives for an
        empty run (no denial, no shadow rules, no trace). None otherwise."""
        if self.policy.protection is not None or index.every or index.globs:
            return None
        return GuardVerdict(False, (), None, (), (), policy=self._stamp)

    def _planner(self, stage: str) -> Callable[[str], StagePlan]:
        index = self.policy.stages[stage]

        def make(tool: str) -> StagePlan:
            selection: RuleSelection = index.select_all() if stage == "pre-step" else index.select(tool)
            subject = "step" if stage == "pre-step" else f'tool "{tool}"'
            plan = plan_selection(
                selection,
                lambda rule: rule.message or rule.description or default_message(rule, rule.effect, subject),
            )
            if stage in ("pre-execute", "guard"):
                plan.fast = shortcut(plan, self.policy.packs, self._event_seconds)
            return plan

        return make

    def _run_tool_stage(
        self, plan: StagePlan, event: ToolCallEvent, result: ToolResultEvent | None = None
    ) -> StageRun:
        if result is None:
            scope = self._call_scope(event, plan.reads)
        else:
            scope = EventScope(self.policy, RESULT_BUILDERS, result, plan.reads, self._event_seconds)
        run = StageRun(scope, event.tool)
        run.run(plan)
        return run

    def _call_scope(self, event: ToolCallEvent, reads: Mapping[int, frozenset[str]]) -> EventScope:
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
        scope = EventScope(self.policy, CALL_BUILDERS, event, reads, self._event_seconds)
        if len(recent) >= _RECENT_CALLS:
            # Another thread may evict (or change the dict) at the same moment: then it did the job.
            # (try/except, not contextlib.suppress: this runs on every call event.)
            try:  # noqa: SIM105
                del recent[next(iter(recent))]
            except (KeyError, RuntimeError, StopIteration):
                pass
        recent[key] = (event, scope)  # holding the event keeps its id from being reused
        return scope

    def _oversized(self, event: ToolResultEvent) -> str | None:
        """Why the output is too large to review, when it is and a post-execute rule applies."""
        if not self._plans["post-execute"].get(event.call.tool).rules:
            return None
        limit = self._max_scan_bytes
        size = max(utf8_size(event.text), strings_size(event.value, limit))
        if size <= limit:
            return None
        return (
            f"tool output withheld by policy: more than {mib(limit)} ({size:,}+ bytes) is too large "
            "to check for secrets and injected instructions"
        )

    def _review(self, event: ToolResultEvent) -> ResultVerdict:
        run = self._run_tool_stage(self._plans["post-execute"].get(event.call.tool), event.call, event)
        return combine_result(run, event, self._stamp)
