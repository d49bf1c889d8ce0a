"""Readiness: a page's catalog is listed once it settled, on both backends.

Pages register tools after a fetch, after timers, in bursts, or never; `Session.open()`
waits for the catalog to settle (quiet for 500 ms after load, network idle, at most 5 s),
so the first listing is complete. No assertion here depends on how long anything took.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from harness import BrowserPool, Harness, UnknownTool
from harness.catalog import Readiness, Settle, SettleReport
from tests.conftest import PageServer

BACKENDS = ["polyfill", "native"]
BURST = ["b0_1", "b0_2", "b1_1", "b1_2", "b2_1", "b2_2", "b3_1", "b3_2", "b4_0", "b4_1", "b4_2"]


@pytest.fixture(scope="module", params=BACKENDS)
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


async def names_at_open(harness: Harness, url: str) -> list[str]:
    """The names a first listing gives, right after open (no other wait)."""
    session = await harness.open(url)
    try:
        return session.catalog.names()
    finally:
        await session.close()


async def test_tools_registered_after_fetches_are_listed_at_open(
    harness: Harness, page_server: PageServer
) -> None:
    names = await names_at_open(harness, page_server.url("rd_fetch.html"))
    assert names == ["after_fetch", "after_second_fetch", "first"]


async def test_bursts_of_registrations_are_listed_as_they_end(
    harness: Harness, page_server: PageServer
) -> None:
    assert await names_at_open(harness, page_server.url("rd_burst.html")) == BURST


async def test_a_timer_inside_the_quiet_window_is_waited_for(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("rd_timer.html"))
    try:
        tools = await session.tools()
        assert [t.name for t in tools] == ["soon"]
        # A tool registered long after the catalog settled is not waited for by a call…
        with pytest.raises(UnknownTool) as raised:
            await session.call("late")
        assert raised.value.available == ["soon"]  # …which names the tools there are
        # …but wait_for_tool finds it.
        assert (await session.wait_for_tool("late", timeout=15)).name == "late"
        assert (await session.call("late")).result.structured_content == {"name": "late"}
    finally:
        await session.close()


async def test_a_longer_quiet_window_waits_for_a_late_timer(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.new_session()
    try:
        await session.open(page_server.url("rd_timer.html"), settle=Settle(quiet=4, timeout=20))
        assert session.catalog.names() == ["late", "soon"]
    finally:
        await session.close()


async def test_a_page_without_tools_settles_empty(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("rd_never.html"))
    try:
        assert await session.tools() == []
        report = await session.ready()
        assert report.settled
        with pytest.raises(UnknownTool) as raised:
            await session.call("anything")
        assert raised.value.available == []
    finally:
        await session.close()


async def test_a_request_that_never_ends_is_capped_and_reported(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.new_session()
    try:
        await session.open(page_server.url("rd_busy.html"), settle=False)
        report = await session.ready(Settle(quiet=0.5, timeout=1))
        assert not report.settled and report.pending_requests == 1
        assert [t.name for t in await session.tools()] == ["early"]
    finally:
        await session.close()


async def test_open_without_settling_returns_after_load(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.new_session()
    try:
        await session.open(page_server.url("rd_fetch.html"), settle=False)
        # Listing waits for the document's catalog all the same.
        names = [t.name for t in await session.tools()]
        assert names == ["after_fetch", "after_second_fetch", "first"]
    finally:
        await session.close()


async def test_each_new_document_is_settled_again(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("rd_never.html"))
    try:
        await session.page.goto(page_server.url("rd_fetch.html"))  # navigated by someone else
        names = [t.name for t in await session.tools()]
        assert names == ["after_fetch", "after_second_fetch", "first"]
    finally:
        await session.close()


# -- the bookkeeping alone, on a fake clock --------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def opened(harness: Harness, url: str, window: float = 3.0) -> tuple[SettleReport, list[str]]:
    """How the first wait for the catalog ended (a quiet ``window`` long enough for the
    page to be asked on the busiest machine), and the names listed then."""
    session = await harness.new_session()
    try:
        await session.open(url, settle=False)
        report = await session.ready(Settle(quiet=window, timeout=2 * window))
        return report, session.catalog.names()
    finally:
        await session.close()


async def test_the_window_ends_early_only_when_the_page_has_nothing_scheduled(
    harness: Harness, page_server: PageServer
) -> None:
    def url(what: str) -> str:
        return page_server.url(f"rd_scheduled.html?{what}")

    # Nothing scheduled, or a timer cleared: settled without the whole window.
    for what in ("none", "cleared"):
        report, names = await opened(harness, url(what))
        assert (report.settled, report.early, names) == (True, True, []), what
    # A timer due within the window holds it open: its tool is listed (100 ms of quiet
    # alone would have missed it), a string handler's too.
    assert (await opened(harness, url("timer")))[1] == ["at_300ms"]
    assert (await opened(harness, url("string")))[1] == ["by_string"]
    # A response body the page still reads holds it open too (a request the network
    # finished may not have reached the page's script yet).
    assert (await opened(harness, url("read")))[1] == ["after_read"]
    # A page that is never idle (an interval) gets the whole window, as before.
    report, names = await opened(harness, url("interval"), window=1.0)
    assert (report.settled, report.early, names) == (True, False, [])


async def test_quiet_means_no_activity_and_no_pending_request() -> None:
    clock = Clock()
    readiness = Readiness(clock)
    readiness.loaded()
    clock.now += 0.4
    assert readiness.quiet_for() == pytest.approx(0.4)
    readiness.request_started("r1")
    clock.now += 5
    assert readiness.quiet_for() == 0.0 and readiness.pending_requests == 1
    readiness.request_ended("r1")
    clock.now += 0.2
    assert readiness.quiet_for() == pytest.approx(0.2)
    readiness.touch()
    assert readiness.quiet_for() == 0.0
    readiness.request_ended("unknown")  # an end without a start changes nothing
    assert readiness.pending_requests == 0


def test_settle_quiet_ms_keeps_the_cap_above_the_window() -> None:
    assert Settle.quiet_ms(500) == Settle(quiet=0.5, timeout=5.0)
    assert Settle.quiet_ms(4000) == Settle(quiet=4.0, timeout=8.0)
    assert not Settle.quiet_ms(0).enabled


async def test_a_loop_waking_late_does_not_ask_the_page_with_almost_no_window_left() -> None:
    # A busy machine: the first look at the page comes 0.98 s into a 1 s window. A page with
    # a 50 ms interval has its next run 40 ms away, past the 20 ms left: asked then, it
    # would look idle, and the window would be called "ended early" for a page never idle.
    clock = Clock()
    readiness = Readiness(lambda: clock.now)
    readiness.loaded()
    asked: list[float] = []

    async def interval_page(window: float) -> bool:
        asked.append(window)
        return window < 0.04

    readiness.idle = interval_page
    clock.now += 0.98

    async def time_passes() -> None:  # 5 ms of the clock per real poll of the loop
        while True:
            await asyncio.sleep(0.001)
            clock.now += 0.005

    ticking = asyncio.create_task(time_passes())
    try:
        report = await asyncio.wait_for(readiness.wait(Settle(quiet=1.0, timeout=2.0)), 10)
    finally:
        ticking.cancel()
    assert (report.settled, report.early, asked) == (True, False, [])
