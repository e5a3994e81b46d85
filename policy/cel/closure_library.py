"""The closure compiler's function library: every CEL function it binds, by the name a call uses.

The functions themselves live by concern: :mod:`.closure_operators` (operators, ``size``, the
string tests), :mod:`.closure_conversions` (``int()``... and base64), :mod:`.closure_time`
(timestamps, durations, their accessors), :mod:`.closure_optionals`, :mod:`.closure_math` and
:mod:`.closure_strings` (the strings extension). The gateway helpers
(:data:`~dsh_policy.policy.cel.functions.CEL_FUNCTIONS`) are bound by the compiler on their own,
since they read the stage deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from dsh_policy.policy.cel import closure_conversions as conversions
from dsh_policy.policy.cel import closure_operators as operators
from dsh_policy.policy.cel import closure_optionals as optionals
from dsh_policy.policy.cel import closure_strings, closure_time
from dsh_policy.policy.cel.closure_math import MATH_FUNCTIONS
from dsh_policy.policy.cel.closure_values import OPTIONAL_NONE

NAMESPACES: Final = frozenset({"math", "base64", "optional", "strings", "cel"})
"""Qualifiers of namespaced functions (``math.greatest(...)``), unless a variable shadows them."""

GLOBAL_FUNCTIONS: Final[Mapping[str, Callable[..., Any]]] = {
    "size": operators.size,
    "int": conversions.to_int,
    "uint": conversions.to_uint,
    "double": conversions.to_double,
    "string": conversions.to_string,
    "bytes": conversions.to_bytes,
    "bool": conversions.to_bool,
    "type": conversions.to_type,
    "dyn": conversions.dyn,
    "timestamp": closure_time.to_timestamp,
    "duration": closure_time.to_duration,
    **MATH_FUNCTIONS,
    "base64.encode": conversions.base64_encode,
    "base64.decode": conversions.base64_decode,
    "optional.of": optionals.optional_of,
    "optional.ofNonZeroValue": optionals.optional_of_non_zero,
    "optional.none": lambda: OPTIONAL_NONE,
    "strings.quote": closure_strings.quote,
}
"""Functions called globally (``int(x)``, ``math.abs(x)``), by name or qualified name."""

METHODS: Final[Mapping[str, Callable[..., Any]]] = {
    "contains": operators.contains,
    "startsWith": operators.starts_with,
    "endsWith": operators.ends_with,
    "size": operators.size,
    **closure_time.TIME_GETTERS,
    "hasValue": optionals.optional_has_value,
    "value": optionals.optional_value,
    "or": optionals.optional_or,
    "orValue": optionals.optional_or_value,
    **closure_strings.METHODS,
}
"""Receiver-style functions (``s.contains(x)``); most also work called globally with the
receiver first, as cel-python accepts (``contains(s, x)``)."""

MACROS: Final = frozenset(
    {"all", "exists", "exists_one", "existsOne", "map", "filter", "transformList", "transformMap",
     "transformMapEntry", "optMap", "optFlatMap"}
)  # fmt: skip
"""Methods whose arguments are a variable name and expressions evaluated per element."""
