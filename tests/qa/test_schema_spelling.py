"""A schema written differently with the same meaning — a one-value ``enum`` for ``const``,
``required`` or ``properties`` moved into an ``allOf`` branch — is ``rewritten`` (info), not a
gate; spellings that look alike and mean something else are still ordered (pure Python)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from harness.cli import main
from harness.qa.drift import diff_catalogs
from harness.qa.schema_change import compare_schemas
from harness.qa.schema_spelling import normal_form
from harness.qa.strategies import valid_arguments
from harness.schemas import local_target
from harness.stages.validation import FORMAT_CHECKER, validate_arguments
from tests.qa.test_drift import accepts, catalog, check_witnesses, kind_of, tool, write
from tests.qa.test_schema_change import LEAVES, SAMPLES, _applied

STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NULL = {"type": "null"}
SHORT = {"type": "string", "maxLength": 3}
ADDRESS = {
    "type": "object",
    "properties": {"zip": {"type": "string", "maxLength": 10}},
    "required": ["zip"],
}


def tree(name: str) -> dict[str, Any]:
    """A definition ``name`` that refers to itself: a tree of integers."""
    return {"type": ["integer", "array"], "items": {"$ref": f"#/$defs/{name}"}}


COLOR = {"Color": {"type": "string", "enum": ["red", "green"]}}
# A pydantic model as pydantic writes it in $defs: its title, its required member.
MODEL = {"title": "Address", **ADDRESS}


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
    # format asks something of strings alone, as minLength does.
    (
        at({"anyOf": [{"type": "string", "format": "email"}, NULL]}),
        at({"type": ["string", "null"], "format": "email"}),
    ),
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
        {
            **at({"$ref": "#/definitions/A"}),
            "definitions": {"A": {"$ref": "#/definitions/B"}, "B": ADDRESS},
        },
        at(ADDRESS),
    ),
    # A pydantic Optional[Model] (and a model field wrapped in allOf) written out by hand,
    # with the model's title beside the type: the title stood in the branch the $ref led
    # to, and kept the branches from merging (input-changed).
    (
        {
            **at({"anyOf": [{"$ref": "#/$defs/Address"}, NULL], "default": None}),
            "$defs": {"Address": MODEL},
        },
        at({**MODEL, "type": ["object", "null"], "default": None}),
    ),
    (
        {
            **at({"allOf": [{"$ref": "#/$defs/Address"}], "description": "Ship to"}),
            "$defs": {"Address": MODEL},
        },
        at({**MODEL, "description": "Ship to"}),
    ),
    (
        at({"oneOf": [NULL, {**MODEL, "$comment": "c", "examples": [{"zip": "1"}]}]}),
        at({**MODEL, "type": ["null", "object"], "$comment": "c", "examples": [{"zip": "1"}]}),
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
# Values the nullable, $ref and integer-bound rewrites read (h21).
PARAMETER_VALUES: list[Any] = [
    *(None, 0, 9, 10, 0.5, 1.5, -1, "long", "red", [], {"zip": "1"}, {"zip": 1}),
]
INSTANCES: list[Any] = [
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
    *({"v": v} for v in PARAMETER_VALUES),
]


@pytest.mark.parametrize(("old", "new"), SAME_MEANING)
def test_a_schema_written_differently_with_the_same_meaning_is_rewritten_at_info(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    assert [accepts(old, i) for i in INSTANCES] == [accepts(new, i) for i in INSTANCES]
    for was, now in ((old, new), (new, old)):
        assert [c.describe() for c in compare_schemas(was, now)] == []
        assert kind_of(was, now) == [("rewritten", "info", "set_qty")]


# The Optional[Model] above, written out by hand without the model's annotations: those
# are what changed, as anywhere else (a description change), not the input.
OPTIONAL_ADDRESS = {
    **at({"anyOf": [{"$ref": "#/$defs/Address"}, NULL], "description": "Ship to"}),
    "$defs": {"Address": {**MODEL, "description": "A postal address"}},
}


@pytest.mark.parametrize(
    ("by_hand", "described"),
    [
        (
            at({**ADDRESS, "type": ["object", "null"], "description": "Ship to"}),
            {"/properties/v/title", "/properties/v/allOf/0"},
        ),
        (
            at({**MODEL, "type": ["object", "null"], "description": "Ship to"}),
            {"/properties/v/allOf/0"},
        ),
        (
            at({**ADDRESS, "type": ["object", "null"], "description": "A postal address"}),
            {"/properties/v/title", "/properties/v/description", "/properties/v/allOf/0"},
        ),
    ],
)
def test_an_optional_model_written_out_without_its_annotations_is_a_description_change(
    by_hand: dict[str, Any], described: set[str]
) -> None:
    # The field's description and the model's both stay: the model's beside the type where
    # the field says none, else in an allOf branch of its own (a pointer of the normal form).
    assert [accepts(OPTIONAL_ADDRESS, i) for i in INSTANCES] == [
        accepts(by_hand, i) for i in INSTANCES
    ]
    for was, now in ((OPTIONAL_ADDRESS, by_hand), (by_hand, OPTIONAL_ADDRESS)):
        found = list(compare_schemas(was, now))
        assert {c.direction for c in found} == {"described"}, [c.describe() for c in found]
        assert {c.path for c in found} == described
        assert [k for k, _severity, _tool in kind_of(was, now)] == ["description"]


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
            {**at({"$ref": "#/$defs/T"}), "$defs": {"T": tree("T")}},
            {**at({"$ref": "#/$defs/U"}), "$defs": {"U": tree("U")}},
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


# -- the normal form against a validator ------------------------------------------------------

# Values each rewrite reads: numbers next to a bound, halves, a whole float, null, nested arrays
# (a definition that refers to itself), objects with and without the names the schemas use.
SPELLING_SAMPLES: list[Any] = [
    *SAMPLES,
    *(2, 9, 10, -1, 0.5, 1.5, 1.0, 10.0, "", [[1]], [[]], [1.5], [None], {"b": 2}),
    *({"a": None}, {"a": "x"}, {"a": 1.5}, {"a": [1]}),
]
TYPE_NAMES = st.sampled_from(["string", "integer", "number", "null", "array", "object", "boolean"])
TYPES = st.one_of(TYPE_NAMES, st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True))
BOUND = st.sampled_from([0, 1, 2, 9, 10, -1, 0.5, 2.5, 1.0])
# A bound of each kind, or none: as a schema generator writes an integer's or a number's.
BOUNDS = st.fixed_dictionaries(
    {},
    optional={
        "minimum": BOUND,
        "maximum": BOUND,
        "exclusiveMinimum": st.one_of(BOUND, st.just(True)),  # draft 4's boolean form too
        "exclusiveMaximum": BOUND,
        "multipleOf": st.sampled_from([1, 2, 0.5, 1.0]),
    },
)
# What a branch may say of the values of its type alone, and what reads the names it declares.
TYPED = st.sampled_from(
    [
        {},
        {"maxLength": 1},
        {"minimum": 1},
        {"exclusiveMinimum": 1},
        {"minItems": 1},
        {"items": {"type": "integer"}},
        {"required": ["a"]},
        {"properties": {"a": {"type": "integer"}}},
        {"additionalProperties": False},
        {"enum": [1, "a", None]},
        {"description": "d"},
    ]
)
REFS = st.sampled_from(
    [
        {"$ref": "#/$defs/D"},
        {"$ref": "#/$defs/E"},  # E refers to D
        {"$ref": "#/$defs/R"},  # R refers to itself
        {"$ref": "#/$defs/D", "description": "d"},
        {"$ref": "#/$defs/D", "maxLength": 1},  # read by 2020-12, not by Draft 7
        {"allOf": [{"$ref": "#/$defs/D"}], "description": "d"},
        {"$ref": "#/definitions/D"},
    ]
)
# ... and as valid in Draft 2020-12 (no boolean exclusiveMinimum), which the harness draws from.
BOUNDED_2020 = st.builds(
    lambda t, b: {"type": t, **b},
    st.sampled_from(["integer", "number", ["integer", "null"], ["number", "string"]]),
    BOUNDS.filter(lambda b: b.get("exclusiveMinimum") is not True),
)
NUMERIC = st.sampled_from(["integer", "number", ["integer", "null"], ["number", "string"]])
BOUNDED = st.builds(lambda t, b: {"type": t, **b}, NUMERIC, BOUNDS)
TYPED_LEAF = st.builds(lambda t, k: {"type": t, **k}, TYPES, TYPED)
# The leaves of SCHEMAS, and (as often again) those the rewrites read.
SPELLING_LEAVES = st.one_of(LEAVES, *(BOUNDED, TYPED_LEAF, REFS) * 3)


def _unions(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """anyOf or oneOf of branches (typed, most of them), with a keyword beside it or none."""
    branch = st.one_of(TYPED_LEAF, TYPED_LEAF, BOUNDED, inner)
    return st.builds(
        lambda key, branches, beside: {key: branches, **beside},
        st.sampled_from(["anyOf", "oneOf"]),
        st.lists(branch, min_size=1, max_size=3),
        TYPED | st.sampled_from([{"type": "string"}, {"unevaluatedProperties": False}]),
    )


SPELLINGS = st.recursive(
    SPELLING_LEAVES, lambda inner: st.one_of(_applied(inner), _unions(inner)), max_leaves=6
)


@settings(max_examples=400, deadline=None)
@given(
    schema=SPELLINGS,
    definition=st.one_of(LEAVES, SPELLING_LEAVES).filter(lambda d: "$ref" not in json.dumps(d)),
)
# Where a rewrite would not be exact: two types, a property declared twice, names read by an
# additionalProperties beside the properties (or in the branch), a const no enum value equals.
@example({"allOf": [{"type": "string"}, {"type": "integer"}]}, STRING)
@example({"properties": {"a": INTEGER}, "allOf": [{"properties": {"a": {"minimum": 3}}}]}, STRING)
@example({"additionalProperties": False, "allOf": [{"properties": {"a": {}}}]}, STRING)
@example({"allOf": [{"properties": {"a": {}}, "additionalProperties": False}]}, STRING)
@example({"const": 1, "enum": [5]}, STRING)
# ... oneOf over types one value has both of, a bound that would reach another branch's type,
# names read by additionalProperties beside the anyOf, a number's bound (no next number), a
# $ref beside a keyword Draft 7 ignores, a definition that refers to itself.
@example({"oneOf": [{"type": "number"}, INTEGER]}, STRING)
@example({"anyOf": [{"type": "integer", "minimum": 5}, {"type": "number"}]}, STRING)
@example(
    {
        "anyOf": [{"type": "object", "properties": {"a": INTEGER}}, NULL],
        "additionalProperties": False,
    },
    STRING,
)
@example({"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, STRING)
@example({"type": ["integer", "string"], "exclusiveMaximum": 2.5, "minimum": 0.5}, STRING)
@example({"type": "integer", "exclusiveMinimum": True}, STRING)
@example({"$ref": "#/$defs/D", "maxLength": 1}, STRING)
@example({"$ref": "#/$defs/R"}, STRING)
def test_the_normal_form_accepts_what_the_schema_accepts(schema: Any, definition: Any) -> None:
    # Exact for a validator of either draft: draft 7 ignores what stands beside a $ref, and
    # knows no prefixItems or dependentSchemas, in the schema and its normal form alike.
    written = {
        "allOf": [schema],
        "$defs": {"D": definition, "E": {"$ref": "#/$defs/D"}, "R": tree("R")},
        "definitions": {"D": definition},
    }
    normal = normal_form(written)
    for draft in (Draft202012Validator, Draft7Validator):
        was, now = draft(written), draft(normal)
        for instance in SPELLING_SAMPLES:
            assert was.is_valid(instance) == now.is_valid(instance), (draft.__name__, instance)


# -- a $ref's JSON pointer, read as validation reads it ---------------------------------------

# Definitions whose names a pointer spells with escapes. The fragment is percent-decoded before
# the pointer is split (RFC 6901 §6): `%2F` is a "/" between two names, `~1` one inside a name.
ESCAPED = {"a/b": STRING, "a": {"b": INTEGER}, "a b": NULL, "a~b": SHORT}


@pytest.mark.parametrize(
    ("ref", "meant"),
    [
        ("#/$defs/a~1b", STRING),
        ("#/$defs/a%2Fb", INTEGER),  # $defs, a, b: not the definition "a/b"
        ("#/$defs/a%20b", NULL),
        ("#/$defs/a~0b", SHORT),
        ("#/$defs/a%7E1b", STRING),  # %7E is "~", decoded first: then ~1 is "/"
    ],
)
def test_a_ref_written_out_is_what_validation_reads_it_as(ref: str, meant: Any) -> None:
    schema = {**at({"$ref": ref}), "$defs": ESCAPED}
    assert all(accepts(schema, i) == accepts(at(meant), i) for i in INSTANCES)  # validation
    assert local_target(schema, ref) == meant
    assert normal_form(schema) == at(meant)
    assert [c.describe() for c in compare_schemas(schema, at(meant))] == []


# -- a rewrite the comparison calls no change, against values drawn from each schema ----------

BRANCH_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object"])
# A schema a generator writes, where the rewrites apply: a nullable parameter (a type list, or
# anyOf / oneOf branches), bounds, a $ref to a definition.
PLAIN_OR_TYPED = st.one_of(st.just({}), TYPED)
WRITTEN = st.one_of(
    st.builds(lambda t, k: {"type": [t, "null"], **k}, BRANCH_TYPES, PLAIN_OR_TYPED),
    st.builds(
        lambda key, t, k, u: {key: [{"type": t, **k}, {"type": u}]},
        st.sampled_from(["anyOf", "oneOf"]),
        BRANCH_TYPES,
        PLAIN_OR_TYPED,
        st.sampled_from(["null", "integer", "number", "string"]),
    ),
    st.builds(
        lambda t, key, n: {"type": t, key: n},
        st.sampled_from(["integer", "number"]),
        st.sampled_from(["exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
        st.sampled_from([0, 1, 10, 0.5]),
    ),
    BOUNDED_2020,
    st.sampled_from([{"$ref": "#/$defs/D"}, {"$ref": "#/$defs/D", "description": "d"}]),
)


def respellings(node: dict[str, Any], definition: Any) -> list[dict[str, Any]]:
    """``node`` (whose $refs lead to ``definition``, at /$defs/D) written each other way h21 met,
    exact or not: a type list as anyOf or oneOf branches, anyOf as oneOf and back, null
    dropped, an exclusive bound as the inclusive one next to it (or at the same number), a
    number's multipleOf 1 as integer, a $ref written out, wrapped in allOf, or renamed."""
    found: list[dict[str, Any]] = []
    kind, rest = node.get("type"), {k: v for k, v in node.items() if k != "type"}
    if isinstance(kind, list):
        for key in ("anyOf", "oneOf"):
            found.append({key: [{"type": kind[0], **rest}, {"type": kind[1]}]})
        found.append({"type": kind[0], **rest})
    for key, other in (("anyOf", "oneOf"), ("oneOf", "anyOf")):
        if key in node:
            found.append({other: node[key]})
            found.append({"type": list(dict.fromkeys(b["type"] for b in node[key]))})
    for strict, inclusive, step in (
        ("exclusiveMinimum", "minimum", 1),
        ("exclusiveMaximum", "maximum", -1),
    ):
        value = node.get(strict)
        if isinstance(value, int | float) and not isinstance(value, bool):
            moved = {k: v for k, v in node.items() if k != strict}
            found += [{**moved, inclusive: value + step}, {**moved, inclusive: value}]
    if node.get("multipleOf") == 1 and kind == "number":
        found.append({**{k: v for k, v in rest.items() if k != "multipleOf"}, "type": "integer"})
    if "$ref" in node:
        beside = {k: v for k, v in node.items() if k != "$ref"}
        found.append({"allOf": [definition], **beside} if beside else definition)
        found.append({"allOf": [{"$ref": "#/$defs/D"}], **beside})
        found.append({**node, "$ref": "#/$defs/Renamed"})
    return found


