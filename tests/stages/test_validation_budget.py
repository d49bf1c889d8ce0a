"""A call's schema work has a budget, and runs off the event loop (h17, defects 1–3).

Three ways a page's schema, or an agent's arguments, made one check take seconds to hours,
synchronously on the event loop that serves every session and every MCP client:
a ``pattern`` that backtracks, on each of many strings (one second each, one after
another); alternatives nested in alternatives (``anyOf`` of two ``$ref``s, 17 deep);
``uniqueItems`` over thousands of objects (jsonschema compares each pair). Now each check
shares one budget (``harness.budget.SCHEMA_BUDGET_S``) and is refused, never sent, when it
cannot finish in it; it runs in a worker thread, and the other sessions are answered
meanwhile. Nothing here is timed: the tests count matches and comparisons, or ask whether
another session was answered before the slow check ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.client.client import Client

from harness import Harness
from harness.mcp.server import McpBridge
from harness.mcp.tools import conform
from harness.models import Tool
from harness.schemas import budget
from harness.schemas.patterns import _Matcher
from harness.session import Session
from harness.stages import validation
from harness.stages.redaction import withheld_items
from harness.stages.validation import check_arguments
from tests.conftest import serve_pages
from tests.test_schemas import branching, pair_comparisons

BACKTRACKS = "^(a+)+$"  # on "aaaa…a!" an ECMAScript engine backtracks for ever
STRINGS = ["a" * 40 + "!" for _ in range(15)]


def tool(input_schema: dict[str, Any]) -> Tool:
    return Tool(
        name="t", description="d", inputSchema=input_schema, origin="http://a.test", frame="main"
    )


def refusal(tool_: Tool, arguments: dict[str, Any]) -> str:
    refused = check_arguments(tool_, arguments)
    assert refused is not None and refused.is_error
    return str(refused.content[0].text)  # type: ignore[union-attr]


def test_backtracking_strings_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """15 strings a pattern backtracks on were 15 matches of 1 s each (15 s on the event
    loop; 600 strings, 10 minutes). Now they share the check's budget: counted matches."""
    matches = 0
    search = _Matcher.search

    def counted(self: _Matcher, *args: Any) -> bool:
        nonlocal matches
        matches += 1
        return search(self, *args)

    monkeypatch.setattr(_Matcher, "search", counted)
    tags = tool({"type": "object", "properties": {"tags": {"items": {"pattern": BACKTRACKS}}}})
    text = refusal(tags, {"tags": STRINGS})
    assert f"the schema could not be checked within {budget.SCHEMA_BUDGET_S:g} s" in text
    assert "'t' was not run" in text
    assert matches <= budget.SCHEMA_BUDGET_S / 1.0 + 1
    # One such string is still one match, refused as before, with the pattern named.
    assert "took over 1 s" in refusal(tags, {"tags": STRINGS[:1]})


def test_alternatives_nested_in_alternatives_are_refused_at_the_budget() -> None:
    """17 levels took 16 to 43 s (call_timeout=3 did not apply: the check runs before the
    call); each level more doubles it."""
    text = refusal(tool(branching(17)), {"v": "x"})
    assert f"the schema could not be checked within {budget.SCHEMA_BUDGET_S:g} s" in text
    assert "'t' was not run" in text
    # A shallow one is checked as before.
    assert "not valid under any of the given schemas" in refusal(tool(branching(4)), {"v": "x"})


def test_unique_items_over_thousands_of_objects_names_the_real_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """3 000 distinct objects (38 KB) were 4.5 million comparisons, 14 s on the event loop,
    before the wrong `count` was named. Counted: none are made now."""
    counted = pair_comparisons(monkeypatch)
    items = {"type": "array", "uniqueItems": True, "items": {"type": "object"}}
    add = tool({"type": "object", "properties": {"items": items, "count": {"type": "integer"}}})
    text = refusal(add, {"items": [{"i": i} for i in range(3000)], "count": "three"})
    assert "/count: 'three' is not of type 'integer'" in text and "/items" not in text
    assert "non-unique" in refusal(add, {"items": [{"i": 1}, {"i": 1.0}]})
    assert counted["pairs"] == 0


