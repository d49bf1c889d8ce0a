"""Frames through a session, on both backends: which frames' tools the catalog offers and
how calls reach them, across navigations."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Page

from harness import BrowserPool, Harness, Session
from tests.conftest import PageServer

BACKENDS = ["polyfill", "native"]


@pytest.fixture(scope="module", params=BACKENDS)
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture
async def session(harness: Harness) -> AsyncIterator[Session]:
    s = await harness.new_session()
    yield s
    await s.close()


def text(outcome: object) -> str:
    result = outcome.result  # type: ignore[attr-defined]
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def test_same_origin_and_srcdoc_frames_offer_their_tools(
    session: Session, page_server: PageServer
) -> None:
    await session.open(page_server.url("f_reused.html"))
    tool = await session.wait_for_tool("srcdoc_tool", timeout=10)
    # A srcdoc document has its parent's origin (HTML), not the opaque origin of its URL.
    assert tool.origin == page_server.origin
    await session.wait_for_tool("child_tool_reused", timeout=10)
    names = {t.name for t in await session.tools()}
    assert {"top_form", "child_form_reused", "child_tool_reused"} <= names
    assert {"srcdoc_tool", "srcdoc_form"} <= names
    assert "srcdoc tool ran" in text(await session.call("srcdoc_tool"))
    assert "child tool ran in reused with 4" in text(
        await session.call("child_tool_reused", {"n": 4})
    )


async def test_frame_tools_stay_callable_after_the_session_navigated(
    session: Session, page_server: PageServer
) -> None:
    for page, which in (("f_reused.html", "reused"), ("f_touched.html", "touched")):
        await session.open(page_server.url(page))
        await session.wait_for_tool(f"child_tool_{which}", timeout=10)
        outcome = await session.call(f"child_tool_{which}", {"n": 1})
        assert not outcome.is_error, text(outcome)
        assert f"child tool ran in {which} with 1" in text(outcome)


# Chromium registers a `<form toolname>` a little after the page's script saw it declared.
# Under load a read of a child frame's registry fell in between now and then (one `make
# test` in four at stop 48), and the form was never listed: every later read was answered
# `unchanged` (the layer's records had not changed since), and CDP's events never told of
# it. Made certain here: a child frame's getTools() leaves its forms out for 1.5 s.
LATE_FORM_REGISTRATION = """
if (window !== window.top && typeof ModelContext === "function") {
  const getTools = ModelContext.prototype.getTools;
  const until = Date.now() + 1500;
  ModelContext.prototype.getTools = async function () {
    const tools = await getTools.call(this);
    return Date.now() < until ? tools.filter((tool) => !tool.name.includes("_form")) : tools;
  };
}
"""


@pytest.mark.native
async def test_a_form_chromium_registers_after_a_read_of_its_frame_is_listed(
    browser_pool: BrowserPool, page_server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Harness(browsers=browser_pool, backend="native", call_timeout=10) as harness:
        script_first(harness, monkeypatch, LATE_FORM_REGISTRATION)
        session = await harness.open(page_server.url("f_reused.html"))
        forms = {"child_form_reused", "srcdoc_form"}
        # Followed without a listing (as an MCP client hears of it: tools/list_changed)…
        async with asyncio.timeout(10):
            while not forms <= {t.name for t in session.catalog.tools()}:
                await asyncio.sleep(0.05)
        # …and listed.
        assert forms <= {t.name for t in await session.tools()}
        assert "child tool ran in reused with 3" in text(
            await session.call("child_tool_reused", {"n": 3})
        )


# What Chromium 156 now and then does under load (a child frame's WebMCP requests go
# unanswered), made certain: getTools() in a child frame never settles.
STALLED_GET_TOOLS = """
if (window !== window.top && typeof ModelContext === "function") {
  ModelContext.prototype.getTools = function () { return new Promise(() => {}); };
}
"""


def script_first(harness: Harness, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """Every context the harness makes from now on runs ``script`` in each document before
    the harness's own script."""
    new_context = harness.browser.new_context

    async def with_script(**options: Any) -> Any:
        context = await new_context(**options)
        await context.add_init_script(script)
        return context

    monkeypatch.setattr(harness.browser, "new_context", with_script)


