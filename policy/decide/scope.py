"""The values of one event as the rules of a stage read them: the event's scope.

A scope builds each activation name at most once per event (from :mod:`.bindings`), one activation
per pack holding only the names that pack's selected rules read (shared by all their expressions,
so an engine converts it once), pack variables lazily and at most once (those that read nothing
of the event once per pack: ``CompiledPack.constant_values``), and the stage's time
budget: once spent, every later expression evaluates to an error (N slow rules cost one budget).
It also answers ``match.programs`` (which programs the event's shell line runs), parsing the
line once per event.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from dsh_policy.cmdline.deadline import setup_seconds, setup_since
from dsh_policy.cmdline.shell import shell_argv0s
from dsh_policy.policy.cel.engine import CelEvalError, EventActivation
from dsh_policy.policy.compiled import CompiledExpr, CompiledPolicy

_VARS = frozenset({"vars"})
_UNKNOWN = object()
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


class EventScope:
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
        "_setup_noted",
        "_shared",
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
        self._setup_noted = 0.0
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
        # pack_index -> (its base activation, that plus ``vars``, the variables evaluated so far)
        self._shared: dict[int, tuple[Mapping[str, Any], dict[str, Any], dict[str, Any]]] = {}

    @property
    def seconds(self) -> float:
        """The time budget of one stage."""
        return self._seconds

    def start_clock(self) -> None:
        """Give the stage about to run the event's time budget (each stage gets its own: a guard
        may run long after pre-execute, once a person approved the call)."""
        self._deadline = time.monotonic() + self._seconds
        self._setup_noted = setup_seconds()

    def _out_of_time(self) -> CelEvalError | None:
        if time.monotonic() <= self._deadline:
            return None
        # Past the deadline: move it by the one-time set-up done since it was set, then look again.
        setup = setup_since(self._setup_noted)
        self._deadline += setup
        self._setup_noted += setup
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

    def for_selection(self, reads: Mapping[int, frozenset[str]]) -> EventScope:
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
        if not self._policy.converting:
            return self._plain_activation(expr, pack_index)
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

    def _plain_activation(self, expr: CompiledExpr, pack_index: int) -> Mapping[str, Any]:
        """:meth:`activation` for engines that read values as they are (the closure compiler):
        one activation per pack whose ``vars`` holds every variable evaluated so far, filled as
        expressions need them, instead of a dict per set of variables read (a rule reads its
        variables by name, all of them when it reads ``vars`` whole, so the others it holds
        change nothing; a failed variable is absent, as before)."""
        base = self._base(expr, pack_index)
        shared = self._shared.get(pack_index)
        if shared is None or shared[0] is not base:  # first, or the base was widened
            known = shared[2] if shared is not None else {}
            built = dict(base)
            built["vars"] = known
            shared = self._shared[pack_index] = (base, built, known)
        known = shared[2]
        for name in expr.variables:
            if name not in known and self._variable(pack_index, name):
                known[name] = self._vars[(pack_index, name)]
        return shared[1]

    def _variable(self, pack_index: int, name: str) -> bool:
        """Evaluate a variable once; False when it failed (the error is kept for messages)."""
        key = (pack_index, name)
        if key in self._vars:
            return True
        if key in self._var_errors:
            return False
        pack = self._policy.packs[pack_index]
        constant = name in pack.constant_variables
        if constant:
            # Reads nothing of the event: the value an earlier event computed (the same).
            found = pack.constant_values.get(name, _UNKNOWN)
            if found is not _UNKNOWN:
                self._vars[key] = found
                return True
        expr = pack.variables[name]
        # Dependencies come first in ``expr.variables``, so this never recurses deeply.
        value = self._out_of_time() or expr.program.evaluate(self.activation(expr, pack_index))
        if isinstance(value, CelEvalError):
            self._var_errors[key] = value.message  # an error is not kept: the next event retries
            return False
        self._vars[key] = value
        if constant:
            pack.constant_values[name] = value
        return True

    def empty_list(self, name: str, pack_index: int) -> bool:
        """Whether pack variable ``name`` evaluates to an empty list on this event, so that a
        condition ``vars.name.exists(...)`` (``CompiledExpr.exists_over``) is false without
        being evaluated. False, and the condition is evaluated as usual, when the stage's time
        budget is spent (every expression is then the budget's error), when the variable
        failed (the condition then fails as the rule's ``on_error`` says, with the variable's
        error in its message) and when its value is anything but an empty list."""
        if time.monotonic() > self._deadline and self._out_of_time() is not None:
            return False
        if not self._variable(pack_index, name):
            return False
        value = self._vars[(pack_index, name)]
        return isinstance(value, list | tuple) and not value

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
            late = self._out_of_time()
            if late is not None:
                return late
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
