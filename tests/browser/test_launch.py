"""``harness.browser.launch``: a browser launched before the harness exists (the CLI starts
Chromium while it imports the harness) is taken over when it is the one the harness would
launch, and never leaks when it is not, or when the harness never starts."""

from __future__ import annotations

import asyncio

from harness import Harness
from harness.browser.launch import Launched, launch, launch_flags


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
