"""Pack params: ``--param KEY=VALUE`` flags read, the type rules see as ``params``, and deployment
overrides merged into each declaring pack's params, keeping the declared type.

Its own module because the command line and the deployment file read and check params without
compiling anything (:mod:`dsh_policy.policy.compile` merges them as its first step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from dsh_policy.policy.cel.types import CelType, record, type_of_value, unify
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.pack import LoadedPack

__all__ = ["ParamOrigin", "merge_params", "params_type", "parse_param_flags", "with_article"]


def parse_param_flags(flags: Sequence[str]) -> tuple[dict[str, Any], list[PolicyError]]:
    """``--param KEY=VALUE`` flags; VALUE is read as a YAML scalar (``10`` is an int, ``[a, b]`` a
    list, ``'10'`` a string)."""
    params: dict[str, Any] = {}
    errors: list[PolicyError] = []
    for flag in flags:
        key, sep, raw = flag.partition("=")
        key = key.strip()
        if not sep or not key:
            errors.append(PolicyError("--param", 0, 0, f"{flag!r}: expected KEY=VALUE"))
            continue
        try:
            params[key] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            errors.append(PolicyError("--param", 0, 0, f"{key}: value is not valid YAML: {exc}"))
    return params, errors


def params_type(declared: Mapping[str, Any]) -> CelType:
    """The type rules see as ``params``: a map whose keys are the pack's declared params, each
    typed from its declared value (``5`` an int, ``[a, b]`` a list(string))."""
    return record("params", ((key, type_of_value(value)) for key, value in declared.items()))


def _keeping_type(declared: CelType, value: Any) -> Any:
    """``value`` with its integers made doubles where the declaration holds doubles (``ratio: 0.5``
    overridden with ``1``), so the param keeps its declared type at run time."""
    if declared.kind == "double" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if declared.kind == "list" and isinstance(value, list):
        return [_keeping_type(declared.args[0], item) for item in value]
    if declared.kind == "map" and isinstance(value, dict):
        return {key: _keeping_type(declared.args[1], item) for key, item in value.items()}
    return value


def _override_fits(declared: CelType, value: Any) -> bool:
    """Whether an override has the declared param's type (a declared ``null`` takes anything; a
    declared empty list, whose elements have no type yet, takes any list)."""
    if declared.kind == "dyn":
        return True
    actual = type_of_value(value)
    if declared.kind == "list" and declared.args[0].kind == "never":
        return actual.kind == "list"
    if value is None or actual.kind == "dyn":
        return False
    return unify(declared, actual, {})


def with_article(t: CelType) -> str:
    """A type's name with its article (``an int``, ``a list(string)``), for error messages."""
    text = str(t)
    return f"an {text}" if text[:1] in "aeio" else f"a {text}"


@dataclass(frozen=True, slots=True)
class ParamOrigin:
    """Where a param override was given, for error messages (``--param`` has no line: 0)."""

    file: str = "--param"
    line: int = 0
    col: int = 0

    def error(self, message: str) -> PolicyError:
        """A :class:`PolicyError` at this origin."""
        return PolicyError(self.file, self.line, self.col, message)


def merge_params(
    packs: Sequence[LoadedPack], overrides: Mapping[str, Any], origins: Mapping[str, ParamOrigin]
) -> tuple[list[dict[str, Any]], list[PolicyError]]:
    """Each pack's params with ``overrides`` applied where the pack declares the key, and an error
    (at its origin) for every override no pack declares or whose type does not fit."""
    errors: list[PolicyError] = []
    merged = [dict(pack.model.spec.params) for pack in packs]
    for key, value in overrides.items():
        declaring = [index for index, pack in enumerate(packs) if key in pack.model.spec.params]
        if not declaring:
            origin = origins.get(key, ParamOrigin())
            errors.append(origin.error(f"param {key!r} is not declared by any loaded pack"))
            continue
        for index in declaring:
            default = packs[index].model.spec.params[key]
            declared = type_of_value(default)
            kept = _keeping_type(declared, value)
            if not _override_fits(declared, kept):
                given = "null" if value is None else with_article(type_of_value(value))
                errors.append(
                    origins.get(key, ParamOrigin()).error(
                        f"param {key!r}: pack {packs[index].name} declares {with_article(declared)} "
                        f"({default!r}); the override {value!r} is {given}"
                    )
                )
                continue
            merged[index][key] = kept
    return merged, errors
