"""Rule pack files -> a :class:`CompiledPolicy`, in one all-or-nothing step.

Both the decision API (``Policy.load``) and the deployment file (``config.PolicySources``) build
policies here, so neither has to call the other.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from os import PathLike
from typing import TYPE_CHECKING, Any

from dsh_policy.policy.compiled import CompiledPolicy
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.policy_cache import Lookup, keep, lookup

if TYPE_CHECKING:  # the builders are imported when a build runs: a policy read back from the
    # cache needs neither the YAML reader, the schema, the models nor the CEL parser and checker
    from dsh_policy.policy.cel.engine import CelEngine
    from dsh_policy.policy.params import ParamOrigin


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """Why a policy could not be loaded: every error, each ``FILE:LINE:COL: message`` (and the
    type checker's warnings, which alone never fail a load)."""

    errors: tuple[PolicyError, ...]
    warnings: tuple[PolicyError, ...] = ()

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)


@dataclass(frozen=True, slots=True)
class PackInfo:
    """What the audit log and ``check`` report about a loaded pack."""

    path: str
    name: str
    digest: str


def build_policy(
    paths: Sequence[str | PathLike[str]],
    *,
    params: Mapping[str, Any] | None = None,
    engine: CelEngine | str = "auto",
    shadow: bool = False,
    param_origins: Mapping[str, ParamOrigin] | None = None,
    protection: Any = None,
    cache: bool = True,
) -> CompiledPolicy | LoadFailure:
    """Load and compile packs in one step (all-or-nothing); ``protection`` (a deployment's
    ``SelfProtection``) is attached to the result, see :func:`with_protection`. ``cache``: read
    a verified compiled policy kept by an earlier build of the same bytes, and keep this one
    (:mod:`~dsh_policy.policy.policy_cache`; ``DSH_POLICY_COMPILE_CACHE=off`` turns it off)."""
    with _collector_paused():
        names = [str(path) for path in paths]
        found = (
            lookup(
                names, params=params or {}, param_origins=param_origins or {}, engine=engine, shadow=shadow
            )
            if cache
            else Lookup(None)
        )
        if found.policy is not None:
            policy: CompiledPolicy = found.policy
            return policy if protection is None else with_protection(policy, protection)
        trees: dict[str, Any] | None = {} if found.key is not None else None
        built = _build_policy(names, params, engine, shadow, param_origins, trees)
        if not isinstance(built, CompiledPolicy):
            return built
        if trees is not None:
            keep(found, built, trees)  # the packs' policy: protection is the deployment's, added after
        return built if protection is None else with_protection(built, protection)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a policy is built: a load allocates tens of
    thousands of short-lived objects (YAML nodes, parse trees) that reference counting frees,
    and the collector's passes over them were a third of the CPU of loading 1,000 rules. It is
    switched back on after (unless the embedding program had it off), and collects as usual."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _build_policy(
    paths: Sequence[str | PathLike[str]],
    params: Mapping[str, Any] | None,
    engine: CelEngine | str,
    shadow: bool,
    param_origins: Mapping[str, ParamOrigin] | None,
    trees: dict[str, Any] | None = None,
) -> CompiledPolicy | LoadFailure:
    from dsh_policy.policy.compile import compile_policy
    from dsh_policy.policy.pack import load_packs

    loaded = load_packs([str(path) for path in paths])
    if not loaded.ok:
        # Still compile what did load, only to report its CEL errors in the same run.
        diagnosis = compile_policy(loaded.diagnosable, engine=engine) if loaded.diagnosable else None
        extra = diagnosis.errors if diagnosis is not None else ()
        warnings = diagnosis.warnings if diagnosis is not None else ()
        errors = sorted(set(loaded.errors) | {e for e in extra if e.file != "--engine"})
        return LoadFailure(tuple(errors), warnings)
    compiled = compile_policy(
        loaded.packs, engine=engine, params=params, param_origins=param_origins, shadow=shadow, trees=trees
    )
    if compiled.policy is None:
        return LoadFailure(compiled.errors, compiled.warnings)
    # Imported here: examples are decided by the Decider, whose module loads policies from here.
    from dsh_policy.policy.examples import check_examples

    failed = check_examples(compiled.policy, loaded.packs)
    if failed:
        return LoadFailure(tuple(sorted(failed)), compiled.warnings)
    return compiled.policy


def with_protection(compiled: CompiledPolicy, protection: Any) -> CompiledPolicy:
    """``compiled`` with a deployment's self-protection attached. On (the default), the digest
    stays the packs' own, so it is the same on every machine whatever paths were derived there
    (the ``policy_loaded`` summary lists them); switched off, the digest changes, so every record
    decided without it names a different policy."""
    if protection.enabled:
        return replace(compiled, protection=protection)
    from dsh_policy.policy.pack import canonical_digest

    digest = canonical_digest({"policy": compiled.digest, "self_protection": "off"})
    return replace(compiled, protection=protection, digest=digest)
