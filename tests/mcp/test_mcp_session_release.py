"""A client's page is closed whenever its session ends, however early: a browser context
is the opener's from the moment it exists, so a cancellation at any point of opening it —
while Playwright makes the context, while the page loads and settles, while the bridge
waits for a ``--wait-for-tool`` tool — closes it.

The bug: an HTTP client that sent ``initialize`` and then ``DELETE`` while its page was
still opening left that browser context (and its renderer) open for good, outside the
64-session cap. The contexts are counted in the harness's browser, in this process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import httpx
import pytest

import harness.mcp.server as mcp_server
from harness import Harness
from harness.catalog import Settle
from harness.mcp.clients import ClientPage
from harness.session import Session
from tests.conftest import PageServer, serve_pages

pytestmark = pytest.mark.timeout(120)

RELEASE_S = 8.0  # a closed context leaves the browser well within this
IDLE_S = 1.5  # the bridge's idle timeout for these tests (600 s in earnest)
SETTLE = Settle(quiet=0.1, timeout=6.0)  # a --wait-for-tool tool that never comes: 6 s

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

READY_TOOL = """<!doctype html><script>
document.modelContext.registerTool({name: "ready", description: "Here.",
  inputSchema: {type: "object", properties: {}}, execute: async () => "ok"});
</script>"""
NO_READY_TOOL = "<!doctype html><title>The tool never comes</title>"


async def until(check: Callable[[], Coroutine[Any, Any, bool]], what: str) -> None:
    """Poll ``check`` until it holds, at most :data:`RELEASE_S`."""
    try:
        async with asyncio.timeout(RELEASE_S):
            while not await check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        pytest.fail(f"not within {RELEASE_S:g} s: {what}")


# -- opening a session, cancelled ----------------------------------------------------------


def contexts_grew(harness: Harness, before: int) -> Callable[[], bool]:
    return lambda: len(harness.browser.contexts) > before


def its_page_exists(harness: Harness, before: int) -> Callable[[], bool]:
    def check() -> bool:
        contexts = harness.browser.contexts  # a copy, each time
        return len(contexts) > before and bool(contexts[-1].pages)

    return check


MOMENTS: dict[str, Callable[[Harness, int], Callable[[], bool]] | float] = {
    "as Playwright made the context": contexts_grew,
    "as Playwright made its page": its_page_exists,
    "as the page loads": 0.3,  # its image takes a second
    "as the page settles": 1.2,
}


@pytest.mark.parametrize("moment", MOMENTS)
async def test_an_opening_cancelled_at_any_point_leaves_no_context(
    backend_harness: Harness, page_server: PageServer, moment: str
) -> None:
    async with serve_pages({"": f'<img src="{page_server.url("__delay/1000")}">'}) as origin:
        browser = backend_harness.browser
        before = len(browser.contexts)
        opening = asyncio.create_task(backend_harness.open(origin + "/"))
        when = MOMENTS[moment]
        if isinstance(when, float):
            await asyncio.sleep(when)
        else:
            happened = when(backend_harness, before)
            async with asyncio.timeout(RELEASE_S):
                while not happened():
                    await asyncio.sleep(0)
        opening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await opening

        async def released() -> bool:
            return len(browser.contexts) == before

        await until(released, f"the context of an opening cancelled {moment} closed")


async def test_a_client_page_closed_as_its_page_opened_closes_it(
    backend_harness: Harness,
) -> None:
    # The page is open, but the client page has not taken it yet (that is its next step):
    # its session ends now, and the page must not be left open with no owner.
    session = await backend_harness.new_session()
    opened: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    opened.set_result(session)
    client = ClientPage(opened, owned=True)
    await client.close()
    assert session.closed
    assert session.context not in backend_harness.browser.contexts


# -- over HTTP: DELETE, or the idle timeout, while the page opens ---------------------------


class Bridge:
    """``serve(…, transport="http")`` as ``mcp URL --transport http --wait-for-tool ready``
    runs it, on an event loop of its own (a thread): its harness's browser is read there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.endpoint = ""
        self.harness = Harness(settle=SETTLE)
        self._serving: concurrent.futures.Future[None] | None = None

    async def start(self, url: str) -> None:
        ready: concurrent.futures.Future[str] = concurrent.futures.Future()
        serving = mcp_server.serve(
            self.harness,
            url,
            transport="http",
            port=0,
            wait_for=["ready"],
            on_ready=ready.set_result,
        )
        self._serving = asyncio.run_coroutine_threadsafe(serving, self.loop)
        self.endpoint = await asyncio.wait_for(asyncio.wrap_future(ready), 60)

    async def contexts(self) -> list[int]:
        """The browser's contexts now, as the number of pages each holds."""

        async def read() -> list[int]:
            return [len(context.pages) for context in self.harness.browser.contexts]

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(read(), self.loop))

    async def stop(self) -> None:
        if self._serving is not None:
            self.loop.call_soon_threadsafe(self._serving.cancel)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.wrap_future(self._serving), 30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
