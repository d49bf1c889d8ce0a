"""Redaction follows a ``$ref`` where validation takes it: JSON Schema 2020-12 scoping.

Found from outside: an ``outputSchema`` marked a field ``x-sensitive`` through a
reference whose meaning depends on the base URI — ``#/$defs/s`` under an ``$id`` is that
resource's ``$defs``, not the root's; ``#tok`` is the anchor of the resource it is written
in, not the first ``tok`` anywhere. The validator (the ``fits`` check) read them so; the
walk that finds marks read every ``#…`` against the root, looked at another subschema,
and the value reached the agent in plain text on both backends. Now the walk resolves
references as the validator does (``harness.schemas.resolve_references``), and a
reference that leads nowhere certain withholds the whole result.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import Harness
from harness.schemas import Unresolvable, validator_for
from harness.stages.redaction import pointer, redact, sensitive_paths
from harness.stages.vault import Vault
from tests.conftest import serve_pages
from tests.stages.test_redaction import agent, page_result, tool

MARKED = {"type": "string", "x-sensitive": True}

# (a) '#/$defs/s' inside an embedded resource: its own $defs, not the root's.
ID_SCOPED = {
    "type": "object",
    "properties": {
        "key": {"$id": "urn:bundle:key", "$ref": "#/$defs/s", "$defs": {"s": MARKED}},
        "name": {"type": "string"},
    },
    "$defs": {"s": {"type": "string"}},
}
# (b) '#tok' at the root: the root resource's anchor, not the embedded resource's.
ANCHOR_SCOPED = {
    "type": "object",
    "properties": {"key": {"$ref": "#tok"}, "name": {"type": "string"}},
    "$defs": {
        "real": {"$anchor": "tok", **MARKED},
        "other": {"$id": "urn:other", "$defs": {"x": {"$anchor": "tok"}}},
    },
}


def marked(schema: dict[str, Any], value: Any) -> tuple[list[str], set[str]]:
    """The pointers the walk withholds in ``value``, and the references it could not follow."""
    paths, unresolved = sensitive_paths(schema, value)
    return sorted(pointer(path) for path, _ in paths), unresolved


def validator_applies(schema: dict[str, Any], at: list[Any], value: Any) -> bool:
    """Whether validation applies the subschema of ``schema`` at the path ``at``: with
    ``maxLength: 0`` there, ``value`` no longer fits."""
    probe = copy.deepcopy(schema)
    node = probe
    for step in at:
        node = node[step]
    node["maxLength"] = 0
    return not validator_for(probe).is_valid(value)


# -- the walk, on plain data -----------------------------------------------------------


def test_a_pointer_under_an_id_is_read_in_that_resource() -> None:
    value = {"key": "HXCANARY-idscope", "name": "ci"}
    assert validator_applies(ID_SCOPED, ["properties", "key", "$defs", "s"], value)
    assert marked(ID_SCOPED, value) == (["/key"], set())


def test_an_anchor_is_the_one_of_the_resource_the_reference_is_written_in() -> None:
    value = {"key": "HXCANARY-anchor", "name": "ci"}
    assert validator_applies(ANCHOR_SCOPED, ["$defs", "real"], value)
    assert marked(ANCHOR_SCOPED, value) == (["/key"], set())
    # The other way round: the embedded resource's tok is marked, the root's is not.
    # From the root '#tok' is the root's (nothing withheld); from inside urn:other, its own.
    turned = {
        "type": "object",
        "properties": {
            "open": {"$ref": "#tok"},
            "inner": {"$ref": "urn:other#/$defs/use"},
        },
        "$defs": {
            "plain": {"$anchor": "tok", "type": "string"},
            "other": {
                "$id": "urn:other",
                "$defs": {"x": {"$anchor": "tok", **MARKED}, "use": {"$ref": "#tok"}},
            },
        },
    }
    assert marked(turned, {"open": "visible", "inner": "HXCANARY-inner"}) == (["/inner"], set())


def test_relative_ids_and_references_resolve_against_their_base() -> None:
    schema = {
        "$id": "https://schemas.example/tools/root.json",
        "type": "object",
        "properties": {
            "a": {"$ref": "other.json#/$defs/x"},  # https://schemas.example/tools/other.json
            "b": {"$ref": "#/$defs/x"},  # the root's own x: not marked
            "c": {"$ref": "lib/inner.json"},  # a resource nested two $ids deep
        },
        "$defs": {
            "x": {"type": "string"},
            "other": {
                "$id": "other.json",
                "$defs": {
                    "x": MARKED,
                    "deeper": {
                        "$id": "lib/inner.json",
                        "$ref": "#/$defs/x",
                        "$defs": {"x": MARKED},
                    },
                },
            },
        },
    }
    value = {"a": "HXCANARY-a", "b": "visible", "c": "HXCANARY-c"}
    assert marked(schema, value) == (["/a", "/c"], set())
    assert validator_applies(schema, ["$defs", "other", "$defs", "x"], value)


def test_an_anchor_in_a_defs_resource_with_its_own_id() -> None:
    schema = {
        "type": "object",
        "properties": {"key": {"$ref": "urn:lib#tok"}, "near": {"$ref": "#tok"}},
        "$defs": {
            "near": {"$anchor": "tok", "type": "string"},
            "lib": {"$id": "urn:lib", "$defs": {"t": {"$anchor": "tok", **MARKED}}},
        },
    }
    assert marked(schema, {"key": "HXCANARY-lib", "near": "visible"}) == (["/key"], set())


def test_a_reference_loops_by_where_it_leads_not_by_its_text() -> None:
    # The same text '#/$defs/s' twice on one value: the root's s, then urn:x's s.
    schema = {
        "type": "object",
        "properties": {"key": {"$ref": "#/$defs/s"}},
        "$defs": {"s": {"$id": "urn:x", "$ref": "#/$defs/s", "$defs": {"s": MARKED}}},
    }
    assert marked(schema, {"key": "HXCANARY-loop"}) == (["/key"], set())


def test_a_dynamic_reference_with_one_anchor_of_its_name_is_followed() -> None:
    schema = {
        "type": "object",
        "properties": {"key": {"$dynamicRef": "#item"}},
        "$defs": {"item": {"$dynamicAnchor": "item", **MARKED}},
    }
    assert marked(schema, {"key": "HXCANARY-dynamic"}) == (["/key"], set())


def test_a_dynamic_reference_the_path_decides_is_not_guessed() -> None:
    # A generic list whose items the user of the list picks ($dynamicAnchor "item"):
    # which one validation applies depends on the way it came, so the walk reports it.
    schema = {
        "type": "object",
        "properties": {
            "keys": {
                "$id": "urn:keys",
                "$ref": "urn:list",
                "$defs": {"item": {"$dynamicAnchor": "item", **MARKED}},
            }
        },
        "$defs": {
            "list": {
                "$id": "urn:list",
                "type": "array",
                "items": {"$dynamicRef": "#item"},
                "$defs": {"item": {"$dynamicAnchor": "item"}},
            }
        },
    }
    value = {"keys": ["HXCANARY-dyn"]}
    assert validator_applies(schema, ["properties", "keys", "$defs", "item"], value)
    assert marked(schema, value) == ([], {"#item"})
    out = redact(tool(schema), page_result(value), Vault()).result
    assert "HXCANARY" not in agent(out) and "cannot follow" in out.content[0].text  # type: ignore[union-attr]


def test_two_resources_with_one_uri_are_not_guessed_between() -> None:
    schema = {
        "type": "object",
        "properties": {"key": {"$ref": "urn:dup#/$defs/s"}},
        "$defs": {
            "one": {"$id": "urn:dup", "$defs": {"s": {"type": "string"}}},
            "two": {"$id": "urn:dup", "$defs": {"s": MARKED}},
        },
    }
    assert marked(schema, {"key": "HXCANARY-dup"}) == ([], {"urn:dup#/$defs/s"})


def test_one_anchor_twice_in_a_resource_or_an_id_that_cannot_be_read_is_not_guessed() -> None:
    twice = {
        "type": "object",
        "properties": {"key": {"$ref": "#tok"}},
        "$defs": {"a": {"$anchor": "tok", "type": "string"}, "b": {"$anchor": "tok", **MARKED}},
    }
    assert marked(twice, {"key": "HXCANARY-twice"}) == ([], {"#tok"})
    out = redact(tool(twice), page_result({"key": "HXCANARY-twice"}), Vault()).result
    assert "HXCANARY" not in agent(out) and "cannot follow (#tok)" in out.content[0].text  # type: ignore[union-attr]
    unreadable = {
        "type": "object",
        "properties": {"key": {"$id": 5, "$ref": "#/$defs/s", "$defs": {"s": MARKED}}},
    }
    assert marked(unreadable, {"key": "HXCANARY-id"}) == ([], {"5"})


def test_a_reference_into_another_document_is_still_never_fetched() -> None:
    schema = {
        "type": "object",
        "properties": {
            "key": {"$id": "http://127.0.0.1:1/s/key.json", "$ref": "other.json"},
            "x": MARKED,
        },
    }
    assert marked(schema, {"key": "HXCANARY-remote"}) == ([], {"other.json"})


def test_both_shapes_are_withheld_by_the_stage_and_nothing_else() -> None:
    for schema, canary in ((ID_SCOPED, "HXCANARY-idscope-7f3a9c"), (ANCHOR_SCOPED, "HXCANARY-anc")):
        vault = Vault()
        out = redact(tool(schema), page_result({"key": canary, "name": "ci"}), vault).result
        shown = agent(out)
        assert canary not in shown and '"name": "ci"' in shown, shown
        assert canary in json.dumps([entry.value for entry in vault.entries()])


# -- property: the walk reads the subschema the validator applies ----------------------

# One level of wrapping around the reference: maybe a resource of its own ($id, absolute
# or relative), maybe a definition there, reached by pointer or by anchor.
LEVEL = st.fixed_dictionaries(
    {
        "id": st.sampled_from([None, "urn", "relative"]),
        "define": st.booleans(),
    }
)


def scoped_schema(levels: list[dict[str, Any]], by_anchor: bool) -> dict[str, Any]:
    """The property ``key``: ``levels`` wrapped around a reference to ``s``. Each
    definition is marked, titled ``d<i>`` and fits only ``"v<i>"``."""
    inner: dict[str, Any] = {"$ref": "#tok" if by_anchor else "#/$defs/s"}
    for index, level in reversed(list(enumerate(levels))):
        node: dict[str, Any] = {"allOf": [inner]}
        if level["id"] == "urn":
            node["$id"] = f"urn:level{index}"
        elif level["id"] == "relative":
            node["$id"] = f"level{index}/schema.json"
        # An anchor at most once per resource: only a resource's top level defines one.
        if level["define"] and (not by_anchor or level["id"] is not None):
            definition = {"const": f"v{index}", "title": f"d{index}", "x-sensitive": True}
            if by_anchor:
                definition["$anchor"] = "tok"
            node["$defs"] = {"s": definition}
        inner = node
    root = {"const": "vroot", "title": "droot", "x-sensitive": True}
    if by_anchor:
        root["$anchor"] = "tok"
    return {
        "$id": "https://schemas.example/root.json",
        "type": "object",
        "properties": {"key": inner},
        "$defs": {"s": root},
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(levels=st.lists(LEVEL, min_size=1, max_size=4), by_anchor=st.booleans())
def test_the_walk_follows_the_reference_validation_follows(
    levels: list[dict[str, Any]], by_anchor: bool
) -> None:
    schema = scoped_schema(levels, by_anchor)
    validator = validator_for(schema)
    names = ["root", *(str(i) for i in range(len(levels)))]
    try:
        applied = [n for n in names if validator.is_valid({"key": f"v{n}"})]
    except Unresolvable:  # no definition in the reference's own resource
        assert marked(schema, {"key": "vroot"}) == ([], {"#tok" if by_anchor else "#/$defs/s"})
        return
    assert len(applied) == 1  # the reference leads to exactly one definition
    paths, unresolved = sensitive_paths(schema, {"key": f"v{applied[0]}"})
    assert unresolved == set()
    assert [(pointer(path), label) for path, label in paths] == [("/key", f"d{applied[0]}")]


# -- the defect as found: a page on both backends --------------------------------------

CANARY_ID = "HXCANARY-idscope-7f3a9c"
CANARY_ANCHOR = "HXCANARY-anchor-51b2e0"
TOOL = """document.modelContext.registerTool({
  name: NAME, description: "returns an API key",
  inputSchema: {type: "object", properties: {}},
  outputSchema: SCHEMA,
  annotations: {sensitiveHint: true, readOnlyHint: true},
  execute: () => ({key: CANARY, name: "ci"}),
});"""


def register(name: str, schema: dict[str, Any], canary: str) -> str:
    return (
        TOOL.replace("NAME", json.dumps(name))
        .replace("SCHEMA", json.dumps(schema))
        .replace("CANARY", json.dumps(canary))
    )


PAGE = (
    "<!doctype html><meta charset=utf-8><title>keys</title><script>"
    + register("get_key_idscope", ID_SCOPED, CANARY_ID)
    + register("get_key_anchor", ANCHOR_SCOPED, CANARY_ANCHOR)
    + "</script>"
)


async def test_a_key_marked_through_a_scoped_reference_never_reaches_the_agent(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        for name, canary in (("get_key_idscope", CANARY_ID), ("get_key_anchor", CANARY_ANCHOR)):
            outcome = await session.call(name, {})
            shown = json.dumps(outcome.agent_json())
            assert not outcome.is_error and canary not in shown, shown
            assert '"name": "ci"' in shown, shown  # only the key is withheld
            revealed = [attempt.revealed for attempt in await session.reveal_all(outcome)]
            assert [r.value for r in revealed if r is not None] == [canary]
        history = json.dumps([entry.agent_json() for entry in session.history])
        assert "HXCANARY" not in history
