"""Schemas compared through every keyword that holds a subschema ($defs, anyOf, oneOf, allOf,
not, if/then/else, prefixItems, dependentSchemas, …): each change classed by what it means
to an agent, and named by a JSON pointer (pure Python: catalogs made from Tool values)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.qa.drift import diff_catalogs
from harness.qa.schema_change import compare_schemas
from tests.qa.test_drift import accepts, catalog, check_witnesses, kind_of, tool, write

# What pydantic and zod emit: a parameter that reaches its schema through $ref.
SHELF = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "description": "Shelf name"}},
}


def shelves(**shelf: Any) -> dict[str, Any]:
    """The shelve tool's inputSchema, its Shelf definition changed by ``shelf``."""
    return {
        "type": "object",
        "properties": {"shelves": {"type": "array", "items": {"$ref": "#/$defs/Shelf"}}},
        "$defs": {"Shelf": {**SHELF, **shelf}},
    }


def described_name(text: str) -> dict[str, Any]:
    return {"properties": {"name": {"type": "string", "description": text}}}


def test_a_description_inside_defs_is_a_description_warning_at_its_pointer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(tmp_path / "old.json", tool("shelve", inputSchema=shelves()))
    new = write(
        tmp_path / "new.json",
        tool("shelve", inputSchema=shelves(**described_name("The shelf's full name"))),
    )
    assert main(["diff", old, new]) == 0
    out = capsys.readouterr().out
    assert "WARN  shelve: description changed" in out
    assert (
        '/$defs/Shelf/properties/name/description: "Shelf name" → "The shelf\'s full name" '
        "(described)" in out
    )
    assert "inputSchema changed" not in out


@pytest.mark.parametrize(
    ("new", "kind", "detail", "old_only", "new_only"),
    [
        (
            shelves(required=[]),
            "input-widened",
            "/$defs/Shelf/required: 'name' no longer required (widened)",
            None,
            {"shelves": [{}]},
        ),
        (
            shelves(
                properties={"name": {"type": "string", "description": "Shelf name", "maxLength": 3}}
            ),
            "input-narrowed",
            "/$defs/Shelf/properties/name/maxLength: (none) → 3 (narrowed)",
            {"shelves": [{"name": "Fiction"}]},
            None,
        ),
    ],
)
def test_a_constraint_inside_defs_is_ordered_as_anywhere_else(
    new: dict[str, Any], kind: str, detail: str, old_only: Any, new_only: Any
) -> None:
    check_witnesses(shelves(), new, old_only, new_only)
    [change] = diff_catalogs(
        catalog(tool("shelve", inputSchema=shelves())), catalog(tool("shelve", inputSchema=new))
    ).changes
    assert (change.kind, change.details) == (kind, [detail])


def test_a_description_inside_a_branch_is_a_description_warning() -> None:
    def key(text: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "key": {"anyOf": [{"type": "string", "description": text}, {"type": "integer"}]}
            },
        }

    [change] = diff_catalogs(
        catalog(tool(inputSchema=key("An ISBN"))), catalog(tool(inputSchema=key("An ISBN-13")))
    ).changes
    assert (change.kind, change.severity) == ("description", "warn")
    assert change.details == [
        '/properties/key/anyOf/0/description: "An ISBN" → "An ISBN-13" (described)'
    ]