async def bridge() -> AsyncIterator[Bridge]:
    """One bridge for the module, idle timeout :data:`IDLE_S`. Its own page has the tool it
    waits for; every client's page then loads a page without it, so a client's opening
    lasts :data:`SETTLE`'s timeout after its page loaded (or until its session ends)."""
    pages = {"": READY_TOOL}
    running = Bridge()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mcp_server, "HTTP_SESSION_IDLE_TIMEOUT_S", IDLE_S)
        async with serve_pages(pages) as origin:
            await running.start(origin + "/")
            pages[""] = NO_READY_TOOL
            try:
                yield running
            finally:
                await running.stop()


async def initialize(client: httpx.AsyncClient, bridge: Bridge) -> dict[str, str]:
    """Send ``initialize`` (which opens the client's page); the session's headers."""
    response = await client.post(bridge.endpoint, content=json.dumps(INITIALIZE), headers=HEADERS)
    assert response.status_code == 200, response.text
    return {
        **HEADERS,
        "Mcp-Session-Id": response.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-11-25",
    }


def back_to(bridge: Bridge, baseline: list[int]) -> Callable[[], Coroutine[Any, Any, bool]]:
    async def check() -> bool:
        return await bridge.contexts() == baseline

    return check


async def test_sessions_deleted_right_after_initialize_close_their_pages(bridge: Bridge) -> None:
    baseline = await bridge.contexts()
    assert baseline == [1]  # the bridge's own page
    async with httpx.AsyncClient(timeout=30) as client:
        for _ in range(4):  # DELETE lands as the page opens (the bug: as Playwright made it)
            headers = await initialize(client, bridge)
            assert (await client.delete(bridge.endpoint, headers=headers)).status_code == 200
    await until(back_to(bridge, baseline), "every deleted session's context closed")


@pytest.fixture
def waiting_for_tool(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once a session waits for a ``--wait-for-tool`` tool (on the bridge's loop)."""
    waiting = threading.Event()
    wait_for_tool = Session.wait_for_tool

    async def noted(session: Session, name: str, *, timeout: float = 5.0) -> Any:
        waiting.set()
        return await wait_for_tool(session, name, timeout=timeout)

    monkeypatch.setattr(Session, "wait_for_tool", noted)
    return waiting


async def until_it_waits_for_its_tool(
    client: httpx.AsyncClient, bridge: Bridge, headers: dict[str, str], waiting: threading.Event
) -> None:
    """Until the client's page loaded and settled, and waits for its tool (6 s); pinged
    meanwhile, so that the session is not idle however long its page takes to load."""

    async def check() -> bool:
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        await client.post(bridge.endpoint, content=json.dumps(ping), headers=headers)
        return waiting.is_set()

    await until(check, "the client's page loaded, and waits for its tool")


@pytest.mark.parametrize("ended_by", ["DELETE", "the idle timeout"])
async def test_a_session_ended_while_waiting_for_its_tool_closes_its_page(
    bridge: Bridge, waiting_for_tool: threading.Event, ended_by: str
) -> None:
    baseline = await bridge.contexts()
    async with httpx.AsyncClient(timeout=30) as client:
        headers = await initialize(client, bridge)
        await until_it_waits_for_its_tool(client, bridge, headers, waiting_for_tool)
        if ended_by == "DELETE":
            assert (await client.delete(bridge.endpoint, headers=headers)).status_code == 200
        # else nothing more: the session is reaped IDLE_S later, its page still waiting
    await until(back_to(bridge, baseline), f"the context of a session ended by {ended_by} closed")
