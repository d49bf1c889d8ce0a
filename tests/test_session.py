"""Session and pipeline behaviour, the same suite on both backends."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from collections.abc import AsyncIterator
from typing import Any

import pytest

import harness.harness as harness_module
import harness.session as session_module
from harness import BrowserPool, Harness, Session, SessionClosed, ToolChange, UnknownTool
from harness.stages.framing import frame_untrusted
from tests.conftest import PageServer

BACKENDS = ["polyfill", "native"]


@pytest.fixture(scope="session", params=BACKENDS)
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture
async def session(harness: Harness, page_server: PageServer) -> AsyncIterator[Session]:
    s = await harness.open(page_server.url("s_tools.html"))
    yield s
    await s.close()


def origin(session: Session) -> str:
    return session.url.rsplit("/", 1)[0]


async def test_tools_are_listed_sorted_with_what_the_page_gave(session: Session) -> None:
    tools = await session.tools()
    assert [t.name for t in tools] == ["echo", "fails", "mcp_result", "navigates", "slow"]
    echo = next(t for t in tools if t.name == "echo")
    assert echo.title == "Echo"
    assert echo.input_schema["required"] == ["text"]
    assert echo.output_schema == {"type": "object", "properties": {"echo": {"type": "string"}}}
    assert echo.annotations == {
        "readOnlyHint": True,
        "idempotentHint": True,
        "sensitiveHint": False,
    }
    assert echo.source == "script" and echo.frame == "main"
    assert echo.origin == session.url.rsplit("/", 1)[0]


async def test_a_call_returns_text_and_structured_content(session: Session) -> None:
    outcome = await session.call("echo", {"text": "hi"})
    assert outcome.agent_json() == {
        # Page text reaches the agent framed as untrusted data (untrusted_framing, on by default).
        "content": [{"type": "text", "text": frame_untrusted('{"echo":"hi"}', origin(session))}],
        "structuredContent": {"echo": "hi"},
        "isError": False,
    }
    assert outcome.error_kind is None and outcome.duration_ms > 0
    assert session.history == [outcome]


async def test_an_mcp_result_passes_through(session: Session) -> None:
    outcome = await session.call("mcp_result")
    assert outcome.agent_json() == {
        # The page's text, then its structuredContent's data as framed text for readers of
        # text (no text block held it), then the structuredContent itself.
        "content": [
            {"type": "text", "text": frame_untrusted("from the page", origin(session))},
            {"type": "text", "text": frame_untrusted('{"n":1}', origin(session))},
        ],
        "structuredContent": {"n": 1},
        "isError": False,
    }


async def test_invalid_arguments_never_reach_execute(session: Session) -> None:
    outcome = await session.call("echo", {"text": ""})
    assert outcome.is_error and outcome.error_kind == "validation"
    assert "/text" in outcome.result.content[0].text  # type: ignore[union-attr]
    assert await session.page.evaluate("window.calls.echo || 0") == 0


async def test_a_thrown_error_is_an_error_result_with_its_message(session: Session) -> None:
    outcome = await session.call("fails")
    assert outcome.is_error and outcome.error_kind == "thrown"
    assert outcome.result.content[0].text == frame_untrusted(  # type: ignore[union-attr]
        "Tool error: RangeError: the page said no", origin(session)
    )


async def test_a_timeout_aborts_the_tool_signal(session: Session) -> None:
    outcome = await session.call("slow", timeout=0.5)
    assert outcome.is_error and outcome.error_kind == "timeout"
    assert "timed out after 0.5 s" in outcome.result.content[0].text  # type: ignore[union-attr]
    assert await session.page.evaluate("window.slowAborted") is True


async def test_navigation_during_a_call_is_an_error_result(session: Session) -> None:
    outcome = await session.call("navigates")
    assert outcome.is_error and outcome.error_kind == "navigation"
    assert "interrupted by navigation" in outcome.result.content[0].text  # type: ignore[union-attr]
    other = await session.wait_for_tool("other")
    assert other.name == "other"
    assert [t.name for t in await session.tools()] == ["other"]


async def test_tool_changes_are_followed_as_they_happen(session: Session) -> None:
    changes: list[ToolChange] = []
    session.on_tools_changed(changes.append)
    await session.page.evaluate("window.addLate()")
    await session.wait_for_tool("late")
    await session.page.evaluate("window.removeLate()")
    for _ in range(50):
        if any(c.removed == ["late"] for c in changes):
            break
        await asyncio.sleep(0.05)
    assert [c.added for c in changes if c.added] == [["late"]]
    assert [c.removed for c in changes if c.removed] == [["late"]]


async def test_an_unknown_tool_raises_with_the_available_names(session: Session) -> None:
    with pytest.raises(UnknownTool, match=r"No tool named 'nope'.*echo, fails"):
        await session.call("nope")


async def test_a_closed_session_says_so(harness: Harness, page_server: PageServer) -> None:
    s = await harness.open(page_server.url("s_tools.html"))
    changes: list[ToolChange] = []
    s.on_tools_changed(changes.append)
    await s.close()
    # Found from outside: the README's first example printed every tool "removed" at close.
    assert changes == []
    with pytest.raises(SessionClosed, match="open a new one"):
        await s.call("echo", {"text": "x"})


async def test_parameter_names_need_not_be_ascii(harness: Harness, page_server: PageServer) -> None:
    s = await harness.open(page_server.url("s_unicode.html"))
    try:
        greeted = await s.call("greet", {"prénom": "Zoë"})
        assert greeted.result.structured_content == {"greeting": "Bonjour Zoë", "annotated": True}
        filled = await s.call("fiche", {"prénom": "Zoë"})
        assert filled.result.structured_content == {"prénom": "Zoë"}
        sent = await s.call("envoi", {"prénom": "Zoë"})
        assert not sent.is_error
        assert "The form was submitted (GET " in sent.result.content[0].text  # type: ignore[union-attr]
    finally:
        await s.close()


async def test_a_disabled_tool_leaves_the_catalog_and_comes_back(
    harness: Harness, page_server: PageServer
) -> None:
    s = await harness.open(page_server.url("mc_legacy.html"))
    s.policy = None  # the page's tools declare no trust annotations; this is about the catalog
    try:
        changes: list[ToolChange] = []
        s.on_tools_changed(changes.append)
        await s.tool("add")
        await s.page.evaluate("delegate.setToolState('add', false)")
        for _ in range(100):
            if any("add" in c.removed for c in changes):
                break
            await asyncio.sleep(0.05)
        assert "add" not in [t.name for t in await s.tools()]
        await s.page.evaluate("delegate.setToolState('add', true)")
        assert (await s.wait_for_tool("add")).surface == "createAutomationDelegate"
        outcome = await s.call("add", {"a": 2, "b": 3})
        assert outcome.result.content[0].text == frame_untrusted("5", origin(s))  # type: ignore[union-attr]
        assert [c.removed for c in changes if c.removed] == [["add"]]
        assert [c.added for c in changes if c.added] == [["add"]]
    finally:
        await s.close()


async def test_script_tools_follow_the_result_catalog_navigation_order(
    harness: Harness, page_server: PageServer
) -> None:
    # Seed 002 §6.1 for every tool: the result, then the catalog's change, then navigation.
    s = await harness.open(page_server.url("o_ordering.html"))
    s.policy = None
    try:
        order: list[tuple[str, Any]] = []
        s.on_call(lambda _args, outcome: order.append(("result", outcome.tool)))
        s.on_tools_changed(lambda change: order.append(("tools", (change.added, change.removed))))
        s.page.on("framenavigated", lambda frame: order.append(("navigated", frame.url)))
        finishing = asyncio.ensure_future(s.call("finish"))
        # Mid-call, the tool that unregistered itself is still offered.
        await s.page.wait_for_function("finishing.signal.aborted")
        assert s.catalog.get("finish") is not None
        finished = await finishing
        assert not finished.is_error
        await s.settled()
        assert order == [("result", "finish"), ("tools", ([], ["finish"]))]
        order.clear()

        advanced = await s.call("advance")
        assert not advanced.is_error
        await s.settled()
        after = page_server.url("o_after.html")
        assert order == [
            ("result", "advance"),
            ("tools", (["next_step"], [])),
            ("navigated", after),
            ("tools", (["after"], ["advance", "elsewhere", "next_step"])),
        ]
        assert s.url == after

        await s.open(page_server.url("o_ordering.html"))
        await s.call("elsewhere")
        await s.settled()
        assert s.url == page_server.url("o_ordering.html")  # another origin: not followed
    finally:
        await s.close()


async def test_a_closed_session_is_not_kept_alive_by_its_harness(
    harness: Harness, page_server: PageServer
) -> None:
    # The memory soak found the harness's RSS growing by ~0.5 MB a session: the harness
    # held every session it ever made, with its catalog, history and audit. Closed
    # sessions are dropped now; nothing else may hold them either.
    closed: list[weakref.ref[Session]] = []
    for _ in range(3):
        s = await harness.open(page_server.url("s_tools.html"))
        await s.call("echo", {"text": "hi"})
        await s.close()
        assert s.closed
        closed.append(weakref.ref(s))
    del s
    live = await harness.open(page_server.url("s_tools.html"))
    try:
        gc.collect()
        assert [ref() for ref in closed] == [None, None, None]
        assert live in harness.sessions and all(not s.closed for s in harness.sessions)
    finally:
        await live.close()


async def test_a_browser_context_that_never_closes_does_not_hold_the_sessions_close(
    harness: Harness,
    page_server: PageServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Seen once under load, after a page navigated away mid-call: Playwright's context
    # close never returned. Closing the session must end all the same, and say so.
    monkeypatch.setattr(session_module, "CONTEXT_CLOSE_TIMEOUT_S", 0.3)
    s = await harness.open(page_server.url("s_tools.html"))
    context = s.context
    really_close = context.close
    never = asyncio.Event()

    async def close_that_never_returns(*_args: Any, **_kwargs: Any) -> None:
        await never.wait()

    monkeypatch.setattr(context, "close", close_that_never_returns)
    with caplog.at_level(logging.WARNING, logger="harness"):
        await asyncio.wait_for(s.close(), 30)
    assert s.closed
    assert "closing the browser context took over 0.3 s" in caplog.text
    await really_close()
    fresh = await harness.open(page_server.url("s_tools.html"))
    try:
        assert s not in harness.sessions
        assert (await fresh.call("echo", {"text": "hi"})).error_kind is None
    finally:
        await fresh.close()


async def test_a_browser_and_driver_that_never_close_do_not_hold_the_harnesss_close(
    chromium_path: str,
    page_server: PageServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Seen once in CI after a reload mid-call on native: the test hung in the harness's
    # close, with no timer left to end it. Each step of closing down is bounded and named.
    monkeypatch.setattr(harness_module, "CLOSE_STEP_TIMEOUT_S", 0.3)
    h = Harness(executable_path=chromium_path)
    s = await h.open(page_server.url("s_tools.html"))
    assert (await s.call("echo", {"text": "hi"})).error_kind is None
    browser, playwright = h.browser, h._playwright
    assert playwright is not None
    really_close, really_stop = browser.close, playwright.stop
    never = asyncio.Event()

    async def never_returns(*_args: Any, **_kwargs: Any) -> None:
        await never.wait()

    monkeypatch.setattr(browser, "close", never_returns)
    monkeypatch.setattr(playwright, "stop", never_returns)
    try:
        with caplog.at_level(logging.WARNING, logger="harness"):
            await asyncio.wait_for(h.close(), 30)
        assert s.closed and h.sessions == []
        assert "closing the browser took over 0.3 s" in caplog.text
        assert "stopping Playwright's driver took over 0.3 s" in caplog.text
    finally:
        await really_close()
        await really_stop()


async def test_a_call_that_changes_nothing_re_reads_no_frame(
    harness: Harness, page_server: PageServer
) -> None:
    # CHANNEL.md "State versions": the answer says the document is as the catalog holds it,
    # so seed 002 §6.1's recompute needs no listing (one round trip per call, not two).
    s = await harness.open(page_server.url("v_versions.html"))
    try:
        await s.call("noop")
        await s.settled()
        ops: list[str] = []
        command = s.backend.channel.command  # type: ignore[attr-defined]

        async def counted(frame: Any, sent: dict[str, Any], **options: Any) -> Any:
            ops.append(sent["op"])
            return await command(frame, sent, **options)

        s.backend.channel.command = counted  # type: ignore[attr-defined]
        for tool in ["noop", "touches_text", "noop"]:
            assert not (await s.call(tool)).is_error
            await s.settled()
        assert ops == ["invoke"] * 3
    finally:
        await s.close()


@pytest.mark.parametrize(
    ("tool", "added"),
    [
        ("adds_tool", "added_tool"),
        ("adds_form", "added_form"),
        ("adds_seed_form", "added_seed_form"),
    ],
)
async def test_what_a_call_changes_is_in_the_catalog_once_its_result_is_delivered(
    harness: Harness, page_server: PageServer, tool: str, added: str
) -> None:
    # The answer's state version differs from the catalog's (or a DOM change is not
    # reported yet): the frame is re-read before the change is announced, as before.
    s = await harness.open(page_server.url("v_versions.html"))
    try:
        await s.call("noop")
        await s.settled()
        changes: list[ToolChange] = []
        s.on_tools_changed(changes.append)
        assert not (await s.call(tool)).is_error
        await s.settled()
        assert s.catalog.get(added) is not None  # read from the catalog: no listing asked
        assert [c.added for c in changes] == [[added]]
    finally:
        await s.close()
