"""The lean path: a pre-execute or guard plan decided without the general stage run.

Most tool calls meet rules whose conditions are plain closure-compiled CEL reading event values.
For such a plan, :func:`shortcut` builds a function that makes each pack's activation straight
from the event, runs the conditions in order and returns the verdict the plan already memoized
for that outcome: no scope, no trace building, no combination.

How it stays equivalent to the full run (:class:`~.stage_run.StageRun` then :mod:`.combine`):

- It is built only for a plan where the full run's answer depends on nothing but which rules
  matched: no rule skips by ``match.programs``, and every condition reads no pack variable, calls
  no gateway helper (helpers read the stage deadline, which only the full run sets) and reads
  activation values as they are (``converts_activation`` False, the closure engine). The
  activation holds the same values, from the same :data:`~.bindings.CALL_BUILDERS`, as the
  scope's.
- It answers only with a verdict the full run built and memoized for the same signature (the
  tuple of true/false per rule, ``StagePlan.verdicts``), and says None (the full run then decides
  from scratch) on anything else: an evaluation error or a non-bool, a match that needs more than
  its prepared record (a shadow rule, which logs in warn mode; a ``message_expression``), a
  signature not memoized yet, the stage's time budget spent. Conditions are pure, so running them
  again in the full run changes nothing.
- The decider consults it after the checks that come first on every path (arguments too large to
  scan, the deployment's self-protection), so those never reach it.

The tests that hold it to this: ``tests/policy/test_policy_lean_path.py`` (every verdict of
pre-execute, guard and the whole gate equals the full run's over repeated rounds; plain outcomes
share one verdict and errors get fresh ones; a warn rule logs on every match; a spent budget
still fails closed), and the decision suites that run with it on: ``tests/corpus``,
``tests/rules/test_shipped_packs.py`` and ``tests/gateway/test_gateway_dry_run_parity.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dsh_policy.policy.compiled import CompiledPack
from dsh_policy.policy.decide.bindings import CALL_BUILDERS, top_level
from dsh_policy.policy.events import ToolCallEvent
from dsh_policy.policy.plans import StagePlan


def _condition(program: Any) -> Callable[[Mapping[str, Any]], Any]:
    """The cheapest way to run ``program`` when only a True/False result is used."""
    condition = getattr(program, "condition", None)
    return condition() if condition is not None else program.evaluate


def shortcut(
    plan: StagePlan, packs: Sequence[CompiledPack], seconds: float
) -> Callable[[ToolCallEvent], Any] | None:
    """A function deciding ``plan`` for one call event without the general machinery, for a
    plan whose every condition reads no pack variable and is a program that reads plain
    values (closure): it builds each pack's activation, runs the conditions in order and
    returns the verdict memoized for which matched. It returns None (and the general run
    decides, identically, from scratch) on anything else: an error or non-bool, a match
    that needs more than a prepared record (a shadow rule in warn mode logs; a
    ``message_expression``), a verdict not yet built, the stage's time budget spent.
    Conditions are pure, so running them again there changes nothing. ``packs`` are the
    policy's compiled packs (their params), ``seconds`` the stage's time budget."""
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
    verdicts = plan.verdicts
    monotonic = time.monotonic
    builders = CALL_BUILDERS

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
        if names.get(pack_one) == ("args",):
            # The rule reads the arguments only (most rules): the activation is built inline, as
            # ``activation_of`` builds it (``CALL_BUILDERS["args"]`` is ``top_level(args)``).
            def decide_args(event: ToolCallEvent) -> Any:
                args = event.args
                try:
                    result = evaluate_one({"args": args if type(args) is dict else top_level(args)})
                except Exception:  # an error: the full run reports it as the rule says
                    return None
                if result is False:
                    return verdicts.get(unmatched_key)
                if result is True and plain_one:
                    return verdicts.get(matched_key)
                return None

            return decide_args

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
