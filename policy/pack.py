"""Rule pack loading: YAML (with positions) -> JSON Schema -> typed models -> semantic checks.

Loading is all-or-nothing and never raises for bad input: every problem in every pack comes back as
a :class:`PolicyError` with FILE:LINE:COL, and a :class:`LoadResult` with errors holds no packs that
could decide anything. CEL expressions are compiled later by :mod:`.compile` (that needs an engine),
using the positions kept here to map CEL columns back into the file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeAlias

import orjson
import re2
from dsh_policy.policy.detectors import DETECTORS
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.source.schema import schema_issues, suggest_spelling
from dsh_policy.policy.source.yaml_source import Path as NodePath
from dsh_policy.policy.source.yaml_source import SourceIssue, SourceMap, read_utf8, read_yaml
from dsh_policy.policy.stages import STAGE_TABLE, Stage
from pydantic import BaseModel, ConfigDict, Field

Mode: TypeAlias = Literal["enforce", "warn", "audit"]
OnError: TypeAlias = Literal["deny", "ignore"]
RuleDecision: TypeAlias = Literal["reject", "deny", "ask", "allow", "block"]


# --- typed model (validated input; the JSON Schema has already checked shapes) --------------------


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class PackMetadata(_Model):
    """``metadata:`` of a pack."""

    name: str
    version: str | None = None
    description: str | None = None


class PackDefaults(_Model):
    """``spec.defaults``: what a rule inherits and what pre-execute does when no rule decides."""

    mode: Mode = "enforce"
    on_error: OnError = "deny"
    decision: Literal["allow", "ask", "deny"] = "allow"


class VariableSpec(_Model):
    """A named CEL expression rules read as ``vars.<name>``."""

    name: str
    expression: str
    description: str | None = None


class MatchSpec(_Model):
    """``match:``: globs on the tool name and, for shell calls, globs on the programs the line
    runs (``shell.argv0s(args.command)``): a rule whose ``programs`` none of them matches is not
    evaluated, like a rule for another tool."""

    tools: tuple[str, ...] | None = None
    programs: tuple[str, ...] | None = None


class RedactSpec(_Model):
    """One redaction: a named ``preset`` detector, or an RE2 ``pattern`` with ``replace`` text."""

    preset: str | None = None
    pattern: str | None = None
    replace: str | None = None


#: One inline example: an event as in a cases file (without ``stage``/``expect``), or a string,
#: shorthand for a shell command (a prompt at pre-step).
Example: TypeAlias = str | dict[str, Any]


class RuleExamples(_Model):
    """``examples:`` of a rule: events listed under the decision word this rule gives them, checked
    at load time (see :mod:`~dsh_policy.policy.examples`). Only the stage's words are allowed."""

    enter: tuple[Example, ...] | None = None
    reject: tuple[Example, ...] | None = None
    allow: tuple[Example, ...] | None = None
    deny: tuple[Example, ...] | None = None
    ask: tuple[Example, ...] | None = None
    accept: tuple[Example, ...] | None = None
    block: tuple[Example, ...] | None = None

    def by_word(self) -> dict[str, tuple[Example, ...]]:
        """The examples given, by decision word, in the order of :data:`EXAMPLE_WORDS`."""
        return {word: found for word in EXAMPLE_WORDS if (found := getattr(self, word)) is not None}


EXAMPLE_WORDS = ("enter", "reject", "allow", "deny", "ask", "accept", "block")


class RuleSpec(_Model):
    """One rule as written."""

    id: str
    stage: Stage
    description: str | None = None
    match: MatchSpec | None = None
    when: str | None = None
    decision: RuleDecision | None = None
    message: str | None = None
    message_expression: str | None = None
    mode: Mode | None = None
    on_error: OnError | None = None
    redact: tuple[RedactSpec, ...] | None = None
    context: str | None = None
    examples: RuleExamples | None = None


class PackSpec(_Model):
    """``spec:`` of a pack."""

    defaults: PackDefaults = PackDefaults()
    params: dict[str, Any] = Field(default_factory=dict)
    variables: tuple[VariableSpec, ...] = ()
    rules: tuple[RuleSpec, ...] = ()


class RulePackModel(_Model):
    """A whole rule pack document."""

    api_version: Literal["dsh-policy/v1"] = Field(alias="apiVersion")
    kind: Literal["RulePack"]
    metadata: PackMetadata
    spec: PackSpec = PackSpec()


