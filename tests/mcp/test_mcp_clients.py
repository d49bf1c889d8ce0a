"""Several MCP clients on one bridge over HTTP (issue 24, point 1): each client with a session
drives a page of its own — its own browser context (cookies, storage), navigation, catalog,
trust state and vault — so what one client's page withholds or its user allows never
reaches or moves another's. Clients of the 2026-07-28 protocol (no session) share the
bridge's own page, which no session's client shares.

The bridge runs as ``webmcp-harness mcp URL --transport http`` (a subprocess, as a client
would find it), and the clients are the official SDK's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import mcp.types as types
import pytest

from harness.mcp.names import NAVIGATE, RELOAD
from tests.conftest import PageServer
from tests.mcp.test_mcp_server import Answers, Connection, connect, http_server, names_of, text_of

pytestmark = pytest.mark.timeout(180)

CANARY = "HXCANARY"
PAGE_TOOLS = ["make_secret", "repeat_secret"]


@pytest.fixture(scope="module")
async def bridge(page_server: PageServer) -> AsyncIterator[str]:
    """One bridge for the module: every test's clients are new sessions, with new pages."""
    async with http_server(page_server.url("mcp_clients.html")) as url:
        yield url


def list_changes(connection: Connection) -> int:
    return sum(isinstance(n, types.ToolListChangedNotification) for n in connection.notifications)


async def test_a_value_withheld_from_one_client_never_reaches_another(bridge: str) -> None:
    async with connect(bridge, "legacy") as a, connect(bridge, "legacy") as b:
        made = await a.call("make_secret")
        assert made.is_error is False and made.meta and made.meta["webmcp-harness/redacted"]
        # The sloppy tool repeats what its page knows: A's page knows A's secret (withheld
        # from A again); B's page is another page, with other storage and cookies.
        repeated_to_a = await a.call("repeat_secret")
        repeated_to_b = await b.call("repeat_secret")
        assert "memory=null storage=null cookie=" in text_of(repeated_to_b)
        assert CANARY not in text_of(repeated_to_a)
        assert CANARY not in a.wire.text() and CANARY not in b.wire.text()


async def test_one_clients_yes_to_another_origin_moves_its_page_only(
    bridge: str, page_server: PageServer
) -> None:
    other = page_server.url("mcp_clients_other.html", other=True)
    async with (
        connect(bridge, "legacy", answers=Answers(queue=["accept"])) as a,
        connect(bridge, "legacy", answers=Answers()) as b,
    ):
        assert names_of(await b.client.list_tools()) == [*PAGE_TOOLS, NAVIGATE, RELOAD]
        moved = await a.call(NAVIGATE, {"url": other})
        assert moved.is_error is False, text_of(moved)
        assert names_of(await a.client.list_tools()) == ["other_origin_tool", NAVIGATE, RELOAD]
        async with asyncio.timeout(15):
            while list_changes(a) == 0:  # A hears that its tools changed …
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        assert list_changes(b) == 0  # … B does not: its page did not change
        assert names_of(await b.client.list_tools()) == [*PAGE_TOOLS, NAVIGATE, RELOAD]
        reloaded = await b.call(RELOAD)
        assert reloaded.structured_content == {
            "url": page_server.url("mcp_clients.html"),
            "tools": PAGE_TOOLS,
        }
        assert b.answers is not None and b.answers.asked == []
        with pytest.raises(Exception, match="Unknown tool: other_origin_tool"):
            await b.call("other_origin_tool")


async def test_each_client_has_its_own_cookies_and_storage(bridge: str) -> None:
    async with (
        connect(bridge, "legacy") as a,
        connect(bridge, "legacy") as b,
        connect(bridge, "auto") as stateless,  # the bridge's own page: no session's
    ):
        await a.call("make_secret")
        for client in (b, stateless):
            repeated = await client.call("repeat_secret")
            assert "memory=null storage=null cookie=" in text_of(repeated)
