"""The fuzzer on pages whose tools navigate, on both backends: a call that did not run
(the page it was made for went away) is no verdict on the tool, a navigation is blamed
on the call that started it, not on the next one, and a URL changed in the same document
(the history API, a fragment) is no navigation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import Harness
from harness.qa.fuzz import FuzzOptions, FuzzReport, fuzz
from tests.qa.pages import QAServer, page, serve

# A script tool that refuses what its schema does not allow, beside a form whose submit
# navigates: after the form's calls, the page is loaded again.
FORM_THEN_TOOL = page(
    """
document.modelContext.registerTool({
  name: "set_fav", description: "Sets the favourite genre.", annotations: {idempotentHint: true},
  inputSchema: {type: "object", properties: {genre: {type: "string", enum: ["scifi", "classic"]}},
                required: ["genre"]},
  execute: async ({genre}) => {
    if (!["scifi", "classic"].includes(genre)) throw new Error("genre must be scifi or classic");
    localStorage.setItem("fav", genre);
    return {ok: true};
  },
});"""
).replace(
    "<form>",
    '<form toolname="reserve" tooldescription="Reserves a book." action="/done" '
    'toolautosubmit><select name="book"><option value="dune">Dune</option></select>'
    "<button>Reserve</button></form><form>",
)

# Both tools refuse what their schemas do not allow; browse_shelf opens another page just
# after it answers, and that page is slow to come: the navigation lands after the call.
LATE_THEN_TOOL = page(
    """
const mc = document.modelContext;
const q = {type: "object", properties: {q: {type: "string", maxLength: 10}}, required: ["q"]};
const checked = (input) => {
  if (Object.keys(input).length !== 1 || typeof input.q !== "string" || input.q.length > 10) {
    throw new Error("q must be a string of at most 10 characters");
  }
};
mc.registerTool({
  name: "browse_shelf", description: "Shows a shelf, then opens its page.",
  annotations: {readOnlyHint: true}, inputSchema: {...q, additionalProperties: false},
  execute: async (input) => {
    checked(input);
    setTimeout(() => { location.href = "/shelf"; }, 10);
    return {content: [{type: "text", text: "shelf " + input.q}]};
  },
});
mc.registerTool({
  name: "look", description: "Shows a shelf.", annotations: {readOnlyHint: true},
  inputSchema: {...q, additionalProperties: false},
  execute: async (input) => { checked(input); return {content: [{type: "text", text: "ok"}]}; },
});"""
)

# A tool that opens another page instead of answering: its calls end with the document.
GOES_AWAY = page(
    """
document.modelContext.registerTool({
  name: "go_now", description: "Opens the shelf.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {q: {type: "string"}}, required: ["q"]},
  execute: async () => { location.href = "/shelf"; return new Promise(() => {}); },
});"""
)


# Tools that change the page's URL and keep its document: a filter kept in the query
# (history.replaceState; filter_saved also writes it to storage), a view kept in the path
# (history.pushState).
SAME_DOCUMENT = page(
    """
