"""Loaded packs -> a :class:`CompiledPolicy`: every CEL expression compiled once, rules indexed by
stage and tool name, params merged with deployment overrides, and a digest of what is in force.

This is the cel-go ``Compile``/``Program`` step: everything that can fail or cost time happens
here, once, so deciding an event (``decide/``) only looks things up and evaluates programs.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal, cast

import lark
import re2
from dsh_policy.cmdline.effects.lookalikes import snapshot as popular_packages_snapshot
from dsh_policy.cmdline.effects.packages import snapshot as malicious_packages_snapshot
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.cel import EngineUnavailableError, make_engine
from dsh_policy.policy.cel.celpy_ast import parse_checked
from dsh_policy.policy.cel.checker import Branch, CheckEnvironment, CheckResult, VariableInfo, check
from dsh_policy.policy.cel.engine import CelCompileIssue, CelEngine, CelEvalError, CompiledExpression, Reads
from dsh_policy.policy.cel.exists_over import exists_over
from dsh_policy.policy.cel.types import BOOL, ERROR, STRING, CelType, from_notation

# The compiled values and the params merge have modules of their own; their names stay importable
# from here for one release (``from dsh_policy.policy.compile import CompiledPolicy``).
from dsh_policy.policy.compiled import (
    CompiledExpr,
    CompiledPack,
    CompiledPolicy,
    CompiledRule,
    CompileResult,
    Effect,
    Redaction,
    RuleSelection,
    StageIndex,
    index_stage,
)
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.events import DECISION_STRICTNESS
from dsh_policy.policy.pack import LoadedPack, Mode, OnError, canonical_digest, re2_options
from dsh_policy.policy.params import ParamOrigin, merge_params, params_type, parse_param_flags, with_article
from dsh_policy.policy.source.yaml_source import Path as NodePath
from dsh_policy.policy.stages import EVENT_NAMES, STAGE_TABLE, STAGES, Stage
from dsh_policy.policy.tool_arguments import argument_problem

__all__ = [
    "HELPER_NAMESPACES",
    "STAGE_NAME_TYPES",
    "CompileResult",
    "CompiledExpr",
    "CompiledPack",
    "CompiledPolicy",
    "CompiledRule",
    "Effect",
    "ParamOrigin",
    "Redaction",
    "RuleSelection",
    "StageIndex",
    "compile_policy",
    "params_type",
    "parse_param_flags",
    "single_rule_policy",
]

# Namespaces of the gateway's helper functions; an engine may report them as identifiers.
HELPER_NAMESPACES = frozenset({"path", "shell", "url", "secrets"})


def _converts(expr: CompiledExpr | None) -> bool:
    return expr is not None and getattr(expr.program, "converts_activation", True)


# --- compiling ----------------------------------------------------------------------------------


STAGE_NAME_TYPES: Mapping[str, CelType] = MappingProxyType(
    {
        name: from_notation(spec.variables[name], name)
        for spec in STAGE_TABLE.values()
        for name in spec.variables
    }
)
"""Every name some stage provides, as the type checker sees it (``params`` is refined per pack)."""


@dataclass(frozen=True, slots=True)
class _Pending:
    """An expression compiled by the engine, waiting for the type checker (which needs every
    variable of the pack compiled first)."""

    path: NodePath
    source: str
    stage: Stage | None
    tree: lark.Tree
    expect: _Expect | None
    #: The engine's own compile error, when it refused the expression: reported unless the
    #: checker reports a problem at the same place (so both engines show the same errors).
    engine_issue: CelCompileIssue | None = None


@dataclass(frozen=True, slots=True)
class _Expect:
    """What a rule's expression must give: ``when`` a bool, ``message_expression`` a string."""

    type: CelType
    rule: str
    field: str

    @property
    def label(self) -> str:
        return f"rule {self.rule!r}: {self.field}"


