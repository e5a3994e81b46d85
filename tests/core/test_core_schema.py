"""The compiled fast path of schema validation agrees with jsonschema on the subset it covers."""

from __future__ import annotations

from typing import Any

from dsh_policy.core.frozen import freeze_json
from dsh_policy.core.schema import LenientValidator, SchemaValidator, compile_check, json_equal
from hypothesis import given, settings
from hypothesis import strategies as st

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.0, 1.0, 2.5, -1.5]),
    st.sampled_from("abcxy"),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=8,
)
type_names = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])


def schemas() -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        st.builds(lambda t: {"type": t}, type_names),
        st.builds(lambda ts: {"type": ts}, st.lists(type_names, min_size=1, max_size=3, unique=True)),
        st.builds(lambda e: {"enum": e}, st.lists(json_scalars, min_size=1, max_size=3)),
        st.builds(lambda c: {"const": c}, json_values),
        st.builds(lambda lo: {"minLength": lo, "maxLength": lo + 1}, st.integers(0, 2)),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "x$", "[bc]"])),
        st.builds(lambda lo: {"minimum": lo, "exclusiveMaximum": lo + 3}, st.integers(-2, 2)),
        st.builds(lambda lo: {"exclusiveMinimum": lo, "maximum": lo + 3}, st.sampled_from([-1.5, 0, 1])),
        st.just(True),
        st.just(False),
        st.just({"description": "annotations only", "format": "email"}),
    )

    def nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.builds(
                lambda props, req, extra: {
                    "type": "object",
                    "properties": props,
                    "required": req,
                    **({} if extra is None else {"additionalProperties": extra}),
                },
                st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=2),
                st.lists(st.sampled_from(["a", "b"]), max_size=2, unique=True),
                st.one_of(st.none(), st.booleans(), inner),
            ),
            st.builds(
                lambda items, lo: {"items": items, "minItems": lo, "maxItems": lo + 2},
                inner,
                st.integers(0, 2),
            ),
        )

    return st.recursive(leaf, nest, max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(schema=schemas(), value=json_values)
def test_fast_check_agrees_with_jsonschema_on_the_subset(schema: Any, value: Any) -> None:
    check = compile_check(schema)
    assert check is not None
    expected = LenientValidator(schema).is_valid(value)
    assert check(value) == expected
    assert check(freeze_json(value)) == expected


def test_schemas_outside_the_subset_fall_back_to_jsonschema() -> None:
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    assert compile_check(schema) is None
    validator = SchemaValidator(schema)
    assert validator.problem({"a": None}) is None
    assert validator.problem({"a": 1}) == "$.a: 1 is not valid under any of the given schemas"


def test_problem_names_the_path_of_the_first_violation() -> None:
    integers = {"type": "array", "items": {"type": "integer"}}
    validator = SchemaValidator({"type": "object", "properties": {"xs": integers}})
    assert validator.problem(freeze_json({"xs": [1, "two"]})) == "$.xs[1]: 'two' is not of type 'integer'"


def test_json_equality_keeps_booleans_apart_from_numbers() -> None:
    assert not json_equal(True, 1) and not json_equal(0, False)
    assert json_equal(1, 1.0) and json_equal([1, {"a": None}], (1, freeze_json({"a": None})))
    assert not json_equal([1], {"0": 1})
