"""The closure compiler's comprehensions: ``all``, ``exists``, ``exists_one``, ``map``,
``filter`` and the ``transform*`` macros as loops over a list or a map.

All comprehensions of one evaluation share one budget of iterations and one deadline (slots
:data:`~.closure_nodes.BUDGET_SLOT` and :data:`~.closure_nodes.DEADLINE_SLOT` of its locals);
``all``/``exists`` absorb an error on one element when another decides, as CEL says.
"""

from __future__ import annotations

import time
from typing import Any

from dsh_policy.policy.cel.closure_nodes import BUDGET_SLOT, DEADLINE_SLOT, Activation, Fn, Locals
from dsh_policy.policy.cel.closure_values import CelError, is_list, is_map, map_lookup, overload_error


def budget_tick(loc: Locals) -> None:
    remaining = loc[BUDGET_SLOT] - 1
    if remaining < 0:
        raise CelError("evaluation exceeded its budget of comprehension iterations", "budget")
    loc[BUDGET_SLOT] = remaining
    if not remaining & 63 and time.monotonic() > loc[DEADLINE_SLOT]:
        raise CelError("evaluation exceeded its time budget", "budget")


def range_of(value: Any, macro: str) -> list[Any] | Any:
    kind = type(value)
    if kind is list or kind is tuple:
        return value
    if kind is dict:
        return list(value)
    if is_map(value) or is_list(value):
        return list(value)
    raise overload_error(macro, value)


def comprehension_fn(method: str, target: Fn, slots: list[int], bodies: list[Fn]) -> Fn:
    """The loop of one macro. One-variable forms bind the element (a map's key); two-variable
    forms bind index and element (key and value)."""
    two = len(slots) == 2
    first = slots[0]
    second = slots[1] if two else first
    tick = budget_tick

    def pairs(value: Any) -> Any:
        if two:
            if is_map(value):
                return list(value.items())
            if is_list(value):
                return list(enumerate(value))
            raise overload_error(method, value)
        return [(item, item) for item in range_of(value, method)]

    if method in ("all", "exists"):
        deciding = method == "exists"
        predicate = bodies[0]

        def quantifier(a: Activation, loc: Locals) -> bool:
            first_error: CelError | None = None
            items = target(a, loc)
            if not two and (type(items) is list or type(items) is tuple):
                # The budget tick inlined: no call per element but the predicate's.
                deadline = loc[DEADLINE_SLOT]
                for item in items:
                    remaining = loc[BUDGET_SLOT] - 1
                    if remaining < 0:
                        raise CelError("evaluation exceeded its budget of comprehension iterations", "budget")
                    loc[BUDGET_SLOT] = remaining
                    if not remaining & 63 and time.monotonic() > deadline:
                        raise CelError("evaluation exceeded its time budget", "budget")
                    loc[first] = item
                    try:
                        value = predicate(a, loc)
                    except CelError as error:
                        first_error = first_error or error
                        continue
                    if value is deciding:
                        return deciding
                    if value is not (not deciding) and first_error is None:
                        first_error = overload_error(method, value)
            else:
                for key, item in pairs(items):
                    tick(loc)
                    loc[first] = key
                    loc[second] = item
                    try:
                        value = predicate(a, loc)
                    except CelError as error:
                        first_error = first_error or error
                        continue
                    if value is deciding:
                        return deciding
                    if value is not (not deciding) and first_error is None:
                        first_error = overload_error(method, value)
            if first_error is not None:
                raise first_error
            return not deciding

        return quantifier

    if method in ("exists_one", "existsOne"):
        predicate = bodies[0]

        def exactly_one(a: Activation, loc: Locals) -> bool:
            count = 0
            for key, item in pairs(target(a, loc)):
                tick(loc)
                loc[first] = key
                loc[second] = item
                value = predicate(a, loc)
                if value is True:
                    count += 1
                elif value is not False:
                    raise overload_error(method, value)
            return count == 1

        return exactly_one

    if method == "filter":
        predicate = bodies[0]

        def keep(a: Activation, loc: Locals) -> list[Any]:
            out: list[Any] = []
            for key, _item in pairs(target(a, loc)):
                tick(loc)
                loc[first] = key
                value = predicate(a, loc)
                if value is True:
                    out.append(key)
                elif value is not False:
                    raise overload_error("filter", value)
            return out

        return keep

    condition = bodies[0] if len(bodies) == 2 else None
    transform = bodies[-1]

    if method in ("map", "transformList"):

        def transform_list(a: Activation, loc: Locals) -> list[Any]:
            out: list[Any] = []
            for key, item in pairs(target(a, loc)):
                tick(loc)
                loc[first] = key
                loc[second] = item
                if condition is not None:
                    test = condition(a, loc)
                    if test is False:
                        continue
                    if test is not True:
                        raise overload_error(method, test)
                out.append(transform(a, loc))
            return out

        return transform_list

    def transform_map(a: Activation, loc: Locals) -> dict[Any, Any]:
        source = target(a, loc)
        if not is_map(source):
            raise overload_error(method, source)
        out: dict[Any, Any] = {}
        for key, item in pairs(source):
            tick(loc)
            loc[first] = key
            loc[second] = item
            if condition is not None:
                test = condition(a, loc)
                if test is False:
                    continue
                if test is not True:
                    raise overload_error(method, test)
            value = transform(a, loc)
            if method == "transformMap":
                out[key] = value
                continue
            if not is_map(value):
                raise overload_error(method, value)
            for entry_key, entry_value in value.items():
                if map_lookup(out, entry_key)[0]:
                    raise CelError(f"duplicate map key: {entry_key!r}", "invalid_argument")
                out[entry_key] = entry_value
        return out

    return transform_map
