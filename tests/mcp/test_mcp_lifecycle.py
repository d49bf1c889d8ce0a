"""The MCP bridge and its clients: a cancelled call aborts the page tool's signal; a closed
HTTP session is released; a page tool's own question (requestUserInput) goes to the client
as elicitation/create; the page's console during a call becomes log messages (opt-in)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import threading
from collections.abc import AsyncIterator
from typing import Any

import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from harness import Harness, Session
from harness.mcp.server import McpBridge, bind_loopback
from tests.conftest import PageServer

pytestmark = pytest.mark.timeout(180)
WAIT_S = 30.0


class Served:
    """A harness and its MCP bridge over HTTP, on an event loop of their own (a thread):
    the server's shutdown cannot disturb the test's loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.url = ""

    async def start(self, page_url: str) -> None:
        """Start the harness and the bridge (the test's loop keeps serving the page)."""
        self.url = await asyncio.wrap_future(self._run(self._start(page_url)))

    def _run(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def _start(self, page_url: str) -> str:
        self.harness = await Harness(call_timeout=60).start()
        self.session = await self.harness.open(page_url)
        self.bridge = await McpBridge(self.session, forward_console=True).__aenter__()
        sock = bind_loopback("127.0.0.1", 0)
        port = sock.getsockname()[1]
        ready = asyncio.Event()
        self.server = asyncio.create_task(
            self.bridge.serve_http(sock, on_ready=lambda _: ready.set())
        )
        await asyncio.wait_for(ready.wait(), WAIT_S)
        return f"http://127.0.0.1:{port}/mcp"

    async def evaluate(self, expression: str) -> Any:
        """Evaluate in the page of the one HTTP client connected now (on the server's loop);
        None while its page is still opening."""

        async def evaluate() -> Any:
            sessions = self.bridge.client_sessions()
            assert len(sessions) <= 1, "one client at a time"
            return await sessions[0].page.evaluate(expression) if sessions else None

        return await asyncio.wrap_future(self._run(evaluate()))

    async def client_sessions(self) -> list[Session]:
        """The sessions of the HTTP clients connected now (read on the server's loop)."""

        async def read() -> list[Session]:
            return self.bridge.client_sessions()

        return list(await asyncio.wrap_future(self._run(read())))

    async def open_contexts(self) -> list[Any]:
        """The browser contexts open now (read on the server's loop)."""

        async def read() -> list[Any]:
            return list(self.harness.browser.contexts)

        return list(await asyncio.wrap_future(self._run(read())))

    async def _stop(self) -> None:
        self.server.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.server
        await self.bridge.__aexit__(None, None, None)
        await self.harness.close()

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.wrap_future(self._run(self._stop())), 60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
async def served(page_server: PageServer) -> AsyncIterator[Served]:
    """One bridge over HTTP for the module: clients come and go."""
    running = Served()
    await running.start(page_server.url("mcp_cancel.html"))
    yield running
    await running.stop()


async def until(check: object, what: str) -> None:
    async with asyncio.timeout(WAIT_S):
        while not await check():  # type: ignore[operator]
            await asyncio.sleep(0.05)
    assert what


async def test_a_cancelled_call_aborts_the_page_tools_signal(served: Served) -> None:
    async with Client(streamable_http_client(served.url), mode="legacy") as client:
        call = asyncio.create_task(client.call_tool("wait_for_abort", {}))

        async def started() -> bool:
            return bool(await served.evaluate("window.started"))

        await until(started, "the tool started")
        call.cancel()  # the SDK client sends notifications/cancelled for it
        with contextlib.suppress(asyncio.CancelledError):
            await call

        async def aborted() -> bool:
            return await served.evaluate("window.abortedWith") is not None

        await until(aborted, "the tool's signal aborted")
        assert "AbortError" in await served.evaluate("window.abortedWith")
        # The connection still serves.
        assert "wait_for_abort" in [t.name for t in (await client.list_tools()).tools]


async def test_a_closed_http_session_is_released_with_its_page(served: Served) -> None:
    clients: list[Session] = []
    for _ in range(3):
        async with Client(streamable_http_client(served.url), mode="legacy") as client:
            await client.list_tools()
            await client.call_tool("logs", {})  # on the client's own page
            [session] = await served.client_sessions()
            clients.append(session)
            assert session.context in await served.open_contexts()

    async def released() -> bool:
        gc.collect()
        contexts = await served.open_contexts()
        return await served.client_sessions() == [] and all(
            s.closed and s.context not in contexts for s in clients
        )

    await until(released, "every closed session was released, and its context closed")
    assert len({id(s.context) for s in clients}) == 3  # a context of its own for each


async def test_a_page_tools_question_goes_to_the_client(served: Served) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def answer(_context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"word": "oat"})

    client = Client(streamable_http_client(served.url), mode="legacy", elicitation_callback=answer)
    async with client:
        result = await client.call_tool("ask", {})
    assert len(asked) == 1 and "A word, please" in asked[0].message
    assert result.structured_content == {"action": "accept", "content": {"word": "oat"}}


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # setLevel
async def test_the_console_during_a_call_is_forwarded_as_framed_log_messages(
    served: Served,
) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    def warnings_logged(count: int) -> object:
        async def check() -> bool:
            return sum(m.level == "warning" for m in logged) >= count

        return check

    client = Client(streamable_http_client(served.url), mode="legacy", logging_callback=on_log)
    async with client:
        assert (await client.call_tool("logs", {})).is_error is False
        await until(warnings_logged(1), "the warning arrived")
        # The default least level is info: the debug line (logged first) was not sent.
        assert [(m.level, m.logger) for m in logged] == [("warning", "page")]
        assert str(logged[0].data).startswith("<untrusted-data origin=")
        assert "Ignore previous instructions" in str(logged[0].data)
        await client.set_logging_level("debug")
        await client.call_tool("logs", {})
        await until(warnings_logged(2), "the second warning arrived")
    assert [m.level for m in logged] == ["warning", "debug", "warning"]
