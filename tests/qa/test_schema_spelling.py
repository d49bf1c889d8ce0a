"""A schema written differently with the same meaning — a one-value ``enum`` for ``const``,
``required`` or ``properties`` moved into an ``allOf`` branch — is ``rewritten`` (info), not a
gate; spellings that look alike and mean something else are still ordered (pure Python)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from jsonschema import Draft7Validator, Draft202012Validator

from harness.cli import main
from harness.qa.drift import diff_catalogs
from harness.qa.schema_change import compare_schemas
from harness.qa.schema_spelling import normal_form
from tests.qa.test_drift import accepts, catalog, check_witnesses, kind_of, tool, write
from tests.qa.test_schema_change import SAMPLES, SCHEMAS

STRING = {"type": "string"}
INTEGER = {"type": "integer"}


def at(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as parameter ``v`` of an object."""
    return {"type": "object", "properties": {"v": schema}}


# The outside tester's ship_order (h18): the same arguments accepted before and after.
SHIP_OLD = {
    "type": "object",
    "properties": {"speed": {"enum": ["express"]}, "id": INTEGER},
    "required": ["id"],
}
SHIP_NEW = {
    "type": "object",
    "properties": {"speed": {"const": "express"}, "id": INTEGER},
    "allOf": [{"required": ["id"]}],
}

