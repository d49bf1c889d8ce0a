"""The browser handler: a form in a tab of the harness's own, driven here with Playwright."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page, expect

from harness import BrowserPool, Harness
from harness.elicitation.base import ElicitationRequest, ElicitationResult, ask
from harness.elicitation.browser import BrowserHandler, html_pattern
from tests.conftest import PageServer
from tests.elicitation_forms import todo_request as todo_form
from tests.elicitation_forms import with_fields

SCHEMA = with_fields(code={"type": "string", "title": "Project code", "pattern": "^[A-Z]{3}$"})


def todo_request(**changes: Any) -> ElicitationRequest:
    return todo_form(**{"requested_schema": SCHEMA, "timeout": 120, **changes})


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, call_timeout=10) as h:
        yield h


@pytest.fixture
async def handler(harness: Harness) -> AsyncIterator[BrowserHandler]:
    async with BrowserHandler(lambda: harness.browser) as h:
        yield h


async def opened(handler: BrowserHandler) -> Page:
    return await asyncio.wait_for(handler.opened.get(), 30)


def posts_of(page: Page) -> list[str]:
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    return posts


async def test_the_page_shows_who_asks_and_the_labelled_fields(
    handler: BrowserHandler, tmp_path: Path
) -> None:
    answer = asyncio.create_task(ask(handler, todo_request()))
    page = await opened(handler)
    assert page.url.startswith(handler.origin + "/elicit/")
    assert handler.origin.startswith("http://127.0.0.1:")
    for label in ("Description *", "Priority", "How many", "Project code"):
        await expect(page.locator("label", has_text=label)).to_be_visible()
    for text in ("What needs to be done?", "http://127.0.0.1:8101", "add_todo"):
        await expect(page.get_by_text(text)).to_be_visible()
    await expect(page.get_by_text("Confirm the todo before it is added.")).to_be_visible()
    await expect(page.get_by_text("cancelled after 120 s")).to_be_visible()
    await expect(page.get_by_label("Description")).to_have_value("Buy milk")  # the agent's value
    await expect(page.get_by_label("Priority")).to_have_value("1")  # "medium"
    shot = tmp_path / "elicitation.png"
    await page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000

    await page.get_by_label("Description").fill("Buy oat milk")
    await page.get_by_label("Priority").select_option(label="high")
    await page.get_by_label("How many").fill("2")
    await page.get_by_role("button", name="Accept").click()
    result = await asyncio.wait_for(answer, 30)
    assert result == ElicitationResult(
        action="accept", content={"description": "Buy oat milk", "priority": "high", "count": 2}
    )
    assert page.is_closed()


async def test_the_browsers_own_validation_blocks_an_invalid_answer(
    handler: BrowserHandler,
) -> None:
    answer = asyncio.create_task(ask(handler, todo_request()))
    page = await opened(handler)
    posts = posts_of(page)
    description = page.get_by_label("Description")
    accept = page.get_by_role("button", name="Accept")

    await description.fill("ab")  # minlength=3
    await accept.click()
    assert await description.evaluate("e => e.validity.tooShort")
    await description.fill("Buy oat milk")
    await page.get_by_label("Project code").fill("abc")  # pattern ^[A-Z]{3}$
    await accept.click()
    assert await page.get_by_label("Project code").evaluate("e => e.validity.patternMismatch")
    await page.get_by_label("Project code").fill("ABC")
    await page.get_by_label("How many").fill("11")  # max=10
    await accept.click()
    assert await page.get_by_label("How many").evaluate("e => e.validity.rangeOverflow")
    await page.wait_for_timeout(200)
    assert posts == [] and not answer.done()  # nothing was sent

    await page.get_by_label("How many").fill("")
    await accept.click()
    result = await asyncio.wait_for(answer, 30)
    assert result.action == "accept"
    assert result.content == {"description": "Buy oat milk", "priority": "medium", "code": "ABC"}
    assert len(posts) == 1


async def test_the_server_checks_the_answer_again_and_only_from_its_own_origin(
    handler: BrowserHandler,
) -> None:
    answer = asyncio.create_task(ask(handler, todo_request()))
    page = await opened(handler)
    async with aiohttp.ClientSession() as client:
        foreign = await client.post(page.url, data={"action": "accept"})
        assert foreign.status == 403
        invalid = await client.post(
            page.url,
            data={"action": "accept", "field.description": "ab", "field.code": "abc"},
            headers={"Origin": handler.origin},
        )
        body = await invalid.text()
        assert invalid.status == 422
        assert "Description *: must be at least 3 characters long" in body
        assert "Project code: must match the pattern ^[A-Z]{3}$" in body
        assert not answer.done()
        valid = await client.post(
            page.url,
            data={"action": "accept", "field.description": "Buy oat milk", "field.priority": "2"},
            headers={"Origin": handler.origin},
        )
        assert valid.status == 204  # no navigation: the tab is closed next
    result = await asyncio.wait_for(answer, 30)
    assert result.content == {"description": "Buy oat milk", "priority": "high"}


@pytest.mark.parametrize("button", ["Decline", "Cancel"])
async def test_decline_and_cancel_skip_validation(handler: BrowserHandler, button: str) -> None:
    answer = asyncio.create_task(ask(handler, todo_request()))
    page = await opened(handler)
    await page.get_by_label("Description").fill("ab")  # invalid, and it does not matter
    await page.get_by_role("button", name=button).click()
    result = await asyncio.wait_for(answer, 30)
    assert result.action == button.lower() and result.content is None


async def test_closing_the_tab_is_cancel(handler: BrowserHandler) -> None:
    answer = asyncio.create_task(ask(handler, todo_request()))
    page = await opened(handler)
    await page.close()
    result = await asyncio.wait_for(answer, 30)
    assert result.action == "cancel" and result.reason == "the elicitation tab was closed"


async def eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    for _ in range(int(seconds * 10)):
        if check():
            return True
        await asyncio.sleep(0.1)
    return check()


async def test_unanswered_in_time_is_cancel_and_the_tab_goes_away(handler: BrowserHandler) -> None:
    result = await ask(handler, todo_request(timeout=2))
    assert result.action == "cancel" and result.reason == "no answer within 2 s"
    context = handler.context
    assert context is not None and context.pages == []
    # Given up while its tab was still opening: the tab opens, and is then closed.
    late: list[Page] = []
    context.on("page", lambda page: late.append(page))
    hasty = await ask(handler, todo_request(timeout=0.05))
    assert hasty.action == "cancel"
    assert await eventually(lambda: bool(late))
    assert await eventually(lambda: late[0].is_closed() and context.pages == [])
    async with aiohttp.ClientSession() as client:
        gone = await client.get(handler.origin + "/elicit/any")
        assert gone.status == 410  # no question is open


async def test_the_tab_is_never_the_sites_page_nor_its_context(
    harness: Harness, handler: BrowserHandler, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("s_tools.html"))
    try:
        answer = asyncio.create_task(ask(handler, todo_request(origin=page_server.origin)))
        page = await opened(handler)
        assert page is not session.page and page.context is not session.context
        assert not page.url.startswith(page_server.origin)
        assert session.page.url == page_server.url("s_tools.html")
        # No polyfill, and no script at all, in the harness's own page.
        assert await page.evaluate("typeof document.modelContext") == "undefined"
        await page.get_by_role("button", name="Cancel").click()
        assert (await asyncio.wait_for(answer, 30)).action == "cancel"
    finally:
        await session.close()


async def test_kinds_of_fields_come_back_typed_and_secrets_are_not_echoed(
    handler: BrowserHandler,
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "integer", "title": "Size", "enum": [1, 2, 3]},
            "gift": {"type": "boolean", "title": "Gift wrap"},
            "days": {
                "type": "array",
                "title": "Days",
                "items": {"enum": ["mon", "tue", "wed"]},
            },
            "pin": {"type": "string", "title": "PIN", "x-sensitive": True, "minLength": 4},
            "mail": {"type": "string", "title": "Email", "format": "email"},
        },
        "required": ["pin"],
    }
    request = todo_request(requested_schema=schema, prefilled={"size": 2, "pin": "HXCANARY-0000"})
    answer = asyncio.create_task(ask(handler, request))
    page = await opened(handler)
    source = await page.content()
    assert "HXCANARY-0000" not in source  # "0000" alone could be a port's digits
    assert await page.get_by_label("PIN").get_attribute("type") == "password"
    assert await page.get_by_label("Email").get_attribute("type") == "email"
    await page.get_by_label("Size").select_option(label="3")
    await page.get_by_label("Gift wrap").check()
    await page.get_by_label("mon").check()
    await page.get_by_label("wed").check()
    await page.get_by_label("PIN").fill("4711")
    await page.get_by_role("button", name="Accept").click()
    result = await asyncio.wait_for(answer, 30)
    assert result.content == {"size": 3, "gift": True, "days": ["mon", "wed"], "pin": "4711"}


async def test_a_url_question_shows_the_link(handler: BrowserHandler) -> None:
    request = ElicitationRequest(
        source="tool-question",
        mode="url",
        message="Sign in with your bank.",
        origin="http://127.0.0.1:8101",
        tool="pay",
        url="https://bank.example/authorize",
    )
    answer = asyncio.create_task(ask(handler, request))
    page = await opened(handler)
    link = page.get_by_role("link", name="https://bank.example/authorize")
    assert await link.get_attribute("rel") == "noopener noreferrer"
    await page.get_by_role("button", name="Accept").click()
    assert await asyncio.wait_for(answer, 30) == ElicitationResult(action="accept")


async def test_closing_the_handler_stops_its_server(harness: Harness) -> None:
    handler = BrowserHandler(harness.browser)
    answer = asyncio.create_task(ask(handler, todo_request()))
    page = await opened(handler)
    context = page.context
    await handler.aclose()
    result = await asyncio.wait_for(answer, 30)
    assert result.action == "cancel" and result.reason == "the harness closed"
    assert context not in harness.browser.contexts
    async with aiohttp.ClientSession() as client:
        with pytest.raises(aiohttp.ClientConnectionError):
            await client.get(handler.origin)


def test_schema_patterns_keep_their_meaning_in_html() -> None:
    assert html_pattern("^[A-Z]{3}$") == "^[A-Z]{3}$"
    assert html_pattern("milk") == r"[\s\S]*(?:milk)[\s\S]*"  # JSON Schema: anywhere
