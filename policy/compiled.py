"""What compiling a policy produces: compiled rules and packs, the per-stage tool index, and the
:class:`CompiledPolicy` the decider reads.

These are values only (frozen, shareable across threads): the work that makes them lives in
:mod:`dsh_policy.policy.compile`, so a module that reads a compiled policy (the decider, replay,
coverage, the audit plugin) does not import the compiler, its CEL checker or its parser.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.policy.cel.branches import Branch
from dsh_policy.policy.cel.engine import CompiledExpression
from dsh_policy.policy.errors import PolicyError

if TYPE_CHECKING:  # annotations only: the pack module brings its validators (pydantic, jsonschema)
    from dsh_policy.policy.pack import Mode, OnError
    from dsh_policy.policy.stages import Stage

__all__ = [
    "CompileResult",
    "CompiledExpr",
    "CompiledPack",
    "CompiledPolicy",
    "CompiledRule",
    "Effect",
    "Redaction",
    "RuleSelection",
    "StageIndex",
    "index_stage",
]

Effect = Literal["reject", "deny", "ask", "allow", "block", "accept", "enter"]


@dataclass(frozen=True, slots=True)
class CompiledExpr:
    """One CEL program plus what it reads: activation names and (transitively) pack variables in
    evaluation order. ``source_path`` locates it in its pack for error messages."""

    program: CompiledExpression
    names: frozenset[str]
    variables: tuple[str, ...]
    #: ``matches`` calls and comprehensions, for ``check --coverage`` (from the type checker).
    branches: tuple[Branch, ...] = ()
    #: ``X`` when the expression is false whenever pack variable ``X`` is an empty list: it is
    #: ``vars.X.exists(...)``, or a conjunction with that term (:func:`~.cel.exists_over.exists_over`).
    #: The decider then skips evaluating it on such an event (``policy/decide/stage_run.py``).
    exists_over: str | None = None

    @property
    def source(self) -> str:
        """The expression as written."""
        return self.program.source


@dataclass(frozen=True, slots=True)
class Redaction:
    """One redaction step: a named detector (``preset``) or an RE2 pattern with replacement."""

    preset: str | None
    pattern: Any  # compiled re2 pattern, or None for a preset
    replace: str

    @property
    def label(self) -> str:
        """How the trace names this step."""
        return f"preset:{self.preset}" if self.preset is not None else f"pattern:{self.pattern.pattern}"


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A rule ready to evaluate. ``mode`` is effective (pack default and shadow applied);
    ``effect`` is what a match does (``accept`` for post-execute redact/context rules, ``enter``
    for pre-step context rules)."""

    id: str
    pack_index: int
    ordinal: int
    stage: Stage
    mode: Mode
    on_error: OnError
    effect: Effect
    tools: tuple[str, ...] | None
    when: CompiledExpr | None
    message: str | None
    message_expression: CompiledExpr | None
    redactions: tuple[Redaction, ...]
    context: str | None
    description: str | None
    # Activation names (``vars`` aside) its expressions read, directly or through its variables.
    reads: frozenset[str] = frozenset()
    # ``match.programs`` globs as one regex a program name must fully match (None: any program).
    programs: re.Pattern[str] | None = None

    @property
    def enforced(self) -> bool:
        """Whether a match changes the outcome (``warn``/``audit`` only record)."""
        return self.mode == "enforce"


