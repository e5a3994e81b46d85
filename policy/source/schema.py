"""Shipped JSON Schemas and their errors translated for people, each at FILE:LINE:COL.

Every document a user writes (rule packs, cases files, deployment files, session scripts) is first
validated against its schema in this folder; jsonschema's messages are rewritten into sentences
that name the field, the allowed values and a close spelling when there is one.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from dsh_policy.policy.errors import PolicyError
from dsh_policy.policy.source.yaml_source import SourceMap


@cache
def _packaged_schema(name: str) -> Any:
    return json.loads(resources.files("dsh_policy.policy.source").joinpath(name).read_text("utf-8"))


def rulepack_schema() -> dict[str, Any]:
    """The shipped JSON Schema of a rule pack (``policy/source/rulepack.schema.json``)."""
    schema: dict[str, Any] = _packaged_schema("rulepack.schema.json")
    return schema


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    """A validator for a shipped schema; ``file.json#name`` validates against its ``$defs/name``."""
    file, _, definition = name.partition("#")
    schema = _packaged_schema(file)
    if definition:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
        for key in ("type", "required", "properties", "additionalProperties"):
            schema.pop(key, None)
    return jsonschema.Draft202012Validator(schema)


def format_path(path: Sequence[str | int]) -> str:
    """``("spec", "rules", 2, "when")`` -> ``spec.rules[2].when``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "document"


_TYPE_WORDS = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "a list",
    dict: "a mapping",
    type(None): "null",
}


def _describe_type(value: Any) -> str:
    return _TYPE_WORDS.get(type(value), type(value).__name__)


def suggest_spelling(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def schema_errors(
    document: Any, source: SourceMap, file: str, schema_name: str = "rulepack.schema.json"
) -> list[PolicyError]:
    """Validate ``document`` against a shipped schema; every error, translated for people."""
    return [error for _, error in schema_issues(document, source, file, schema_name)]


def schema_issues(
    document: Any, source: SourceMap, file: str, schema_name: str
) -> list[tuple[tuple[str | int, ...], PolicyError]]:
    """Like :func:`schema_errors`, with the JSON path of the node each error is about."""
    errors: list[tuple[tuple[str | int, ...], PolicyError]] = []
    for error in _leaf_errors(_validator(schema_name).iter_errors(document)):
        path: tuple[str | int, ...] = tuple(error.absolute_path)
        where = format_path(path)
        kind = error.validator
        if kind == "additionalProperties" and isinstance(error.instance, dict):
            allowed = list(error.schema.get("properties", {}))
            for key in error.instance:
                if key in allowed:
                    continue
                line, col = source.key_position((*path, key))
                hint = suggest_spelling(key, allowed) or f" (allowed: {', '.join(allowed)})"
                errors.append((path, PolicyError(file, line, col, f"{where}: unknown key {key!r}{hint}")))
            continue
        line, col = source.value_position(path)
        if kind == "required":
            missing = [key for key in error.validator_value if key not in error.instance]
            message = f"{where}: missing required key {', '.join(map(repr, missing))}"
        elif kind == "type":
            wanted = error.validator_value
            message = (
                f"{where}: expected {_TYPE_WORDS.get(_SCHEMA_TYPES.get(wanted, str), wanted)}, "
                f"got {_describe_type(error.instance)}"
            )
            if wanted == "string" and isinstance(error.instance, bool | int | float):
                # YAML 1.1 reads unquoted no/yes/on/off as booleans and 1.0 as a number.
                message += "; quote the value to make it a string"
        elif kind == "enum":
            options = [str(option) for option in error.validator_value]
            hint = suggest_spelling(str(error.instance), options)
            message = f"{where}: {error.instance!r} is not one of {', '.join(options)}{hint}"
        elif kind in ("anyOf", "oneOf"):
            wanted_types = [
                _TYPE_WORDS.get(_SCHEMA_TYPES.get(sub.validator_value, str), str(sub.validator_value))
                for sub in error.context or ()
                if sub.validator == "type"
            ]
            wanted_text = " or ".join(dict.fromkeys(wanted_types))
            message = f"{where}: expected {wanted_text}, got {_describe_type(error.instance)}"
        elif kind == "const":
            message = f"{where}: expected {error.validator_value!r}, got {error.instance!r}"
        elif kind in ("minItems", "minLength"):
            message = f"{where}: must not be empty"
        elif kind == "pattern":
            message = f"{where}: {error.instance!r} is not a valid name (allowed: {error.validator_value})"
        else:
            message = f"{where}: {error.message}"
        errors.append((path, PolicyError(file, line, col, message)))
    # One fault can fail several branches of a schema (a case's ``stage`` is required by the case
    # and by each stage's own branch): report it once.
    return list(dict.fromkeys(errors))


def _leaf_errors(errors: Iterable[Any]) -> Iterable[Any]:
    """Errors, with an ``anyOf``/``oneOf`` failure replaced by the errors of the alternatives
    whose type fits the value (a rule example given as a mapping: what is wrong in the mapping,
    not "not valid under any of the given schemas")."""
    for error in errors:
        if error.validator not in ("anyOf", "oneOf") or not error.context:
            yield error
            continue
        branches: dict[object, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        fitting = [
            found
            for found in branches.values()
            if not any(sub.validator == "type" and sub.absolute_path == error.absolute_path for sub in found)
        ]
        if fitting:
            yield from _leaf_errors(sub for found in fitting for sub in found)
        else:
            yield error


_SCHEMA_TYPES: dict[str, type] = {
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": float,
    "array": list,
    "object": dict,
    "null": type(None),
}
