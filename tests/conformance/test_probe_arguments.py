"""The audit's probe arguments are made from a page's schema, so from any JSON value under
any keyword: they never raise (``"required": true`` ended the whole audit with a
traceback), never follow a schema for ever, and never grow with a number the page picks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.conformance.probes import MAX_EXAMPLE_LENGTH, example_arguments
from harness.schemas.patterns import HTML

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYWORDS = st.sampled_from(
    [
        "type",
        "required",
        "properties",
        "minLength",
        "minimum",
        "exclusiveMinimum",
        "enum",
        "default",
        "const",
        "examples",
        "format",
        "items",
    ]
)
SCHEMAS = st.recursive(
    st.dictionaries(KEYWORDS, JSON, max_size=5),
    lambda inner: st.fixed_dictionaries(
        {
            "type": st.just("object"),
            "properties": st.dictionaries(st.text(max_size=4), inner, max_size=3),
            "required": st.lists(st.text(max_size=4), max_size=3) | JSON,
        }
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_any_schema_gives_arguments_without_raising(schema: dict[str, Any]) -> None:
    assert isinstance(example_arguments(schema), dict)


def test_a_required_that_is_not_a_list_asks_for_nothing() -> None:
    for required in (True, "a", {"a": 1}, [["a"]], None):
        assert example_arguments({"properties": {"a": {}}, "required": required}) == {}


def test_a_huge_min_length_or_depth_costs_nothing() -> None:
    [text] = example_arguments(
        {"properties": {"s": {"minLength": 10**12}}, "required": ["s"]}
    ).values()
    assert len(text) == MAX_EXAMPLE_LENGTH
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"k": deep}, "required": ["k"]}
    assert isinstance(example_arguments(deep), dict)


@pytest.mark.parametrize(
    ("pattern", "made"),
    [("^[0-9]{5}$", "12345"), ("[A-Z]{2}-[0-9]{4}", "AB-1234"), (r"^\p{Lu}\p{Ll}+$", "Audit")],
)
def test_a_string_is_made_to_fit_its_pattern_whole(pattern: str, made: str) -> None:
    schema = {"type": "object", "required": ["v"], "properties": {"v": {"pattern": pattern}}}
    schema["properties"]["v"]["type"] = "string"
    assert example_arguments(schema) == {"v": made}


def test_a_forms_string_is_made_to_fit_its_pattern_as_html_reads_it() -> None:
    # `[\w&&\d]+` (intersection, the `v` flag) takes digits only: "audit" does not fit it as
    # HTML reads it, while JSON Schema's reading (no intersection: `&&` literal) differs.
    schema = {"type": "object", "required": ["v"], "properties": {"v": {"type": "string"}}}
    schema["properties"]["v"]["pattern"] = r"[\w&&\d]+"
    assert example_arguments(schema, dialect=HTML) == {"v": "0"}
    # Set subtraction: no regex under JSON Schema's reading, upper-case letters under HTML's.
    schema["properties"]["v"]["pattern"] = r"[\p{L}--[a-z]]+"
    assert example_arguments(schema, dialect=HTML) == {"v": "A"}
