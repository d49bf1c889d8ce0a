"""Inputs drawn from Draft 2020-12 schemas, which hypothesis-jsonschema reads as Draft 7:
a tuple (``prefixItems``, ``items: false``) was drawn as ``[]`` and every such tool skipped
as if its schema allowed no value. The schema is said in Draft 7's words before anything is
drawn (:func:`harness.qa.draft7.as_draft7`); what those words cannot say is named when
nothing drawn fits, and every value is still checked against the schema itself."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from harness import BrowserPool, Harness
from harness.catalog import Settle
from harness.models import Tool
from harness.qa import draft7, strategies
from harness.qa.fuzz import FuzzOptions, FuzzReport, PropertyResult, fuzz
from harness.stages.validation import validate_arguments
from tests.qa.pages import page, serve

# -- the schemas ------------------------------------------------------------------------------

PAIR = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
CLOSED_PAIR = {**PAIR, "items": False, "minItems": 2}  # the outside tester's tuple
POINT = {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": False}


def args(properties: dict[str, Any], *required: str, **more: Any) -> dict[str, Any]:
    """An argument object's schema."""
    return {"type": "object", "properties": properties, "required": list(required), **more}


# The arrays hypothesis-jsonschema draws itself (inside an object it cannot draw: the
# harness draws those), and the argument objects around them.
ARRAYS = {
    "a closed pair": CLOSED_PAIR,
    "a pair, then anything": {**PAIR, "minItems": 3},
    "a pair, then booleans": {**PAIR, "items": {"type": "boolean"}, "minItems": 3, "maxItems": 4},
    "a pair or less": {**PAIR, "items": False},
    "a pair, then nothing unevaluated": {**PAIR, "unevaluatedItems": False, "minItems": 2},
    "two urgent tags": {
        "type": "array",
        "items": {"type": "string"},
        "contains": {"const": "urgent"},
        "minContains": 2,
    },
    "no tag needed": {"type": "array", "contains": {"const": "x"}, "minContains": 0},
    "a 2020-12 $schema": {"$schema": "https://json-schema.org/draft/2020-12/schema", **CLOSED_PAIR},
}
ARGUMENTS = {
    **{name: args({"v": schema}, "v") for name, schema in ARRAYS.items()},
    "a route of points under $defs": args(
        {"route": {"type": "array", "items": {"$ref": "#/$defs/point"}, "minItems": 1}},
        "route",
        **{"$defs": {"point": {**POINT, "minItems": 2}}},
    ),
    "a tuple of a tuple, by $anchor": args(
        {"cell": {"$ref": "#cell"}},
        "cell",
        **{
            "$defs": {
                "cell": {
                    "$anchor": "cell",
                    "type": "array",
                    "prefixItems": [{"$ref": "#/$defs/pt"}, {"enum": ["on", "off"]}],
                    "items": False,
                    "minItems": 2,
                },
                "pt": {**POINT, "minItems": 2},
            }
        },
    ),
    "a $ref into a tuple's item": args(
        {"pt": {**POINT, "minItems": 2}, "x": {"$ref": "#/properties/pt/prefixItems/0"}},
        "pt",
        "x",
    ),
    "a tuple of objects": args(
        {
            "pair": {
                "type": "array",
                "prefixItems": [args({"k": {"type": "integer"}}, "k"), {"type": "string"}],
                "items": False,
                "minItems": 2,
            }
        },
        "pair",
    ),
    "dependentRequired, two deep": args(
        {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
        dependentRequired={"a": ["b"], "b": ["c"]},
    ),
    "a $dynamicRef in one resource": args(
        {"n": {"$dynamicRef": "#n"}},
        "n",
        **{"$defs": {"n": {"$dynamicAnchor": "n", "type": "integer", "minimum": 1000}}},
    ),
}


def tool(schema: dict[str, Any]) -> Tool:
    return Tool(name="t", description="d", inputSchema=schema, origin="http://a.test", frame="main")


def drawn(schema: dict[str, Any], n: int = 30) -> list[Any]:
    """The first ``n`` argument objects the fuzzer draws for ``schema``; [] when it can
    draw none that fits (Hypothesis gives up: Unsatisfiable)."""
    seen: list[Any] = []

    def condition(value: Any) -> bool:
        seen.append(value)
        return False

    with contextlib.suppress(NoSuchExample):
        find(
            strategies.valid_arguments(tool(schema)),
            condition,
            settings=settings(
                max_examples=n,
                database=None,
                derandomize=True,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            ),
        )
    return seen


# -- the rewording --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "reworded"),
    [
        pytest.param(
            CLOSED_PAIR,
            {
                "type": "array",
                "items": [{"type": "string"}, {"type": "integer"}],
                "additionalItems": False,
                "minItems": 2,
            },
            id="prefixItems, items: false",
        ),
        pytest.param(
            PAIR,
            {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            id="prefixItems alone: nothing after it is constrained",
        ),
        pytest.param(
            {**PAIR, "items": {"type": "null"}},
            {"type": "array", "items": PAIR["prefixItems"], "additionalItems": {"type": "null"}},
            id="prefixItems, items: S",
        ),
        pytest.param({"items": {"type": "null"}}, {"items": {"type": "null"}}, id="items alone"),
        pytest.param(
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"p": PAIR}},
            {"$defs": {"p": {"type": "array", "items": PAIR["prefixItems"]}}},
            id="under $defs; $schema left out",
        ),
        pytest.param(
            {"properties": {"prefixItems": {"const": 1}}, "dependencies": {"a": ["b"]}},
            {"properties": {"prefixItems": {"const": 1}}},
            id="a property named prefixItems; the page's Draft 7 dependencies, unread by 2020-12",
        ),
        pytest.param(
            {
                "dependentRequired": {"a": ["b"], "c": ["d"]},
                "dependentSchemas": {"c": {"required": ["e"]}, "f": {"maxProperties": 3}},
            },
            {
                "dependencies": {
                    "a": ["b"],
                    "c": {"required": ["d"], "allOf": [{"required": ["e"]}]},
                    "f": {"maxProperties": 3},
                }
            },
            id="dependentRequired and dependentSchemas",
        ),
        pytest.param(
            {**PAIR, "unevaluatedItems": False},
            {"type": "array", "items": PAIR["prefixItems"], "additionalItems": False},
            id="unevaluatedItems where only prefixItems evaluates",
        ),
        pytest.param(
            {"properties": {"a": {}}, "unevaluatedProperties": False},
            {"properties": {"a": {}}, "additionalProperties": False},
            id="unevaluatedProperties where only properties evaluates",
        ),
        pytest.param(
            {"items": {}, "unevaluatedItems": False, "additionalProperties": {}, "minContains": 0},
            {"items": {}, "unevaluatedItems": False, "additionalProperties": {}, "minContains": 0},
            id="unevaluated* after items/additionalProperties (no-ops); minContains alone",
        ),
        pytest.param(
            {"contains": {"const": 1}, "minContains": 0},
            {"minContains": 0},
            id="minContains 0: contains asks nothing",
        ),
        pytest.param(
            {"contains": {"const": 1}, "minContains": 3, "minItems": 1},
            {"contains": {"const": 1}, "minContains": 3, "minItems": 3},
            id="minContains 3: three items at least",
        ),
        pytest.param(
            {"$defs": {"n": {"$dynamicAnchor": "n"}}, "items": {"$dynamicRef": "#n"}},
            {"$defs": {"n": {"$dynamicAnchor": "n"}}, "items": {"$ref": "#n"}},
            id="$dynamicRef in one resource",
        ),
        pytest.param(
            {"properties": {"p": PAIR, "q": {"$ref": "#/properties/p/prefixItems/1"}}},
            {
                "properties": {
                    "p": {"type": "array", "items": PAIR["prefixItems"]},
                    "q": {"$ref": "#/properties/p/items/1"},
                }
            },
            id="a $ref to a subschema that moved",
        ),
    ],
)
def test_the_2020_12_keywords_are_said_in_draft_7_s_words(
    schema: dict[str, Any], reworded: dict[str, Any]
) -> None:
    assert draft7.as_draft7(schema) == draft7.Draft7(reworded, ())