@dataclass(frozen=True, slots=True)
class CompiledPack:
    """Per-pack data rules read: merged params and compiled variables."""

    name: str
    path: str
    digest: str
    params: Mapping[str, Any]
    variables: Mapping[str, CompiledExpr]
    default_decision: Literal["allow", "ask", "deny"]
    # The params as plain dict/list, built once here so no event pays for converting them.
    activation_params: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: The variables that read nothing of the event (only params and other such variables, like
    #: the packs' pattern strings): the same value on every event.
    constant_variables: frozenset[str] = field(default=frozenset(), init=False, compare=False, repr=False)
    #: Their values, each kept the first time an event evaluates it without error and read by
    #: every later event of this pack (``policy/decide/scope.py``). Not an init field, so a pack
    #: made with ``replace`` (coverage's recompiled programs) starts with none.
    constant_values: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        constant = {name for name, expr in self.variables.items() if expr.names <= _CONSTANT_NAMES}
        changed = True
        while changed:  # drop those reading a variable that is not constant, until none is left
            dropped = {n for n in constant if not all(d in constant for d in self.variables[n].variables)}
            constant -= dropped
            changed = bool(dropped)
        object.__setattr__(self, "constant_variables", frozenset(constant))


_CONSTANT_NAMES = frozenset({"params", "vars"})
"""What a variable may read and still be the same on every event (``vars`` only as far as the
variables it reads are too)."""


@dataclass(frozen=True, slots=True)
class RuleSelection:
    """The rules of one stage that apply to one tool, in pack/rule order, and the activation
    names they read per pack (``reads[pack_index]``), so an event builds one activation per pack
    holding exactly those names."""

    rules: tuple[CompiledRule, ...]
    reads: Mapping[int, frozenset[str]]

    @classmethod
    def of(cls, rules: tuple[CompiledRule, ...]) -> RuleSelection:
        """Select ``rules`` (already ordered) and gather what they read."""
        reads: dict[int, frozenset[str]] = {}
        for rule in rules:
            reads[rule.pack_index] = reads.get(rule.pack_index, frozenset()) | rule.reads
        return cls(rules, MappingProxyType(reads))


@dataclass(frozen=True, slots=True)
class StageIndex:
    """Rules of one stage, indexed by tool: exact names in a dict, globs in a short list, rules
    without ``match`` for every tool. ``select`` returns them in pack/rule order and memoizes
    per tool name (bounded, since tool names come from the model)."""

    exact: Mapping[str, tuple[CompiledRule, ...]]
    globs: tuple[tuple[re.Pattern[str], CompiledRule], ...]
    every: tuple[CompiledRule, ...]
    all_rules: tuple[CompiledRule, ...]
    _memo: dict[str, RuleSelection] = field(default_factory=dict, compare=False, repr=False)
    _everything: list[RuleSelection] = field(default_factory=list, compare=False, repr=False)

    def for_tool(self, name: str) -> tuple[CompiledRule, ...]:
        """Rules of this stage that apply to tool ``name``, in order."""
        return self.select(name).rules

    def select(self, name: str) -> RuleSelection:
        """:meth:`for_tool` with the names those rules read."""
        found = self._memo.get(name)
        if found is not None:
            return found
        picked = {rule.ordinal: rule for rule in self.every}
        for rule in self.exact.get(name, ()):
            picked[rule.ordinal] = rule
        for pattern, rule in self.globs:
            if pattern.fullmatch(name):
                picked[rule.ordinal] = rule
        result = RuleSelection.of(tuple(picked[ordinal] for ordinal in sorted(picked)))
        if len(self._memo) < 4096:
            self._memo[name] = result
        return result

    def select_all(self) -> RuleSelection:
        """Every rule of the stage (pre-step rules have no tool)."""
        if not self._everything:
            self._everything.append(RuleSelection.of(self.all_rules))
        return self._everything[0]


def index_stage(rules: Sequence[CompiledRule]) -> StageIndex:
    """The :class:`StageIndex` of one stage's rules (given in pack/rule order)."""
    exact: dict[str, list[CompiledRule]] = {}
    globs: list[tuple[re.Pattern[str], CompiledRule]] = []
    every: list[CompiledRule] = []
    for rule in rules:
        if rule.tools is None:
            every.append(rule)
            continue
        for pattern in rule.tools:
            if any(char in pattern for char in "*?["):
                globs.append((lazy_compile(fnmatch.translate(pattern)), rule))
            else:
                exact.setdefault(pattern, []).append(rule)
    return StageIndex(
        exact=MappingProxyType({name: tuple(found) for name, found in exact.items()}),
        globs=tuple(globs),
        every=tuple(every),
        all_rules=tuple(rules),
    )


@dataclass(frozen=True, slots=True)
class CompiledPolicy:
    """Everything needed to decide events; immutable and shareable across threads."""

    packs: tuple[CompiledPack, ...]
    rules: tuple[CompiledRule, ...]
    stages: Mapping[str, StageIndex]
    engine_name: str
    shadow: bool
    digest: str
    default_decision: Literal["allow", "ask", "deny"]
    #: What the type checker found suspicious but legal (``check`` prints them; ``--strict`` fails).
    warnings: tuple[PolicyError, ...] = ()
    # The deployment's self-protection (``policy.self_protection``), checked at guard level
    # before any rule; ``None`` for packs compiled without a deployment (``Policy.load``, cases).
    protection: Any = None
    converting: bool = True
    """Some program converts its activation (python, native): the decider then hands each pack's
    expressions one shared :class:`~dsh_policy.policy.cel.engine.EventActivation` to keep the
    conversion on. False when every program reads plain values as they are (closure)."""


@dataclass(frozen=True, slots=True)
class CompileResult:
    """A compiled policy, or every error found; warnings either way."""

    policy: CompiledPolicy | None
    errors: tuple[PolicyError, ...]
    warnings: tuple[PolicyError, ...] = ()
