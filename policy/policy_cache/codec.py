"""A compiled policy as plain JSON and back: what the cache keeps instead of the packs' text.

Kept: every field of the policy, its packs and rules that is a value (ids, stages, modes,
messages, params, the digest, the type checker's warnings and coverage branches), and for each
CEL expression the parse tree the closure compiler walked (after ``analyze``'s rewrites) with
what it reads (and whether it calls a gateway helper). Rebuilding skips the YAML, the schema, the
CEL parser, the type checker and the inline examples, all of which the entry's build passed with
the same sources and code. Each tree is compiled to closures again (closures cannot be stored)
on its first evaluation, as :mod:`.kept_expression` describes (one that no longer compiled would
fail every decision reaching it closed), and comes back as
:mod:`~dsh_policy.policy.cel.tree_shape`'s stand-ins (reading one back imports no lark); the
patterns that build already compiled (constant ``matches`` patterns, ``match.programs`` globs)
are compiled on their first use too.

Only policies whose every expression runs on the closure compiler are kept (an expression on the
native runtime has no tree to store); :func:`encode` returns None for the others.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import orjson
from dsh_policy.cmdline.lazy_regex import lazy_compile
from dsh_policy.core.frozen import thaw
from dsh_policy.policy.cel.branches import Branch
from dsh_policy.policy.cel.engine import MemberRead, Reads
from dsh_policy.policy.cel.functions import compile_re2
from dsh_policy.policy.cel.tree_shape import StoredToken
from dsh_policy.policy.compiled import (
    CompiledExpr,
    CompiledPack,
    CompiledPolicy,
    CompiledRule,
    Redaction,
    StageIndex,
    index_stage,
)
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.policy_cache.kept_expression import KeptExpression
from dsh_policy.policy.stages import STAGES

if TYPE_CHECKING:
    import lark


class Unusable(Exception):
    """The entry cannot be rebuilt (a shape this code never writes): build from the packs."""


# --- trees ----------------------------------------------------------------------------------------


def _tree_out(node: lark.Tree | lark.Token) -> Any:
    """A tree as nested lists, ``[data, child...]``; a token as the string ``TYPE:value`` (token
    types are upper-case names, never holding a colon)."""
    if isinstance(node, str):
        if ":" in node.type:
            raise Unusable(f"a token type with a colon: {node.type!r}")
        return f"{node.type}:{node}"
    return [str(node.data), *(_tree_out(child) for child in node.children)]


# --- writing --------------------------------------------------------------------------------------


def encode(policy: CompiledPolicy, trees: dict[str, lark.Tree]) -> bytes | None:
    """``policy`` as the bytes of an entry; None when it cannot be kept (an expression not on the
    closure compiler, or params that would not read back the same from JSON)."""
    try:
        packs = [
            {
                "name": pack.name,
                "path": pack.path,
                "digest": pack.digest,
                "params": _same_from_json(dict(pack.params)),
                "variables": {name: _expr_out(expr, trees) for name, expr in pack.variables.items()},
                "default_decision": pack.default_decision,
            }
            for pack in policy.packs
        ]
        rules = [_rule_out(rule, trees) for rule in policy.rules]
    except Unusable:
        return None
    body = {
        "packs": packs,
        "rules": rules,
        "engine_name": policy.engine_name,
        "shadow": policy.shadow,
        "digest": policy.digest,
        "default_decision": policy.default_decision,
        "warnings": [[w.file, w.line, w.col, w.message, w.source_line] for w in policy.warnings],
    }
    return orjson.dumps(body)


def _same_from_json(value: Any) -> Any:
    if orjson.loads(orjson.dumps(value)) != value:
        raise Unusable("params that JSON does not carry as they are")
    return value


def _expr_out(expr: CompiledExpr | None, trees: dict[str, lark.Tree]) -> Any:
    if expr is None:
        return None
    from dsh_policy.policy.cel.closure_engine import ClosureCompiledExpression

    program = expr.program
    tree = trees.get(program.source)
    if type(program) is not ClosureCompiledExpression or tree is None:
        raise Unusable("an expression the closure compiler does not run")
    return {
        "source": program.source,
        "tree": _tree_out(tree),
        "members": [[read.root, read.member, read.offset] for read in program.reads.members],
        "whole": sorted(program.reads.whole),
        "references": sorted(program.references),
        "helpers": program.calls_helpers,
        "names": sorted(expr.names),
        "variables": list(expr.variables),
        "branches": [[b.function, b.offset, b.start] for b in expr.branches],
        "exists_over": expr.exists_over,
    }


def _rule_out(rule: CompiledRule, trees: dict[str, lark.Tree]) -> dict[str, Any]:
    return {
        "id": rule.id,
        "pack_index": rule.pack_index,
        "ordinal": rule.ordinal,
        "stage": rule.stage,
        "mode": rule.mode,
        "on_error": rule.on_error,
        "effect": rule.effect,
        "tools": list(rule.tools) if rule.tools is not None else None,
        "when": _expr_out(rule.when, trees),
        "message": rule.message,
        "message_expression": _expr_out(rule.message_expression, trees),
        "redactions": [
            [r.preset, r.pattern.pattern if r.pattern is not None else None, r.replace]
            for r in rule.redactions
        ],
        "context": rule.context,
        "description": rule.description,
        "reads": sorted(rule.reads),
        "programs": rule.programs.pattern if rule.programs is not None else None,
    }


# --- reading --------------------------------------------------------------------------------------


def decode(body: bytes) -> CompiledPolicy:
    """The policy an entry holds; :class:`Unusable` (or any exception: the caller rebuilds)
    when it does not rebuild."""
    data = orjson.loads(body)
    tokens: dict[str, StoredToken] = {}
    packs = tuple(
        CompiledPack(
            name=pack["name"],
            path=pack["path"],
            digest=pack["digest"],
            params=MappingProxyType(dict(pack["params"])),
            variables=MappingProxyType({n: _variable_in(e, tokens) for n, e in pack["variables"].items()}),
            default_decision=pack["default_decision"],
            activation_params=thaw(pack["params"]),
        )
        for pack in data["packs"]
    )
    rules = tuple(_rule_in(rule, tokens) for rule in data["rules"])
    stages: dict[str, StageIndex] = {
        stage: index_stage([r for r in rules if r.stage == stage]) for stage in STAGES
    }
    return CompiledPolicy(
        packs=packs,
        rules=rules,
        stages=MappingProxyType(stages),
        engine_name=data["engine_name"],
        shadow=data["shadow"],
        digest=data["digest"],
        default_decision=data["default_decision"],
        warnings=tuple(PolicyError(*warning) for warning in data["warnings"]),
        converting=False,  # every program is a closure, which reads activations as they are
    )


def _expr_in(value: Any, tokens: dict[str, StoredToken]) -> CompiledExpr | None:
    if value is None:
        return None
    reads = Reads(tuple(MemberRead(*read) for read in value["members"]), frozenset(value["whole"]))
    program = KeptExpression(
        value["source"],
        value["tree"],
        reads,
        frozenset(value["references"]),
        bool(value["helpers"]),
        tokens,
    )
    return CompiledExpr(
        program,
        frozenset(value["names"]),
        tuple(value["variables"]),
        tuple(Branch(*branch) for branch in value["branches"]),
        value["exists_over"],
    )


def _variable_in(value: Any, tokens: dict[str, StoredToken]) -> CompiledExpr:
    expr = _expr_in(value, tokens)
    if expr is None:
        raise Unusable("a variable without an expression")
    return expr


def _rule_in(value: dict[str, Any], tokens: dict[str, StoredToken]) -> CompiledRule:
    redactions = tuple(
        Redaction(preset, None, replace)
        if preset is not None
        else Redaction(None, compile_re2(pattern), replace)
        for preset, pattern, replace in value["redactions"]
    )
    return CompiledRule(
        id=value["id"],
        pack_index=value["pack_index"],
        ordinal=value["ordinal"],
        stage=value["stage"],
        mode=value["mode"],
        on_error=value["on_error"],
        effect=value["effect"],
        tools=tuple(value["tools"]) if value["tools"] is not None else None,
        when=_expr_in(value["when"], tokens),
        message=value["message"],
        message_expression=_expr_in(value["message_expression"], tokens),
        redactions=redactions,
        context=value["context"],
        description=value["description"],
        reads=frozenset(value["reads"]),
        programs=lazy_compile(value["programs"]) if value["programs"] is not None else None,
    )