@pytest.mark.parametrize(
    ("schema", "unread"),
    [
        (
            {"allOf": [{"minItems": 1}], "unevaluatedItems": False},
            "`unevaluatedItems` at /",
        ),
        (
            {"properties": {"p": {"$ref": "#/$defs/a", "unevaluatedProperties": False}}},
            "`unevaluatedProperties` at /properties/p",
        ),
        ({"contains": {}, "unevaluatedItems": False}, "`unevaluatedItems` at /"),
        ({"$defs": {"t": {"contains": {}, "maxContains": 1}}}, "`maxContains` at /$defs/t"),
        ({"items": {"$dynamicRef": "#nowhere"}}, "`$dynamicRef` at /items"),
    ],
)
def test_what_draft_7_cannot_say_is_kept_and_named(schema: dict[str, Any], unread: str) -> None:
    assert draft7.as_draft7(schema) == draft7.Draft7(schema, (unread,))
    assert draft7.unread_keywords(schema) == (unread,)


def test_a_dynamic_ref_across_resources_is_followed_as_a_guess_and_named() -> None:
    # With an $id below the root, where a $dynamicRef leads depends on how the value was
    # reached: drawn from where a $ref would lead, and named should nothing drawn fit.
    schema = {
        "$defs": {"r": {"$id": "https://a.test/r"}, "n": {"$dynamicAnchor": "n"}},
        "items": {"$dynamicRef": "#n"},
    }
    assert draft7.as_draft7(schema) == draft7.Draft7(
        {**schema, "items": {"$ref": "#n"}}, ("`$dynamicRef` at /items",)
    )