class _PackCompiler:
    """Compiles the expressions of one pack, collecting every error with its file position."""

    def __init__(
        self, pack: LoadedPack, engine: CelEngine, trees: dict[str, lark.Tree] | None = None
    ) -> None:
        self.pack = pack
        #: Each expression's tree by source, kept for the compiled-policy cache when asked for.
        self.trees = trees
        self.engine = engine
        self.errors: list[PolicyError] = []
        self.warnings: list[PolicyError] = []
        self.variable_names = [variable.name for variable in pack.model.spec.variables]
        # In a diagnostic load, variables that failed the schema are still declared: rules that
        # read them must not get a second, misleading "unknown variable" error.
        raw = pack.document.get("spec", {}).get("variables", [])
        # Only string names: a damaged file may hold a list or a map there (unhashable).
        self.declared = (
            {item["name"] for item in raw if isinstance(item, dict) and isinstance(item.get("name"), str)}
            if isinstance(raw, list)
            else set()
        )
        self.names = {**STAGE_NAME_TYPES, "params": params_type(pack.model.spec.params)}
        self.pending: list[_Pending] = []
        self.pending_variables: dict[str, _Pending] = {}
        self.variable_types: dict[str, VariableInfo] = {}
        self.checking: set[str] = set()
        self.branches: dict[NodePath, tuple[Branch, ...]] = {}

    def compile(
        self,
        path: NodePath,
        source: str,
        stage: Stage | None,
        *,
        expect: _Expect | None = None,
        variable: str | None = None,
        tools: Sequence[str] | None = None,
    ) -> CompiledExpr | None:
        """Compile one expression; None (with errors recorded) when it is not valid here. The
        type check runs later (:meth:`check_types`), once every variable is compiled. ``tools``:
        the rule's ``match.tools``, whose argument names ``args.<name>`` must be."""
        try:
            compiled = self.engine.compile(source)
        except Exception as exc:  # an engine bug must still surface as an error on this expression
            compiled = CelCompileIssue(f"engine failure: {exc}")
        if isinstance(compiled, CelCompileIssue):
            # Still type-check what cel-python can parse, so this expression's other problems are
            # reported too, and the same way on every engine.
            failed = parse_checked(source)
            if failed is None:
                self._expression_error(path, compiled.offset, f"CEL: {compiled.message}")
            else:
                self.pending.append(_Pending(path, source, stage, failed, expect, compiled))
            return None
        names = frozenset(compiled.references)
        tree = _parse_tree(compiled, source)
        if tree is not None and self.trees is not None:
            self.trees.setdefault(source, tree)
        if tree is not None:
            pending = _Pending(path, source, stage, tree, expect)
            self.pending.append(pending)
            if variable is not None:
                self.pending_variables.setdefault(variable, pending)
        else:  # syntax only this engine parses: the checks that need no tree
            self._check_names(path, source, names, stage)
        # An engine that does not report how it reads (a wrapper, an embedder's own) reads all.
        reads = getattr(compiled, "reads", None) or Reads.opaque(names)
        direct = _variable_references(reads, self.variable_names)
        for name, offset in direct.unknown:
            if name not in self.declared:
                self._expression_error(path, offset, f"unknown variable {name!r}")
        self._check_arguments(path, reads, tools)
        over = exists_over(tree) if tree is not None and direct.names else None
        expr = CompiledExpr(
            compiled,
            names & frozenset(EVENT_NAMES),
            direct.names,
            exists_over=over if over in direct.names else None,
        )
        if tree is None and expect is not None:
            problem = _constant_type_error(expr, bool if expect.type == BOOL else str, expect.field)
            if problem is not None:
                self.errors.append(self.pack.error(path, f"rule {expect.rule!r}: {problem}"))
        return expr

    def _check_arguments(self, path: NodePath, reads: Reads, tools: Sequence[str] | None) -> None:
        """``args.<name>`` against the arguments of the rule's tools (:mod:`.tool_arguments`)."""
        seen: set[str] = set()
        for read in reads.members_of("args"):
            if read.member in seen:  # one report per name and expression
                continue
            seen.add(read.member)
            problem = argument_problem(tools, read.member)
            if problem is not None:
                warning, message = problem
                self._expression_error(path, read.offset, message, warning=warning)

    def _check_names(self, path: NodePath, source: str, names: frozenset[str], stage: Stage | None) -> None:
        for name in sorted(names - HELPER_NAMESPACES):
            stages = EVENT_NAMES.get(name)
            if stages is None:
                self._expression_error(path, _offset_of(source, name), f"unknown name {name!r}")
            elif stage is not None and stage not in stages:
                self._expression_error(
                    path, _offset_of(source, name), f"{name!r} is not available at stage {stage}"
                )

    # -- type checking --

    def check_types(self) -> None:
        """Type-check every compiled expression: variables first (typed on demand, in dependency
        order, each once), then the rules' expressions against their stages."""
        for name in self.pending_variables:
            self.variable(name)
        variable_checks = set(map(id, self.pending_variables.values()))
        for pending in self.pending:
            if id(pending) not in variable_checks:
                self._run(pending)

    def variable(self, name: str) -> VariableInfo | None:
        """A variable's type and reads, checking it now if need be (None: unknown, or in a cycle,
        which is reported on its own)."""
        found = self.variable_types.get(name)
        if found is not None:
            return found
        pending = self.pending_variables.get(name)
        if pending is None or name in self.checking:
            return None
        self.checking.add(name)
        try:
            result = self._run(pending)
        finally:
            self.checking.discard(name)
        info = VariableInfo(ERROR if result.errors else result.type, result.reads)
        self.variable_types[name] = info
        return info

    def _run(self, pending: _Pending) -> CheckResult:
        env = CheckEnvironment(self.names, EVENT_NAMES, pending.stage, self.variable)
        result = check(pending.tree, pending.source, env)
        self.branches[pending.path] = result.branches
        for issue in result.issues:
            self._expression_error(pending.path, issue.offset, issue.message, warning=issue.warning)
        refused = pending.engine_issue
        explained = (refused.type_check and result.errors) if refused is not None else True
        if refused is not None and not explained and all(e.offset != refused.offset for e in result.errors):
            self._expression_error(pending.path, refused.offset, f"CEL: {refused.message}")
        expect = pending.expect
        wrong = expect is not None and not (result.type.lenient or result.type == expect.type)
        if expect is not None and wrong and not result.errors:
            start = len(pending.source) - len(pending.source.lstrip())
            message = (
                f"{expect.label} must give {with_article(expect.type)}; "
                f"this expression gives {with_article(result.type)}"
            )
            self._expression_error(pending.path, start, message)
        return result

    def with_branches(self, path: NodePath, expr: CompiledExpr) -> CompiledExpr:
        """``expr`` with the branches the checker found in it (for coverage)."""
        branches = self.branches.get(path, ())
        return replace(expr, branches=branches) if branches else expr

    def _expression_error(
        self, path: NodePath, offset: int | None, message: str, *, warning: bool = False
    ) -> None:
        line, col, exact = self.pack.source.expression_position(path, offset)
        note = "" if exact else " (position approximate)"
        error = PolicyError(self.pack.path, line, col, message + note, self.pack.source.line_text(line))
        (self.warnings if warning else self.errors).append(error)