const mc = document.modelContext;
const q = {type: "object", properties: {q: {type: "string", maxLength: 10}}, required: ["q"]};
mc.registerTool({
  name: "filter_list", description: "Filters the list shown.", annotations: {readOnlyHint: true},
  inputSchema: q,
  execute: async ({q}) => {
    history.replaceState(null, "", "?q=" + encodeURIComponent(q));
    return {content: [{type: "text", text: "filtered"}]};
  },
});
mc.registerTool({
  name: "filter_saved", description: "Filters the list shown (and keeps the filter).",
  annotations: {readOnlyHint: true}, inputSchema: q,
  execute: async ({q}) => {
    history.replaceState(null, "", "?q=" + encodeURIComponent(q));
    localStorage.setItem("filter", q);
    return {content: [{type: "text", text: "filtered"}]};
  },
});
mc.registerTool({
  name: "show_view", description: "Shows a view.", annotations: {readOnlyHint: true},
  inputSchema: q,
  execute: async ({q}) => {
    history.pushState(null, "", "/views/" + encodeURIComponent(q) + "#top");
    return {content: [{type: "text", text: "shown"}]};
  },
});"""
)


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    pages = {
        "/same": SAME_DOCUMENT,
        "/form": FORM_THEN_TOOL,
        "/late": LATE_THEN_TOOL,
        "/now": GOES_AWAY,
        "/done": page("", "Reserved"),
        "/shelf": page("", "Shelf"),
    }
    async with serve(pages, slow={"/shelf": 0.5}) as qa:
        yield qa


async def fuzzed(harness: Harness, url: str, **options: object) -> FuzzReport:
    settings: dict[str, object] = {"examples": 6, "seed": 1, "database": None}
    settings.update(options)
    session = await harness.open(url)
    try:
        return await fuzz(session, FuzzOptions(**settings))  # type: ignore[arg-type]
    finally:
        await session.close()


def statuses(report: FuzzReport, tool: str) -> dict[str, str]:
    [found] = [t for t in report.tools if t.tool == tool]
    return {r.property: r.status for r in found.results}


async def test_a_tool_that_refuses_is_not_blamed_for_a_call_made_to_the_page_before(
    harness: Harness, server: QAServer
) -> None:
    # The near-miss went to set_fav as the first page registered it; on the page loaded
    # again that call never ran, and was read as "the tool accepted it".
    report = await fuzzed(
        harness,
        server.url("/form"),
        allow_writes=True,
        properties=["no-throw", "invalid-refused"],
    )
    assert statuses(report, "set_fav") == {"no-throw": "passed", "invalid-refused": "passed"}, (
        report.describe()
    )
    assert report.ok, report.describe()


async def test_a_navigation_that_lands_after_the_call_is_blamed_on_the_call_that_started_it(
    harness: Harness, server: QAServer
) -> None:
    report = await fuzzed(
        harness, server.url("/late"), properties=["no-navigation", "invalid-refused"]
    )
    described = report.describe()
    assert statuses(report, "browse_shelf") == {
        "no-navigation": "failed",
        "invalid-refused": "passed",
    }, described
    assert statuses(report, "look") == {"no-navigation": "passed", "invalid-refused": "passed"}, (
        described
    )


async def test_a_navigation_that_lands_after_a_tool_s_last_call_is_not_the_next_tool_s(
    harness: Harness, server: QAServer
) -> None:
    # browse_shelf's last call navigates (it ends its search): look is called next.
    report = await fuzzed(harness, server.url("/late"), properties=["no-navigation"])
    described = report.describe()
    assert statuses(report, "browse_shelf") == {"no-navigation": "failed"}, described
    assert statuses(report, "look") == {"no-navigation": "passed"}, described


async def test_a_url_a_tool_changes_in_the_same_document_is_no_navigation(
    harness: Harness, server: QAServer
) -> None:
    # The document (and what the user had on it) stays: nothing for `_meta.uiRedirect` to
    # declare. A real navigation still fails it (browse_shelf, above); a write beside the
    # new URL is still found (the top frame is compared whatever its URL).
    properties = ["no-navigation", "read-only"]
    report = await fuzzed(harness, server.url("/same"), properties=properties)
    described = report.describe()
    held = {"no-navigation": "passed", "read-only": "passed"}
    assert statuses(report, "filter_list") == held, described
    assert statuses(report, "show_view") == held, described
    assert statuses(report, "filter_saved") == {**held, "read-only": "failed"}, described
    assert "localStorage['filter'] changed" in described


async def test_a_call_the_page_left_before_the_tool_answered_decides_nothing(
    harness: Harness, server: QAServer
) -> None:
    # Whoever navigated, the tool said nothing about the near-miss: not checked, and why.
    report = await fuzzed(harness, server.url("/now"), properties=["invalid-refused"])
    [tool] = report.tools
    [result] = tool.results
    assert result.status == "skipped", report.describe()
    assert "the page navigated away before the tool answered" in result.reason
    assert report.ok and report.unchecked() == 1
