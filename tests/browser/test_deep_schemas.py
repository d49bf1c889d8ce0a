"""A tool whose schema nests deeper than the harness can read (Python's JSON reader stops
at some hundreds of levels: a few KB of brackets) is left out with a warning naming it —
the page's other tools are listed and called as ever, on both backends. It used to raise
a RecursionError out of every listing (a traceback from `tools`, nothing callable), and on
native to be offered with the schema `{"type": "object"}`: any arguments, unchecked."""

from __future__ import annotations

import json

from harness import Harness
from tests.conftest import PageServer


async def test_a_schema_too_deep_to_read_leaves_its_tool_out_and_the_rest_works(
    backend_harness: Harness, page_server: PageServer
) -> None:
    async with await backend_harness.open(
        page_server.url("u_deep_schema.html?depth=1000")
    ) as session:
        assert [t.name for t in await session.tools()] == ["plain"]
        warned = [w for w in session.catalog.warnings if w.code == "malformed-tool"]
        assert [w.tool for w in warned] == ["deep"]
        assert "nested too deeply to be read" in warned[0].message
        called = await session.call("plain")
        assert called.result.is_error is False and "plain ran" in json.dumps(called.agent_json())


async def test_a_deep_schema_it_can_read_is_listed_whole_and_its_calls_checked(
    backend_harness: Harness, page_server: PageServer
) -> None:
    # 150 levels: more than jsonschema's own check of the schema follows (a RecursionError:
    # every call was refused, "nested too deeply"); the compiled meta-schema check reads it,
    # and each call's arguments are checked: what fits runs, what does not is refused.
    async with await backend_harness.open(
        page_server.url("u_deep_schema.html?depth=150")
    ) as session:
        deep = {t.name: t for t in await session.tools()}["deep"]
        assert deep.input_schema["properties"]["a"]["properties"]["a"]["type"] == "object"
        ran = await session.call("deep", {"a": {}})
        assert ran.result.is_error is False and "deep ran" in json.dumps(ran.agent_json())
        refused = await session.call("deep", {"a": {"a": 5}})
        assert refused.result.is_error is True and refused.error_kind == "validation"


async def test_a_form_control_named_600_levels_deep_is_left_out_with_a_warning(
    backend_harness: Harness, page_server: PageServer
) -> None:
    async with await backend_harness.open(page_server.url("u_deep_form_name.html")) as session:
        tools = {t.name: t for t in await session.tools()}
        assert sorted(tools) == ["deep_form", "other"]
        assert list(tools["deep_form"].input_schema["properties"]) == ["q"]
        warned = [w for w in session.catalog.warnings if w.tool == "deep_form"]
        assert any("nests 600 levels deep" in w.message for w in warned), warned
