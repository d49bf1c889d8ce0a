"""``/webmcp/declarative/``: ``<form toolname>``, the spec's declarative dialect.

A form with ``toolname`` and ``tooldescription`` is a tool whose schema comes from its
controls; an agent's call fills it, and with ``toolautosubmit`` submits it (``SubmitEvent``'s
``agentInvoked`` and ``respondWith()``), otherwise waits for the user. Chromium 156 is the
reference; where it and the spec part (``toolparamtitle``), the subtest follows the spec.
"""

from __future__ import annotations

import asyncio
from typing import Any

from harness.conformance.ua.framework import (
    SessionSetup,
    TestContext,
    TestFile,
    check,
    equal,
    is_in,
    spec,
)

TOOLNAME = spec("<form toolname>", "a form with toolname and tooldescription is a tool")
PARAMS = spec("<form toolname>", "the input schema is built from the form's controls")
EXECUTE = spec("<form toolname>", "the agent fills the form; toolautosubmit submits it")

FORMS = TestFile("/webmcp/declarative/forms.html", "declarative_forms.html", "<form toolname>")


async def _schema(t: TestContext, name: str) -> dict[str, Any]:
    tool = await t.session.tool(name)
    return tool.input_schema


@FORMS.subtest("a form with toolname and tooldescription is a declarative tool", TOOLNAME)
async def _(t: TestContext) -> None:
    tool = await t.session.tool("search_items")
    equal((tool.source, tool.description), ("declarative", "Search the catalog."), "tool")


@FORMS.subtest("getTools() lists the form in the page too", TOOLNAME)
async def _(t: TestContext) -> None:
    is_in("search_items", await t.js("ua.names()"), "getTools() names")


@FORMS.subtest("a named control becomes a parameter", PARAMS)
async def _(t: TestContext) -> None:
    properties = (await _schema(t, "search_items")).get("properties", {})
    check("q" in properties and "kind" in properties, f"parameters: {sorted(properties)}")


@FORMS.subtest(
    "toolparamdescription becomes the parameter's description",
    spec("<form toolname>", "toolparamdescription"),
)
async def _(t: TestContext) -> None:
    q = (await _schema(t, "search_items"))["properties"]["q"]
    equal(q.get("description"), "What to look for.", "description of q")


@FORMS.subtest(
    "toolparamtitle becomes the parameter's title",
    spec("<form toolname>", "toolparamtitle"),
)
async def _(t: TestContext) -> None:
    q = (await _schema(t, "search_items"))["properties"]["q"]
    equal(q.get("title"), "Query text", "title of q")


@FORMS.subtest("a required control is a required parameter", PARAMS)
async def _(t: TestContext) -> None:
    is_in("q", (await _schema(t, "search_items")).get("required", []), "required")


@FORMS.subtest("a select's option values are the parameter's choices", PARAMS)
async def _(t: TestContext) -> None:
    kind = str((await _schema(t, "search_items"))["properties"]["kind"])
    check("book" in kind and "film" in kind, f"kind's schema lacks the options: {kind}")


@FORMS.subtest("disabled controls are not parameters", PARAMS)
async def _(t: TestContext) -> None:
    properties = (await _schema(t, "search_items")).get("properties", {})
    check("gone" not in properties, "the disabled control is a parameter")


@FORMS.subtest("read-only controls are not parameters", PARAMS)
async def _(t: TestContext) -> None:
    properties = (await _schema(t, "search_items")).get("properties", {})
    check("fixed" not in properties, "the read-only control is a parameter")


@FORMS.subtest("a form without tooldescription is not a tool", TOOLNAME)
async def _(t: TestContext) -> None:
    check("no_description" not in await t.js("ua.names()"), "the undescribed form is a tool")


@FORMS.subtest(
    "a toolname that breaks the name rule is not a tool",
    spec("<form toolname>", "the tool name … ^[A-Za-z0-9_.-]{1,128}$"),
)
async def _(t: TestContext) -> None:
    check("bad name" not in await t.js("ua.names()"), "the badly named form is a tool")


@FORMS.subtest(
    "toolautosubmit is visible to the user agent",
    spec("<form toolname>", "toolautosubmit"),
)
async def _(t: TestContext) -> None:
    search, review = await t.session.tool("search_items"), await t.session.tool("review")
    equal(
        (search.annotations.get("autosubmit"), review.annotations.get("autosubmit")),
        (True, None),
        "(autosubmit of search_items, of review)",
    )


