"""What changed between two policies, and whether the change weakens enforcement.

A reload (or, for per-process hooks, a policy that differs from the last one recorded) must not be
silent: the audit log's ``policy_loaded`` record carries a :func:`policy_summary` of the policy put
in force and the :class:`PolicyChanges` from the one before, with ``weakening`` set when the change
can let through something the previous policy stopped. ``dsh-policy policy-log`` lists them all
from a log, recomputing each change from consecutive summaries, so an auditor sees "enforcement
weakened at seq N" without trusting whoever wrote the record.

Summaries are plain JSON (what a record holds), and :func:`diff_summaries` works on them alone, so
the comparison needs no compiled policy. Weakening, conservatively: an enforced rule removed or
moved to ``warn``/``audit``; ``on_error`` from ``deny`` to ``ignore``; a pack removed; a pack's
default decision loosened (deny > ask > allow); shadow mode switched on; self-protection switched
off or a protected path dropped. A rule whose condition, tools, effect or params changed is a
*change* whose direction cannot be told from the outside: it is listed, and marked weakening too
(a narrower ``when`` is the commonest way to turn a deny into an allow).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_DECISION_ORDER = {"deny": 0, "ask": 1, "allow": 2}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def policy_summary(compiled: Any) -> dict[str, Any]:
    """The parts of a ``CompiledPolicy`` that decide how strict it is, as plain JSON."""
    rules: dict[str, Any] = {}
    for rule in compiled.rules:
        rules[rule.id] = {
            "stage": rule.stage,
            "mode": rule.mode,
            "effect": rule.effect,
            "on_error": rule.on_error,
            "tools": list(rule.tools) if rule.tools is not None else None,
            "when": _digest(rule.when.source) if rule.when is not None else None,
        }
    protection = getattr(compiled, "protection", None)
    return {
        "digest": compiled.digest,
        "engine": compiled.engine_name,
        "shadow": compiled.shadow,
        "packs": {
            pack.name: {
                "digest": pack.digest,
                "path": pack.path,
                "default_decision": pack.default_decision,
                "params": _digest(pack.activation_params),
            }
            for pack in compiled.packs
        },
        "rules": rules,
        "self_protection": protection.summary() if protection is not None else None,
    }


@dataclass(frozen=True, slots=True)
class PolicyChanges:
    """The difference between two policy summaries; ``weakened`` says why it weakens, if it does."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    weakened: tuple[str, ...] = ()
    details: tuple[str, ...] = field(default=())

    @property
    def weakening(self) -> bool:
        """Whether the new policy may allow something the old one stopped."""
        return bool(self.weakened)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.details)

    def record(self) -> dict[str, Any]:
        """The ``changes`` field of a ``policy_loaded`` record."""
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "details": list(self.details),
            "weakening": self.weakening,
            "weakened": list(self.weakened),
        }

    def text(self) -> str:
        """One line for people."""
        parts = [*self.details]
        if self.added:
            parts.append("rules added: " + ", ".join(self.added))
        if self.removed:
            parts.append("rules removed: " + ", ".join(self.removed))
        if self.changed:
            parts.append("rules changed: " + ", ".join(self.changed))
        return "; ".join(parts) if parts else "no change in rules, modes, params or protection"


def diff_summaries(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> PolicyChanges:
    """How ``after`` differs from ``before`` (``None``: the first policy, nothing to compare)."""
    if before is None:
        return PolicyChanges()
    weakened: list[str] = []
    details: list[str] = []
    old_rules: Mapping[str, Any] = before.get("rules") or {}
    new_rules: Mapping[str, Any] = after.get("rules") or {}
    added = tuple(sorted(set(new_rules) - set(old_rules)))
    removed = tuple(sorted(set(old_rules) - set(new_rules)))
    for rule in removed:
        if old_rules[rule].get("mode") == "enforce":
            weakened.append(f"enforced rule {rule} removed")
    changed: list[str] = []
    for rule in sorted(set(old_rules) & set(new_rules)):
        old, new = old_rules[rule], new_rules[rule]
        if old == new:
            continue
        changed.append(rule)
        if old.get("mode") != new.get("mode"):
            details.append(f"{rule}: mode {old.get('mode')} -> {new.get('mode')}")
            if old.get("mode") == "enforce":
                weakened.append(f"{rule} no longer enforced ({new.get('mode')})")
        if old.get("on_error") != new.get("on_error"):
            details.append(f"{rule}: on_error {old.get('on_error')} -> {new.get('on_error')}")
            if new.get("on_error") == "ignore":
                weakened.append(f"{rule} ignores evaluation errors")
        for key in ("when", "tools", "effect", "stage"):
            if old.get(key) != new.get(key):
                details.append(f"{rule}: {key} changed")
                if old.get("mode") == "enforce":
                    weakened.append(f"{rule}: {key} changed")
    _compare_packs(before, after, weakened, details)
    if not before.get("shadow") and after.get("shadow"):
        details.append("shadow mode on")
        weakened.append("shadow mode on: no rule is enforced")
    elif before.get("shadow") and not after.get("shadow"):
        details.append("shadow mode off")
    if before.get("engine") != after.get("engine"):
        details.append(f"engine {before.get('engine')} -> {after.get('engine')}")
    _compare_protection(before.get("self_protection"), after.get("self_protection"), weakened, details)
    return PolicyChanges(added, removed, tuple(changed), tuple(dict.fromkeys(weakened)), tuple(details))


def _compare_packs(
    before: Mapping[str, Any], after: Mapping[str, Any], weakened: list[str], details: list[str]
) -> None:
    old_packs: Mapping[str, Any] = before.get("packs") or {}
    new_packs: Mapping[str, Any] = after.get("packs") or {}
    for name in sorted(set(old_packs) - set(new_packs)):
        details.append(f"pack {name} removed")
        weakened.append(f"pack {name} removed")
    for name in sorted(set(new_packs) - set(old_packs)):
        details.append(f"pack {name} added")
    for name in sorted(set(old_packs) & set(new_packs)):
        old, new = old_packs[name], new_packs[name]
        if old.get("params") != new.get("params"):
            details.append(f"pack {name}: params changed")
            weakened.append(f"pack {name}: params changed")
        old_default = _DECISION_ORDER.get(str(old.get("default_decision")), 0)
        new_default = _DECISION_ORDER.get(str(new.get("default_decision")), 0)
        if old_default != new_default:
            details.append(
                f"pack {name}: default decision {old.get('default_decision')} -> "
                f"{new.get('default_decision')}"
            )
            if new_default > old_default:
                weakened.append(f"pack {name}: default decision loosened")


def _compare_protection(before: Any, after: Any, weakened: list[str], details: list[str]) -> None:
    was_on = bool(before and before.get("enabled"))
    is_on = bool(after and after.get("enabled"))
    if was_on and not is_on:
        details.append("self-protection off")
        weakened.append("self-protection off")
    elif is_on and not was_on and before is not None:
        details.append("self-protection on")
    if was_on and is_on:
        dropped = sorted(set(before.get("paths") or ()) - set(after.get("paths") or ()))
        if dropped:
            details.append("protected paths dropped: " + ", ".join(dropped))
            weakened.append("protected paths dropped")
