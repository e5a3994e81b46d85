"""JSON Schema validation for tool arguments and outputs, planned once per schema.

``jsonschema`` walks the schema on every call, which dominates the pipeline's own cost. Tool
schemas are nearly always the plain subset below, so a schema made only of these keywords is
compiled once into nested closures that answer "valid?" quickly. ``jsonschema`` stays the
authority: it checks every schema at definition time, validates schemas outside the subset, and
produces the error message whenever the fast check says no (a "no" from the fast path is always
re-asked, so it can never reject what ``jsonschema`` accepts).

Frozen values validate as their JSON shapes: tuples are arrays and Mappings are objects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators

Check = Callable[[Any], bool]

#: Keywords that only annotate; they never change validity.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "$schema", "format", "deprecated",
     "readOnly", "writeOnly"}
)
_SUPPORTED = _ANNOTATIONS | {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minItems", "maxItems",
}


def _lenient_validator_class() -> Any:
    checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "array": lambda _checker, value: isinstance(value, list | tuple),
            "object": lambda _checker, value: isinstance(value, Mapping),
        }
    )
    return validators.extend(Draft202012Validator, type_checker=checker)


LenientValidator: Any = _lenient_validator_class()


class SchemaValidator:
    """Validates instances against one schema; ``problem`` names the first violation or is None."""

    __slots__ = ("_fast", "_validator")

    def __init__(self, schema: Any) -> None:
        LenientValidator.check_schema(schema)
        self._validator = LenientValidator(schema)
        self._fast = compile_check(schema)

    def problem(self, instance: Any) -> str | None:
        """``$.path: message`` for the first violation, or None when the instance is valid."""
        if self._fast is not None and self._fast(instance):
            return None
        error = next(iter(self._validator.iter_errors(instance)), None)
        if error is None:
            return None
        location = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        return f"{location}: {error.message}"


class _Unsupported(Exception):
    """The schema uses something outside the fast subset."""


def compile_check(schema: Any) -> Check | None:
    """A fast validity check for schemas inside the supported subset, else None."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


def _compile(schema: Any) -> Check:
    if schema is True:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, Mapping) or not set(schema) <= _SUPPORTED:
        raise _Unsupported
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list | tuple) else [schema["type"]]
        testers = [_TYPES[name] for name in names]
        checks.append(testers[0] if len(testers) == 1 else lambda v: any(test(v) for test in testers))
    if "enum" in schema:
        options = list(schema["enum"])
        checks.append(lambda v: any(json_equal(v, option) for option in options))
    if "const" in schema:
        constant = schema["const"]
        checks.append(lambda v: json_equal(v, constant))
    object_check = _object_check(schema)
    if object_check is not None:
        checks.append(object_check)
    items_check = _array_check(schema)
    if items_check is not None:
        checks.append(items_check)
    checks.extend(_string_checks(schema))
    checks.extend(_number_checks(schema))
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(check(v) for check in checks)


def _object_check(schema: Mapping[str, Any]) -> Check | None:
    if not any(k in schema for k in ("properties", "required", "additionalProperties")):
        return None
    properties = {name: _compile(sub) for name, sub in (schema.get("properties") or {}).items()}
    required = tuple(schema.get("required") or ())
    extra = _compile(schema["additionalProperties"]) if "additionalProperties" in schema else None

    def check(value: Any) -> bool:
        if not isinstance(value, Mapping):
            return True
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            sub = properties.get(name)
            if sub is not None:
                if not sub(item):
                    return False
            elif extra is not None and not extra(item):
                return False
        return True

    return check


def _array_check(schema: Mapping[str, Any]) -> Check | None:
    if not any(k in schema for k in ("items", "minItems", "maxItems")):
        return None
    item_check = _compile(schema["items"]) if "items" in schema else None
    low = schema.get("minItems", 0)
    high = schema.get("maxItems", math.inf)

    def check(value: Any) -> bool:
        if not isinstance(value, list | tuple):
            return True
        if not low <= len(value) <= high:
            return False
        return item_check is None or all(item_check(item) for item in value)

    return check


def _string_checks(schema: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    low = schema.get("minLength", 0)
    high = schema.get("maxLength", math.inf)
    if "minLength" in schema or "maxLength" in schema:
        checks.append(lambda v: not isinstance(v, str) or low <= len(v) <= high)
    if "pattern" in schema:
        pattern = re.compile(schema["pattern"])
        checks.append(lambda v: not isinstance(v, str) or pattern.search(v) is not None)
    return checks


def _number_checks(schema: Mapping[str, Any]) -> list[Check]:
    return [_bound_check(holds, schema[keyword]) for keyword, holds in _BOUNDS.items() if keyword in schema]


def _bound_check(holds: Callable[[Any, Any], bool], bound: Any) -> Check:
    return lambda v: not _is_number(v) or holds(v, bound)


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda v, b: bool(v >= b),
    "maximum": lambda v, b: bool(v <= b),
    "exclusiveMinimum": lambda v, b: bool(v > b),
    "exclusiveMaximum": lambda v, b: bool(v < b),
}


def json_equal(left: Any, right: Any) -> bool:
    """JSON equality: booleans are not numbers, arrays and objects compare element-wise."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, str) or isinstance(right, str):
        return left == right
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple | Mapping) or isinstance(right, list | tuple | Mapping):
        return False
    return bool(left == right)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list | tuple),
    "object": lambda v: isinstance(v, Mapping),
}
