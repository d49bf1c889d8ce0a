"""A value withheld from the agent stays withheld when a later call of the session repeats it.

Found by the attack suite (``notes-secret-echo``): a key one tool marks ``x-sensitive``
came back in plain text from a sloppy second tool that declares nothing sensitive.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from harness import BrowserPool, Harness
from harness.models import dump_result
from tests.conftest import PageServer

KEY = "sk_live_HXCANARY_4fa9c2"


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


async def test_a_later_result_that_repeats_a_withheld_value_shows_its_handle(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("r_echo.html"))
    try:
        await session.wait_for_tool("debug_info")
        first = await session.call("get_key")
        handle = first.agent_json()["structuredContent"]["key"]
        assert handle.startswith("wmh-secret-")
        echoed = await session.call("debug_info")
        seen = json.dumps(echoed.agent_json())
        assert KEY not in seen
        assert echoed.agent_json()["structuredContent"] == {
            "config": f"region=eu api_key={handle} retries=3",
            "region": "eu",
        }
        user_view = session.user_view(echoed)  # the user still sees what the tool said
        assert user_view is not None and KEY in json.dumps(dump_result(user_view))
    finally:
        await session.close()


async def test_without_an_earlier_withheld_value_a_result_passes_unchanged(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("r_echo.html"))
    try:
        await session.wait_for_tool("debug_info")
        echoed = await session.call("debug_info")  # nothing was withheld yet: nothing to know
        assert KEY in json.dumps(echoed.agent_json())
    finally:
        await session.close()