@dataclass(frozen=True, slots=True)
class LoadedPack:
    """A pack that passed every load-time check, with what compilation needs to report errors."""

    path: str
    model: RulePackModel
    document: dict[str, Any]
    source: SourceMap
    digest: str
    rule_paths: tuple[NodePath, ...] = ()
    variable_paths: tuple[NodePath, ...] = ()

    def rule_path(self, index: int) -> NodePath:
        """Where ``model.spec.rules[index]`` sits in the file (rules that failed the schema are
        left out of a diagnostic load, so model indices and file indices can differ)."""
        return self.rule_paths[index] if self.rule_paths else ("spec", "rules", index)

    def variable_path(self, index: int) -> NodePath:
        """Where ``model.spec.variables[index]`` sits in the file."""
        return self.variable_paths[index] if self.variable_paths else ("spec", "variables", index)

    @property
    def name(self) -> str:
        """The pack name rule ids are prefixed with."""
        return self.model.metadata.name

    def position(self, path: NodePath) -> tuple[int, int]:
        """Position of the value at ``path`` (1-based)."""
        return self.source.value_position(path)

    def error(self, path: NodePath, message: str, *, at_key: bool = False) -> PolicyError:
        """A :class:`PolicyError` pointing at the node at ``path`` of this pack."""
        line, col = self.source.key_position(path) if at_key else self.source.value_position(path)
        return PolicyError(self.path, line, col, message)


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The packs of one load, or every error found; never both (all-or-nothing).

    ``diagnosable`` holds, when there are errors, the parts of packs that did pass the schema, so
    compilation can still report their CEL errors in the same run; they never decide anything."""

    packs: tuple[LoadedPack, ...]
    errors: tuple[PolicyError, ...]
    diagnosable: tuple[LoadedPack, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing was wrong."""
        return not self.errors


# --- semantic checks ----------------------------------------------------------------------------


def _rule_errors(pack: LoadedPack) -> list[PolicyError]:
    errors: list[PolicyError] = []
    spec = pack.model.spec
    seen_vars: dict[str, int] = {}
    for index, variable in enumerate(spec.variables):
        path: NodePath = (*pack.variable_path(index), "name")
        if variable.name in seen_vars:
            first = pack.position((*pack.variable_path(seen_vars[variable.name]), "name"))[0]
            errors.append(pack.error(path, f"duplicate variable {variable.name!r} (first on line {first})"))
        else:
            seen_vars[variable.name] = index
    seen_ids: dict[str, int] = {}
    for index, rule in enumerate(spec.rules):
        base: NodePath = pack.rule_path(index)
        if rule.id in seen_ids:
            first = pack.position((*pack.rule_path(seen_ids[rule.id]), "id"))[0]
            errors.append(pack.error((*base, "id"), f"duplicate rule id {rule.id!r} (first on line {first})"))
        else:
            seen_ids[rule.id] = index
        errors.extend(_stage_errors(pack, base, rule))
        errors.extend(_redact_errors(pack, base, rule))
    return errors


def _stage_errors(pack: LoadedPack, base: NodePath, rule: RuleSpec) -> list[PolicyError]:
    errors: list[PolicyError] = []
    name = f"rule {rule.id!r}"
    stage = rule.stage

    def err(field: str, message: str, *, at_key: bool = True) -> None:
        errors.append(pack.error((*base, field), f"{name}: {message}", at_key=at_key))

    spec = STAGE_TABLE[stage]
    if rule.decision is not None and rule.decision not in spec.rule_decisions:
        allowed = " | ".join(sorted(spec.rule_decisions))
        err(
            "decision",
            f"decision {rule.decision!r} does not fit stage {stage} (allowed: {allowed})",
            at_key=False,
        )
    if stage == "guard":
        if rule.mode in ("warn", "audit"):
            err(
                "mode",
                f"mode {rule.mode!r} is not allowed on a guard: guards are always enforced",
                at_key=False,
            )
        if rule.on_error == "ignore":
            err(
                "on_error",
                "on_error 'ignore' is not allowed on a guard: guards always fail closed",
                at_key=False,
            )
    if not spec.tool_event and rule.match is not None:
        err("match", "match applies to tool stages only; a pre-step has no tool")
    if rule.redact is not None and not spec.takes_redact:
        err("redact", f"redact applies to post-execute rules only, not {stage}")
    if rule.context is not None and not spec.takes_context:
        err("context", f"context applies to pre-step and post-execute rules only, not {stage}")
    if rule.message is not None and rule.message_expression is not None:
        err("message_expression", "give either message or message_expression, not both")
    if spec.default_effect is None and rule.decision is None:
        errors.append(pack.error(base, f"{name}: a pre-execute rule needs decision: deny | ask | allow"))
    if stage == "pre-step":
        if rule.decision is None and rule.context is None:
            errors.append(pack.error(base, f"{name}: a pre-step rule needs decision: reject, or context"))
        if rule.decision == "reject" and rule.context is not None:
            err("context", "a rejecting pre-step rule cannot add context (the step never opens)")
    if stage == "post-execute":
        if rule.decision is None and rule.redact is None and rule.context is None:
            errors.append(
                pack.error(base, f"{name}: a post-execute rule needs decision: block, redact or context")
            )
        if rule.decision == "block" and rule.redact is not None:
            err("redact", "a blocking rule cannot also redact (the output is withheld whole)")
    for word in rule.examples.by_word() if rule.examples is not None else {}:
        if word not in spec.outcomes:
            allowed = " | ".join(sorted(spec.outcomes))
            errors.append(
                pack.error(
                    (*base, "examples", word),
                    f"{name}: examples.{word} does not fit stage {stage} (allowed: {allowed})",
                    at_key=True,
                )
            )
    gives_decision = stage == "guard" or rule.decision is not None
    if not gives_decision:
        for field in ("message", "message_expression"):
            if getattr(rule, field) is not None:
                err(field, f"{field} is never shown: this rule gives no decision")
    return errors


