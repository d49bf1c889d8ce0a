"""The compiled validator (jsonschema-rs) against jsonschema: it may only say *yes* where
jsonschema says yes, on the schemas it is given for (harness/schemas.py).

Redaction trusts the compiled validator's *yes* ("this result fits its outputSchema, so the
walk finds every marked field") and asks jsonschema after every *no*; so the one thing
that must never happen is a *yes* where jsonschema says no.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mcp.types import CallToolResult

from harness.schemas import compiled_validator_for, validator_for
from harness.stages.redaction import redact
from harness.stages.vault import Vault
from tests.stages.test_redaction import sensitive_results, tool

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from("abcd"), inner, max_size=4)
    ),
    max_leaves=12,
)
NUMBERS = st.one_of(st.integers(-5, 5), st.floats(-5, 5, allow_nan=False))
TYPES = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])


def _schemas() -> st.SearchStrategy[Any]:
    """Schemas made of the keywords the compiled validator is used for."""

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        members = st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)
        branches = st.lists(inner, min_size=1, max_size=3)
        keyword = st.one_of(
            st.fixed_dictionaries({"type": st.one_of(TYPES, st.lists(TYPES, max_size=3))}),
            st.fixed_dictionaries({"properties": members}),
            st.fixed_dictionaries({"additionalProperties": inner}),
            st.fixed_dictionaries({"required": st.lists(st.sampled_from("abcd"), max_size=3)}),
            st.fixed_dictionaries({"items": inner}),
            st.fixed_dictionaries({"prefixItems": st.lists(inner, max_size=3)}),
            st.fixed_dictionaries({"contains": inner, "minContains": st.integers(0, 2)}),
            st.fixed_dictionaries({"enum": st.lists(VALUES, min_size=1, max_size=3)}),
            st.fixed_dictionaries({"const": VALUES}),
            st.fixed_dictionaries({"minimum": NUMBERS, "exclusiveMaximum": NUMBERS}),
            st.fixed_dictionaries({"minLength": st.integers(0, 3), "maxLength": st.integers(0, 4)}),
            st.fixed_dictionaries(
                {"minItems": st.integers(0, 2), "maxProperties": st.integers(0, 3)}
            ),
            st.fixed_dictionaries(
                {
                    "dependentRequired": st.dictionaries(
                        st.sampled_from("abcd"),
                        st.lists(st.sampled_from("abcd"), max_size=2),
                        max_size=2,
                    )
                }
            ),
            st.fixed_dictionaries({"propertyNames": inner}),
            st.fixed_dictionaries({"allOf": branches}),
            st.fixed_dictionaries({"anyOf": branches}),
            st.fixed_dictionaries({"oneOf": branches}),
            st.fixed_dictionaries({"not": inner}),
            st.fixed_dictionaries({"if": inner, "then": inner, "else": inner}),
            st.fixed_dictionaries({"$ref": st.just("#/$defs/d"), "x-sensitive": st.booleans()}),
        )
        return st.lists(keyword, min_size=1, max_size=3).map(
            lambda parts: {k: v for part in parts for k, v in part.items()}
        )

    leaf = st.one_of(st.booleans(), st.fixed_dictionaries({"type": TYPES}), st.just({}))
    body = st.recursive(leaf, extend, max_leaves=8)
    return st.tuples(body, body).map(
        lambda pair: pair[0] if isinstance(pair[0], bool) else {**pair[0], "$defs": {"d": pair[1]}}
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas(), VALUES)
def test_the_compiled_validator_says_yes_only_where_jsonschema_does(
    schema: Any, instance: Any
) -> None:
    compiled = compiled_validator_for(schema)
    # None: a schema it refuses to compile (e.g. an empty prefixItems) or that loops in place.
    assume(compiled is not None)
    if compiled.is_valid(instance):
        assert validator_for(schema).is_valid(instance)


def test_recursive_schemas_that_descend_are_compiled() -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    compiled = compiled_validator_for(tree)
    assert compiled is not None
    assert compiled.is_valid({"children": [{"children": []}]})
    assert not compiled.is_valid({"children": [{"children": 1}]})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sensitive_results())
def test_the_redaction_tests_schemas_get_the_same_answer(generated: Any) -> None:
    """The property tests' sensitive schemas (and values that do or do not fit them)."""
    schema, value, _ = generated
    compiled = compiled_validator_for(schema)
    if compiled is None:  # patternProperties: jsonschema checks it
        assert "patternProperties" in str(schema)
        return
    for instance in (value, {"other": value}, [value], {k: None for k in value}):
        assert compiled.is_valid(instance) == validator_for(schema).is_valid(instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a$"},  # a regex dialect of its own
        {"patternProperties": {"^a": {}}},
        {"format": "email"},
        {"multipleOf": 0.01},  # float arithmetic
        {"uniqueItems": True},
        {"unevaluatedProperties": False},
        {"$id": "https://example.com/s", "type": "object"},
        {"$ref": "http://127.0.0.1:9/schema.json"},  # outside the document: never fetched
        {"$ref": "file:///etc/passwd"},
        {"$ref": "#anchor"},
        {"items": [{"type": "string"}]},  # the tuple form of older drafts
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"properties": {"a": {"unknownKeyword": 1}}},
        {"properties": {"a": "not a schema"}},
        {"$ref": "#"},  # a loop in place: jsonschema recurses until it fails (no fit)
        {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}},
    ],
)
def test_schemas_it_may_read_differently_are_left_to_jsonschema(schema: Any) -> None:
    assert compiled_validator_for(schema) is None


SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "note": {"type": "string"},
        "token": {"type": "string", "x-sensitive": True},
    },
}


def test_a_value_the_compiled_validator_cannot_read_is_decided_by_jsonschema() -> None:
    """A NaN (the compiled validator says no) and a lone surrogate (it cannot hold it) fit
    for jsonschema: the marked field is withheld, the rest kept, as before."""
    for odd in ({"n": math.nan}, {"note": "\ud800"}):
        structured = {**odd, "token": "sk-secret-1234"}
        result = CallToolResult(content=[], structuredContent=structured)
        redaction = redact(tool(SCHEMA), result, Vault())
        agent = redaction.result.structured_content
        assert agent is not None and "sk-secret-1234" not in str(agent)
        assert [item.path for item in redaction.withheld] == ["/structuredContent/token"]
        assert structured["token"] == "sk-secret-1234"  # the tool's own result is untouched