def at(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as parameter ``v`` of an object."""
    return {"type": "object", "properties": {"v": schema}}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NULL = {"type": "null"}


@pytest.mark.parametrize(
    ("old", "new", "kind", "old_only", "new_only"),
    [
        # Inside a branch, a bound is a bound: the direction of the whole follows it.
        (
            at({"anyOf": [{"type": "string", "maxLength": 3}, INTEGER]}),
            at({"anyOf": [{"type": "string", "maxLength": 9}, INTEGER]}),
            "input-widened",
            None,
            {"v": "long"},
        ),
        (
            at({"allOf": [STRING, {"maxLength": 9}]}),
            at({"allOf": [STRING, {"maxLength": 3}]}),
            "input-narrowed",
            {"v": "long"},
            None,
        ),
        # A branch more: anyOf takes more, allOf asks more; a branch less the other way.
        (
            at({"anyOf": [STRING]}),
            at({"anyOf": [STRING, INTEGER]}),
            "input-widened",
            None,
            {"v": 1},
        ),
        (
            at({"anyOf": [STRING, INTEGER]}),
            at({"anyOf": [STRING]}),
            "input-narrowed",
            {"v": 1},
            None,
        ),
        (
            at({"allOf": [STRING]}),
            at({"allOf": [STRING, {"maxLength": 3}]}),
            "input-narrowed",
            {"v": "long"},
            None,
        ),
        (at({}), at({"allOf": [STRING]}), "input-narrowed", {"v": 1}, None),
        # not turns a change around: a wider exclusion takes less.
        (
            at({"not": {"type": "string", "maxLength": 3}}),
            at({"not": {"type": "string", "maxLength": 9}}),
            "input-narrowed",
            {"v": "long"},
            None,
        ),
        (at({"not": STRING}), at({}), "input-widened", None, {"v": "x"}),
        # oneOf refuses what two branches take: a wider branch may refuse, so not ordered.
        (
            at({"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 5}]}),
            at({"oneOf": [{"type": "string", "maxLength": 6}, {"type": "string", "minLength": 5}]}),
            "input-changed",
            {"v": "longer"},
            {"v": "four"},
        ),
        # if selects then or else: a wider if moves values from else to then.
        (
            at({"if": {"maxLength": 3}, "then": STRING, "else": INTEGER}),
            at({"if": {"maxLength": 5}, "then": STRING, "else": INTEGER}),
            "input-changed",
            None,
            {"v": "four"},
        ),
        (
            at({"if": STRING, "then": {"maxLength": 3}}),
            at({"if": STRING, "then": {"maxLength": 9}}),
            "input-widened",
            None,
            {"v": "long"},
        ),
        (
            at({"if": STRING, "else": INTEGER}),
            at({"if": STRING, "else": {"type": ["integer", "null"]}}),
            "input-widened",
            None,
            {"v": None},
        ),
        # prefixItems position by position (items left free).
        (
            at({"prefixItems": [STRING, INTEGER]}),
            at({"prefixItems": [STRING, {"type": ["integer", "null"]}]}),
            "input-widened",
            None,
            {"v": ["a", None]},
        ),
        (
            at({"prefixItems": [STRING]}),
            at({"prefixItems": [STRING, INTEGER]}),
            "input-narrowed",
            {"v": ["a", "b"]},
            None,
        ),
        # dependentSchemas, propertyNames, contains: each a subschema.
        (
            {"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}},
            {"type": "object", "dependentSchemas": {"a": {"required": ["b", "c"]}}},
            "input-narrowed",
            {"a": 1, "b": 1},
            None,
        ),
        (
            {"type": "object", "propertyNames": {"maxLength": 3}},
            {"type": "object", "propertyNames": {"maxLength": 5}},
            "input-widened",
            None,
            {"abcd": 1},
        ),
        (
            at({"contains": {"type": "string", "maxLength": 3}}),
            at({"contains": {"type": "string", "maxLength": 5}}),
            "input-widened",
            None,
            {"v": ["four"]},
        ),
        (
            {"type": "object", "dependentRequired": {"a": ["b"]}},
            {"type": "object", "dependentRequired": {"a": []}},
            "input-widened",
            None,
            {"a": 1},
        ),
        # A definition used under not is turned around with it.
        (
            {"$defs": {"S": {"type": "string", "maxLength": 3}}, "not": {"$ref": "#/$defs/S"}},
            {"$defs": {"S": {"type": "string", "maxLength": 9}}, "not": {"$ref": "#/$defs/S"}},
            "input-narrowed",
            "long",
            None,
        ),
        # ... used both ways (or through oneOf), not ordered.
        (
            {
                "$defs": {"S": {"type": "string", "maxLength": 3}},
                "anyOf": [{"$ref": "#/$defs/S"}, {"not": {"$ref": "#/$defs/S"}, "type": "array"}],
            },
            {
                "$defs": {"S": {"type": "string", "maxLength": 9}},
                "anyOf": [{"$ref": "#/$defs/S"}, {"not": {"$ref": "#/$defs/S"}, "type": "array"}],
            },
            "input-changed",
            None,
            "long",
        ),
        # ... and through another definition.
        (
            {
                "$defs": {"S": {"type": "string", "maxLength": 3}, "T": {"$ref": "#/$defs/S"}},
                "not": {"$ref": "#/$defs/T"},
            },
            {
                "$defs": {"S": {"type": "string", "maxLength": 9}, "T": {"$ref": "#/$defs/S"}},
                "not": {"$ref": "#/$defs/T"},
            },
            "input-narrowed",
            "long",
            None,
        ),
        # A definition a $ref now names, that was not there: not ordered.
        (
            {"$ref": "#/$defs/S"},
            {"$ref": "#/$defs/S", "$defs": {"S": STRING}},
            "input-changed",
            None,
            None,
        ),
    ],
)
def test_each_subschema_keyword_is_ordered_for_a_validator(
    old: dict[str, Any], new: dict[str, Any], kind: str, old_only: Any, new_only: Any
) -> None:
    check_witnesses(old, new, old_only, new_only)
    assert not (new_only is not None and kind == "input-narrowed")
    assert not (old_only is not None and kind == "input-widened")
    severity = "warn" if kind == "input-narrowed" else "fail"
    assert kind_of(old, new) == [(kind, severity, "set_qty")]


# Two kinds of item, told apart by a required `kind` (a discriminator): no value takes both.
def item(kind: str, **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"kind": {"const": kind}, **properties},
        "required": ["kind"],
    }


@pytest.mark.parametrize(
    ("old", "new", "kind", "detail", "old_only", "new_only"),
    [
        # oneOf branches no value can match two of (types apart, a discriminator): oneOf takes
        # what anyOf takes, and a branch's change orders the whole.
        (
            at({"oneOf": [{"type": "string", "maxLength": 3}, INTEGER]}),
            at({"oneOf": [{"type": "string", "maxLength": 9}, INTEGER]}),
            "input-widened",
            "/properties/v/oneOf/0/maxLength: 3 → 9 (widened)",
            None,
            {"v": "long"},
        ),
        (
            at({"oneOf": [{"type": "string", "maxLength": 9}, NULL]}),
            at({"oneOf": [{"type": "string", "maxLength": 3}, NULL]}),
            "input-narrowed",
            "/properties/v/oneOf/0/maxLength: 9 → 3 (narrowed)",
            {"v": "long"},
            None,
        ),
        (
            at({"oneOf": [item("book", format={"enum": ["paper"]}), item("film")]}),
            at({"oneOf": [item("book", format={"enum": ["paper", "audio"]}), item("film")]}),
            "input-widened",
            '/properties/v/oneOf/0/properties/format/enum: +"audio" (widened)',
            None,
            {"v": {"kind": "book", "format": "audio"}},
        ),
        (
            at({"oneOf": [{"enum": ["a", "b"]}, {"enum": ["c"]}]}),
            at({"oneOf": [{"enum": ["a"]}, {"enum": ["c"]}]}),
            "input-narrowed",
            '/properties/v/oneOf/0/enum: -"b" (narrowed)',
            {"v": "b"},
            None,
        ),
        (
            at({"oneOf": [STRING, {"type": "integer", "description": "A count"}]}),
            at({"oneOf": [STRING, {"type": "integer", "description": "How many"}]}),
            "description",
            '/properties/v/oneOf/1/description: "A count" → "How many" (described)',
            None,
            None,
        ),
        # Branches that may overlap: a wider branch may refuse what another took, a narrower
        # one let through what two took. Not ordered, and the place named.
        (
            at({"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 5}]}),
            at({"oneOf": [{"type": "string", "maxLength": 6}, {"type": "string", "minLength": 5}]}),
            "input-changed",
            "/properties/v/oneOf/0/maxLength: 3 → 6; the oneOf's branches may overlap (changed)",
            {"v": "longer"},
            {"v": "four"},
        ),
        (
            at({"oneOf": [STRING, INTEGER]}),
            at({"oneOf": [{"type": ["string", "integer"]}, INTEGER]}),
            "input-changed",
            '/properties/v/oneOf/0/type: "string" → ["string", "integer"]; the oneOf\'s '
            "branches may overlap (changed)",
            {"v": 1},
            None,
        ),
        # then and else: each a conjunct, under the if that selects it.
        (
            at({"if": STRING, "then": {"maxLength": 3}, "else": {"minimum": 5}}),
            at({"if": STRING, "then": {"maxLength": 3}, "else": {"minimum": 1}}),
            "input-widened",
            "/properties/v/else/minimum: 5 → 1 (widened)",
            None,
            {"v": 2},
        ),
        (
            at({"if": STRING, "then": {"maxLength": 3}, "else": {"description": "A count"}}),
            at({"if": STRING, "then": {"maxLength": 3}, "else": {"description": "How many"}}),
            "description",
            '/properties/v/else/description: "A count" → "How many" (described)',
            None,
            None,
        ),
        # if without then takes what if or else takes: a wider if widens. Without else, what
        # if refuses or then takes: a wider if narrows.
        (
            at({"if": {"type": "string", "maxLength": 3}, "else": INTEGER}),
            at({"if": {"type": "string", "maxLength": 9}, "else": INTEGER}),
            "input-widened",
            "/properties/v/if/maxLength: 3 → 9 (widened)",
            None,
            {"v": "long"},
        ),
        (
            at({"if": {"type": "string", "maxLength": 3}, "then": {"maxLength": 2}}),
            at({"if": {"type": "string", "maxLength": 9}, "then": {"maxLength": 2}}),
            "input-narrowed",
            "/properties/v/if/maxLength: 3 → 9 (narrowed)",
            {"v": "long"},
            None,
        ),
        # ... and a definition an if uses, so.
        (
            {
                "$defs": {"S": {"type": "string", "maxLength": 3}},
                "if": {"$ref": "#/$defs/S"},
                "else": INTEGER,
            },
            {
                "$defs": {"S": {"type": "string", "maxLength": 9}},
                "if": {"$ref": "#/$defs/S"},
                "else": INTEGER,
            },
            "input-widened",
            "/$defs/S/maxLength: 3 → 9 (widened)",
            None,
            "long",
        ),
    ],
)
def test_a_change_inside_oneof_or_if_is_ordered_where_it_can_be(
    old: dict[str, Any],
    new: dict[str, Any],
    kind: str,
    detail: str,
    old_only: Any,
    new_only: Any,
) -> None:
    check_witnesses(old, new, old_only, new_only)
    [change] = diff_catalogs(catalog(tool(inputSchema=old)), catalog(tool(inputSchema=new))).changes
    assert (change.kind, change.details) == (kind, [detail])


def test_a_definition_added_that_nothing_refers_to_changes_no_meaning() -> None:
    old = {"type": "object", "$defs": {"Old": STRING}}
    new = {"type": "object", "$defs": {"Old": INTEGER, "New": STRING}}
    [change] = diff_catalogs(catalog(tool(inputSchema=old)), catalog(tool(inputSchema=new))).changes
    # An unused definition's own change is still shown, ordered as if it were used.
    assert (change.kind, change.details) == (
        "input-changed",
        ['/$defs/Old/type: "string" → "integer" (changed)'],
    )
    assert list(compare_schemas({"$defs": {}}, {"$defs": {"New": STRING}})) == []


def test_changes_name_their_place_and_never_dump_a_subtree() -> None:
    old = at({"anyOf": [{"type": "object", "properties": {"a": STRING, "b": INTEGER}}, NULL]})
    new = at({"anyOf": [{"type": "object", "properties": {"a": STRING, "b": NULL}}, NULL]})
    assert [c.describe() for c in compare_schemas(old, new)] == [
        '/properties/v/anyOf/0/properties/b/type: "integer" → "null" (changed)'
    ]
    added = at({"anyOf": [STRING, {"type": "object", "properties": {"deep": STRING}}]})
    found = [c.describe() for c in compare_schemas(at({"anyOf": [STRING]}), added)]
    assert found == ["/properties/v/anyOf/1: branch added (widened)"]


# -- the same meaning, written in another order -----------------------------------------


REORDERED = [
    (at({"anyOf": [STRING, INTEGER]}), at({"anyOf": [INTEGER, STRING]})),
    (at({"allOf": [STRING, {"maxLength": 10}]}), at({"allOf": [{"maxLength": 10}, STRING]})),
    (at({"oneOf": [STRING, INTEGER]}), at({"oneOf": [INTEGER, STRING]})),
    (at({"type": ["string", "null"]}), at({"type": ["null", "string"]})),
    (
        {"type": "object", "required": ["a", "b"], "properties": {"a": STRING, "b": STRING}},
        {"type": "object", "required": ["b", "a"], "properties": {"b": STRING, "a": STRING}},
    ),
]


@pytest.mark.parametrize(("old", "new"), REORDERED)
def test_branches_reordered_are_rewritten_at_info(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert list(compare_schemas(old, new)) == []
    found = kind_of(old, new)
    assert found in ([], [("rewritten", "info", "set_qty")])


def test_diff_passes_the_gate_when_branches_are_only_reordered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(tmp_path / "old.json", tool(inputSchema=REORDERED[0][0]))
    new = write(tmp_path / "new.json", tool(inputSchema=REORDERED[0][1]))
    assert main(["diff", old, new, "--json"]) == 0
    [change] = json.loads(capsys.readouterr().out)["changes"]
    assert (change["kind"], change["severity"]) == ("rewritten", "info")


def test_a_branch_moved_and_edited_is_compared_with_itself() -> None:
    old = at({"anyOf": [{"type": "string", "maxLength": 3}, INTEGER, NULL]})
    new = at({"anyOf": [NULL, {"type": "string", "maxLength": 9}, INTEGER]})
    assert [c.describe() for c in compare_schemas(old, new)] == [
        "/properties/v/anyOf/1/maxLength: 3 → 9 (widened)"
    ]


# -- every classification against a validator ---------------------------------------------

SAMPLES = [
    *(None, True, 0, 1, 5, 2.5, "a", "long", [], [1], ["a", 1], {}, {"a": 1}, {"a": "x", "b": 2}),
    *({"b": "a"}, {"a": 5, "b": None}, {"a": {"a": 1}}, {"a": "a"}, {"a": None}, {"a": 1.5}),
]
VALUES = st.sampled_from([1, "a", None, 5, 1.0])
LEAVES = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "integer", "array", "object", "null")]),
    st.builds(lambda n: {"maxLength": n}, st.integers(0, 4)),
    st.builds(lambda n: {"minimum": n}, st.integers(0, 5)),
    st.builds(lambda e: {"enum": e}, st.lists(VALUES, min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, VALUES),
    # An object told apart by what its required `a` is (oneOf's branches, often).
    st.builds(
        lambda v: {"type": "object", "properties": {"a": {"const": v}}, "required": ["a"]}, VALUES
    ),
    st.builds(lambda v, e: {"const": v, "enum": e}, VALUES, st.lists(VALUES, max_size=2)),
    st.sampled_from([True, False, {}, {"$ref": "#/$defs/D"}, {"description": "x"}]),
)
# What additionalProperties may say of the names the properties beside it do not declare.
EXTRA = st.sampled_from([True, False, {}, {"type": "integer"}])


def _applied(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    branches = st.lists(inner, min_size=1, max_size=3)
    return st.one_of(
        *(st.builds(lambda b, k=k: {k: b}, branches) for k in ("anyOf", "allOf", "oneOf")),
        *(st.builds(lambda s, k=k: {k: s}, inner) for k in ("not", "items", "contains")),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, inner, inner, inner),
        st.builds(lambda i, t: {"if": i, "then": t}, inner, inner),
        st.builds(lambda i, e: {"if": i, "else": e}, inner, inner),
        st.builds(lambda s, r: {"properties": {"a": s}, "required": r}, inner, st.just(["a"])),
        # allOf branches that ask for names or properties, beside the parent's own.
        st.builds(
            lambda s, t, name, x: {
                "properties": {"a": s},
                "additionalProperties": x,
                "allOf": [{"properties": {name: t}, "required": [name]}],
            },
            inner,
            inner,
            st.sampled_from(["a", "b"]),
            EXTRA,
        ),
        st.builds(
            lambda s, x: {"allOf": [{"properties": {"a": s}}], "additionalProperties": x},
            inner,
            EXTRA,
        ),
        st.builds(
            lambda s, x: {"allOf": [{"properties": {"a": s}, "additionalProperties": x}]},
            inner,
            EXTRA,
        ),
        st.builds(lambda p: {"prefixItems": p}, st.lists(inner, max_size=2)),
        st.builds(lambda s: {"contains": s, "maxContains": 1}, inner),
        st.builds(lambda s: {"dependentSchemas": {"a": s}}, inner),
    )


SCHEMAS = st.recursive(LEAVES, _applied, max_leaves=6)


@st.composite
def edited(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A schema with a definition D (used through $refs), and the same with one place edited:
    replaced, a keyword dropped, a list reversed, a number moved by one."""
    root, definition = draw(SCHEMAS), draw(LEAVES)
    old = {"allOf": [root], "$defs": {"D": definition}}
    how = draw(st.sampled_from(["replace", "drop", "reverse", "move", "respell"]))
    places = list(_places(old))
    if how == "respell":  # somewhere a respelling applies, if there is such a place
        places = [p for p in places if respelled(_at(old, p), exact=False)] or places
    path = draw(st.sampled_from(places))
    node = _at(old, path)
    respellings = respelled(node, exact=False)
    if how == "respell" and respellings:
        edit = draw(st.sampled_from(respellings))
    elif how in ("replace", "respell") or not (isinstance(node, dict) and node):
        edit = draw(SCHEMAS)
    else:
        key = draw(st.sampled_from(sorted(node)))
        value = node[key]
        edit = {k: v for k, v in node.items() if k != key}
        if how == "reverse" and isinstance(value, list):
            edit[key] = value[::-1]
        elif how == "move" and isinstance(value, int) and not isinstance(value, bool):
            edit[key] = value + draw(st.sampled_from([-1, 1]))
    new = json.loads(json.dumps(old))
    if path:
        _at(new, path[:-1])[path[-1]] = edit
    # D refers to itself: the validator would recurse for ever.
    assume(all("$ref" not in json.dumps(s.get("$defs")) for s in (old, new)))
    return old, new


def respelled(node: Any, *, exact: bool) -> list[dict[str, Any]]:
    """``node`` written each other way this test knows: a one-value enum as const and back,
    ``required`` or ``properties`` moved into an allOf branch, a branch merged into ``node``.
    ``exact``: only those that accept the same values (``properties`` moved away from an
    ``additionalProperties`` that reads their names is not; a branch merged up may not be)."""
    if not isinstance(node, dict):
        return []
    found = []
    rest = {k: v for k, v in node.items() if k not in ("enum", "const")}
    if "const" not in node and isinstance(node.get("enum"), list) and len(node["enum"]) == 1:
        found.append({**rest, "const": node["enum"][0]})
    if "const" in node and "enum" not in node:
        found.append({**rest, "enum": [node["const"]]})
    branches = node.get("allOf", [])
    names_free = node.get("additionalProperties", True) in (True, {})
    for key in ("required", "properties"):
        if (
            key in node
            and isinstance(branches, list)
            and (not exact or key == "required" or names_free)
        ):
            moved = {k: v for k, v in node.items() if k not in (key, "allOf")}
            found.append({**moved, "allOf": [*branches, {key: node[key]}]})
    if not exact and isinstance(branches, list):
        for index, branch in enumerate(branches):
            if isinstance(branch, dict) and branch.keys() <= {"required", "properties"}:
                others = branches[:index] + branches[index + 1 :]
                merged = {**node, **branch, **({"allOf": others} if others else {})}
                if not others:
                    merged.pop("allOf", None)
                found.append(merged)
    return found


def _places(schema: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(schema, dict):
        for key, value in schema.items():
            if isinstance(value, dict) and key in ("properties", "dependentSchemas", "$defs"):
                for name, item in value.items():
                    yield from _places(item, (*path, key, name))
            elif isinstance(value, dict | bool):
                yield from _places(value, (*path, key))
            elif isinstance(value, list) and key in ("anyOf", "allOf", "oneOf", "prefixItems"):
                for index, item in enumerate(value):
                    yield from _places(item, (*path, key, index))


def _at(schema: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        schema = schema[step]
    return schema


@settings(max_examples=300, deadline=None)
@given(pair=edited())
# Spellings alike that are not one meaning (schema_spelling must not make them one).
@example(pair=({"allOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "string"}))
@example(pair=({"const": 1, "enum": [5]}, {"const": 1}))
@example(
    pair=(
        {"properties": {"a": INTEGER}, "additionalProperties": False},
        {"additionalProperties": False, "allOf": [{"properties": {"a": INTEGER}}]},
    )
)
@example(
    pair=(
        {"properties": {"a": INTEGER}},
        {"properties": {"a": {"minimum": 3}}, "allOf": [{"properties": {"a": INTEGER}}]},
    )
)
@example(
    pair=(
        {"allOf": [{"properties": {"a": INTEGER}, "additionalProperties": False}]},
        {"properties": {"a": INTEGER}},
    )
)
def test_a_validator_never_shows_a_change_the_classification_hides(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    check_ordered(*pair)


def check_ordered(old: Any, new: Any) -> None:
    """No sample that ``old`` accepts and ``new`` refuses when the change is said to widen
    (or to be none), nor the other way round."""
    ordered = {c.direction for c in compare_schemas(old, new)} - {"described", "marked"}
    for instance in SAMPLES:
        was, now = accepts(old, instance), accepts(new, instance)
        if was and not now:  # new refuses what old took: never "no change", never widened
            assert ordered and ordered != {"widened"}, instance
        if now and not was:
            assert ordered and ordered != {"narrowed"}, instance


# Branches of a oneOf, or what an if selects: often apart (types, a discriminator), often not.
BRANCH = st.one_of(
    LEAVES,
    st.builds(
        lambda t, n: {"type": t, "maxLength": n, "minimum": n},
        st.sampled_from(["string", "integer", "number", ["string", "null"]]),
        st.integers(0, 4),
    ),
    st.builds(
        lambda v, b: {
            "type": "object",
            "properties": {"a": {"const": v}, "b": b},
            "required": ["a"],
        },
        VALUES,
        LEAVES,
    ),
)


def _edited_branch(draw: st.DrawFn, branch: Any) -> Any:
    """``branch`` another way: replaced, a number moved by one, a value added to an enum."""
    numbers = [k for k, v in branch.items() if type(v) is int] if isinstance(branch, dict) else []
    how = draw(st.sampled_from(["replace", "move", "enum"]))
    if how == "move" and numbers:
        key = draw(st.sampled_from(numbers))
        return {**branch, key: branch[key] + draw(st.sampled_from([-1, 1]))}
    if how == "enum" and isinstance(branch, dict) and isinstance(branch.get("enum"), list):
        return {**branch, "enum": [*branch["enum"], draw(VALUES)]}
    return draw(BRANCH)


@st.composite
def branch_edited(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A oneOf (or an if with then or else) at parameter ``a``, and the same with one of its
    subschemas edited."""
    shape = draw(st.sampled_from(["oneOf", "then", "else"]))
    if shape == "oneOf":
        branches = draw(st.lists(BRANCH, min_size=2, max_size=3))
        index = draw(st.integers(0, len(branches) - 1))
        edited = [*branches[:index], _edited_branch(draw, branches[index]), *branches[index + 1 :]]
        old, new = {"oneOf": branches}, {"oneOf": edited}
    else:
        test, selected = draw(BRANCH), draw(BRANCH)
        which = draw(st.sampled_from(["if", shape]))
        old = {"if": test, shape: selected}
        new = {**old, which: _edited_branch(draw, old[which])}
    definition = draw(LEAVES.filter(lambda d: "$ref" not in json.dumps(d)))
    return (
        {"type": "object", "properties": {"a": old}, "$defs": {"D": definition}},
        {"type": "object", "properties": {"a": new}, "$defs": {"D": definition}},
    )


@settings(max_examples=400, deadline=None)
@given(pair=branch_edited())
@example(
    pair=(
        {"properties": {"a": {"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 0}]}}},
        {"properties": {"a": {"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 1}]}}},
    )
)
def test_a_change_inside_oneof_or_if_ordered_one_way_is_that_way_for_a_validator(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    # Widened ⇒ every value the old schema accepted the new one accepts (narrowed, the other
    # way): the branches the comparison takes for apart are apart.
    check_ordered(*pair)


@st.composite
def respelling(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A schema, and the same with one place written another way with the same meaning."""
    old = {"allOf": [draw(SCHEMAS)], "$defs": {"D": draw(LEAVES)}}
    places = [p for p in _places(old) if respelled(_at(old, p), exact=True)]
    assume(places)
    path = draw(st.sampled_from(places))
    edit = draw(st.sampled_from(respelled(_at(old, path), exact=True)))
    new = json.loads(json.dumps(old))
    if path:
        _at(new, path[:-1])[path[-1]] = edit
    else:
        new = edit
    assume(all("$ref" not in json.dumps(s.get("$defs")) for s in (old, new)))
    return old, new


@settings(max_examples=200, deadline=None)
@given(pair=respelling())
def test_a_schema_written_another_way_with_the_same_meaning_is_no_change(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    old, new = pair
    for instance in SAMPLES:  # the respelling keeps the meaning, as far as samples tell
        assert accepts(old, instance) == accepts(new, instance), instance
    for was, now in ((old, new), (new, old)):
        ordered = [c.describe() for c in compare_schemas(was, now)]
        assert [c for c in ordered if not c.endswith(("(described)", "(marked)"))] == []
