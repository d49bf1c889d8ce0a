"""The compiled validator (jsonschema-rs) against jsonschema: it may only say *yes* where
jsonschema says yes, on the schemas it is given for (harness/schemas/).

Redaction trusts the compiled validator's *yes* ("this result fits its outputSchema, so the
walk finds every marked field") and asks jsonschema after every *no*; so the one thing
that must never happen is a *yes* where jsonschema says no.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema import _utils as jsonschema_utils
from jsonschema._utils import equal
from mcp.types import CallToolResult
from referencing.jsonschema import DRAFT202012

from harness.schemas import (
    FAST_PATH_WORK,
    NO_RETRIEVAL,
    SchemaTimeout,
    TooMuchWork,
    Unresolvable,
    compiled_validator_for,
    local_target,
    time_left,
    validator_for,
    within_budget,
)
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


# -- the time a check may take (harness/schemas/budget.py; the compiled validator's work) --


def branching(levels: int, keyword: str = "anyOf", leaf: Any = None) -> dict[str, Any]:
    """A schema whose ``v`` is ``levels`` of ``keyword: [{$ref: next}, {$ref: next}]``: a
    checker that follows every branch does 2**levels checks of the leaf."""
    defs: dict[str, Any] = {
        f"a{i}": {keyword: [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]}
        for i in range(levels)
    }
    defs[f"a{levels}"] = leaf or {"type": "string", "minLength": 5}
    return {"type": "object", "properties": {"v": {"$ref": "#/$defs/a0"}}, "$defs": defs}


def test_a_check_whose_branches_multiply_stops_at_its_budget() -> None:
    # 17 levels: jsonschema took 16 to 43 s on {"v": "x"} (each level doubles it).
    validator = validator_for(branching(17))
    late = r"could not be checked within 0\.2 s"
    with pytest.raises(SchemaTimeout, match=late), within_budget(0.2):
        list(validator.iter_errors({"v": "x"}))
    # Outside any budget nothing changes: a small one is answered as before.
    assert [e.validator for e in validator_for(branching(3)).iter_errors({"v": "x"})] == ["anyOf"]


def test_the_walks_of_unevaluated_properties_keep_the_budget_too() -> None:
    # jsonschema's unevaluatedProperties follows allOf and $ref by itself (no keyword runs
    # in between): only its type check of each subschema passes the clock.
    schema = branching(20, "allOf", {"type": "object"})
    schema = {"unevaluatedProperties": False, "$ref": "#/$defs/a0", "$defs": schema["$defs"]}
    with pytest.raises(SchemaTimeout), within_budget(0.2):
        validator_for(schema).is_valid({"extra": 1})


def test_an_enclosing_budget_keeps_its_earlier_deadline() -> None:
    with within_budget(0.05), within_budget(60):
        left = time_left()
        assert left is not None and left <= 0.05
    assert time_left() is None


JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-2, 2),
        st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5]),
        st.sampled_from(["", "a", "1"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("ab"), inner, max_size=2)
    ),
    max_leaves=6,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(JSON, max_size=6))
def test_unique_items_finds_the_pairs_jsonschema_calls_equal(items: list[Any]) -> None:
    """The sorted check against JSON Schema's equality as jsonschema defines it (1 == 1.0,
    true != 1, objects by members, arrays in order), pair by pair."""
    unique = not any(equal(a, b) for a, b in itertools.combinations(items, 2))
    assert validator_for({"uniqueItems": True}).is_valid(items) == unique


def test_unique_items_is_right_where_jsonschema_s_own_shortcut_is_not() -> None:
    # jsonschema sorts first and compares neighbours; Python sorts [1] and [True] as equal,
    # so the two [1]s end up apart and it calls the list unique.
    items = [[1], [True], [1]]
    assert Draft202012Validator({"uniqueItems": True}).is_valid(items)
    assert not validator_for({"uniqueItems": True}).is_valid(items)
    assert validator_for({"uniqueItems": True}).is_valid([1, True, "1", [1], {"a": 1}, None])
    assert not validator_for({"uniqueItems": True}).is_valid(
        [{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]
    )


def pair_comparisons(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the pairs jsonschema's equality is asked about from now on (``["pairs"]``)."""
    counted = {"pairs": 0}

    def counting(one: Any, two: Any) -> bool:
        counted["pairs"] += 1
        return bool(equal(one, two))

    monkeypatch.setattr(jsonschema_utils, "equal", counting)
    return counted


