"""The framework-neutral decision API: plain events in, typed verdicts out.

The harness plugins, the command-hook adapters, ``check --cases`` and ``explain`` all decide
through :class:`Policy` (or the :class:`Decider` it holds), so a decision and its explanation come
from one code path. Events and verdicts are frozen dataclasses over plain data; values from
``core`` (``FrozenDict``, tuples) are accepted anywhere a JSON value is expected.

The package is cut by phase of a decision:

- :mod:`.bindings`: each CEL name a rule may read, as a function of the event;
- :mod:`.scope`: one event's values as a stage's rules read them (activations, pack variables,
  the time budget);
- :mod:`.stage_run`: a stage's rules evaluated in order on a scope (matches, shadow rules, trace);
- :mod:`.combine`: a stage run's matches combined into the stage's verdict;
- :mod:`.fast_path`: the lean path that decides a plain plan without a stage run, and why it
  decides the same;
- :mod:`.sizes`: how much text an input holds, up to the scan limit;
- :mod:`.decider`: :class:`Decider`, each decision from limits to verdict, failing closed;
- :mod:`.facade`: :class:`Policy`, the handle the plugins hold.

Combination rules (POLICY.md section 2): pre-step - any enforced reject wins, else enter with the
contexts of matching rules; pre-execute - deny > ask > allow > ``defaults.decision``; guard - any
match denies and beats everything; post-execute - any block wins, else every redaction applies in
pack order and contexts are appended. ``warn``/``audit`` rules are evaluated and reported in
``shadow_rules`` and the trace but change nothing. An evaluation error with ``on_error: deny``
(always for guards) fails closed: it gives the stage's refusing decision and the message says why.
Any unexpected exception fails the whole verdict closed; nothing propagates to the caller.
"""

from __future__ import annotations

from dsh_policy.policy.decide.decider import DEFAULT_EVENT_SECONDS, DEFAULT_MAX_SCAN_BYTES, Decider
from dsh_policy.policy.decide.facade import Policy
from dsh_policy.policy.decide.stage_run import RuleRun

__all__ = ["DEFAULT_EVENT_SECONDS", "DEFAULT_MAX_SCAN_BYTES", "Decider", "Policy", "RuleRun"]