def _parse_tree(compiled: CompiledExpression, source: str) -> lark.Tree | None:
    """The engine's parse tree of ``source`` when it hands one over (``take_parse_tree``), else cel-python's
    own; None when only the engine's grammar accepts the expression."""
    take = getattr(compiled, "take_parse_tree", None)
    tree = take() if callable(take) else None
    if isinstance(tree, lark.Tree):
        return tree
    return parse_checked(source)


@dataclass(frozen=True, slots=True)
class _VariableRefs:
    names: tuple[str, ...]
    unknown: tuple[tuple[str, int], ...]


def _variable_references(reads: Reads, known: Sequence[str]) -> _VariableRefs:
    """Which pack variables an expression reads, from its parse tree. A dynamic access
    (``vars[x]``, ``size(vars)``) may read any of them, so it reads them all."""
    found: dict[str, None] = {}
    unknown: list[tuple[str, int]] = []
    for read in reads.members_of("vars"):
        if read.member in known:
            found[read.member] = None
        else:
            unknown.append((read.member, read.offset if read.offset is not None else 0))
    if "vars" in reads.whole:
        found = dict.fromkeys(known)
    return _VariableRefs(tuple(found), tuple(unknown))


def _offset_of(source: str, name: str) -> int | None:
    match = re.search(rf"(?<![\w.]){re.escape(name)}\b", source)
    return match.start() if match else None


