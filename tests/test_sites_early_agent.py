"""The bundled sites in a browser, with an agent that calls as soon as the tools are there.

That is before the page's own first listing (of todos, of keys) has come back. The
listing, asked for before the agent's change, must not wipe the change from the screen
(seen in `examples/` under load: the tool answered "added todo 4" and the list did not
show it). Each test holds the first listing's answer back for a while to make it so.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from harness.sites.server import RunningSites, serve_sites
from playwright.async_api import Route

from harness import Harness, Session
from harness.catalog import Settle

FIRST_LISTING_DELAY_S = 1.0
TODO_LISTING = "**/api/todos?status=all"


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo", "keys"]) as running:
        yield running


@pytest.fixture
async def session(sites: RunningSites) -> AsyncIterator[Session]:
    await sites.reset("todo")
    await sites.reset("keys")
    async with Harness(call_timeout=20) as harness:
        s = await harness.new_session()
        s.settle = Settle(quiet=0)  # call at once, as an agent that does not wait would
        yield s
        await s.close()


async def hold_the_first_listing(session: Session, url: str) -> asyncio.Event:
    """Let the page's first GET of ``url`` (a glob) reach the server at once and its answer
    come back a while later; the event is set once the page has it."""
    sent = asyncio.Event()
    held: list[Route] = []

    async def later(route: Route) -> None:
        if route.request.method != "GET" or held:
            await route.continue_()
            return
        held.append(route)
        answer = await route.fetch()  # the list as it is now, before anybody's change
        await asyncio.sleep(FIRST_LISTING_DELAY_S)
        await route.fulfill(response=answer)
        sent.set()

    await session.page.route(url, later)
    return sent


async def texts(session: Session) -> tuple[list[str], str]:
    page = session.page
    shown = await page.locator("#todos .text").all_text_contents()
    return shown, await page.locator("#counter").inner_text()


async def test_a_tool_call_before_the_first_listing_came_back_stays_on_the_page(
    session: Session, sites: RunningSites
) -> None:
    sent = await hold_the_first_listing(session, TODO_LISTING)
    await session.open(sites.url("todo"), settle=False)
    await session.wait_for_tool("add_todo")
    outcome = await session.call("add_todo", {"text": "Water the plants"})
    assert outcome.error_kind is None, outcome.result
    await sent.wait()
    await session.page.wait_for_load_state("networkidle")
    shown, counter = await texts(session)
    assert "Water the plants" in shown
    assert counter == "3 open, 1 done"


async def test_a_person_adding_before_the_first_listing_came_back_keeps_the_todo(
    session: Session, sites: RunningSites
) -> None:
    sent = await hold_the_first_listing(session, TODO_LISTING)
    await session.open(sites.url("todo"), settle=False)
    page = session.page
    await page.get_by_label("New todo").fill("Call the plumber")
    await page.get_by_role("button", name="Add").click()
    await sent.wait()
    await page.wait_for_load_state("networkidle")
    shown, counter = await texts(session)
    assert "Call the plumber" in shown
    assert counter == "3 open, 1 done"


async def test_a_key_made_before_the_first_listing_came_back_stays_listed(
    session: Session, sites: RunningSites
) -> None:
    sent = await hold_the_first_listing(session, "**/api/keys")
    await session.open(sites.url("keys"), settle=False)
    await session.wait_for_tool("generate_api_key")
    outcome = await session.call("generate_api_key", {"name": "early"})
    assert outcome.error_kind is None, outcome.result
    await sent.wait()
    await session.page.wait_for_load_state("networkidle")
    listed = await session.page.locator("#keys li").all_text_contents()
    assert any(" early (created " in item for item in listed), listed