def test_a_result_that_cannot_be_checked_in_time_is_not_vouched_for() -> None:
    """The MCP bridge checks a success result against its outputSchema; one it cannot
    finish with in the budget is returned as an error result, as an unreadable check is."""
    import mcp.types as types

    result = types.CallToolResult(
        content=[types.TextContent(type="text", text='{"v":"x"}')], structured_content={"v": "x"}
    )
    conformed = conform(result, branching(17))
    assert conformed.is_error is True
    note = str(conformed.content[-1].text)  # type: ignore[union-attr]
    assert "does not match the tool's outputSchema" in note
    assert f"the schema could not be checked within {budget.SCHEMA_BUDGET_S:g} s" in note
    assert conformed.content[0] == result.content[0]  # what the agent would have seen, kept


# -- two sessions: the other one is answered while a check takes its whole budget ----------

PAGE = (
    """<!doctype html><script>
const mc = document.modelContext; window.ran = [];
const run = (name, value) => async () => { window.ran.push(name); return value; };
const defs = {};
for (let i = 0; i < 17; i++) defs['a' + i] = {anyOf: [{$ref: '#/$defs/a' + (i + 1)}, {$ref: '#/$defs/a' + (i + 1)}]};
defs.a17 = {type: 'string', minLength: 5};
const branching = {type: 'object', properties: {v: {$ref: '#/$defs/a0'}}, $defs: defs};
const empty = {type: 'object', properties: {}};
mc.registerTool({name: 'ping', description: 'ping', inputSchema: empty,
  annotations: {readOnlyHint: true}, execute: run('ping', 'pong')});
mc.registerTool({name: 'tag', description: 'tag', annotations: {readOnlyHint: true},
  inputSchema: {type: 'object', properties: {tags: {type: 'array', items: {type: 'string',
    pattern: '"""
    + BACKTRACKS
    + """'}}}},
  execute: run('tag', 'tagged')});
mc.registerTool({name: 'get', description: 'get', inputSchema: empty, outputSchema: branching,
  annotations: {readOnlyHint: true}, execute: run('get', {v: 'x'})});
</script>"""
)
BUDGET_S = 6.0  # longer than the default, so that "answered meanwhile" has a wide margin


@contextlib.asynccontextmanager
async def two_sessions(harness: Harness) -> AsyncIterator[tuple[Session, Session]]:
    """Two sessions of ``harness``, each on a page of its own (``PAGE``)."""
    async with (
        serve_pages({"": PAGE}) as origin,
        await harness.open(origin) as a,
        await harness.open(origin) as b,
    ):
        yield a, b


async def answered_meanwhile(slow: asyncio.Task[Any], other: Any) -> Any:
    """Run ``other`` once ``slow`` has started, and return ``slow``'s outcome; fails unless
    ``other`` was answered while ``slow`` was still running (its check took its whole
    budget: without this, the event loop was held for all of it, and ``other`` waited)."""
    await asyncio.sleep(1.0)  # `slow` is past its page round trip, into its check
    assert not slow.done()
    answered = await other
    assert answered.result.is_error is not True, answered
    assert not slow.done(), "the other session was answered only after the slow check"
    return await slow


