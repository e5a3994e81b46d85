"""What decides whether a rule matches, as one digest per rule: the rule's match fingerprint.

Two rules with the same fingerprint give the same outcome on the same event: same stage, tool
globs, condition, the pack variables and params the condition reads, mode, on_error, effect and
redaction steps, and whether it adds a context. What only changes the wording (message,
description, the context's text) is left out, so rewording a rule does not make replay re-check it.

The gateway records every rule's fingerprint when a policy comes into force (``policy_loaded``);
replay compares them with the candidate's to know which rules a policy change left alone, and reuses
those rules' recorded outcomes instead of guessing at inputs the log holds only as digests. The CEL
engine and the helper functions (``shell.commands``, the secret detectors) are not part of it:
replay with ``--evaluate all`` re-checks them against the recorded decisions.

It is a property of a compiled policy, so it lives beside ``compile``: the runtime that records it
and the review that compares it both import it from here, so the runtime needs nothing of review.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import orjson
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.compiled import CompiledPack, CompiledPolicy, CompiledRule

__all__ = ["condition_reads", "match_fingerprint", "rule_fingerprints"]


def condition_reads(rule: CompiledRule, pack: CompiledPack) -> frozenset[str]:
    """Activation names (``session``, ``args``, ``result``, ``params``, ...) the rule's ``when``
    reads, directly or through the pack variables it uses; empty for a rule without ``when``.
    (``rule.reads`` also counts what ``message_expression`` reads, which never changes a match.)"""
    when = rule.when
    if when is None:
        return frozenset()
    names = set(when.names)
    for name in when.variables:
        variable = pack.variables.get(name)
        if variable is not None:
            names |= variable.names
    names.discard("vars")
    return frozenset(names)


def match_fingerprint(rule: CompiledRule, pack: CompiledPack) -> str:
    """``sha256:...`` over everything that decides whether and how ``rule`` matches."""
    when = rule.when
    reads = condition_reads(rule, pack)
    document = {
        "id": rule.id,
        "stage": rule.stage,
        "tools": list(rule.tools) if rule.tools is not None else None,
        "mode": rule.mode,
        "on_error": rule.on_error,
        "effect": rule.effect,
        "when": when.source if when is not None else None,
        "variables": {
            name: pack.variables[name].source
            for name in (when.variables if when else ())
            if name in pack.variables
        },
        "params": _plain(pack.activation_params) if "params" in reads else None,
        "redact": [
            [step.preset, step.pattern.pattern if step.pattern is not None else None, step.replace]
            for step in rule.redactions
        ],
        "context": rule.context is not None,
    }
    encoded = orjson.dumps(document, option=orjson.OPT_SORT_KEYS, default=str)
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


def rule_fingerprints(policy: CompiledPolicy) -> dict[str, str]:
    """Every rule's :func:`match_fingerprint`, by rule id, in load order."""
    return {rule.id: match_fingerprint(rule, policy.packs[rule.pack_index]) for rule in policy.rules}


def _plain(params: Mapping[str, object]) -> object:
    return thaw(params)