# -- the draws ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ARGUMENTS)
def test_values_are_drawn_from_2020_12_schemas_and_each_fits_the_schema_itself(name: str) -> None:
    schema = ARGUMENTS[name]
    seen = drawn(schema)
    assert len(seen) >= 10, f"{name}: only {len(seen)} values fit"
    # The harness's validator (the filter's), and jsonschema's own reading of 2020-12.
    assert all(validate_arguments(tool(schema), value) == [] for value in seen)
    assert all(Draft202012Validator(schema).is_valid(value) for value in seen)


@settings(max_examples=25, database=None, deadline=None)
@given(st.data())
def test_hypothesis_jsonschema_reads_the_reworded_arrays_as_2020_12_means_them(
    data: st.DataObject,
) -> None:
    # hypothesis-jsonschema alone, unfiltered: every value it draws from the Draft 7 words
    # fits the 2020-12 schema (a wrong wording would fail here, not only cost draws). Not
    # minContains 2, which Draft 7 cannot say (its `contains` asks for one item): the
    # harness's own drawing of arrays puts that many in (the test above).
    name = data.draw(st.sampled_from(sorted(set(ARRAYS) - {"two urgent tags"})))
    schema = ARRAYS[name]
    value = data.draw(from_schema(draft7.as_draft7(schema).schema), label=name)
    assert Draft202012Validator(schema).is_valid(value), (name, value)


def test_the_tuples_drawn_take_each_shape_the_schema_allows() -> None:
    # A tuple's arrays are as long as minItems asks or longer: the prefix, then the rest.
    lengths = {len(v["v"]) for v in drawn(args({"v": {**PAIR, "items": False}}, "v"), n=60)}
    assert lengths == {0, 1, 2}
    more = drawn(args({"v": {**PAIR, "items": {"type": "null"}, "minItems": 1}}, "v"), n=60)
    assert {1, 2, 3} <= {len(v["v"]) for v in more}


