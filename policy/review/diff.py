"""What changes between two policies, rule by rule: ``dsh-policy diff OLD NEW``.

Each side is a rule pack or a deployment file (``kind: Gateway``: its packs, params, engine and
shadow flag), compiled exactly as the gateway would. The diff names the rules added, removed and
changed (condition, decision, mode, match, and the rest of a rule's fields), the params and pack
variables that changed, and which unchanged rule conditions read a changed variable or param, with
the effective policy digest of each side: the digest every audit record names, so a diff can be
tied to the log a replay reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, Final

from dsh_policy.core.frozen import thaw
from dsh_policy.policy.compiled import CompiledPack, CompiledPolicy, CompiledRule
from dsh_policy.policy.config import PolicySources, policy_sources
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.loading import LoadFailure
from dsh_policy.policy.runtime.policy_changes import diff_summaries, policy_summary
from dsh_policy.policy.source.yaml_source import read_yaml_file

__all__ = ["PolicyDiff", "RuleChange", "diff_policies", "load_policy_file"]

#: Stands for "not there" in a param or variable change.
ABSENT: Final = None
_PARAM_REF = re.compile(r"\bparams\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)|\bparams\s*\[\s*['\"]([^'\"]+)['\"]\s*\]")
#: Rule fields in the order a reader weighs them.
RULE_FIELDS: Final = (
    "stage",
    "match",
    "when",
    "decision",
    "mode",
    "on_error",
    "redact",
    "context",
    "message",
    "message_expression",
    "description",
)


def load_policy_file(
    path: str | PathLike[str], *, engine: str | None = None
) -> CompiledPolicy | list[PolicyError]:
    """Compile a rule pack, or a deployment file's packs with its params, engine and shadow flag."""
    document = read_yaml_file(path)
    if isinstance(document, list):
        return document
    kind = document.value.get("kind") if isinstance(document.value, dict) else None
    sources: PolicySources | list[PolicyError]
    if kind == "Gateway":
        sources = policy_sources([], config=str(path), engine=engine)
    else:
        sources = policy_sources([str(path)], engine=engine)
    if isinstance(sources, list):
        return sources
    built = sources.build()
    return list(built.errors) if isinstance(built, LoadFailure) else built


@dataclass(frozen=True, slots=True)
class RuleChange:
    """One rule present on both sides: ``fields`` maps each changed field to (old, new); ``via``
    names the changed pack variables and params its unchanged condition reads."""

    rule: str
    fields: Mapping[str, tuple[Any, Any]]
    via: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "id": self.rule,
            "changes": {name: {"old": old, "new": new} for name, (old, new) in self.fields.items()},
            "via": list(self.via),
        }


@dataclass(frozen=True, slots=True)
class PolicyDiff:
    """Every difference between ``old`` and ``new`` that can change a decision or its wording."""

    old: CompiledPolicy
    new: CompiledPolicy
    packs_added: tuple[str, ...]
    packs_removed: tuple[str, ...]
    rules_added: tuple[CompiledRule, ...]
    rules_removed: tuple[CompiledRule, ...]
    rules_changed: tuple[RuleChange, ...]
    params: tuple[tuple[str, Any, Any], ...]  #: ("pack.key", old, new); None where absent
    variables: tuple[tuple[str, str | None, str | None], ...]  #: ("pack.name", old, new)
    settings: tuple[tuple[str, Any, Any], ...]  #: engine, shadow, default decision
    #: Why the change may let through what ``old`` stopped: the same judgement ``policy-log`` makes
    #: of a reload (:mod:`dsh_policy.policy.runtime.policy_changes`); empty when it does not weaken.
    weakened: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        """Whether both sides are the same effective policy (same digest)."""
        return self.old.digest == self.new.digest

    @property
    def exit_code(self) -> int:
        """``diff``'s exit code: 0 the same policy, 1 different."""
        return 0 if self.identical else 1

    def to_json(self) -> dict[str, Any]:
        """The JSON document of ``dsh-policy diff --format json``."""
        return {
            "identical": self.identical,
            "old": _side(self.old),
            "new": _side(self.new),
            "packs": {"added": list(self.packs_added), "removed": list(self.packs_removed)},
            "rules": {
                "added": [rule_view(rule) | {"id": rule.id} for rule in self.rules_added],
                "removed": [rule_view(rule) | {"id": rule.id} for rule in self.rules_removed],
                "changed": [change.to_json() for change in self.rules_changed],
            },
            "params": [{"param": name, "old": old, "new": new} for name, old, new in self.params],
            "variables": [{"variable": name, "old": old, "new": new} for name, old, new in self.variables],
            "settings": [{"setting": name, "old": old, "new": new} for name, old, new in self.settings],
            "weakening": bool(self.weakened),
            "weakened": list(self.weakened),
            "summary": {
                "rules_added": len(self.rules_added),
                "rules_removed": len(self.rules_removed),
                "rules_changed": len(self.rules_changed),
                "params_changed": len(self.params),
                "variables_changed": len(self.variables),
            },
        }


def _side(policy: CompiledPolicy) -> dict[str, Any]:
    return {
        "digest": policy.digest,
        "engine": policy.engine_name,
        "packs": [{"name": pack.name, "path": pack.path, "digest": pack.digest} for pack in policy.packs],
        "rules": len(policy.rules),
    }


def decision_word(rule: CompiledRule) -> str:
    """What a rule does, in the words a pack uses (``redact``/``context`` for rules with no
    ``decision:``)."""
    if rule.effect == "accept":
        return "redact" if rule.redactions else "context"
    if rule.effect == "enter":
        return "context"
    return rule.effect


