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
NULL = {"type": "null"}
SHORT = {"type": "string", "maxLength": 3}
ADDRESS = {
    "type": "object",
    "properties": {"zip": {"type": "string", "maxLength": 10}},
    "required": ["zip"],
}


def TREE(name: str) -> dict[str, Any]:  # noqa: N802 (a schema, named as the others)
    """A definition ``name`` that refers to itself: a tree of integers."""
    return {"type": ["integer", "array"], "items": {"$ref": f"#/$defs/{name}"}}


COLOR = {"Color": {"type": "string", "enum": ["red", "green"]}}


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
    # A nullable parameter as schema generators write it (h21): a type list, anyOf, oneOf.
    (at({"type": ["string", "null"]}), at({"anyOf": [STRING, NULL]})),
    (at({"anyOf": [STRING, NULL]}), at({"oneOf": [NULL, STRING]})),
    (at({"type": ["string", "null"], "maxLength": 3}), at({"anyOf": [SHORT, NULL]})),
    (at({"type": ["integer", "string"]}), at({"anyOf": [INTEGER, {"type": ["string"]}]})),
    # $ref and $defs refactors: a definition renamed, a subschema moved into $defs, a $ref
    # wrapped in allOf or beside a description (h21).
    (
        {**at({"$ref": "#/$defs/Address"}), "$defs": {"Address": ADDRESS}},
        {**at({"$ref": "#/$defs/PostalAddress"}), "$defs": {"PostalAddress": ADDRESS}},
    ),
    (at(ADDRESS), {**at({"$ref": "#/$defs/Address"}), "$defs": {"Address": ADDRESS}}),
    (
        {**at({"allOf": [{"$ref": "#/$defs/Color"}], "description": "c"}), "$defs": COLOR},
        {**at({"$ref": "#/$defs/Color", "description": "c"}), "$defs": COLOR},
    ),
    (
        {**at({"$ref": "#/definitions/A"}), "definitions": {"A": {"$ref": "#/definitions/B"}, "B": ADDRESS}},
        at(ADDRESS),
    ),
    # Integer bounds: an exclusive bound is the inclusive one next to it; a number that is a
    # multiple of 1 is an integer (h21).
    (at({"type": "integer", "exclusiveMinimum": 0}), at({"type": "integer", "minimum": 1})),
    (at({"type": "integer", "exclusiveMaximum": 10}), at({"type": "integer", "maximum": 9})),
    (at({"type": "integer", "minimum": 0.5}), at({"type": "integer", "minimum": 1})),
    (at({"type": "number", "multipleOf": 1}), at(INTEGER)),
    (
        at({"type": ["number", "null"], "multipleOf": 1, "exclusiveMinimum": 0}),
        at({"anyOf": [{"type": "integer", "minimum": 1}, NULL]}),
    ),
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
    *({"v": v} for v in (None, 0, 9, 10, 0.5, 1.5, -1, "long", "red", [], {"zip": "1"})),
    {"v": {"zip": 1}},
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
        # null no longer allowed: a narrowing (warn), not a blanket change (h21).
        (
            at({"anyOf": [STRING, NULL]}),
            at(STRING),
            "input-narrowed",
            ['/properties/v/type: ["string", "null"] → "string" (narrowed)'],
            {"v": None},
            None,
        ),
        # oneOf refuses what two branches take: a number and an integer are not disjoint.
        (
            at({"oneOf": [{"type": "number"}, INTEGER]}),
            at({"type": "number"}),
            None,
            None,
            None,
            {"v": 1},
        ),
        # A bound in one branch is not a bound of the other's type.
        (
            at({"anyOf": [{"type": "integer", "minimum": 5}, {"type": "number"}]}),
            at({"type": "number", "minimum": 5}),
            ("input-narrowed", "input-changed"),
            None,
            {"v": 1.5},
            None,
        ),
        # An exclusive bound moved to the inclusive one at the same number.
        (
            at({"type": "integer", "exclusiveMinimum": 0}),
            at({"type": "integer", "minimum": 0}),
            "input-widened",
            None,
            None,
            {"v": 0},
        ),
        # ... and for a number there is no next one: 0.5 lies between.
        (
            at({"type": "number", "exclusiveMinimum": 0}),
            at({"type": "number", "minimum": 1}),
            "input-changed",
            None,
            {"v": 0.5},
            None,
        ),
        # A number that is a multiple of 0.5 need not be an integer.
        (
            at({"type": "number", "multipleOf": 0.5}),
            at(INTEGER),
            ("input-narrowed", "input-changed"),
            None,
            {"v": 1.5},
            None,
        ),
        # A definition that refers to itself, renamed: compared as written (changed: gates).
        (
            {**at({"$ref": "#/$defs/T"}), "$defs": {"T": TREE("T")}},
            {**at({"$ref": "#/$defs/U"}), "$defs": {"U": TREE("U")}},
            None,
            None,
            None,
            None,
        ),
    ],
)
def test_spellings_alike_with_another_meaning_are_still_ordered(
    old: dict[str, Any],
    new: dict[str, Any],
    kind: str | tuple[str, ...] | None,
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
    else:  # a kind, or the kinds a sound comparison may give
        assert change.kind in ((kind,) if isinstance(kind, str) else kind)
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
