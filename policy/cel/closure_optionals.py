"""CEL's optional values over the closure compiler's values: ``optional.of``,
``optional.ofNonZeroValue`` and the ``hasValue``/``value``/``or``/``orValue`` methods
(``optional.none()`` is :data:`~dsh_policy.policy.cel.closure_values.OPTIONAL_NONE`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_policy.policy.cel.closure_values import (
    CelError,
    Optional,
    Uint,
    overload_error,
)

# -- optionals ---------------------------------------------------------------------------------


def optional_of(value: Any) -> Optional:
    """``optional.of(x)``."""
    return Optional(True, value)


def optional_of_non_zero(value: Any) -> Optional:
    """``optional.ofNonZeroValue(x)``: none for the zero value of its type."""
    if value is None or value is False or (type(value) in (int, float, Uint) and value == 0):
        return Optional(False)
    if isinstance(value, str | bytes | list | tuple | Mapping) and len(value) == 0:
        return Optional(False)
    return Optional(True, value)


def _optional(function: str, value: Any) -> Optional:
    if type(value) is not Optional:
        raise overload_error(function, value)
    return value


def optional_has_value(value: Any) -> bool:
    """``opt.hasValue()``."""
    return _optional("hasValue", value).present


def optional_value(value: Any) -> Any:
    """``opt.value()``: an error when empty."""
    found = _optional("value", value)
    if not found.present:
        raise CelError("optional.none() has no value", "invalid_argument")
    return found.value


def optional_or(value: Any, other: Any) -> Optional:
    """``opt.or(other)``."""
    found = _optional("or", value)
    return found if found.present else _optional("or", other)


def optional_or_value(value: Any, other: Any) -> Any:
    """``opt.orValue(x)``."""
    found = _optional("orValue", value)
    return found.value if found.present else other
