"""An iframe's `allow="tools"` delegates to its src origin (Permissions Policy's `'src'`):
a frame that moves itself to another origin does not take the delegation along — Chromium
refuses that origin's tools, and the polyfill offered them (found from outside)."""

from __future__ import annotations

import asyncio

from harness import Harness
from tests.conftest import PageServer


async def test_a_frame_that_navigates_itself_away_loses_the_delegation(
    backend_harness: Harness, page_server: PageServer
) -> None:
    session = await backend_harness.open(page_server.url("f_hop_top.html"))
    try:
        far = None
        for _ in range(100):  # the far document has loaded and tried to register its tool
            far = next((f for f in session.page.frames if "f_hop_far.html" in f.url), None)
            if far is not None and await far.evaluate("window.registered !== undefined"):
                break
            await asyncio.sleep(0.1)
        assert far is not None and far.url.startswith("http://localhost:")
        # Refused, as in Chromium: the feature is not delegated to this origin.
        said = await far.evaluate("window.registered")
        assert isinstance(said, str) and said.startswith("NotAllowedError"), said
        assert [t.name for t in await session.tools()] == []
    finally:
        await session.close()