def _order_variables(
    compiler: _PackCompiler, raw: Mapping[str, CompiledExpr]
) -> dict[str, CompiledExpr] | None:
    """Close each variable's dependencies transitively (in evaluation order); a cycle is an error."""
    resolved: dict[str, tuple[str, ...]] = {}

    def visit(name: str, trail: tuple[str, ...]) -> tuple[str, ...] | None:
        if name in resolved:
            return resolved[name]
        if name in trail:
            index = compiler.variable_names.index(trail[0])
            cycle = " -> ".join((*trail, name))
            compiler.errors.append(
                compiler.pack.error(
                    (*compiler.pack.variable_path(index), "expression"), f"variable cycle: {cycle}"
                )
            )
            return None
        order: list[str] = []
        for dependency in raw[name].variables:
            if dependency not in raw:
                continue
            sub = visit(dependency, (*trail, name))
            if sub is None:
                return None
            order.extend(item for item in (*sub, dependency) if item not in order)
        resolved[name] = tuple(order)
        return resolved[name]

    for name in raw:
        if visit(name, ()) is None:
            return None
    return {name: replace(expr, variables=resolved[name]) for name, expr in raw.items()}


def _with_transitive(expr: CompiledExpr, variables: Mapping[str, CompiledExpr]) -> CompiledExpr:
    order: list[str] = []
    for name in expr.variables:
        if name not in variables:
            continue
        for item in (*variables[name].variables, name):
            if item not in order:
                order.append(item)
    return replace(expr, variables=tuple(order))


def _constant_type_error(expr: CompiledExpr, wanted: type, what: str) -> str | None:
    """Evaluate an expression that reads nothing; report when its value has the wrong type."""
    if expr.names or expr.variables or "vars" in expr.program.references:
        return None
    try:
        value = expr.program.evaluate({})
    except Exception:
        return None
    if isinstance(value, CelEvalError | wanted):
        return None
    return f"{what} must be a {wanted.__name__}; this expression always gives {value!r}"


def _compile_pack(
    pack: LoadedPack,
    pack_index: int,
    first_ordinal: int,
    engine: CelEngine,
    shadow: bool,
    params: Mapping[str, Any],
    trees: dict[str, lark.Tree] | None = None,
) -> tuple[CompiledPack | None, list[CompiledRule], list[PolicyError], list[PolicyError]]:
    """One pack's variables and rules compiled and type-checked: the pack, its rules, its errors
    and its warnings."""
    compiler = _PackCompiler(pack, engine, trees)
    spec = pack.model.spec
    raw_vars: dict[str, CompiledExpr] = {}
    variable_paths: dict[str, NodePath] = {}
    for index, variable in enumerate(spec.variables):
        path: NodePath = (*pack.variable_path(index), "expression")
        expr = compiler.compile(path, variable.expression, None, variable=variable.name)
        if expr is not None:
            raw_vars[variable.name] = expr
            variable_paths.setdefault(variable.name, path)
    variables = _order_variables(compiler, raw_vars) if len(raw_vars) == len(spec.variables) else None
    compiled_rules: list[tuple[int, Any, CompiledExpr | None, CompiledExpr | None]] = []
    for index, rule in enumerate(spec.rules):
        base: NodePath = pack.rule_path(index)
        tools = list(rule.match.tools) if rule.match is not None and rule.match.tools else None
        when = None
        if rule.when is not None:
            expect = _Expect(BOOL, rule.id, "when")
            when = compiler.compile((*base, "when"), rule.when, rule.stage, expect=expect, tools=tools)
        message_expression = None
        if rule.message_expression is not None:
            message_expression = compiler.compile(
                (*base, "message_expression"),
                rule.message_expression,
                rule.stage,
                expect=_Expect(STRING, rule.id, "message_expression"),
                tools=tools,
            )
        compiled_rules.append((index, rule, when, message_expression))
    compiler.check_types()
    if compiler.errors or variables is None:
        return None, [], compiler.errors, compiler.warnings
    variables = {name: compiler.with_branches(variable_paths[name], expr) for name, expr in variables.items()}
    rules: list[CompiledRule] = []
    for index, rule, when, message_expression in compiled_rules:
        base = pack.rule_path(index)
        if when is not None:
            when = compiler.with_branches((*base, "when"), _with_transitive(when, variables))
        if message_expression is not None:
            message_expression = compiler.with_branches(
                (*base, "message_expression"), _with_transitive(message_expression, variables)
            )
        reads = _reads(variables, when, message_expression)
        rules.append(
            _build_rule(
                pack, pack_index, first_ordinal + index, rule, when, message_expression, shadow, reads
            )
        )
    compiler.warnings += _refuses_everything(pack, rules)
    compiled = CompiledPack(
        name=pack.name,
        path=pack.path,
        digest=pack.digest,
        params=MappingProxyType(dict(params)),
        activation_params=thaw(params),
        variables=MappingProxyType(variables),
        default_decision=spec.defaults.decision,
    )
    return compiled, rules, [], compiler.warnings