def _redact_errors(pack: LoadedPack, base: NodePath, rule: RuleSpec) -> list[PolicyError]:
    errors: list[PolicyError] = []
    for index, entry in enumerate(rule.redact or ()):
        path: NodePath = (*base, "redact", index)
        if (entry.preset is None) == (entry.pattern is None):
            errors.append(
                pack.error(path, f"rule {rule.id!r}: a redaction needs exactly one of preset or pattern")
            )
            continue
        if entry.preset is not None:
            if entry.replace is not None:
                errors.append(
                    pack.error(
                        (*path, "replace"),
                        f"replace applies to pattern only; presets replace with [REDACTED:{entry.preset}]",
                        at_key=True,
                    )
                )
            if entry.preset not in DETECTORS:
                hint = suggest_spelling(entry.preset, DETECTORS)
                errors.append(pack.error((*path, "preset"), f"unknown preset {entry.preset!r}{hint}"))
        elif entry.pattern is not None:
            problem = regex_error(entry.pattern)
            if problem is not None:
                errors.append(pack.error((*path, "pattern"), f"invalid RE2 pattern: {problem}"))
            elif entry.replace is not None:
                problem = replacement_error(entry.pattern, entry.replace)
                if problem is not None:
                    errors.append(pack.error((*path, "replace"), f"invalid replacement: {problem}"))
    return errors


def re2_options() -> Any:
    """RE2 options for user patterns: errors are returned, not logged to stderr by the C++ side."""
    options = re2.Options()
    options.log_errors = False
    return options


_GROUP_REFERENCE = re.compile(r"\\(?:(\d+)|g<([^>]*)>)")


def replacement_error(pattern: str, replace: str) -> str | None:
    """Why ``replace`` refers to a group ``pattern`` does not have (found at load time, since at
    run time it would fail every redaction of a matching output)."""
    regex = re2.compile(pattern, re2_options())
    for match in _GROUP_REFERENCE.finditer(replace):
        number, name = match.groups()
        if number is not None and int(number) > regex.groups:
            return f"group \\{number} does not exist (the pattern has {regex.groups})"
        if (
            name is not None
            and not (name.isdigit() and int(name) <= regex.groups)
            and name not in regex.groupindex
        ):
            return f"group {name!r} does not exist in the pattern"
    return None