@pytest.mark.native
@pytest.mark.chromium_fault_simulated
async def test_a_frame_whose_get_tools_never_settles_cannot_hang_the_session(
    page_server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Harness(backend="native", call_timeout=10) as harness:
        script_first(harness, monkeypatch, STALLED_GET_TOOLS)
        async with asyncio.timeout(30):  # without the listing's own limit: for ever
            session = await harness.open(page_server.url("f_reused.html"))
            # The frame's tools are still listed, as the injected layer saw them register.
            await session.wait_for_tool("child_tool_reused", timeout=10)
            # A call looks its tool up with getTools() too: unanswered, it ends, not run,
            # when a listing would have given up (3 s), not at the call's own limit.
            outcome = await session.call("child_tool_reused", {"n": 2})
        assert outcome.error_kind == "timeout", text(outcome)
        assert "'child_tool_reused' was not run: Chromium's WebMCP did not answer" in text(outcome)
        assert "after 3 s" in text(outcome)
        assert outcome.duration_ms < 10_000
        # The listing says which frames Chromium left unanswered (the child's and srcdoc's).
        unanswered = [w for w in session.warnings if w.code == "chromium-unanswered"]
        assert len(unanswered) == 2, session.warnings
        assert all("did not answer getTools()" in w.message for w in unanswered)
        assert {"top_form", "child_form_reused", "srcdoc_tool"} <= {
            t.name for t in await session.tools()
        }


# Chromium's getTools() in a child frame answering only after 4.5 s (past the layer's 3 s)
# until the top document says otherwise, and the child's tools counting their runs there.
LATE_GET_TOOLS = """
if (window !== window.top && typeof ModelContext === "function") {
  const getTools = ModelContext.prototype.getTools;
  ModelContext.prototype.getTools = function () {
    const wait = top.getToolsOnTime ? 0 : 4500;
    return new Promise((resolve) => setTimeout(() => resolve(getTools.call(this)), wait));
  };
  const registerTool = ModelContext.prototype.registerTool;
  ModelContext.prototype.registerTool = function (tool, ...rest) {
    const execute = tool.execute;
    tool.execute = function (...args) {
      top.childRuns = (top.childRuns || 0) + 1;
      return execute.apply(this, args);
    };
    return registerTool.call(this, tool, ...rest);
  };
}
"""


@pytest.mark.native
@pytest.mark.chromium_fault_simulated
async def test_a_call_whose_lookup_chromium_answers_too_late_never_runs(
    page_server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Harness(backend="native", call_timeout=10) as harness:
        script_first(harness, monkeypatch, LATE_GET_TOOLS)
        session = await harness.open(page_server.url("f_reused.html"))
        await session.wait_for_tool("child_tool_reused", timeout=10)
        outcome = await session.call("child_tool_reused", {"n": 4})
        assert "was not run: Chromium's WebMCP did not answer" in text(outcome)
        # The lookup's late answer comes 1.5 s after the call ended: the tool stays unrun.
        await asyncio.sleep(2)
        assert await session.page.evaluate("window.childRuns || 0") == 0
        # A tool the page calls itself still runs through the wrapper (it counts).
        await session.page.evaluate("window.getToolsOnTime = true")
        ran = await session.page.frames[1].evaluate(
            """async () => {
              const tools = await document.modelContext.getTools();
              const tool = tools.find((t) => t.name === "child_tool_reused");
              return document.modelContext.executeTool(tool, {n: 5});
            }"""
        )
        assert "child tool ran in reused with 5" in ran
        assert await session.page.evaluate("window.childRuns") == 1


# Counts, in the top document, the reads of `document.modelContext` in about:blank documents
# (installed before the harness's script, which takes it for Chromium's own getter).
BLANK_READS = """
const own = Object.getOwnPropertyDescriptor(Document.prototype, "modelContext");
if (own !== undefined) {
  Object.defineProperty(Document.prototype, "modelContext", {...own, get() {
    if (this.URL === "about:blank") top.blankReads = (top.blankReads || 0) + 1;
    return own.get.call(this);
  }});
}
"""


@pytest.mark.native
async def test_an_iframes_initial_blank_document_never_reads_the_native_object(
    page_server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chromium binds a document's WebMCP host when its `modelContext` is first read. The
    # harness's layer read it in every document, the initial about:blank of an iframe that
    # the page touched (f_touched.html) included; that document then navigates in the same
    # window, and under load its bind reached the browser after the next document's: the
    # renderer was killed for a "duplicate bind" (Chromium's bad IPC message 346, logged as
    # "Terminating renderer for bad IPC message, reason 346"; Playwright's "Page crashed"),
    # about one such navigation in 35 with a reading init script, none without.
    async with Harness(backend="native", call_timeout=10) as harness:
        script_first(harness, monkeypatch, BLANK_READS)
        session = await harness.open(page_server.url("f_touched.html"))
        await session.wait_for_tool("child_tool_touched", timeout=10)
        outcome = await session.call("child_tool_touched", {"n": 3})
        assert "child tool ran in touched with 3" in text(outcome)
        assert await session.page.evaluate("window.blankReads || 0") == 0
        # An about:blank document's native object is still read when the page asks for it.
        blank = await session.page.evaluate(
            """() => {
              const frame = document.createElement("iframe");
              document.body.append(frame);
              return typeof frame.contentDocument.modelContext.registerTool;
            }"""
        )
        assert blank == "function"
        assert await session.page.evaluate("window.blankReads") == 1


async def popup_of(session: Session) -> Page:
    """The page another frame of the session's page opened (a popup), once its tools are in."""
    async with asyncio.timeout(15):
        while len(session.context.pages) < 2:
            await asyncio.sleep(0.05)
    popup = next(p for p in session.context.pages if p is not session.page)
    await popup.wait_for_function("window.registered === true", timeout=15_000)
    return popup


async def catalog_beside_a_popup(session: Session, page_server: PageServer) -> dict[str, Any]:
    """What the session offers while an ad frame's popup registers look-alike tools."""
    await session.open(page_server.url("f_popup.html"))
    popup = await popup_of(session)
    await asyncio.sleep(0.3)  # the popup's messages, if any were heard, are in by now
    tools = await session.tools()
    outcome = await session.call("checkout")
    return {
        "tools": [(t.name, t.origin, t.description) for t in tools],
        "the shop's checkout ran": "paid by the shop" in text(outcome),
        # The popup is a page of its own, with WebMCP as any page has (Chromium's too).
        "popup has WebMCP": await popup.evaluate("typeof document.modelContext"),
    }


async def test_a_popup_never_writes_the_sessions_catalog_on_either_backend(
    browser_pool: BrowserPool,
    page_server: PageServer,
) -> None:
    seen = {}
    for backend in BACKENDS:  # native is the reference: the popup is another page of its own
        async with Harness(browsers=browser_pool, backend=backend, call_timeout=10) as harness:
            session = await harness.new_session()
            seen[backend] = await catalog_beside_a_popup(session, page_server)
    assert seen["native"] == {
        "tools": [("checkout", page_server.origin, "Pays for the cart.")],
        "the shop's checkout ran": True,
        "popup has WebMCP": "object",
    }
    assert seen["polyfill"] == seen["native"]