@FORMS.subtest("respondWith() gives the agent the page's answer", EXECUTE)
async def _(t: TestContext) -> None:
    outcome = await t.call("respond", {"q": "hello"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    is_in("hello", t.agent_text(outcome), "the agent view")


@FORMS.subtest(
    "the submit event of an agent's call has agentInvoked true",
    spec("SubmitEvent", "agentInvoked is true when the agent submitted the form"),
)
async def _(t: TestContext) -> None:
    await t.js("log.length = 0")
    await t.call("respond", {"q": "who"})
    is_in("respond submit  true", await t.js("log"), "the page's event log")


@FORMS.subtest(
    "filling a control fires input and change",
    spec("<form toolname>", "set the control's value … fire input and change"),
)
async def _(t: TestContext) -> None:
    await t.js("log.length = 0")
    await t.call("respond", {"q": "typed"})
    events = await t.js("log")
    check("respond input q" in events and "respond change q" in events, f"events: {events}")


@FORMS.subtest(
    "a submission that goes ahead tells the agent the form was submitted",
    EXECUTE,
)
async def _(t: TestContext) -> None:
    outcome = await t.call("search_items", {"q": "dune", "kind": "book"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    is_in("submitted", t.agent_text(outcome), "the agent view")
    await t.eventually(
        lambda: _received(t, "/api/echo", "dune"), "the submission reached the form's action"
    )


async def _received(t: TestContext, path: str, text: str) -> bool:
    return any(text in str(r["query"]) + r["body"] for r in t.fixtures.requests(path))


@FORMS.subtest(
    "an invalid value changes nothing in the form",
    spec("<form toolname>", "if any value is invalid, the form is left as it was"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("typed", {"n": "many", "t": "changed"})
    check(outcome.is_error, "a text for a number was accepted")
    values = await t.js("[typed.n.value, typed.t.value]")
    equal(values, ["1", "start"], "the form's values")


@FORMS.subtest(
    ":tool-form-active matches the form while its call runs",
    spec("pseudo-classes", ":tool-form-active"),
)
async def _(t: TestContext) -> None:
    equal(await _while_held(t, ":tool-form-active"), "held", "the matched element")


@FORMS.subtest(
    ":tool-submit-active matches the submit button while its call runs",
    spec("pseudo-classes", ":tool-submit-active"),
)
async def _(t: TestContext) -> None:
    equal(await _while_held(t, ":tool-submit-active"), "held-go", "the matched element")


async def _while_held(t: TestContext, selector: str) -> Any:
    await t.js("window.heldSubmitted = false")
    call = asyncio.ensure_future(t.call("held", {"q": "wait"}))
    try:
        await t.eventually(lambda: t.js("window.heldSubmitted"), "the held form was submitted")
        return await t.js("(s) => matches(s)", selector)
    finally:
        await t.js("window.finishHeld?.('released')")
        await call


@FORMS.subtest(
    "toolactivated fires when the agent calls a form",
    spec("toolactivated", "fired when a tool is invoked"),
)
async def _(t: TestContext) -> None:
    await t.js("ua.events.length = 0")
    await t.call("respond", {"q": "x"})
    is_in("activated respond", await t.js("ua.events"), "events")


@FORMS.subtest(
    "renaming toolname renames the tool",
    spec("<form toolname>", "the tool follows its attributes"),
)
async def _(t: TestContext) -> None:
    await t.js("document.getElementById('dynamic').setAttribute('toolname', 'renamed_form')")
    tool = await t.session.wait_for_tool("renamed_form")
    equal(tool.name, "renamed_form", "name")


@FORMS.subtest(
    "removing the form removes the tool",
    spec("<form toolname>", "a form removed from the document is no longer a tool"),
)
async def _(t: TestContext) -> None:
    await t.js("document.getElementById('dynamic').remove()")

    async def gone() -> bool:
        return "renamed_form" not in [tool.name for tool in await t.session.tools()]

    await t.eventually(gone, "the removed form left the catalog")


REVIEW = TestFile(
    "/webmcp/declarative/review.html",
    "declarative_forms.html",
    "A form without toolautosubmit waits for the user",
    setup=SessionSetup(form_review="ask"),
)
REVIEW_RULE = spec("<form toolname>", "without toolautosubmit … the user submits the form")


@REVIEW.subtest("with nobody to ask, the filled form is not submitted", REVIEW_RULE, fresh=True)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    outcome = await t.call("review", {"q": "unsent"})
    check(outcome.is_error, "the unreviewed call is not isError")
    await asyncio.sleep(0.3)
    equal(len(t.fixtures.requests("/api/echo")) - before, 0, "submissions")


@REVIEW.subtest("the user's submit sends the filled form", REVIEW_RULE, fresh=True)
async def _(t: TestContext) -> None:
    t.session.form_review.mode = "submit"
    outcome = await t.call("review", {"q": "reviewed"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    await t.eventually(lambda: _received(t, "/api/echo", "reviewed"), "the submission arrived")


@REVIEW.subtest("the user is asked with the form as the agent filled it", REVIEW_RULE, fresh=True)
async def _(t: TestContext) -> None:
    outcome = await t.call("review", {"q": "shown"})
    check(outcome.is_error, "an unanswered review went ahead")
    record = t.session.elicitations[-1]
    equal((record.source, record.tool), ("form-review", "review"), "(source, tool) asked")


FILES = [FORMS, REVIEW]
