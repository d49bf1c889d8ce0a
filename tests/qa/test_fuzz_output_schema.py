"""The ``output-schema`` property reads an ``outputSchema`` as the harness reads every page
schema (:mod:`harness.stages.validation`): ECMAScript patterns, formats asserted; and an
outputSchema it cannot use is reported saying what is wrong with it and what to do."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import BrowserPool, Harness
from harness.catalog import Settle
from harness.qa.fuzz import FuzzOptions, FuzzReport, fuzz
from tests.qa.pages import page, serve

# Each tool returns one field, `value`, against the schema of that field (JavaScript).
RESULTS = {
    # valid ECMAScript (`u` flag), which Python's `re` refuses: "Ann" fits
    "greet": ('{type: "string", pattern: "^\\\\p{Lu}\\\\p{Ll}+$"}', '"Ann"'),
    # ECMAScript's \\d is ASCII only; Python's matches the Arabic-Indic digits too
    "digits": ('{type: "string", pattern: "^\\\\d+$"}', '"\\u0663\\u0664"'),
    "mail": ('{type: "string", format: "email"}', '"not-an-email"'),
    # an integer past 2**53 is what the page's number is: refused only as an argument
    "big_id": ('{type: "integer"}', "2 ** 60"),
    # not a JSON Schema type
    "tally": ('{type: "count"}', "3"),
}


def tools() -> str:
    return "\n".join(
        f"""document.modelContext.registerTool({{
  name: "{name}", description: "Returns one value.", annotations: {{readOnlyHint: true}},
  inputSchema: {{type: "object", properties: {{}}}},
  outputSchema: {{type: "object", properties: {{value: {schema}}}, required: ["value"]}},
  execute: async () => ({{value: {value}}}),
}});"""
        for name, (schema, value) in RESULTS.items()
    )


# A result field that breaks a schema reached through `$ref`.
SHELF_TOOL = """document.modelContext.registerTool({
  name: "shelf", description: "Lists books with their year.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {}},
  outputSchema: {type: "object", properties: {books: {type: "array", items: {$ref: "#/$defs/Book"}}},
                 $defs: {Book: {type: "object", properties: {year: {type: "integer"}}}}},
  execute: async () => ({books: [{year: 1990}, {year: "1991"}]}),
});"""


@pytest.fixture(scope="module")
async def report(browser_pool: BrowserPool) -> AsyncIterator[FuzzReport]:
    # The check is the harness's, after the call: one backend shows it.
    async with (
        serve({"/": page(tools() + SHELF_TOOL)}) as server,
        Harness(browsers=browser_pool, settle=Settle.quiet_ms(100)) as harness,
    ):
        session = await harness.open(server.url("/"))
        options = FuzzOptions(properties=["output-schema"], examples=2, seed=1, database=None)
        yield await fuzz(session, options)
        await session.close()


def result(report: FuzzReport, tool: str) -> tuple[str, str]:
    [found] = [t for t in report.tools if t.tool == tool]
    [checked] = found.results
    return checked.status, checked.failure.message if checked.failure else ""


@pytest.mark.parametrize("tool", ["greet", "big_id"])
def test_a_result_that_fits_as_javascript_reads_the_schema_holds(
    report: FuzzReport, tool: str
) -> None:
    assert result(report, tool) == ("passed", ""), report.describe()


@pytest.mark.parametrize(("tool", "keyword"), [("digits", "pattern"), ("mail", "format")])
def test_a_result_that_breaks_the_schema_as_the_harness_reads_it_fails(
    report: FuzzReport, tool: str, keyword: str
) -> None:
    status, message = result(report, tool)
    assert status == "failed", report.describe()
    assert f"/value: fails `{keyword}` (schema /properties/value/{keyword})" in message


def test_an_output_schema_that_cannot_be_used_says_what_is_wrong_and_what_to_do(
    report: FuzzReport,
) -> None:
    status, message = result(report, "tally")
    assert status == "failed"
    assert message.startswith("the outputSchema cannot be used to check results: ")
    assert "/properties/value/type" in message  # where the schema is wrong
    assert "fix the outputSchema" in message


def test_a_keyword_reached_through_a_ref_is_named_where_it_is(report: FuzzReport) -> None:
    # Not "/properties/books/items/properties/year/type": no such place in the schema.
    status, message = result(report, "shelf")
    assert status == "failed", report.describe()
    assert "/books/1/year: fails `type` (schema /$defs/Book/properties/year/type)" in message