def regex_error(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid RE2 expression, or None when it compiles."""
    try:
        re2.compile(pattern, re2_options())
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    return None


# --- loading ------------------------------------------------------------------------------------


def canonical_digest(value: Any) -> str:
    """``sha256:<hex>`` over sorted-key compact JSON of a plain value."""
    return "sha256:" + hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def load_pack_text(text: str, file: str) -> LoadedPack | list[PolicyError]:
    """Load one pack from its text; ``file`` is how errors name it."""
    pack, errors = _load_pack(text, file)
    if errors or pack is None:
        return sorted(errors)
    return pack


def _load_pack(text: str, file: str) -> tuple[LoadedPack | None, list[PolicyError]]:
    """A pack and its errors. With errors, the pack (if any) is a diagnostic one: the rules and
    variables that passed the schema, so later stages can report their errors too."""
    document = read_yaml(text)
    if isinstance(document, list):
        return None, [PolicyError(file, issue.line, issue.col, issue.message) for issue in document]
    issues = schema_issues(document.value, document.source, file, "rulepack.schema.json")
    errors = [error for _, error in issues]
    value = document.value
    rule_paths: tuple[NodePath, ...] = ()
    variable_paths: tuple[NodePath, ...] = ()
    if issues:
        salvaged = _without_invalid_items(value, [path for path, _ in issues])
        if salvaged is None:
            return None, errors
        value, rule_paths, variable_paths = salvaged
    model = RulePackModel.model_validate(value)
    pack = LoadedPack(
        file,
        model,
        document.value,
        document.source,
        canonical_digest(document.value),
        rule_paths,
        variable_paths,
    )
    errors.extend(_rule_errors(pack))
    return (_diagnosable(pack) if errors else pack), errors


def _diagnosable(pack: LoadedPack) -> LoadedPack:
    """The failed pack minus the redactions that failed their checks: it is compiled only to report
    its CEL errors in the same run, and compiling a broken redaction (``{}``, pattern ``(``) would
    raise instead of reporting. Nothing diagnostic ever decides."""
    rules = pack.model.spec.rules
    cleaned = [
        rule
        if all(_usable_redaction(entry) for entry in rule.redact or ())
        else rule.model_copy(update={"redact": [e for e in rule.redact or () if _usable_redaction(e)]})
        for rule in rules
    ]
    if all(new is old for new, old in zip(cleaned, rules, strict=True)):
        return pack
    spec = pack.model.spec.model_copy(update={"rules": cleaned})
    return replace(pack, model=pack.model.model_copy(update={"spec": spec}))


def _usable_redaction(entry: RedactSpec) -> bool:
    if entry.preset is not None:
        return entry.pattern is None and entry.preset in DETECTORS
    if entry.pattern is None or regex_error(entry.pattern) is not None:
        return False
    return entry.replace is None or replacement_error(entry.pattern, entry.replace) is None


def _without_invalid_items(
    document: dict[str, Any], bad: Sequence[tuple[str | int, ...]]
) -> tuple[dict[str, Any], tuple[NodePath, ...], tuple[NodePath, ...]] | None:
    """The document minus the rules/variables that failed the schema, with the file paths of the
    ones kept; None when an error lies elsewhere (then nothing more can be checked reliably)."""
    dropped: dict[str, set[int]] = {"rules": set(), "variables": set()}
    for path in bad:
        if len(path) >= 3 and path[0] == "spec" and path[1] in dropped and isinstance(path[2], int):
            dropped[str(path[1])].add(path[2])
        else:
            return None
    spec = dict(document["spec"])
    kept: dict[str, tuple[NodePath, ...]] = {}
    for section, indices in dropped.items():
        items = spec.get(section, [])
        keep = [index for index in range(len(items)) if index not in indices]
        spec[section] = [items[index] for index in keep]
        kept[section] = tuple(("spec", section, index) for index in keep)
    return {**document, "spec": spec}, kept["rules"], kept["variables"]


def load_pack_file(path: str | Path) -> LoadedPack | list[PolicyError]:
    """Load one pack file (UTF-8)."""
    pack, errors = _load_pack_path(path)
    if errors or pack is None:
        return sorted(errors)
    return pack


def load_packs(paths: Sequence[str | Path]) -> LoadResult:
    """Load several packs; every error of every pack, plus pack names duplicated across packs."""
    packs: list[LoadedPack] = []
    diagnosable: list[LoadedPack] = []
    errors: list[PolicyError] = []
    if not paths:
        errors.append(PolicyError("<packs>", 0, 0, "no rule packs given"))
    first_by_name: dict[str, LoadedPack] = {}
    for path in paths:
        loaded, pack_errors = _load_pack_path(path)
        errors.extend(pack_errors)
        if loaded is None:
            continue
        diagnosable.append(loaded)
        earlier = first_by_name.get(loaded.name)
        if earlier is not None:
            errors.append(
                loaded.error(
                    ("metadata", "name"), f"duplicate pack name {loaded.name!r} (also {earlier.path})"
                )
            )
            continue
        first_by_name[loaded.name] = loaded
        if not pack_errors:
            packs.append(loaded)
    if errors:
        return LoadResult((), tuple(errors), tuple(diagnosable))
    return LoadResult(tuple(packs), ())


def _load_pack_path(path: str | Path) -> tuple[LoadedPack | None, list[PolicyError]]:
    file = str(path)
    text = read_utf8(path)
    if isinstance(text, SourceIssue):
        return None, [PolicyError(file, text.line, text.col, text.message)]
    return _load_pack(text, file)
