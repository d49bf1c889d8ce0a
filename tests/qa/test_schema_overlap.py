"""Whether two schemas can match one value (what lets a change inside ``oneOf`` be ordered):
"apart" is never said of two a validator finds a value for."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from harness.qa.schema_overlap import disjoint, separate
from tests.qa.test_drift import accepts
from tests.qa.test_schema_change import BRANCH, SAMPLES

BOOK = {"type": "object", "properties": {"kind": {"const": "book"}}, "required": ["kind"]}
FILM = {"type": "object", "properties": {"kind": {"const": "film"}}, "required": ["kind"]}


def untyped(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "type"}


@pytest.mark.parametrize(
    ("first", "second", "apart"),
    [
        ({"type": "string"}, {"type": "integer"}, True),
        ({"type": "number"}, {"type": "integer"}, False),
        ({"enum": ["a", "b"]}, {"const": "c"}, True),
        ({"enum": [1, 2]}, {"type": "string"}, True),
        ({"const": 1}, {"type": "number"}, False),
        (BOOK, FILM, True),
        # Without the type, a string matches both (required and properties ask nothing of it).
        (untyped(BOOK), untyped(FILM), False),
        # Draft 7 reads a $ref alone: what is beside it cannot tell them apart.
        ({"$ref": "#/$defs/S", "type": "string"}, {"type": "integer"}, False),
        ({"maxLength": 3}, {"minLength": 5}, False),  # apart for strings, not for numbers
        (False, {}, True),
    ],
)
def test_schemas_apart_by_type_values_or_a_discriminator(
    first: Any, second: Any, apart: bool
) -> None:
    assert disjoint(first, second) is apart
    assert separate([first, second]) is apart


@settings(max_examples=300, deadline=None)
@given(first=BRANCH, second=BRANCH)
def test_no_sample_matches_two_schemas_said_to_be_apart(first: Any, second: Any) -> None:
    if disjoint(first, second):
        for instance in SAMPLES:
            both = {"$defs": {"D": {}}, "allOf": [first, second]}
            assert not accepts(both, instance), instance


def test_branches_are_separate_only_when_each_two_are() -> None:
    assert separate([{"type": "string"}, {"type": "integer"}, {"type": "null"}])
    assert not separate([{"type": "string"}, {"type": "integer"}, {"enum": ["a"]}])
    assert separate([])