def test_every_value_is_checked_against_the_schema_itself_not_the_wording(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A wording that gets the tuple wrong (no item after the prefix, minItems dropped) costs
    # draws: no value that does not fit the schema itself gets through.
    def wrong(schema: Any) -> draft7.Draft7:
        items = {"type": ["string", "integer"]}
        return draft7.Draft7(args({"v": {"type": "array", "items": items}}, "v"), ())

    monkeypatch.setattr(strategies, "as_draft7", wrong)
    schema = args({"v": CLOSED_PAIR}, "v")
    seen = drawn(schema, n=60)
    assert seen and all(validate_arguments(tool(schema), v) == [] for v in seen)


# -- the fuzz report on a page ------------------------------------------------------------

# Each tool throws on input its schema does not allow, so `no-throw` holding means the
# tool got what the schema allows; `label_row` throws on one valid input, to be found.
PAGE_TOOLS = {
    "move_to": (
        args({"pt": CLOSED_PAIR}, "pt"),
        """({pt}) => { if (pt.length !== 2 || typeof pt[0] !== "string"
                          || !Number.isInteger(pt[1])) throw new Error("not a pair: " + pt); }""",
    ),
    "label_row": (
        args({"pt": CLOSED_PAIR}, "pt"),
        """({pt}) => { if (pt[0] === "") throw new Error("an empty label"); }""",
    ),
    "plot_route": (
        ARGUMENTS["a route of points under $defs"],
        """({route}) => { for (const p of route) if (p.length !== 2) throw new Error("p"); }""",
    ),
    "urgent_only": (
        args({"tags": ARRAYS["two urgent tags"]}, "tags"),
        """({tags}) => { if (tags.filter(t => t === "urgent").length < 2) throw new Error("t"); }""",
    ),
    "page_range": (
        args(
            {"from": {"type": "integer"}, "to": {"type": "integer"}},
            dependentRequired={"from": ["to"]},
        ),
        """(a) => { if ("from" in a && !("to" in a)) throw new Error("from without to"); }""",
    ),
    # unevaluatedItems next to an allOf, which Draft 7 cannot say: [1, "end"] fits, but
    # values drawn without it end in anything but "end".
    "stack_end": (
        args(
            {
                "s": {
                    "type": "array",
                    "allOf": [{"prefixItems": [{"type": "integer"}]}],
                    "unevaluatedItems": {"const": "end"},
                    "minItems": 2,
                }
            },
            "s",
        ),
        "() => ({ok: true})",
    ),
}


def page_script() -> str:
    return "\n".join(
        f"""document.modelContext.registerTool({{name: "{name}", description: "A tool.",
  annotations: {{readOnlyHint: true}}, inputSchema: {json.dumps(schema)},
  execute: async (input) => {{ ({execute})(input); return {{ok: true}}; }}}});"""
        for name, (schema, execute) in PAGE_TOOLS.items()
    )


@pytest.fixture(scope="module")
async def report(browser_pool: BrowserPool) -> AsyncIterator[FuzzReport]:
    # The rewording happens before any call, the same for both backends: one shows it.
    async with (
        serve({"/": page(page_script())}) as server,
        Harness(browsers=browser_pool, call_timeout=10, settle=Settle.quiet_ms(100)) as harness,
    ):
        session = await harness.open(server.url("/"))
        options = FuzzOptions(properties=["no-throw"], examples=10, seed=3, database=None)
        yield await fuzz(session, options)
        await session.close()


def result(report: FuzzReport, tool: str) -> PropertyResult:
    [found] = [t for t in report.tools if t.tool == tool]
    [checked] = found.results
    return checked


@pytest.mark.parametrize("tool", ["move_to", "plot_route", "urgent_only", "page_range"])
def test_a_tool_with_a_2020_12_schema_is_checked_not_skipped(report: FuzzReport, tool: str) -> None:
    checked = result(report, tool)
    assert (checked.status, checked.examples) == ("passed", 10), report.describe()


def test_a_failure_behind_a_tuple_is_found_and_shrunk(report: FuzzReport) -> None:
    checked = result(report, "label_row")
    assert checked.status == "failed" and checked.failure is not None, report.describe()
    assert checked.failure.arguments == {"pt": ["", 0]}


def test_a_keyword_the_generator_cannot_read_is_named_in_the_skip(report: FuzzReport) -> None:
    checked = result(report, "stack_end")
    assert checked.status == "skipped", report.describe()
    assert "uses `unevaluatedItems` at /properties/s, which the input generator cannot read" in (
        checked.reason or ""
    )
    assert "may allow no value at all" not in (checked.reason or "")
    # Not a silent pass: the run says what it could not check.
    assert report.unchecked() == 1
    assert "1 could not be checked (skipped, above)" in report.describe()