#: The effect that refuses an event at each stage, and its verb.
_REFUSALS: dict[str, str] = {
    "pre-step": "reject",
    "pre-execute": "deny",
    "guard": "deny",
    "post-execute": "block",
}
_REFUSES: dict[str, str] = {"reject": "rejects", "deny": "denies", "block": "blocks"}


def _refuses_everything(pack: LoadedPack, rules: Sequence[CompiledRule]) -> list[PolicyError]:
    """Warnings for a pack that refuses every event of a stage: an enforced rule with no
    ``match`` and no condition (or ``when: true``) whose decision refuses, or a pack whose
    default decision is deny with no rule that allows. Legal, and sometimes meant (a lock-down
    pack), but far more often a rule whose scope was forgotten."""
    found: list[PolicyError] = []
    for index, rule in enumerate(rules):
        unconditional = rule.when is None or rule.when.source.strip() == "true"
        unscoped = rule.tools is None and rule.programs is None
        if unconditional and unscoped and rule.mode == "enforce" and rule.effect == _REFUSALS[rule.stage]:
            message = (
                f"rule {rule.id!r} {_REFUSES[rule.effect]} every event at stage {rule.stage} "
                "(no match and no condition); scope it with match or when"
            )
            found.append(pack.error(pack.rule_path(index), message))
    spec = pack.model.spec
    allows = any(rule.stage == "pre-execute" and rule.effect == "allow" for rule in rules)
    if spec.defaults.decision == "deny" and not allows:
        message = "defaults.decision is deny and no rule allows: every tool call is denied"
        found.append(pack.error(("spec", "defaults", "decision"), message))
    return found


def _build_rule(
    pack: LoadedPack,
    pack_index: int,
    ordinal: int,
    rule: Any,
    when: CompiledExpr | None,
    message_expression: CompiledExpr | None,
    shadow: bool,
    reads: frozenset[str],
) -> CompiledRule:
    defaults = pack.model.spec.defaults
    if rule.stage == "guard":
        # Guards are always enforced and fail closed; only gateway-wide shadow mode relaxes them.
        mode: Mode = "enforce"
        on_error: OnError = "deny"
        effect: Effect = "deny"
    else:
        mode = rule.mode or defaults.mode
        on_error = rule.on_error or defaults.on_error
        # Validation guarantees a decision where the stage has no default (pre-execute).
        effect = cast(Effect, rule.decision or STAGE_TABLE[rule.stage].default_effect)
    redactions = tuple(
        Redaction(entry.preset, None, f"[REDACTED:{entry.preset}]")
        if entry.preset is not None
        else Redaction(None, re2.compile(entry.pattern, re2_options()), entry.replace or "[REDACTED]")
        for entry in (rule.redact or ())
    )
    return CompiledRule(
        id=f"{pack.name}/{rule.id}",
        pack_index=pack_index,
        ordinal=ordinal,
        stage=rule.stage,
        mode="audit" if shadow else mode,
        on_error=on_error,
        effect=effect,
        tools=tuple(rule.match.tools) if rule.match is not None and rule.match.tools else None,
        when=when,
        message=rule.message,
        message_expression=message_expression,
        redactions=redactions,
        context=rule.context,
        description=rule.description,
        reads=reads,
        programs=_programs_pattern(rule.match.programs if rule.match is not None else None),
    )


def _programs_pattern(globs: Sequence[str] | None) -> re.Pattern[str] | None:
    """``match.programs`` globs as one pattern a program name must fully match; compiled on the
    first event that reaches the rule (``fnmatch.translate`` always makes a valid pattern, and a
    load compiling them all was a measurable part of reading a kept policy back)."""
    if not globs:
        return None
    return lazy_compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob in globs))


def _reads(variables: Mapping[str, CompiledExpr], *exprs: CompiledExpr | None) -> frozenset[str]:
    """Activation names ``exprs`` read, directly or through the variables they use."""
    names: set[str] = set()
    for expr in exprs:
        if expr is None:
            continue
        names |= expr.names
        for variable in expr.variables:
            if variable in variables:
                names |= variables[variable].names
    names.discard("vars")
    return frozenset(names)


