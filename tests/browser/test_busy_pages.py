"""A page whose script never yields (a busy loop outside any call) never answers the harness
again: a read of its tools ends after its limit, the catalog keeps what it last read and
says so (``frame-busy``), on both backends. It used to wait for ever (``open()``,
``tools()`` and the CLI's ``tools``)."""

from __future__ import annotations

import asyncio

import pytest

from harness import Harness
from harness.browser.backends import native, polyfill
from harness.catalog import Settle
from tests.conftest import PageServer

PAGE = "u_busy_later.html"
LIMIT_S = 1.5


@pytest.fixture
def short_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same mechanism with a shorter limit than the default, to keep the test short.
    monkeypatch.setattr(polyfill, "READ_WAIT_S", LIMIT_S)
    monkeypatch.setattr(native, "READ_WAIT_S", LIMIT_S)


@pytest.mark.usefixtures("short_reads")
async def test_a_busy_page_s_tools_are_read_as_last_seen_with_a_warning(
    backend_harness: Harness, page_server: PageServer
) -> None:
    session = await backend_harness.open(page_server.url(PAGE), settle=Settle.quiet_ms(100))
    try:
        assert [t.name for t in await session.tools()] == ["a"]
        await session.page.evaluate("goBusy()")
        await asyncio.sleep(0.2)
        tools = await asyncio.wait_for(session.tools(settle=False), 30)
        assert [t.name for t in tools] == ["a"]
        [busy] = [w for w in session.catalog.warnings if w.code == "frame-busy"]
        assert "did not answer the harness" in busy.message and "busy" in busy.message
    finally:
        await asyncio.wait_for(session.close(), 30)


@pytest.mark.usefixtures("short_reads")
async def test_opening_a_page_that_goes_busy_while_it_settles_ends(
    backend_harness: Harness, page_server: PageServer
) -> None:
    # Busy 300 ms in: the settle wait asks the page whether it is quiet, and the read after
    # it asks for its tools; neither may wait for an answer for ever.
    url = page_server.url(PAGE) + "?busy=300"
    session = await asyncio.wait_for(
        backend_harness.open(url, settle=Settle(quiet=0.5, timeout=2.0)), 60
    )
    try:
        assert [t.name for t in session.catalog.tools()] == ["a"]
    finally:
        await asyncio.wait_for(session.close(), 30)


async def test_a_page_that_navigates_within_itself_without_pause_is_read_in_bounded_time(
    backend_harness: Harness, page_server: PageServer
) -> None:
    # history.pushState every 5 ms: each same-document navigation asked for a read of the
    # frame, and on the polyfill they queued up without end (open() took over 120 s). Reads
    # asked for while one is under way now share the next; the settle wait ends at its cap.
    settle = Settle(quiet=0.2, timeout=2.0)
    session = await asyncio.wait_for(
        backend_harness.open(page_server.url("u_pushstate_storm.html"), settle=settle), 60
    )
    session.settle = settle  # the listing's own wait: the same cap, not the default's 5 s
    try:
        assert [t.name for t in await asyncio.wait_for(session.tools(), 60)] == ["a"]
    finally:
        await asyncio.wait_for(session.close(), 30)


@pytest.mark.usefixtures("short_reads")
async def test_a_busy_page_with_a_frame_is_read_as_last_seen_too(
    backend_harness: Harness, page_server: PageServer
) -> None:
    # A same-origin frame shares the busy document's thread: its read ends too, and its
    # tools stay as last read.
    session = await backend_harness.open(
        page_server.url("u_busy_framed.html"), settle=Settle.quiet_ms(100)
    )
    try:
        assert [t.name for t in await session.tools()] == ["a"]
        await session.page.evaluate("goBusy()")
        await asyncio.sleep(0.2)
        tools = await asyncio.wait_for(session.tools(settle=False), 60)
        assert [t.name for t in tools] == ["a"]
        assert any(w.code == "frame-busy" for w in session.catalog.warnings)
    finally:
        await asyncio.wait_for(session.close(), 30)
