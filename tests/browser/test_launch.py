"""``harness.browser.launch``: a browser launched before the harness exists (the CLI starts
Chromium while it imports the harness) is taken over when it is the one the harness would
launch, and never leaks when it is not, or when the harness never starts."""

from __future__ import annotations

import asyncio

import pytest

from harness import BrowserPool, ConfigError, Harness
from harness.browser.launch import Launched, launch, launch_flags
from tests.conftest import PageServer


def launching(backend: str) -> asyncio.Future[Launched]:
    return asyncio.ensure_future(launch(None, headless=True, args=launch_flags(backend)))


async def test_a_launch_made_for_the_harness_is_taken_over_and_closed_with_it() -> None:
    early = launching("native")
    harness = Harness(backend="native")
    harness.adopt_launch(early)
    async with harness:
        launched = await early
        assert harness.browser is launched.browser
        session = await harness.new_session()  # the backend's flags are there: native WebMCP
        assert session.backend.name == "native"
    assert not launched.browser.is_connected()


async def test_a_launch_with_other_flags_is_closed_and_one_never_started_too() -> None:
    early = launching("polyfill")
    harness = Harness(backend="native")  # needs Chromium's WebMCP flags, which it lacks
    harness.adopt_launch(early)
    async with harness:
        launched = await early
        assert harness.browser is not launched.browser
        assert not launched.browser.is_connected()
    unused = launching("polyfill")
    idle = Harness(backend="polyfill")
    idle.adopt_launch(unused)
    await idle.close()  # never started: the launch under way is stopped or closed
    assert unused.done()
    if not unused.cancelled() and unused.exception() is None:
        assert not unused.result().browser.is_connected()


async def test_harnesses_on_a_pool_share_its_browser_and_never_each_others_sessions(
    page_server: PageServer,
) -> None:
    async with BrowserPool() as pool:
        first = await Harness(backend="polyfill", browsers=pool).start()
        second = await Harness(backend="polyfill", browsers=pool).start()
        native = await Harness(backend="native", browsers=pool).start()
        browser = first.browser
        assert second.browser is browser  # launched once for both
        assert native.browser is not browser  # other flags: a browser of its own
        one = await first.open(page_server.url("s_tools.html"))
        other = await second.open(page_server.url("s_tools.html"))
        assert one.context is not other.context  # each session its own context
        await first.close()  # its sessions go; the browser stays for the others
        assert one.closed and one.context not in browser.contexts
        assert browser.is_connected()
        outcome = await other.call("echo", {"text": "still here"})
        assert not outcome.result.is_error
        await second.close()
        assert browser.contexts == []
        again = await Harness(backend="polyfill", browsers=pool).start()
        assert again.browser is browser  # the same browser, lent again
        await again.close()
        await native.close()
    assert not browser.is_connected() and not held_by(pool)


async def test_a_pooled_browser_that_went_away_is_launched_anew_for_the_next_harness() -> None:
    async with BrowserPool() as pool:
        harness = await Harness(backend="polyfill", browsers=pool).start()
        killed = harness.browser
        await killed.close()  # as a crash or a kill would: the pool's browser is gone
        await harness.close()
        again = await Harness(backend="polyfill", browsers=pool).start()
        assert again.browser is not killed and again.browser.is_connected()
        session = await again.new_session()
        assert not session.closed
        await again.close()
    with pytest.raises(ConfigError, match="BrowserPool is closed"):
        await Harness(browsers=pool).start()


def held_by(pool: BrowserPool) -> list[object]:
    """The browsers the pool still holds (none once closed)."""
    return list(pool._browsers.values())
