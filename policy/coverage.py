"""``check --cases ... --coverage``: which rules no case and no inline example exercised, and which
side of each ``matches`` call and ``exists``/``all``/``exists_one`` comprehension none took.

A rule is exercised when some case or example made it match (an evaluation error does not
count: that is the rule failing, not working). Branch sides are recorded by evaluating the same
cases and examples again on an instrumented python engine
(:data:`~dsh_policy.policy.cel.python_evaluator.BranchRecorder`), whatever engine ``check`` ran:
the sides an expression takes are the same on every engine (``--engine all`` checks that the
verdicts are), and the gateway's own evaluator stays uninstrumented. A pack whose expressions
only the native engine compiles gets rule coverage only, with a note saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import lark
from dsh_policy.policy.cases import Case, CaseOutcome, run_case
from dsh_policy.policy.cel.branches import Branch
from dsh_policy.policy.cel.engine import CelCompileIssue
from dsh_policy.policy.cel.python_engine import PythonCelEngine
from dsh_policy.policy.compiled import CompiledExpr, CompiledPolicy, CompiledRule
from dsh_policy.policy.decide import Decider
from dsh_policy.policy.examples import run_examples
from dsh_policy.policy.pack import LoadedPack, load_packs
from dsh_policy.policy.source.yaml_source import Path as NodePath


@dataclass(frozen=True, slots=True)
class RuleCoverage:
    """How often a rule was evaluated and matched, by cases and by examples."""

    rule: str
    file: str
    line: int
    evaluated: int
    matched: int

    def to_json(self) -> dict[str, Any]:
        """The JSON of one rule no case exercised."""
        return {"rule": self.rule, "file": self.file, "line": self.line, "evaluated": self.evaluated}


@dataclass(frozen=True, slots=True)
class BranchCoverage:
    """One branching call and how often it gave true and false."""

    owner: str
    file: str
    line: int
    col: int
    function: str
    text: str
    true: int
    false: int

    @property
    def missing(self) -> str | None:
        """The side no case took: ``true``, ``false``, ``both`` (never evaluated) or None."""
        if self.true and self.false:
            return None
        if not self.true and not self.false:
            return "both"
        return "false" if self.true else "true"

    def to_json(self) -> dict[str, Any]:
        """The JSON of one branch."""
        return {
            "owner": self.owner, "file": self.file, "line": self.line, "col": self.col,
            "function": self.function, "text": self.text, "true": self.true, "false": self.false,
            "missing": self.missing,
        }  # fmt: skip


@dataclass(slots=True)
class CoverageReport:
    """Rules and branches, and notes about what could not be measured."""

    rules: list[RuleCoverage] = field(default_factory=list)
    branches: list[BranchCoverage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def unexercised(self) -> list[RuleCoverage]:
        """Rules no case or example made match."""
        return [rule for rule in self.rules if not rule.matched]

    @property
    def partial(self) -> list[BranchCoverage]:
        """Branches with a side no case or example took."""
        return [branch for branch in self.branches if branch.missing is not None]

    def to_json(self) -> dict[str, Any]:
        """The ``coverage`` object of ``check --format json``."""
        sides = sum(
            2 - (branch.missing == "both") - (branch.missing in ("true", "false")) for branch in self.branches
        )
        return {
            "rules": {"total": len(self.rules), "exercised": len(self.rules) - len(self.unexercised)},
            "unexercised": [rule.to_json() for rule in self.unexercised],
            "branches": {"total": len(self.branches), "sides": 2 * len(self.branches), "taken": sides},
            "partial_branches": [branch.to_json() for branch in self.partial],
            "notes": list(self.notes),
        }


def measure_coverage(
    policy: CompiledPolicy, cases: Sequence[Case], outcomes: Sequence[CaseOutcome]
) -> CoverageReport:
    """Coverage of ``policy`` by ``cases`` (already decided: ``outcomes``) and by the inline
    examples of its packs."""
    report = CoverageReport()
    loaded = load_packs([pack.path for pack in policy.packs])
    packs = list(loaded.packs)
    examples, _ = run_examples(policy, packs) if loaded.ok else ([], [])
    traces = [entry for outcome in outcomes for entry in outcome.trace]
    traces += [entry for example in examples for entry in example.outcome.trace]
    evaluated: dict[str, int] = {}
    matched: dict[str, int] = {}
    for entry in traces:
        evaluated[entry.rule] = evaluated.get(entry.rule, 0) + 1
        if entry.matched and entry.error is None:
            matched[entry.rule] = matched.get(entry.rule, 0) + 1
    positions = _rule_positions(packs)
    for rule in policy.rules:
        file, line = positions.get(rule.id, (policy.packs[rule.pack_index].path, 0))
        report.rules.append(
            RuleCoverage(rule.id, file, line, evaluated.get(rule.id, 0), matched.get(rule.id, 0))
        )
    if loaded.ok:
        _branches(policy, packs, cases, report)
    else:
        report.notes.append("branch coverage needs the packs to load again: " + str(loaded.errors[0]))
    return report


def _rule_positions(packs: Iterable[LoadedPack]) -> dict[str, tuple[str, int]]:
    return {
        f"{pack.name}/{rule.id}": (pack.path, pack.position(pack.rule_path(index))[0])
        for pack in packs
        for index, rule in enumerate(pack.model.spec.rules)
    }


@dataclass(frozen=True, slots=True)
class _Site:
    owner: str
    file: str
    line: int
    col: int
    branch: Branch
    text: str


class _Recorder:
    """Counts, per branching token of the instrumented programs, the true and false results."""

    def __init__(self) -> None:
        self.counts: dict[int, list[int]] = {}

    def __call__(self, token: lark.Token, value: Any) -> None:
        found = self.counts.get(id(token))
        if found is not None and isinstance(value, bool | int) and not isinstance(value, str):
            found[0 if bool(value) else 1] += 1


def _branches(
    policy: CompiledPolicy, packs: Sequence[LoadedPack], cases: Sequence[Case], report: CoverageReport
) -> None:
    recorder = _Recorder()
    engine = PythonCelEngine(branch_recorder=recorder)
    sites: dict[int, _Site] = {}
    instrumented = _instrument(policy, packs, engine, recorder, sites, report)
    if instrumented is None:
        return
    decider = Decider(instrumented)
    for case in cases:
        run_case(decider, case)
    run_examples(instrumented, packs)
    for key, site in sites.items():
        true, false = recorder.counts[key]
        report.branches.append(
            BranchCoverage(
                site.owner,
                site.file,
                site.line,
                site.col,
                site.branch.function,
                site.text,
                true,
                false,
            )
        )
    report.branches.sort(key=lambda branch: (branch.file, branch.line, branch.col))


def _instrument(
    policy: CompiledPolicy,
    packs: Sequence[LoadedPack],
    engine: PythonCelEngine,
    recorder: _Recorder,
    sites: dict[int, _Site],
    report: CoverageReport,
) -> CompiledPolicy | None:
    """``policy`` with every program compiled again on the instrumented engine, and the branch
    tokens of each registered in ``sites``; None when some expression does not compile there."""
    by_name = {pack.name: pack for pack in packs}

    def again(expr: CompiledExpr, owner: str, pack: LoadedPack, path: NodePath) -> CompiledExpr | None:
        program = engine.compile(expr.source)
        if isinstance(program, CelCompileIssue):
            report.notes.append(
                f"no branch coverage: {pack.path}: {owner} compiles only on the {policy.engine_name} engine"
            )
            return None
        tokens = {token.start_pos: token for token in _branch_tokens(program.take_parse_tree())}
        for branch in expr.branches:
            token = tokens.get(branch.offset)
            if token is None:
                continue
            line, col, _ = pack.source.expression_position(path, branch.offset)
            sites[id(token)] = _Site(owner, pack.path, line, col, branch, branch.text(expr.source))
            recorder.counts[id(token)] = [0, 0]
        # Evaluated every time, even a ``vars.X.exists(...)`` over an empty list that a decision
        # answers without evaluating: the recorder must see the comprehension give false.
        return replace(expr, program=program, exists_over=None)

    new_packs = []
    for compiled_pack in policy.packs:
        pack = by_name[compiled_pack.name]
        paths = {
            variable.name: (*pack.variable_path(i), "expression")
            for i, variable in enumerate(pack.model.spec.variables)
        }
        variables: dict[str, CompiledExpr] = {}
        for name, expr in compiled_pack.variables.items():
            found = again(expr, f"{pack.name} variable {name}", pack, paths[name])
            if found is None:
                return None
            variables[name] = found
        new_packs.append(replace(compiled_pack, variables=variables))
    rules: dict[str, CompiledRule] = {}
    for rule in policy.rules:
        pack = by_name[policy.packs[rule.pack_index].name]
        index = next(i for i, spec in enumerate(pack.model.spec.rules) if f"{pack.name}/{spec.id}" == rule.id)
        base = pack.rule_path(index)
        when = message = None
        if rule.when is not None:
            when = again(rule.when, rule.id, pack, (*base, "when"))
            if when is None:
                return None
        if rule.message_expression is not None:
            message = again(rule.message_expression, rule.id, pack, (*base, "message_expression"))
            if message is None:
                return None
        rules[rule.id] = replace(rule, when=when, message_expression=message)
    stages = {
        stage: replace(
            index,
            exact={tool: tuple(rules[r.id] for r in found) for tool, found in index.exact.items()},
            globs=tuple((pattern, rules[r.id]) for pattern, r in index.globs),
            every=tuple(rules[r.id] for r in index.every),
            all_rules=tuple(rules[r.id] for r in index.all_rules),
            _memo={},
            _everything=[],
        )
        for stage, index in policy.stages.items()
    }
    return replace(
        policy, packs=tuple(new_packs), rules=tuple(rules[r.id] for r in policy.rules), stages=stages
    )


def _branch_tokens(tree: lark.Tree) -> Iterable[lark.Token]:
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg" and len(node.children) > 1:
            name = node.children[1]
        elif node.data in ("ident_arg", "dot_ident_arg") and node.children:
            name = node.children[0]
        else:
            continue
        if isinstance(name, lark.Token):
            yield name