def single_rule_policy(
    policy: CompiledPolicy, rule: CompiledRule, params: Mapping[str, Any] | None = None
) -> CompiledPolicy:
    """A policy holding only ``rule`` (enforced, not shadowed) with its pack's variables and
    ``params`` (by default the pack's, overrides included), deciding ``allow`` when it does not
    match: what the rule alone makes of an event, for inline examples."""
    alone = replace(rule, pack_index=0, ordinal=0, mode="enforce")
    pack = policy.packs[rule.pack_index]
    if params is not None:
        pack = replace(pack, params=MappingProxyType(dict(params)), activation_params=thaw(params))
    return replace(
        policy,
        packs=(pack,),
        rules=(alone,),
        stages=MappingProxyType(
            {stage: index_stage([alone] if stage == rule.stage else []) for stage in STAGES}
        ),
        shadow=False,
        default_decision="allow",
        warnings=(),
    )


def compile_policy(
    packs: Sequence[LoadedPack],
    *,
    engine: CelEngine | str = "auto",
    params: Mapping[str, Any] | None = None,
    param_origins: Mapping[str, ParamOrigin] | None = None,
    shadow: bool = False,
    trees: dict[str, lark.Tree] | None = None,
) -> CompileResult:
    """Compile loaded packs with one engine. ``params`` override pack params by name (each must be
    declared by some pack, with a compatible type); ``param_origins`` says where each was given.
    ``trees``, when given, receives each expression's parse tree by source (for the cache)."""
    if isinstance(engine, str):
        try:
            made: CelEngine = make_engine(engine)  # type: ignore[arg-type]  # unknown names are reported
        except (EngineUnavailableError, ValueError, ImportError) as exc:
            return CompileResult(None, (PolicyError("--engine", 0, 0, str(exc)),))
    else:
        made = engine
    return _compile_all(packs, made, params or {}, param_origins or {}, shadow, trees)


def _compile_all(
    packs: Sequence[LoadedPack],
    engine: CelEngine,
    params: Mapping[str, Any],
    param_origins: Mapping[str, ParamOrigin],
    shadow: bool,
    trees: dict[str, lark.Tree] | None = None,
) -> CompileResult:
    merged, errors = merge_params(packs, params, param_origins)
    warnings: list[PolicyError] = []
    compiled_packs: list[CompiledPack] = []
    rules: list[CompiledRule] = []
    ordinal = 0
    for index, pack in enumerate(packs):
        compiled, pack_rules, pack_errors, pack_warnings = _compile_pack(
            pack, index, ordinal, engine, shadow, merged[index], trees
        )
        ordinal += len(pack.model.spec.rules)
        errors.extend(pack_errors)
        warnings.extend(pack_warnings)
        if compiled is not None:
            compiled_packs.append(compiled)
            rules.extend(pack_rules)
    if errors:
        return CompileResult(None, tuple(sorted(errors)), tuple(sorted(warnings)))
    stages: Mapping[str, StageIndex] = MappingProxyType(
        {stage: index_stage([rule for rule in rules if rule.stage == stage]) for stage in STAGES}
    )
    # With several packs, the most restrictive default wins (a lockdown pack's default deny must not
    # be loosened by another pack's default allow); explicit allow rules still apply first.
    default_decision: Literal["allow", "ask", "deny"] = max(
        (pack.default_decision for pack in compiled_packs),
        key=DECISION_STRICTNESS.__getitem__,
        default="allow",
    )
    digest = canonical_digest(
        {
            "packs": [{"name": pack.name, "digest": pack.digest} for pack in compiled_packs],
            "params": [dict(pack.params) for pack in compiled_packs],
            "engine": engine.name,
            "shadow": shadow,
            # data the readers decide with: a refreshed advisory snapshot or list of established
            # package names is a different policy (headers only: the data loads on first use)
            "data": {
                "malicious_packages": malicious_packages_snapshot(),
                "popular_packages": popular_packages_snapshot(),
            },
        }
    )
    policy = CompiledPolicy(
        packs=tuple(compiled_packs),
        rules=tuple(rules),
        stages=stages,
        engine_name=engine.name,
        shadow=shadow,
        digest=digest,
        default_decision=default_decision,
        warnings=tuple(sorted(warnings)),
        converting=any(_converts(rule.when) or _converts(rule.message_expression) for rule in rules)
        or any(_converts(expr) for pack in compiled_packs for expr in pack.variables.values()),
    )
    return CompileResult(policy, (), policy.warnings)