def test_unique_items_over_thousands_of_objects_compares_no_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jsonschema compared 3 000 distinct objects pair by pair (4.5 million comparisons, 14 s
    on the event loop); they are sorted now. Counted, not timed."""
    counted = pair_comparisons(monkeypatch)
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "object"}}
    items = [{"i": i} for i in range(3000)]
    assert validator_for(schema).is_valid(items)
    assert not validator_for(schema).is_valid([*items, {"i": 1500.0}])
    assert counted["pairs"] == 0


def test_the_compiled_validator_is_given_only_values_it_is_done_with_soon() -> None:
    """jsonschema-rs follows every branch of an allOf too, and cannot be stopped: 30 levels
    of allOf took it minutes on a value that fits. Such a value goes to jsonschema (which
    keeps a budget); the estimate of the work counts, it does not time."""
    deep = compiled_validator_for(branching(30, "allOf"))
    assert deep is not None and deep.work({"v": "xxxxx"}) > FAST_PATH_WORK
    with pytest.raises(TooMuchWork):
        deep.is_valid({"v": "xxxxx"})
    shallow = compiled_validator_for(branching(10, "allOf"))
    assert shallow is not None and shallow.is_valid({"v": "xxxxx"})
    # Wide and long values of a plain schema stay on the fast path: a member meets one of
    # `properties`, an item one of `items`.
    wide = {"type": "array", "items": {"properties": {k: {"type": "integer"} for k in "abcde"}}}
    plain = compiled_validator_for(wide)
    rows = [dict.fromkeys("abcde", 1) for _ in range(10_000)]
    assert plain is not None and plain.work(rows) == 1 + 10_000 + 50_000
    assert plain.is_valid(rows)
    # A recursive schema: each level reached once (an object in `kids` twice: the `$ref`,
    # then the root it leads to).
    tree = compiled_validator_for(
        {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    )
    assert tree is not None and tree.work({"kids": [{"kids": [{}]}, {}]}) == 1 + 1 + 2 * 2 + 1 + 2


# -- where a local $ref leads -------------------------------------------------------------

# Definitions whose names a pointer spells with escapes, and one with an anchor.
ESCAPED = {
    "$defs": {
        "a/b": {"type": "string"},
        "a": {"b": {"type": "integer"}},
        "a b": {"type": "null"},
        "a~b": {"maxLength": 3},
        "h": {"$anchor": "here", "type": "boolean"},
    }
}


def followed(schema: Any, ref: str) -> Any:
    """Where validation follows ``ref`` in ``schema`` (None: nowhere)."""
    resolver = NO_RETRIEVAL.with_resource("", DRAFT202012.create_resource(schema)).resolver()
    try:
        return resolver.lookup(ref).contents
    except Unresolvable:
        return None


@pytest.mark.parametrize(
    "ref",
    [
        *("#", "#/$defs/a~1b", "#/$defs/a%2Fb", "#/$defs/a%20b", "#/$defs/a~0b"),
        *("#/$defs/a%7E1b", "#here", "#/", "#/$defs/none", "#nowhere"),
        "#%2F$defs%2Fa~1b",  # a fragment that does not start with "/" names an anchor
    ],
)
def test_a_local_reference_leads_where_validation_follows_it(ref: str) -> None:
    assert local_target(ESCAPED, ref) == followed(ESCAPED, ref)