def parameter(
    old: dict[str, Any], new: dict[str, Any], **beside: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two inputSchemas with parameter ``v`` required, ``old`` in one and ``new`` in the other
    (and the keywords ``beside`` in both: ``$defs``)."""
    return {**at(old), "required": ["v"], **beside}, {**at(new), "required": ["v"], **beside}


# Near misses: the inclusive bound at the same number, oneOf over types a value has both of, a
# number's multipleOf that is not whole.
NEAR_MISSES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"type": "integer", "exclusiveMinimum": 0}, {"type": "integer", "minimum": 0}),
    ({"oneOf": [{"type": "number"}, INTEGER]}, {"type": ["number", "integer"]}),
    ({"type": "number", "multipleOf": 0.5}, {"type": "integer"}),
]


@st.composite
def rewritten(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool's inputSchema with one parameter written as a generator writes it, and the same
    with that parameter written another way (of the same meaning, or not); a near miss one
    time in four."""
    if draw(st.integers(0, 3)) == 0:
        return parameter(*draw(st.sampled_from(NEAR_MISSES)))
    # A type named alone or in a list of one (the fuzzer draws objects for both).
    kinds = st.one_of(BRANCH_TYPES, st.builds(lambda t: [t], BRANCH_TYPES))
    definition = draw(
        st.one_of(BOUNDED_2020, st.builds(lambda t, k: {"type": t, **k}, kinds, TYPED))
    )
    node = draw(WRITTEN)
    found = respellings(node, definition)
    assume(found)
    respelled = draw(st.sampled_from(found))
    return parameter(node, respelled, **{"$defs": {"D": definition, "Renamed": definition}})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(pair=rewritten(), data=st.data())
def test_a_rewrite_the_comparison_calls_no_change_accepts_the_same_drawn_values(
    pair: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject
) -> None:
    old, new = pair
    ordered = {c.direction for c in compare_schemas(old, new)} - {"described", "marked"}
    # Values drawn from one schema are taken by the other, unless the comparison says the
    # other refuses some: none when it says the two mean the same (rewritten), old's when it
    # says new widened, new's when it says new narrowed.
    for source, target, allowed in ((old, new, {"widened"}), (new, old, {"narrowed"})):
        if not ordered <= allowed:
            continue
        drawn = valid_arguments(tool(inputSchema=source))
        if drawn.is_empty:
            continue  # bounds no value fits (a minimum above the maximum)
        for value in data.draw(st.lists(drawn, min_size=1, max_size=3)):
            assert accepts(target, value), (source, target, value, ordered)


# -- a nullable type's own keywords beside its type list ---------------------------------------

# Keywords each of which asks something of values of one type alone (a number's of integers
# too), as a nullable parameter of that type says them.
OWN_KEYWORDS: dict[str, list[dict[str, Any]]] = {
    "string": [
        *({"format": name} for name in sorted(FORMAT_CHECKER.checkers)),
        *({"minLength": 2}, {"maxLength": 3}, {"pattern": "^a"}),
        *({"contentMediaType": "application/json"}, {"contentEncoding": "base64"}),
    ],
    "number": [{"minimum": 1}, {"exclusiveMaximum": 5}, {"multipleOf": 0.5}],
    "integer": [{"maximum": 4}, {"multipleOf": 2}],
    "array": [{"items": INTEGER}, {"minItems": 1}, {"uniqueItems": True}, {"contains": INTEGER}],
    "object": [{"required": ["a"]}, {"properties": {"a": INTEGER}}, {"maxProperties": 1}],
}
# Values each of those keywords reads: strings of each format and not, numbers about the bounds.
NULLABLE_VALUES: list[Any] = [
    *(None, True, "", "a", "ab", "abcd", "a@b.test", "2024-01-02", "10.0.0.1", "e30="),
    *("00000000-0000-0000-0000-000000000000", 0, 1, 2, 4, 5, 1.5, 0.25),
    *([], [1], [1, 1], ["x"], {}, {"a": 1}, {"a": "1"}, {"b": 1, "c": 2}),
]


@st.composite
def nullable(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A nullable parameter as anyOf or oneOf of a type (with one or two keywords of its own)
    and null, either order, and the same as a type list with the keywords beside it."""
    kind = draw(st.sampled_from(sorted(OWN_KEYWORDS)))
    own = draw(st.lists(st.sampled_from(OWN_KEYWORDS[kind]), min_size=1, max_size=2))
    keywords = {k: v for each in own for k, v in each.items()}
    branches = [{"type": kind, **keywords}, NULL]
    if draw(st.booleans()):
        branches.reverse()
    key = draw(st.sampled_from(["anyOf", "oneOf"]))
    return at({key: branches}), at({"type": [kind, "null"], **keywords})


@settings(max_examples=60, deadline=None)
@given(pair=nullable())
@example(
    pair=(
        at({"anyOf": [{"type": "string", "format": "email"}, NULL]}),
        at({"type": ["string", "null"], "format": "email"}),
    )
)
@example(
    pair=(
        at({"oneOf": [NULL, {"type": "string", "contentEncoding": "base64"}]}),
        at({"type": ["string", "null"], "contentEncoding": "base64"}),
    )
)
def test_a_nullable_type_s_own_keywords_beside_its_type_list_are_no_change(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    # The same values for the harness's validator (formats asserted), and no change for the
    # comparison: the keywords ask nothing of null.
    old, new = pair
    for value in NULLABLE_VALUES:
        fits = [not validate_arguments(tool(inputSchema=s), {"v": value}) for s in pair]
        assert fits[0] == fits[1], (value, fits)
    for was, now in ((old, new), (new, old)):
        assert [c.describe() for c in compare_schemas(was, now)] == []


@pytest.mark.parametrize("name", sorted(FORMAT_CHECKER.checkers))
def test_every_format_the_harness_asserts_passes_values_that_are_not_strings(name: str) -> None:
    # What makes format a string's keyword beside a type list (schema_spelling._TYPED_KEYWORDS).
    assert all(FORMAT_CHECKER.conforms(v, name) for v in (None, True, 0, 1.5, [], [1], {}))