def rule_view(rule: CompiledRule) -> dict[str, Any]:
    """The fields of a rule a reader compares, as plain JSON."""
    return {
        "stage": rule.stage,
        "match": list(rule.tools) if rule.tools is not None else None,
        "when": rule.when.source if rule.when is not None else None,
        "decision": decision_word(rule),
        "mode": rule.mode,
        "on_error": rule.on_error,
        "redact": [
            {"preset": step.preset}
            if step.preset is not None
            else {"pattern": step.pattern.pattern, "replace": step.replace}
            for step in rule.redactions
        ],
        "context": rule.context,
        "message": rule.message,
        "message_expression": rule.message_expression.source if rule.message_expression else None,
        "description": rule.description,
    }


def diff_policies(old: CompiledPolicy, new: CompiledPolicy) -> PolicyDiff:
    """Compare two compiled policies (see the module docstring)."""
    old_packs = {pack.name: pack for pack in old.packs}
    new_packs = {pack.name: pack for pack in new.packs}
    params = _param_changes(old_packs, new_packs)
    variables = _variable_changes(old_packs, new_packs)
    old_rules = {rule.id: rule for rule in old.rules}
    new_rules = {rule.id: rule for rule in new.rules}
    changed: list[RuleChange] = []
    for rule_id, rule in new_rules.items():
        before = old_rules.get(rule_id)
        if before is None:
            continue
        view_old, view_new = rule_view(before), rule_view(rule)
        fields = {
            name: (view_old[name], view_new[name]) for name in RULE_FIELDS if view_old[name] != view_new[name]
        }
        via = _via(rule, new_packs.get(rule_id.split("/", 1)[0]), params, variables)
        if fields or via:
            changed.append(RuleChange(rule_id, fields, via))
    settings = [
        (name, before, after)
        for name, before, after in (
            ("engine", old.engine_name, new.engine_name),
            ("shadow", old.shadow, new.shadow),
            ("default_decision", old.default_decision, new.default_decision),
        )
        if before != after
    ]
    return PolicyDiff(
        old=old,
        new=new,
        packs_added=tuple(name for name in new_packs if name not in old_packs),
        packs_removed=tuple(name for name in old_packs if name not in new_packs),
        rules_added=tuple(rule for rule_id, rule in new_rules.items() if rule_id not in old_rules),
        rules_removed=tuple(rule for rule_id, rule in old_rules.items() if rule_id not in new_rules),
        rules_changed=tuple(changed),
        params=tuple(params),
        variables=tuple(variables),
        settings=tuple(settings),
        weakened=_weakened(old, new),
    )


def _weakened(old: CompiledPolicy, new: CompiledPolicy) -> tuple[str, ...]:
    """``policy-log``'s judgement of the change. The protected paths are left out: they are where
    each side's files live (two files compared always differ there), not what the rules enforce."""
    before, after = policy_summary(old), policy_summary(new)
    before["self_protection"] = after["self_protection"] = None
    return diff_summaries(before, after).weakened


def _param_changes(
    old: Mapping[str, CompiledPack], new: Mapping[str, CompiledPack]
) -> list[tuple[str, Any, Any]]:
    found: list[tuple[str, Any, Any]] = []
    for name in [*old, *(name for name in new if name not in old)]:
        before = thaw(old[name].activation_params) if name in old else {}
        after = thaw(new[name].activation_params) if name in new else {}
        if name not in old or name not in new:
            continue  # a whole pack added or removed is reported as such
        for key in [*before, *(key for key in after if key not in before)]:
            if before.get(key, ABSENT) != after.get(key, ABSENT):
                found.append((f"{name}.{key}", before.get(key, ABSENT), after.get(key, ABSENT)))
    return found


def _variable_changes(
    old: Mapping[str, CompiledPack], new: Mapping[str, CompiledPack]
) -> list[tuple[str, str | None, str | None]]:
    found: list[tuple[str, str | None, str | None]] = []
    for name, pack in new.items():
        before = old.get(name)
        if before is None:
            continue
        for variable in [*before.variables, *(v for v in pack.variables if v not in before.variables)]:
            old_source = before.variables[variable].source if variable in before.variables else None
            new_source = pack.variables[variable].source if variable in pack.variables else None
            if old_source != new_source:
                found.append((f"{name}.{variable}", old_source, new_source))
    return found


def _via(
    rule: CompiledRule,
    pack: CompiledPack | None,
    params: Sequence[tuple[str, Any, Any]],
    variables: Sequence[tuple[str, str | None, str | None]],
) -> tuple[str, ...]:
    """Changed variables and params the rule's condition reads (directly or through variables)."""
    if pack is None or rule.when is None:
        return ()
    prefix = pack.name + "."
    changed_vars = {name[len(prefix) :] for name, _, _ in variables if name.startswith(prefix)}
    changed_params = {name[len(prefix) :] for name, _, _ in params if name.startswith(prefix)}
    sources = [rule.when.source] + [
        pack.variables[name].source for name in rule.when.variables if name in pack.variables
    ]
    via: list[str] = [f"vars.{name}" for name in rule.when.variables if name in changed_vars]
    for source in sources:
        for match in _PARAM_REF.finditer(source):
            key = match.group(1) or match.group(2)
            if key in changed_params and f"params.{key}" not in via:
                via.append(f"params.{key}")
    return tuple(via)
