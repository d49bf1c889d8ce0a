"""The MCP bridge and its clients' lifecycles: a cancelled call aborts the page tool's
signal; a closed HTTP session is released."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from harness import Harness, Session
from harness.mcp.server import McpBridge, bind_loopback
from tests.conftest import PageServer

pytestmark = pytest.mark.timeout(180)
WAIT_S = 30.0


@dataclass
class Served:
    bridge: McpBridge
    session: Session
    url: str


@pytest.fixture(scope="module")
async def served(page_server: PageServer) -> AsyncIterator[Served]:
    """One bridge over HTTP for the module: clients come and go."""
    async with Harness(call_timeout=60) as harness:
        session = await harness.open(page_server.url("mcp_cancel.html"))
        async with McpBridge(session) as bridge:
            sock = bind_loopback("127.0.0.1", 0)
            port = sock.getsockname()[1]
            ready = asyncio.Event()
            server = asyncio.create_task(bridge.serve_http(sock, on_ready=lambda _: ready.set()))
            await asyncio.wait_for(ready.wait(), WAIT_S)
            try:
                yield Served(bridge, session, f"http://127.0.0.1:{port}/mcp")
            finally:
                server.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await server


async def until(check: object, what: str) -> None:
    async with asyncio.timeout(WAIT_S):
        while not await check():  # type: ignore[operator]
            await asyncio.sleep(0.05)
    assert what


async def test_a_cancelled_call_aborts_the_page_tools_signal(served: Served) -> None:
    page = served.session.page
    async with Client(streamable_http_client(served.url), mode="legacy") as client:
        call = asyncio.create_task(client.call_tool("wait_for_abort", {}))

        async def started() -> bool:
            return bool(await page.evaluate("window.started"))

        await until(started, "the tool started")
        call.cancel()  # the SDK client sends notifications/cancelled for it
        with contextlib.suppress(asyncio.CancelledError):
            await call

        async def aborted() -> bool:
            return await page.evaluate("window.abortedWith") is not None

        await until(aborted, "the tool's signal aborted")
        assert "AbortError" in await page.evaluate("window.abortedWith")
        # The connection still serves.
        assert "wait_for_abort" in [t.name for t in (await client.list_tools()).tools]


async def test_a_closed_http_session_is_released(served: Served) -> None:
    for _ in range(3):
        async with Client(streamable_http_client(served.url), mode="legacy") as client:
            await client.list_tools()
            assert len(served.bridge._legacy) >= 1

    async def released() -> bool:
        gc.collect()
        return len(served.bridge._legacy) == 0

    await until(released, "every closed session was released")