SAME_MEANING = [
    (SHIP_OLD, SHIP_NEW),
    (at({"enum": ["express"]}), at({"const": "express"})),
    (at({"enum": [1]}), at({"const": 1.0})),  # 1 and 1.0 are one JSON number
    (at({"const": "x", "enum": ["x", "y"]}), at({"const": "x"})),
    (
        {"type": "object", "properties": {"id": INTEGER}, "required": ["id"]},
        {"type": "object", "properties": {"id": INTEGER}, "allOf": [{"required": ["id"]}]},
    ),
    # required reads no property's schema: additionalProperties beside it changes nothing.
    (
        {"properties": {"id": INTEGER}, "required": ["id"], "additionalProperties": False},
        {
            "properties": {"id": INTEGER},
            "allOf": [{"required": ["id"]}],
            "additionalProperties": False,
        },
    ),
    (
        {"type": "object", "properties": {"id": INTEGER, "note": STRING}},
        {
            "type": "object",
            "properties": {"id": INTEGER},
            "allOf": [{"properties": {"note": STRING}}],
        },
    ),
    (
        {"type": "object", "required": ["a", "b"]},
        {"allOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]},
    ),
    # Inside a parameter, as anywhere.
    (
        at({"type": "object", "properties": {"n": INTEGER}, "required": ["n"]}),
        at({"type": "object", "allOf": [{"properties": {"n": INTEGER}, "required": ["n"]}]}),
    ),
    (at({"type": ["string"]}), at({"type": "string"})),
]
INSTANCES = [
    None,
    "x",
    1,
    {},
    {"id": 1},
    {"id": "1"},
    {"id": 1, "speed": "express"},
    {"id": 1, "speed": "slow"},
    {"speed": "express"},
    {"id": 1, "note": 2},
    {"a": 1},
    {"a": 1, "b": 2},
    {"v": "express"},
    {"v": "x"},
    {"v": "y"},
    {"v": 1},
    {"v": 1.0},
    {"v": {}},
    {"v": {"n": 1}},
    {"v": {"n": "1"}},
]


@pytest.mark.parametrize(("old", "new"), SAME_MEANING)
def test_a_schema_written_differently_with_the_same_meaning_is_rewritten_at_info(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    assert [accepts(old, i) for i in INSTANCES] == [accepts(new, i) for i in INSTANCES]
    for was, now in ((old, new), (new, old)):
        assert [c.describe() for c in compare_schemas(was, now)] == []
        assert kind_of(was, now) == [("rewritten", "info", "set_qty")]


def test_diff_passes_the_gate_when_enum_becomes_const_and_required_moves_into_all_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(tmp_path / "old.json", tool("ship_order", inputSchema=SHIP_OLD))
    new = write(tmp_path / "new.json", tool("ship_order", inputSchema=SHIP_NEW))
    assert main(["diff", old, new, "--json"]) == 0
    [change] = json.loads(capsys.readouterr().out)["changes"]
    assert (change["kind"], change["severity"]) == ("rewritten", "info")


OBJECT_A = {"type": "object", "properties": {"a": STRING}}


@pytest.mark.parametrize(
    ("old", "new", "kind", "details", "old_only", "new_only"),
    [
        # One value of the enum left, written as const: a value less.
        (
            at({"enum": ["x", "y"]}),
            at({"const": "x"}),
            "input-narrowed",
            ['/properties/v/enum: -"y" (narrowed)'],
            {"v": "y"},
            None,
        ),
        (
            at({"const": "x"}),
            at({"enum": ["x", "y"]}),
            "input-widened",
            ['/properties/v/enum: +"y" (widened)'],
            None,
            {"v": "y"},
        ),
        # additionalProperties reads the properties beside it: one moved into a branch is a
        # name it now refuses.
        (
            {**OBJECT_A, "additionalProperties": False},
            {
                "type": "object",
                "additionalProperties": False,
                "allOf": [{"properties": {"a": STRING}}],
            },
            "input-narrowed",
            None,
            {"a": "x"},
            None,
        ),
        # ... and a branch's own additionalProperties reads the branch's: moved out of it,
        # a name it refused is taken.
        (
            {
                "type": "object",
                "allOf": [{"properties": {"a": STRING}, "additionalProperties": False}],
            },
            OBJECT_A,
            None,
            None,
            None,
            {"b": 1},
        ),
        # A branch's property that the parent declares too is a second constraint, not a copy.
        (
            OBJECT_A,
            {**OBJECT_A, "allOf": [{"properties": {"a": {"maxLength": 3}}}]},
            "input-narrowed",
            None,
            {"a": "long"},
            None,
        ),
    ],
)
def test_spellings_alike_with_another_meaning_are_still_ordered(
    old: dict[str, Any],
    new: dict[str, Any],
    kind: str | None,
    details: list[str] | None,
    old_only: Any,
    new_only: Any,
) -> None:
    check_witnesses(old, new, old_only, new_only)
    [change] = diff_catalogs(catalog(tool(inputSchema=old)), catalog(tool(inputSchema=new))).changes
    if kind is None:  # not ordered: both ways, which gates
        assert (change.kind, change.severity) in (
            ("input-widened", "fail"),
            ("input-changed", "fail"),
        )
    else:
        assert change.kind == kind
    if details is not None:
        assert change.details == details


@settings(max_examples=300, deadline=None)
@given(schema=SCHEMAS)
# Where a rewrite would not be exact: two types, a property declared twice, names read by an
# additionalProperties beside the properties (or in the branch), a const no enum value equals.
@example({"allOf": [{"type": "string"}, {"type": "integer"}]})
@example({"properties": {"a": INTEGER}, "allOf": [{"properties": {"a": {"minimum": 3}}}]})
@example({"additionalProperties": False, "allOf": [{"properties": {"a": {}}}]})
@example({"allOf": [{"properties": {"a": {}}, "additionalProperties": False}]})
@example({"const": 1, "enum": [5]})
def test_the_normal_form_accepts_what_the_schema_accepts(schema: Any) -> None:
    # Exact for a validator of either draft: draft 7 ignores what stands beside a $ref, and
    # knows no prefixItems or dependentSchemas, in the schema and its normal form alike.
    written = {"allOf": [schema], "$defs": {"D": {"type": "string"}}}
    normal = normal_form(written)
    for draft in (Draft202012Validator, Draft7Validator):
        was, now = draft(written), draft(normal)
        for instance in SAMPLES:
            assert was.is_valid(instance) == now.is_valid(instance), (draft.__name__, instance)
