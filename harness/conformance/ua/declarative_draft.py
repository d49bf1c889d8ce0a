"""``/seeds/declarative-draft/``: seed 002 — tools declared in HTML with ``tool-name``.

HTML is the contract: the schema is what the controls say (§3), the call is the browser's
fetch with ``Accept: application/json`` (§4), a JSON answer is the result (§8), and the
result comes before the catalog change and the navigation (§6.1). Chromium has no such
dialect: on both backends it is the harness that reads the DOM and submits.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from typing import Any

from harness.conformance.ua.framework import (
    TestContext,
    TestFile,
    check,
    cite,
    equal,
    is_in,
    seed,
)

DISCOVERY = TestFile(
    "/seeds/declarative-draft/discovery.html", "draft.html", "What counts as a declarative tool"
)
SYNTHESIS = TestFile(
    "/seeds/declarative-draft/schema-synthesis.html", "draft.html", "Schema synthesis (§3)"
)
INVOCATION = TestFile(
    "/seeds/declarative-draft/invocation.html", "draft.html", "Fetch-first invocation (§4)"
)
ORDERING = TestFile(
    "/seeds/declarative-draft/ordering.html",
    "ordering.html",
    "Result, tools/list_changed, navigation (§6.1)",
    fresh=True,
)

WHAT_COUNTS = seed("002 §1", '<form tool-name="…"> → a tool with structured parameters')
TYPES = seed("002 §3", "Input types → JSON Schema")
CONSTRAINTS = seed("002 §3", "Constraints … required → required array")
STRUCTURE = seed("002 §3", "Object fields from fieldset[name] scoping and/or dot-notation")
INVOKE = seed("002 §4", "the browser submits with fetch to action/method")
HUMAN = seed("002 §0", "If a human can submit it, an agent can submit it.")


async def _schema(t: TestContext, name: str) -> dict[str, Any]:
    return (await t.session.tool(name)).input_schema


async def _property(t: TestContext, tool: str, name: str) -> dict[str, Any]:
    properties = (await _schema(t, tool)).get("properties", {})
    check(name in properties, f"{tool} has no parameter {name!r}: {sorted(properties)}")
    return dict(properties[name])


# -- discovery ---------------------------------------------------------------------------------


@DISCOVERY.subtest("a form with tool-name is a tool, with its title and description", WHAT_COUNTS)
async def _(t: TestContext) -> None:
    tool = await t.session.tool("add_todo")
    equal(
        (tool.source, tool.title, tool.description),
        ("declarative", "Add Todo", "Create a todo item"),
        "(source, title, description)",
    )


@DISCOVERY.subtest(
    "a link with tool-name is a tool without parameters",
    seed("002 §1", '<a tool-name="…"> / <button tool-name="…"> → a tool with no parameters'),
)
async def _(t: TestContext) -> None:
    schema = await _schema(t, "list_todos")
    equal(schema.get("properties", {}), {}, "the link tool's parameters")


@DISCOVERY.subtest(
    "a submit button with tool-name is a tool",
    seed("002 §1", '<a tool-name="…"> / <button tool-name="…"> → a tool'),
)
async def _(t: TestContext) -> None:
    tool = await t.session.tool("press_save")
    equal(tool.description, "Saves the form.", "description")


@DISCOVERY.subtest(
    "a tool-name longer than 64 characters is not a tool",
    seed(
        "002 §2.1",
        "tool-name (required) — programmatic identifier (pattern ^[a-zA-Z0-9_.-]{1,64}$)",
    ),
)
async def _(t: TestContext) -> None:
    names = [tool.name for tool in await t.session.tools()]
    check(not any(len(name) > 64 for name in names), "a 65-character tool-name is offered")


@DISCOVERY.subtest(
    "tool-readonly, tool-destructive and tool-idempotent become the MCP hints",
    seed("002 §2.1", "tool-readonly (optional, default false) … Maps to MCP readOnlyHint"),
)
async def _(t: TestContext) -> None:
    destroy, listing = await t.session.tool("destroy_all"), await t.session.tool("list_todos")
    equal(
        (
            destroy.annotations.get("destructiveHint"),
            destroy.annotations.get("idempotentHint"),
            listing.annotations.get("readOnlyHint"),
        ),
        (True, True, True),
        "(destructiveHint, idempotentHint, readOnlyHint)",
    )


@DISCOVERY.subtest(
    "tool-openworld is true unless the page says false",
    seed("002 §2.1", "tool-openworld (optional, default true)"),
)
async def _(t: TestContext) -> None:
    add, filtering = await t.session.tool("add_todo"), await t.session.tool("filter_todos")
    equal(
        (add.annotations.get("openWorldHint"), filtering.annotations.get("openWorldHint")),
        (True, False),
        "(openWorldHint of add_todo, of filter_todos)",
    )


@DISCOVERY.subtest(
    "of two forms with one name, only one is offered and the user agent warns",
    cite("002-unique-names"),
)
async def _(t: TestContext) -> None:
    tools = [tool for tool in await t.session.tools() if tool.name == "dup"]
    equal(len(tools), 1, "tools named dup")
    warned = [w.tool for w in t.session.warnings if w.code == "duplicate-name"]
    is_in("dup", warned, "tools warned about")


@DISCOVERY.subtest(
    "a form and a script tool with one name are never both offered", cite("002-unique-names")
)
async def _(t: TestContext) -> None:
    tools = [tool for tool in await t.session.tools() if tool.name == "script_dup"]
    equal(len(tools), 1, "tools named script_dup")


# -- schema synthesis -------------------------------------------------------------------------


@SYNTHESIS.subtest(
    "the TL;DR form's text field: a required string of 3 to 140 characters", CONSTRAINTS
)
async def _(t: TestContext) -> None:
    schema = await _schema(t, "add_todo")
    text = schema["properties"]["text"]
    equal(
        (
            text.get("type"),
            text.get("minLength"),
            text.get("maxLength"),
            "text" in schema.get("required", []),
        ),
        ("string", 3, 140, True),
        "(type, minLength, maxLength, required)",
    )


@SYNTHESIS.subtest(
    "a select becomes a string enum of its options",
    seed("002 §3", "<select> (single) → string with enum from options"),
)
async def _(t: TestContext) -> None:
    equal(
        (await _property(t, "add_todo", "priority")).get("enum"), ["low", "medium", "high"], "enum"
    )


@SYNTHESIS.subtest(
    "hidden inputs are parameters",
    seed(
        "002 §0",
        "Parameters are exactly the controls present in the DOM (including hidden inputs).",
    ),
)
async def _(t: TestContext) -> None:
    equal((await _property(t, "add_todo", "projectId")).get("type"), "string", "projectId's type")


@SYNTHESIS.subtest(
    "the schema is closed (additionalProperties false)",
    seed("002 §0", "Closed-world by construction."),
)
async def _(t: TestContext) -> None:
    equal((await _schema(t, "add_todo")).get("additionalProperties"), False, "additionalProperties")


@SYNTHESIS.subtest("an email input is a string with format email", TYPES)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "email")).get("format"), "email", "format")


@SYNTHESIS.subtest("a url input is a string with format uri", TYPES)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "site")).get("format"), "uri", "format")


@SYNTHESIS.subtest(
    "a number with a whole step is an integer",
    seed("002 §3", "infer integer when step is a whole number"),
)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "count")).get("type"), "integer", "type")


@SYNTHESIS.subtest(
    "a number with a fractional step is a number with multipleOf",
    seed("002 §3", "step → multipleOf (numbers)"),
)
async def _(t: TestContext) -> None:
    ratio = await _property(t, "typed_fields", "ratio")
    equal((ratio.get("type"), ratio.get("multipleOf")), ("number", 0.5), "(type, multipleOf)")


@SYNTHESIS.subtest(
    "tool-param-type forces an integer",
    seed("002 §2.2", "tool-param-type (optional) — only to disambiguate (e.g., force integer"),
)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "forced")).get("type"), "integer", "type")


@SYNTHESIS.subtest("min and max become minimum and maximum", CONSTRAINTS)
async def _(t: TestContext) -> None:
    count = await _property(t, "typed_fields", "count")
    equal((count.get("minimum"), count.get("maximum")), (0, 10), "(minimum, maximum)")


@SYNTHESIS.subtest("a date input is a string with format date", TYPES)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "day")).get("format"), "date", "format")


@SYNTHESIS.subtest("a checkbox is a boolean", TYPES)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "agree")).get("type"), "boolean", "type")


@SYNTHESIS.subtest(
    "a radio group is a string enum of its values",
    seed("002 §3", "Radio group (same name) → string with enum from radio values"),
)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "size")).get("enum"), ["s", "m"], "enum")


@SYNTHESIS.subtest(
    "a select multiple is an array of strings",
    seed("002 §3", "<select multiple> → array<string>"),
)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "tags")).get("type"), "array", "type")


@SYNTHESIS.subtest(
    "pattern becomes a pattern that matches the whole value, as HTML's does", CONSTRAINTS
)
async def _(t: TestContext) -> None:
    pattern = (await _property(t, "typed_fields", "code")).get("pattern")
    check(isinstance(pattern, str), "code has no pattern")
    matches = [bool(re.search(str(pattern), value)) for value in ("ABC", "ABCD", "xABC")]
    equal(matches, [True, False, False], "matches of ABC, ABCD, xABC")


@SYNTHESIS.subtest(
    "tool-param-title and tool-param-description become title and description",
    seed("002 §2.2", "tool-param-title (optional) — short display title."),
)
async def _(t: TestContext) -> None:
    notes = await _property(t, "typed_fields", "notes")
    equal(
        (notes.get("type"), notes.get("title"), notes.get("description")),
        ("string", "Notes", "Anything else."),
        "(type, title, description)",
    )


@SYNTHESIS.subtest("a named fieldset is a nested object", STRUCTURE)
async def _(t: TestContext) -> None:
    address = await _property(t, "typed_fields", "address")
    equal(
        (address.get("type"), sorted(address.get("properties", {}))),
        ("object", ["street", "zip"]),
        "(type, properties)",
    )


@SYNTHESIS.subtest("dot-notation names are nested objects", STRUCTURE)
async def _(t: TestContext) -> None:
    contact = await _property(t, "typed_fields", "contact")
    is_in("phone", contact.get("properties", {}), "contact's properties")


@SYNTHESIS.subtest(
    "repeated names are an array",
    seed("002 §3", "Arrays from repeated name controls"),
)
async def _(t: TestContext) -> None:
    equal((await _property(t, "typed_fields", "alias")).get("type"), "array", "type")


# -- invocation ------------------------------------------------------------------------------


def _new(t: TestContext, path: str, before: int) -> list[dict[str, Any]]:
    return t.fixtures.requests(path)[before:]


@INVOCATION.subtest(
    "a POST form sends form data with Accept: application/json and the page's cookies",
    INVOKE,
    seed("002 §4", "The browser includes Accept: application/json and credentials as usual."),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    outcome = await t.call("add_todo", {"text": "Buy oat milk", "priority": "high"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    [request] = _new(t, "/api/echo", before)
    equal(
        (request["method"], "application/json" in request["accept"], request["cookie"]),
        ("POST", True, True),
        "(method, JSON accepted, login cookie)",
    )
    equal(request["body"].count("text=Buy+oat+milk"), 1, "the text field in the body")


@INVOCATION.subtest(
    "a GET form puts the arguments in the query",
    seed("002 §4", "GET: encode params in query."),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    await t.call("filter_todos", {"q": "milk", "status": "open"})
    [request] = _new(t, "/api/echo", before)
    equal(
        (request["method"], request["query"].get("q"), request["query"].get("status")),
        ("GET", "milk", "open"),
        "(method, q, status)",
    )


@INVOCATION.subtest(
    "a link tool fetches its href",
    seed("002 §5.1", "The browser fetches GET /todos with Accept: application/json"),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    await t.call("list_todos")
    [request] = _new(t, "/api/echo", before)
    equal((request["method"], request["query"]), ("GET", {"page": "1"}), "(method, query)")


@INVOCATION.subtest(
    "a JSON answer becomes the result",
    seed("002 §4", "The server responds with JSON → the browser returns an MCP CallToolResult"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("add_todo", {"text": "Water plants"})
    structured = outcome.result.structured_content or {}
    equal(structured.get("method"), "POST", "structuredContent.method")


@INVOCATION.subtest(
    "a non-JSON answer is an error result that names its content type",
    seed("002 §8.2", "For non-JSON responses, treat as error for declarative tools"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("html_answer", {"x": "1"})
    check(outcome.is_error, "an HTML answer was taken as a result")
    is_in("text/html", t.agent_text(outcome), "the agent's error text")


@INVOCATION.subtest(
    "an HTTP error is an error result that names the status",
    seed("002 §4", "The server responds with JSON"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("failing_answer", {"x": "1"})
    check(outcome.is_error, "an HTTP 500 was taken as a result")
    is_in("500", t.agent_text(outcome), "the agent's error text")


@INVOCATION.subtest(
    "an action on another origin is refused and nothing is sent",
    INVOKE,
    cite("004-deterministic"),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    outcome = await t.call("elsewhere", {"x": "1"})
    check(outcome.is_error, "the cross-origin submission was not refused")
    equal(len(_new(t, "/api/echo", before)), 0, "requests sent")


@INVOCATION.subtest(
    "arguments that break the HTML rules never leave the browser",
    seed("002 §0", "Validation and structure come from ordinary HTML"),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    outcome = await t.call("add_todo", {"text": "no"})
    check(outcome.is_error, "a 2-character text passed minlength=3")
    equal(len(_new(t, "/api/echo", before)), 0, "requests sent")


@INVOCATION.subtest("a fieldset's field goes on the wire with its HTML name", HUMAN)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    await t.call("nested_wire", {"address": {"street": "Main St"}})
    [request] = _new(t, "/api/echo", before)
    equal(request["body"], "street=Main+St", "the body a person's submit would send")


@INVOCATION.subtest("a button tool sends its own name=value, as a click would", HUMAN)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    await t.call("press_save")
    [request] = _new(t, "/api/echo", before)
    is_in("action=save", request["body"], "the body")


# -- ordering --------------------------------------------------------------------------------------


async def _catalog_names(t: TestContext) -> list[str]:
    return [tool.name for tool in await t.session.tools()]


async def _held_call(t: TestContext) -> tuple[str, asyncio.Future[Any], list[Any]]:
    """Start ``once`` on a slow endpoint of its own; returns (key, call, what happened, in order)."""
    key = secrets.token_hex(4)
    await t.js(
        "(key) => { document.getElementById('once').action ="
        " `/api/slow/${key}?to=/pages/landing.html`; }",
        key,
    )
    order: list[Any] = []
    t.session.on_call(lambda _args, outcome: order.append(("result", outcome.is_error)))
    t.session.on_tools_changed(
        lambda change: order.append(("tools changed", tuple(change.removed)))
    )
    main = t.page.main_frame
    t.page.on("framenavigated", lambda frame: order.append("navigation") if frame == main else None)
    call = asyncio.ensure_future(t.call("once", {"text": "hi"}))
    await t.eventually(
        lambda: _arrived(t, f"/api/slow/{key}"), "the held submission reached the server", 10
    )
    return key, call, order


async def _arrived(t: TestContext, path: str) -> bool:
    return bool(t.fixtures.requests(path))


@ORDERING.subtest(
    "the result comes first, then the catalog change, then the navigation", cite("002-ordering")
)
async def _(t: TestContext) -> None:
    key, call, order = await _held_call(t)
    await t.js("document.getElementById('once').remove()")
    await asyncio.sleep(0.4)
    t.fixtures.release(key)
    outcome = await call
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    await t.session.settled()
    equal(order[:3], [("result", False), ("tools changed", ("once",)), "navigation"], "the order")


@ORDERING.subtest(
    "a form removed while its call runs stays in the catalog until its result is delivered",
    cite("002-no-unmount"),
    cite("002-freeze"),
)
async def _(t: TestContext) -> None:
    key, call, _order = await _held_call(t)
    try:
        await t.js("document.getElementById('once').remove()")
        await asyncio.sleep(0.4)
        is_in("once", await _catalog_names(t), "the catalog while the call runs")
    finally:
        t.fixtures.release(key)
        await call


@ORDERING.subtest(
    "_meta.uiRedirect is applied after the result",
    cite("002-ordering"),
    seed("002 §6", "apply navigation after result delivery"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("redirects", {"x": "1"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    await t.session.settled()
    is_in("/pages/landing.html", t.session.url, "the page's URL")


@ORDERING.subtest(
    "a Location header is applied after the result",
    cite("002-ordering"),
    seed("002 §6", "an HTTP Location"),
)
async def _(t: TestContext) -> None:
    await t.call("located", {"x": "1"})
    await t.session.settled()
    is_in("/pages/landing.html", t.session.url, "the page's URL")


@ORDERING.subtest("an error result does not navigate", cite("002-ordering"))
async def _(t: TestContext) -> None:
    start = t.session.url
    outcome = await t.call("fails", {"x": "1"})
    check(outcome.is_error, "the failing answer was not an error")
    await t.session.settled()
    equal(t.session.url, start, "the page's URL")


@ORDERING.subtest(
    "a script tool's _meta.uiRedirect is applied after its result",
    cite("002-ordering"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("script_redirect")
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    await t.session.settled()
    await asyncio.sleep(0.5)
    is_in("/pages/landing.html", t.session.url, "the page's URL")


@ORDERING.subtest(
    "a script tool that unregisters itself while it runs stays until its result",
    cite("002-no-unmount"),
)
async def _(t: TestContext) -> None:
    call = asyncio.ensure_future(t.call("self_removing"))
    try:
        await t.eventually(
            lambda: t.js("typeof window.finishSelfRemoving === 'function'"), "the tool started"
        )
        await asyncio.sleep(0.4)
        is_in("self_removing", await _catalog_names(t), "the catalog while the call runs")
    finally:
        await t.js("window.finishSelfRemoving?.()")
        await call


FILES = [DISCOVERY, SYNTHESIS, INVOCATION, ORDERING]
