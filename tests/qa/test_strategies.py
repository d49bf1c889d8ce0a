"""Inputs drawn from schemas the fuzzer used to give up on (or crash on): recursive
``$ref``s, deep nesting, type lists that name ``object``, objects with combinators, every
string format the harness checks; and schemas the harness refuses, which leave nothing to
draw. No browser: the strategies alone."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from harness.errors import ConfigError
from harness.models import Tool
from harness.qa import formats
from harness.qa.fuzz import _undrawable
from harness.qa.strategies import (
    MAX_REF_EXPANSIONS,
    near_misses,
    valid_arguments,
    why_nothing_fits,
)
from harness.stages.validation import FORMAT_CHECKER, validate_arguments

LIST_NODE = {
    "type": "object",
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
            "required": ["v"],
        }
    },
    "properties": {"head": {"$ref": "#/$defs/node"}},
    "required": ["head"],
}


def tool(schema: dict[str, Any]) -> Tool:
    return Tool(name="t", description="d", inputSchema=schema, origin="http://a.test", frame="main")


def drawn(schema: dict[str, Any], wanted: Any = lambda _value: False, n: int = 60) -> list[Any]:
    """Values drawn from the schema's valid-arguments strategy, until ``wanted`` holds for
    one (it is then the last) or ``n`` were drawn."""
    seen: list[Any] = []

    def condition(value: Any) -> bool:
        seen.append(value)
        return bool(wanted(value))

    with contextlib.suppress(NoSuchExample):
        find(
            valid_arguments(tool(schema)),
            condition,
            settings=settings(
                max_examples=n,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            ),
        )
    return seen


def depth(node: Any) -> int:
    return 1 + depth(node["next"]) if isinstance(node, dict) and "next" in node else 1


def test_a_recursive_ref_draws_values_that_recurse_a_few_levels() -> None:
    # The optional `next` is left out past a few expansions of the same $ref, not the whole
    # tool: every value fits, and some nest.
    seen = drawn(LIST_NODE, lambda value: depth((value or {}).get("head")) >= 2)
    assert seen and all(validate_arguments(tool(LIST_NODE), v) == [] for v in seen)
    assert depth(seen[-1]["head"]) >= 2
    assert max(depth(v["head"]) for v in seen) <= MAX_REF_EXPANSIONS


def test_a_recursive_ref_it_must_follow_for_ever_is_refused_with_a_reason() -> None:
    # `next` required: no finite value fits, and the fuzzer says so rather than hang.
    endless = {
        **LIST_NODE,
        "$defs": {"node": {**LIST_NODE["$defs"]["node"], "required": ["v", "next"]}},
    }  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="nests too deeply"):
        valid_arguments(tool(endless))


def test_twelve_levels_of_required_nesting_are_drawn() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(12):
        schema = {"type": "object", "properties": {"k": schema}, "required": ["k"]}
    value = drawn(schema, lambda value: value is not None)[-1]
    for _ in range(12):
        value = value["k"]
    assert isinstance(value, int)


@pytest.mark.parametrize(
    ("schema", "example"),
    [
        # hypothesis-jsonschema fails on these while drawing ('many' object has no
        # attribute 'more'): the object is drawn here, the combinators left to the filter.
        (
            {
                "type": "object",
                "properties": {"kind": {"enum": ["a", "b"]}, "v": {"type": "integer"}},
                "required": ["kind"],
                "if": {"properties": {"kind": {"const": "a"}}},
                "then": {"required": ["v"]},
            },
            lambda value: value.get("kind") == "a",
        ),
        (
            {"type": "object", "patternProperties": {"^x_": {"type": "integer"}}},
            lambda value: value == {},
        ),
        (
            {
                "type": "object",
                "properties": {"n": {"type": ["object", "null"]}},
                "required": ["n"],
            },
            lambda value: value["n"] is None,
        ),
        (
            {
                "type": "object",
                "properties": {
                    "n": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}}
                },
                "required": ["n"],
            },
            lambda value: isinstance(value["n"], dict),
        ),
    ],
)
def test_objects_with_combinators_and_type_lists_are_drawn(
    schema: dict[str, Any], example: Any
) -> None:
    seen = drawn(schema, lambda value: value is not None and example(value))
    assert example(seen[-1])
    assert all(validate_arguments(tool(schema), v) == [] for v in seen)


ITEM = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}

# `type` written as a list, of one name or more, around properties and items: a list of one
# name was handed to hypothesis-jsonschema, whose object drawing raised AttributeError out
# of valid_arguments (an outside tester's report), as did an array whose objects it drew
# (`contains`, or a combinator beside `items`). Each pairs with what a draw must reach.
TYPE_LISTS = {
    "the argument object as [object]": (
        {"type": ["object"], "properties": ITEM["properties"], "required": ["a"]},
        lambda value: isinstance(value["a"], str),
    ),
    "a parameter as [object]": (
        {"type": "object", "properties": {"n": {**ITEM, "type": ["object"]}}, "required": ["n"]},
        lambda value: "a" in value["n"],
    ),
    "a parameter as [object] with not": (
        {
            "type": "object",
            "properties": {"n": {"type": ["object"], "not": {"required": ["b"]}}},
            "required": ["n"],
        },
        lambda value: isinstance(value["n"], dict),
    ),
    "a parameter as [object, null], required inside": (
        {
            "type": "object",
            "properties": {"n": {**ITEM, "type": ["object", "null"]}},
            "required": ["n"],
        },
        lambda value: isinstance(value["n"], dict) and "a" in value["n"],
    ),
    "the argument object as [object, null]": (
        {"type": ["object", "null"], "properties": ITEM["properties"]},
        lambda value: "a" in value,
    ),
    "[array] of objects": (
        {
            "type": "object",
            "properties": {"n": {"type": ["array"], "items": ITEM, "minItems": 1}},
            "required": ["n"],
        },
        lambda value: "a" in value["n"][0],
    ),
    "[array] of [object] items by prefixItems": (
        {
            "type": "object",
            "properties": {"n": {"type": ["array"], "prefixItems": [{**ITEM, "type": ["object"]}]}},
            "required": ["n"],
        },
        lambda value: len(value["n"]) == 1,
    ),
    "[array] that contains an [object], no items said": (
        {
            "type": "object",
            "properties": {"n": {"type": ["array"], "contains": {**ITEM, "type": ["object"]}}},
            "required": ["n"],
        },
        lambda value: any(isinstance(item, dict) for item in value["n"]),
    ),
    "an array of objects beside a combinator": (
        {
            "type": "object",
            "properties": {
                "n": {"type": "array", "items": ITEM, "not": {"maxItems": 0}},
                "m": {"type": "array", "allOf": [{"items": ITEM}], "minItems": 1},
            },
            "required": ["n", "m"],
        },
        lambda value: value["n"] and value["m"],
    ),
    "[string, integer] with a bound of each": (
        {
            "type": "object",
            "properties": {"n": {"type": ["string", "integer"], "minLength": 2, "minimum": 3}},
            "required": ["n"],
        },
        lambda value: isinstance(value["n"], int),
    ),
    "[object] inside anyOf beside null": (
        {
            "type": "object",
            "properties": {"n": {"anyOf": [{**ITEM, "type": ["object"]}, {"type": "null"}]}},
            "required": ["n"],
        },
        lambda value: isinstance(value["n"], dict),
    ),
}


@pytest.mark.parametrize("name", TYPE_LISTS)
def test_a_type_list_draws_values_of_each_type_it_names_and_each_fits(name: str) -> None:
    assert_reached_and_each_fits(*TYPE_LISTS[name], n=40)


def assert_reached_and_each_fits(schema: dict[str, Any], reached: Any, n: int) -> None:
    """Within ``n`` draws from ``schema``, one value for which ``reached`` holds; every value
    drawn fits the schema."""
    seen = drawn(schema, lambda value: value is not None and reached(value), n=n)
    assert seen and reached(seen[-1]), seen[-5:]
    assert all(validate_arguments(tool(schema), v) == [] for v in seen)


def test_a_schema_the_harness_refuses_leaves_nothing_to_draw_and_says_why() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    for make in (valid_arguments, near_misses):
        with pytest.raises(ConfigError, match=r"not a valid JSON Schema .*exclusiveMinimum"):
            make(tool(draft4))


@pytest.mark.parametrize(
    "untyped", [{"minimum": 3}, {"maxLength": 2}, {"items": {"minimum": 1}}, {"multipleOf": 5}]
)
def test_an_untyped_subschema_with_keywords_is_drawn_one_type_at_a_time(
    untyped: dict[str, Any],
) -> None:
    # hypothesis-jsonschema's own drawing of such a schema (it may be an object) raised
    # AttributeError on the current Hypothesis, and fuzz skipped the tool.
    kinds = drawn_kinds(untyped)
    assert {"dict", "str", "list"} <= kinds, kinds


def drawn_kinds(untyped: dict[str, Any]) -> set[str]:
    """The Python types drawn for a required member ``x`` of schema ``untyped``; every value
    drawn fits the schema."""
    schema = {"type": "object", "properties": {"x": untyped}, "required": ["x"]}
    values = drawn(schema)
    assert values and all(not validate_arguments(tool(schema), v) for v in values)
    return {type(v["x"]).__name__ for v in values}


@pytest.mark.parametrize(
    "untyped",
    [
        {"minimum": 3, "not": {"type": "string"}},
        {"allOf": [{"minimum": 3}, {"maxLength": 4}]},
        {"if": {"type": "string"}, "then": {"minLength": 2}},
        {"maxItems": 2, "patternProperties": {"^a": {"type": "integer"}}},
    ],
)
def test_an_untyped_subschema_under_combinators_is_drawn_one_type_at_a_time(
    untyped: dict[str, Any],
) -> None:
    # Left to hypothesis-jsonschema, such a schema (it may be an object) raised AttributeError
    # out of every draw, as the plain untyped one did.
    kinds = drawn_kinds(untyped)
    assert {"dict", "list"} <= kinds, kinds


# Everyday schemas every one of whose values the generator used to miss: objects were drawn
# from `properties` and `required` alone (a const object drawn as {}, no member of a map,
# if/then/else left to the filter), and fuzz skipped the tool saying its schema "may allow
# no value at all". Each pairs with what a draw must reach.
SATISFIABLE = {
    "a const object": (
        {"type": "object", "properties": {"mode": {"const": {"kind": "fast", "level": 2}}}},
        lambda value: value.get("mode") == {"kind": "fast", "level": 2},
    ),
    "an enum of objects, arrays and null": (
        {
            "type": "object",
            "properties": {"size": {"enum": [{"w": 1, "h": 2}, [1, 2], None]}},
            "required": ["size"],
        },
        lambda value: value["size"] == {"w": 1, "h": 2},
    ),
    "a map with additionalProperties and minProperties": (
        {
            "type": "object",
            "properties": {
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "minProperties": 1,
                }
            },
            "required": ["labels"],
        },
        lambda value: len(value["labels"]) >= 2,
    ),
    "propertyNames, additionalProperties and min/maxProperties": (
        {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z]{1,8}$"},
            "additionalProperties": {"type": "integer"},
            "minProperties": 1,
            "maxProperties": 3,
        },
        lambda value: len(value) == 3,
    ),
    "patternProperties beside additionalProperties: false": (
        {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "patternProperties": {"^x-[a-z]+$": {"type": "string"}, "^n_": {"type": "integer"}},
            "additionalProperties": False,
            "minProperties": 2,
        },
        lambda value: any(k.startswith("x-") for k in value) and any(k[:2] == "n_" for k in value),
    ),
    "zip codes by country with if/then/else": (
        {
            "type": "object",
            "properties": {"country": {"enum": ["US", "CA"]}, "zip": {"type": "string"}},
            "required": ["country", "zip"],
            "if": {"properties": {"country": {"const": "US"}}},
            "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}},
            "else": {"properties": {"zip": {"pattern": "^[A-Z][0-9][A-Z] [0-9][A-Z][0-9]$"}}},
        },
        lambda value: value["country"] == "CA",
    ),
    "required and patterns inside allOf": (
        {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "allOf": [
                {"required": ["id"]},
                {"properties": {"id": {"pattern": "^ord-[0-9]{4}$"}}},
                {"$ref": "#/$defs/dated"},
            ],
            "$defs": {"dated": {"properties": {"on": {"format": "date"}}, "required": ["on"]}},
        },
        lambda value: "id" in value and "on" in value,
    ),
    "one member of two, and its pattern, said with anyOf": (
        {
            "type": "object",
            "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
            "anyOf": [
                {"required": ["email"], "properties": {"email": {"pattern": "^[a-z]+@x\\.test$"}}},
                {"required": ["phone"], "properties": {"phone": {"pattern": "^[0-9]{6}$"}}},
            ],
            "additionalProperties": False,
        },
        lambda value: "phone" in value,
    ),
}


@pytest.mark.parametrize("name", SATISFIABLE)
def test_everyday_objects_are_drawn_and_each_fits(name: str) -> None:
    assert_reached_and_each_fits(*SATISFIABLE[name], n=80)


def test_both_branches_of_an_if_are_drawn() -> None:
    schema, _ = SATISFIABLE["zip codes by country with if/then/else"]
    countries = {v["country"] for v in drawn(schema, n=40)}
    assert countries == {"US", "CA"}


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        # A minimum above its maximum: the keywords of the member nothing can be drawn for.
        (
            {
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 10, "maximum": 5}},
                "required": ["n"],
            },
            "nothing the generator draws fits /properties/n (`type`, `minimum`, `maximum`)",
        ),
        # Values are drawn, and every one fails the keyword that refuses them all.
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "not": {"required": ["a"]},
            },
            "every value drawn failed `not` at /not",
        ),
    ],
)
def test_a_schema_nothing_fits_is_named_by_its_keyword(schema: dict[str, Any], named: str) -> None:
    unfit = why_nothing_fits(tool(schema))
    assert unfit is not None and named in unfit.said


def test_patterns_python_cannot_read_print_no_warning_and_leave_the_filters_alone() -> None:
    # ECMAScript patterns the harness accepts: hypothesis-jsonschema warned about each on
    # stderr (its site-packages path, its source line) in every fuzz run.
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[\\p{L} '-]{1,20}$"},
            "code": {"type": "string", "pattern": "^[[A-Z]&&[^IO]]{2}$"},
            "sku": {"type": "string", "pattern": "^(?<cat>[A-Z]{2})-\\d{4}$"},
        },
    }
    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn(schema, n=10)
        near_misses(tool(schema))
        why_nothing_fits(tool(schema))
    assert [str(w.message)[:80] for w in caught] == []
    assert warnings.filters == before  # silenced where drawn, not for the rest of the process


def format_schema(name: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"v": {"type": "string", "format": name}, "n": {"type": "integer"}},
        "required": ["v"],
    }


@pytest.mark.parametrize("name", sorted(FORMAT_CHECKER.checkers))
def test_every_format_the_harness_checks_has_values_drawn_that_it_accepts(name: str) -> None:
    # hypothesis-jsonschema draws no uuid or duration: every value drawn was an arbitrary
    # string the harness refused, and the tool was skipped ("the schema may allow no value").
    seen = drawn(format_schema(name), n=20)
    assert len({v["v"] for v in seen}) >= 3, seen
    assert all(validate_arguments(tool(format_schema(name)), v) == [] for v in seen)


def test_a_format_without_a_generator_is_named_as_the_reason_nothing_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(formats, "OWN_GENERATORS", {})
    formats.custom_formats.cache_clear()
    try:
        unfit = why_nothing_fits(tool(format_schema("uuid")))
        assert unfit is not None
        assert unfit.said == "every value drawn failed `format` at /properties/v/format"
        assert unfit.no_generator == "uuid"
        reason = _undrawable(tool(format_schema("uuid")), Unsatisfiable(), 0)
    finally:
        formats.custom_formats.cache_clear()
    assert 'no generator for format "uuid"' in reason
    assert "may allow no value" not in reason