async def test_another_session_is_answered_while_one_call_s_arguments_are_checked(
    backend_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", BUDGET_S)
    async with two_sessions(backend_harness) as (a, b):
        slow = asyncio.create_task(a.call("tag", {"tags": STRINGS}))
        outcome = await answered_meanwhile(slow, b.call("ping"))
        assert outcome.result.is_error and outcome.error_kind == "validation"
        text = outcome.result.content[0].text  # type: ignore[union-attr]
        assert f"the schema could not be checked within {BUDGET_S:g} s" in text
        assert await a.page.evaluate("window.ran") == []  # never sent to the page
        assert await b.page.evaluate("window.ran") == ["ping"]


async def test_another_session_is_answered_while_an_mcp_client_s_result_is_checked(
    backend_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", BUDGET_S)
    async with two_sessions(backend_harness) as (a, b):
        bridge = McpBridge(a)
        async with bridge, Client(bridge.server, mode="legacy") as client:
            slow = asyncio.create_task(client.call_tool("get", {}))
            result = await answered_meanwhile(slow, b.call("ping"))
    assert result.is_error is True
    assert f"the schema could not be checked within {BUDGET_S:g} s on this result" in str(
        result.content
    )


# -- a schema's own checks: once per distinct schema, within the budget, off the loop (h20) --

# Over the size checked on the event loop (validation.AT_ONCE_SCHEMA_CHARS): about 100 KB.
WIDE = 2_000
BIG_PAGE = """<!doctype html><script>
const mc = document.modelContext; window.ran = [];
const props = {};
for (let i = 0; i < WIDE; i++) props['p' + i] = {type: 'string', description: 'field ' + i};
mc.registerTool({name: 'big', description: 'big form', inputSchema: {type: 'object', properties: props},
  annotations: {readOnlyHint: true}, execute: async () => { window.ran.push('big'); return 'ok'; }});
</script>""".replace("WIDE", str(WIDE))
PING_PAGE = """<!doctype html><script>
document.modelContext.registerTool({name: 'ping', description: 'ping',
  inputSchema: {type: 'object', properties: {}}, annotations: {readOnlyHint: true},
  execute: async () => { window.ran = ['ping']; return 'pong'; }});
</script>"""
SLOW_CHECK_S = 2.5  # the schema's own check made to take at least this, in the thread it runs in


def wide(properties: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            f"p{i}": {"type": "string", "description": f"field {i}"} for i in range(properties)
        },
    }


async def test_another_session_is_answered_while_a_large_schema_is_first_checked(
    backend_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first call of a tool with a large inputSchema checks the schema itself (against
    the 2020-12 meta-schema): in a worker thread, within the budget. Python's check took
    about 1 ms a property (h20, #1: 20 000 of them held the event loop of every session for
    20 s and more, outside any budget). Here the check (the compiled one forced off) is made
    to take ``SLOW_CHECK_S`` more by blocking the thread it runs in: on the event loop, the
    other session would wait for all of it."""
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", BUDGET_S)
    monkeypatch.setattr(validation, "meta_schema_fits_at_once", lambda schema: False, raising=False)
    # Checked afresh (the other backend's run of this test left its answer in the cache).
    monkeypatch.setattr(validation, "_CHECKS", validation._Remembered(1024), raising=False)
    real = validation.schema_problem

    def slow_schema_problem(schema: Any) -> str | None:
        time.sleep(SLOW_CHECK_S)  # blocks its thread, as a long check does
        return real(schema)

    monkeypatch.setattr(validation, "schema_problem", slow_schema_problem)
    async with (
        serve_pages({"": BIG_PAGE, "ping": PING_PAGE}) as origin,
        await backend_harness.open(origin) as a,
        await backend_harness.open(f"{origin}/ping") as b,
    ):
        big = a.catalog.get("big")
        assert big is not None  # larger than what is checked on the loop:
        assert len(json.dumps(big.input_schema)) > validation.AT_ONCE_SCHEMA_CHARS
        slow = asyncio.create_task(a.call("big", {"p1": "x"}))
        outcome = await answered_meanwhile(slow, b.call("ping"))
        if not outcome.result.is_error:
            # Checked within the budget (SLOW_CHECK_S is well inside it): the call ran.
            assert await a.page.evaluate("window.ran") == ["big"]
            return
        # A machine busy enough to take the budget: the tool is unusable, named.
        assert outcome.error_kind == "validation"
        text = outcome.result.content[0].text  # type: ignore[union-attr]
        assert text.startswith("Tool 'big' cannot be called: ")
        assert f"could not be checked within {BUDGET_S:g} s" in text
        assert await a.page.evaluate("window.ran") == []  # never sent to the page


def test_a_schema_s_own_checks_are_made_once_per_distinct_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Checked once, whatever tool object carries the schema (a page that registers its
    tools again), not on every call; a schema that is not checked in time is unusable,
    its tool named (h20, #1)."""
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", 60.0)  # a busy machine: not timed here
    looked_up = []
    real = validation.unresolvable_references
    monkeypatch.setattr(
        validation, "unresolvable_references", lambda s: looked_up.append(1) or real(s)
    )
    schema = wide(3_000)
    for _ in range(3):
        assert check_arguments(tool(schema), {"p1": "x"}) is None
    assert check_arguments(tool(schema), {"p1": 1}) is not None
    assert len(looked_up) == 1
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", 0.0)
    text = refusal(tool(wide(3)), {"p1": "x"})
    assert text.startswith("Tool 't' cannot be called: its inputSchema could not be checked")


def test_an_output_schema_s_own_checks_are_made_once_not_per_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every MCP result of a tool with an outputSchema was checked against it after the
    schema itself was checked again, uncached: 5–6 s a result at 3 000 properties (h20, #2)."""
    import mcp.types as types

    looked_up = []
    real = validation.unresolvable_references
    monkeypatch.setattr(
        validation, "unresolvable_references", lambda s: looked_up.append(1) or real(s)
    )
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", 60.0)  # a busy machine: not timed here
    schema = wide(3_000)
    result = types.CallToolResult(content=[], structured_content={"p1": "x"})
    for _ in range(3):
        assert conform(result, schema).is_error is not True
    broken = types.CallToolResult(content=[], structured_content={"p1": 1})
    assert conform(broken, schema).is_error is True
    assert len(looked_up) == 1


def test_a_result_s_output_schema_is_fingerprinted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schema's own checks and its result validator are found by its fingerprint (the
    SHA-256 of its canonical JSON: a few ms at 3 000 properties, off the event loop); each
    result worked it out twice, a refused one three times. Counted: once a result."""
    import mcp.types as types

    hashed = []
    sha256 = hashlib.sha256

    def counted(data: bytes) -> Any:
        hashed.append(len(data))
        return sha256(data)

    monkeypatch.setattr(validation, "hashlib", SimpleNamespace(sha256=counted))
    schema = wide(3_000)
    for value in ("x", "y", "z", 1):  # the last one refused
        result = types.CallToolResult(content=[], structured_content={"p1": value})
        assert conform(result, schema).is_error is (value == 1)
    assert len(hashed) == 4


# 24 levels of `anyOf` of two `$ref`s: far more than the walk can follow in BUDGET_S (17
# levels took it about 2 s alone on an idle machine).
SENSITIVE_PAGE = """<!doctype html><script>
const mc = document.modelContext; window.ran = [];
const defs = {};
for (let i = 0; i < 24; i++) defs['a' + i] = {anyOf: [{$ref: '#/$defs/a' + (i + 1)}, {$ref: '#/$defs/a' + (i + 1)}]};
defs.a24 = {type: 'string', 'x-sensitive': true};
mc.registerTool({name: 'vault_entry', description: 'entry', inputSchema: {type: 'object', properties: {}},
  outputSchema: {type: 'object', properties: {v: {$ref: '#/$defs/a0'}}, $defs: defs},
  annotations: {readOnlyHint: true, sensitiveHint: true},
  execute: async () => { window.ran.push('vault_entry'); return {v: 'hunter2-secret'}; }});
mc.registerTool({name: 'ping', description: 'ping', inputSchema: {type: 'object', properties: {}},
  annotations: {readOnlyHint: true}, execute: async () => { window.ran.push('ping'); return 'pong'; }});
</script>"""


async def test_another_session_is_answered_while_a_result_is_redacted(
    backend_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redaction reads an ``x-sensitive`` outputSchema within the budget (h20, #3): in a
    worker thread, so that twelve such results no longer held every other session for
    2 s each; what it withholds is still put in the vault, and the result withheld whole."""
    monkeypatch.setattr(budget, "SCHEMA_BUDGET_S", BUDGET_S)
    async with (
        serve_pages({"": SENSITIVE_PAGE}) as origin,
        await backend_harness.open(origin) as a,
        await backend_harness.open(origin) as b,
    ):
        slow = asyncio.create_task(a.call("vault_entry", {}))
        outcome = await answered_meanwhile(slow, b.call("ping"))
        shown = json.dumps(outcome.result.model_dump(mode="json"))
        assert "hunter2-secret" not in shown
        assert f"could not be checked within {BUDGET_S:g} s" in shown
        [item] = withheld_items(outcome.result)
        assert item.kind == "result" and item.label == "result of vault_entry"
        assert await a.page.evaluate("window.ran") == ["vault_entry"]
