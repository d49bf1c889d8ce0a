"""Seed 002 §6.1 on the MCP wire: a call's result reaches the client before the
``notifications/tools/list_changed`` that the call caused, and the navigation it asked for
comes after both — for script tools and seed-dialect tools alike."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from aiohttp import web

from tests.conftest import listen
from tests.mcp.test_mcp_server import EVENT_TIMEOUT_S, Connection, connect, names_of

PAGES = Path(__file__).parent.parent / "pages"
LIST_CHANGED = "notifications/tools/list_changed"

pytestmark = pytest.mark.timeout(180)


class OrderingSite:
    """The o_*.html pages, and a slow JSON endpoint for the seed-dialect form."""

    def __init__(self) -> None:
        self.port = 0  # known once started
        self.status = "idle"
        self._runner: web.AppRunner | None = None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    async def start(self) -> None:
        async def page(request: web.Request) -> web.StreamResponse:
            path = PAGES / request.match_info["name"]
            if not request.match_info["name"].startswith("o_") or not path.is_file():
                raise web.HTTPNotFound()
            html = path.read_text(encoding="utf-8").replace("{{OTHER}}", "http://127.0.0.2")
            return web.Response(text=html, content_type="text/html")

        async def status(_request: web.Request) -> web.StreamResponse:
            return web.Response(text=self.status)

        async def step(_request: web.Request) -> web.StreamResponse:
            self.status = "stepping"
            await asyncio.sleep(1.0)  # the page removes the form meanwhile
            self.status = "idle"
            answer = {"content": [{"type": "text", "text": "stepped"}]}
            answer["_meta"] = {"uiRedirect": "/o_after.html"}
            return web.json_response(answer)

        app = web.Application()
        app.router.add_get("/status", status)
        app.router.add_post("/step", step)
        app.router.add_get("/{name}", page)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        self.port = await listen(self._runner)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture(scope="module")
async def site() -> AsyncIterator[OrderingSite]:
    served = OrderingSite()
    await served.start()
    yield served
    await served.stop()


async def call_and_watch(connection: Connection, name: str) -> list[str]:
    """Call ``name``; return what the client received since (responses as ``result`` of the
    call, notifications by method), once the tools have changed twice (recompute, then
    the navigation's new page) or the wait is over."""
    mark = len(connection.wire.messages)
    result = await connection.call(name)
    assert result.is_error is False
    with anyio.move_on_after(EVENT_TIMEOUT_S):  # the assertions say what is missing
        while connection.wire.since(mark).count(LIST_CHANGED) < 2:
            await anyio.sleep(0.05)
    seen = []
    for text in connection.wire.messages[mark:]:
        message = json.loads(text)
        if "method" in message:
            if message["method"] == "tools/call":
                request_id = message["id"]
            else:
                seen.append(message["method"])
        elif message.get("id") == request_id:
            seen.append("result")
    return seen


@pytest.mark.parametrize(
    ("page", "tool", "during"),
    [
        ("o_ordering.html", "advance", "next_step"),
        # Its arguments and its result are checked off the event loop, which must not let
        # the change out first.
        ("o_checked.html", "advance_checked", "next_checked"),
        ("o_seed.html", "seed_step", None),
    ],
    ids=["script tool", "script tool checked at length", "seed-dialect tool"],
)
async def test_the_result_comes_before_the_tool_list_change_and_the_navigation(
    site: OrderingSite, page: str, tool: str, during: str | None
) -> None:
    async with connect(site.url(page), "legacy") as connection:
        listed = names_of(await connection.client.list_tools())
        assert tool in listed
        seen = await call_and_watch(connection, tool)
        # The result first; then the change the call made (next_step added, or the removed
        # form gone); then, after the navigation to o_after.html, its tools.
        assert seen[:3] == ["result", LIST_CHANGED, LIST_CHANGED], seen
        after = names_of(await connection.client.list_tools())
        assert "after" in after and tool not in after
        if during is not None:
            assert during not in after  # it belonged to the page the call left
