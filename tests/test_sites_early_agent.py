"""The bundled sites in a browser, with an agent that calls as soon as the tools are there.

That is before the page's own first listing (of todos, of keys) has come back. The
listing, asked for before the agent's change, must not wipe the change from the screen
(seen in `examples/` under load: the tool answered "added todo 4" and the list did not
show it). Each test holds the first listing's answer back for a while to make it so.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from harness.sites.server import RunningSites, serve_sites
from playwright.async_api import Route

from harness import BrowserPool, Harness, Session
from harness.catalog import Settle

FIRST_LISTING_DELAY_S = 1.0
TODO_LISTING = "**/api/todos?status=all"


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo", "keys"]) as running:
        yield running


@pytest.fixture
async def session(browser_pool: BrowserPool, sites: RunningSites) -> AsyncIterator[Session]:
    await sites.reset()
    for site in sites.sites.values():
        site.clear_log()
    async with Harness(browsers=browser_pool, call_timeout=20) as harness:
        s = await harness.new_session()
        s.settle = Settle(quiet=0)  # call at once, as an agent that does not wait would
        yield s
        await s.close()


class HeldListing:
    """Opens a site page whose first GET of ``listing`` (a glob) reaches the server at once
    while its answer comes back to the page only :data:`FIRST_LISTING_DELAY_S` later."""

    def __init__(self, session: Session, listing: str) -> None:
        self.session = session
        self.listing = listing
        self.delivered = asyncio.Event()

    async def open(self, url: str) -> None:
        held: list[Route] = []

        async def later(route: Route) -> None:
            if route.request.method != "GET" or held:
                await route.continue_()
                return
            held.append(route)
            answer = await route.fetch()  # the list as it is now, before anybody's change
            await asyncio.sleep(FIRST_LISTING_DELAY_S)
            await route.fulfill(response=answer)
            self.delivered.set()

        await self.session.page.route(self.listing, later)
        await self.session.open(url, settle=False)

    async def call_at_once(self, tool: str, arguments: dict[str, Any]) -> None:
        """Call ``tool`` as soon as the page registered it (the listing is still held)."""
        await self.session.wait_for_tool(tool)
        outcome = await self.session.call(tool, arguments)
        assert outcome.error_kind is None, outcome.result

    async def came_back(self) -> None:
        """Return once the held answer reached the page and the page has gone quiet."""
        await self.delivered.wait()
        await self.session.page.wait_for_load_state("networkidle")


async def todos_shown(session: Session) -> tuple[list[str], str]:
    page = session.page
    shown = await page.locator("#todos .text").all_text_contents()
    return shown, await page.locator("#counter").inner_text()


async def test_a_tool_call_before_the_first_listing_came_back_stays_on_the_page(
    session: Session, sites: RunningSites
) -> None:
    held = HeldListing(session, TODO_LISTING)
    await held.open(sites.url("todo"))
    await held.call_at_once("add_todo", {"text": "Water the plants"})
    await held.came_back()
    shown, counter = await todos_shown(session)
    assert "Water the plants" in shown
    assert counter == "3 open, 1 done"


async def test_a_person_adding_before_the_first_listing_came_back_keeps_the_todo(
    session: Session, sites: RunningSites
) -> None:
    held = HeldListing(session, TODO_LISTING)
    await held.open(sites.url("todo"))
    await session.page.get_by_label("New todo").fill("Call the plumber")
    await session.page.get_by_role("button", name="Add").click()
    await held.came_back()
    shown, counter = await todos_shown(session)
    assert "Call the plumber" in shown
    assert counter == "3 open, 1 done"


async def test_a_key_made_before_the_first_listing_came_back_stays_listed(
    session: Session, sites: RunningSites
) -> None:
    held = HeldListing(session, "**/api/keys")
    await held.open(sites.url("keys"))
    await held.call_at_once("generate_api_key", {"name": "early"})
    await held.came_back()
    listed = await session.page.locator("#keys li").all_text_contents()
    assert any(" early (created " in item for item in listed), listed


async def test_the_pages_first_listing_comes_before_an_agents_first_change(
    session: Session, sites: RunningSites
) -> None:
    """The agent can see the tools before the page's ``registerTools`` has returned (here it
    returns 1 s after registering): the page's first listing must still be the first thing it
    sends, so the site's request log ends with the agent's change (the plugin's fresh-project
    test read ``requests("todo")[-1]`` and once found the listing there)."""
    original = "export async function registerTools(tools) {"

    async def slow_to_return(route: Route) -> None:
        answer = await route.fetch()
        source = await answer.text()
        assert original in source, "sites/todo/webmcp.js changed: update this test"
        source = source.replace(original, "async function registerToolsNow(tools) {")
        source += (
            "\nexport async function registerTools(tools) {\n"
            "  const registered = await registerToolsNow(tools);\n"
            "  await new Promise((resolve) => setTimeout(resolve, 1000));\n"
            "  return registered;\n}\n"
        )
        await route.fulfill(response=answer, body=source)

    await session.page.route("**/webmcp.js", slow_to_return)
    await session.open(sites.url("todo"), settle=False)
    await session.wait_for_tool("add_todo")
    outcome = await session.call("add_todo", {"text": "Water the plants"})
    assert outcome.error_kind is None, outcome.result

    def sent() -> list[str]:
        return [
            f"{r.method} {r.path}" for r in sites.requests("todo") if r.path.startswith("/api/")
        ]

    async def both_sent() -> None:
        while len(sent()) < 2:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(both_sent(), timeout=15)
    assert sent() == ["GET /api/todos", "POST /api/todos"]
    await session.page.wait_for_load_state("networkidle")
    shown, counter = await todos_shown(session)
    assert "Water the plants" in shown
    assert counter == "3 open, 1 done"
