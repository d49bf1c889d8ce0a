"""The MCP server, driven by the official MCP SDK client over stdio and streamable HTTP.

Every end-to-end test starts ``webmcp-harness mcp`` as a subprocess, as an MCP client
would, and records every JSON-RPC message both ways. ``legacy`` clients use the
initialize handshake (2025-11-25); ``auto`` clients negotiate the 2026-07-28 protocol
with this server (no handshake, ``subscriptions/listen``, ``InputRequiredResult``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp.types as types
import pytest
from harness.sites.server import RunningSites, serve_sites
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError

from harness.cli import main as cli_main
from harness.mcp.names import NAVIGATE, RELOAD
from harness.mcp.server import is_loopback
from harness.selftest.bridge import BridgeProcess
from tests.conftest import PageServer

BACKEND = "polyfill"
TRANSPORTS = ["stdio", "http"]
ERAS = ["legacy", "auto"]  # auto: this server speaks 2026-07-28, so the client picks it
EVENT_TIMEOUT_S = 15.0

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo", "keys"]) as running:
        yield running


@pytest.fixture(autouse=True)
async def fresh_data(sites: RunningSites) -> None:
    await sites.reset("todo")


# -- plumbing: a recording transport and a server subprocess -----------------------


@dataclass
class Wire:
    """Every JSON-RPC message the client sent and received, as JSON text."""

    messages: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.messages)

    def methods(self) -> list[str]:
        return self.since(0)

    def since(self, mark: int) -> list[str]:
        """The methods of the messages recorded after the first ``mark`` ones."""
        return [m["method"] for m in map(json.loads, self.messages[mark:]) if "method" in m]


class _Recorded:
    """A stream that records what passes through it."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    def _record(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if message is not None:
            self._wire.messages.append(message.model_dump_json(by_alias=True, exclude_none=True))

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._record(item)
        return item

    async def send(self, item: Any) -> None:
        self._record(item)
        await self._inner.send(item)

    def __aiter__(self) -> _Recorded:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Recorded:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.asynccontextmanager
async def recording(inner: Any, wire: Wire) -> AsyncIterator[tuple[Any, Any]]:
    async with inner as (read_stream, write_stream):
        yield _Recorded(read_stream, wire), _Recorded(write_stream, wire)


def server_command(url: str, *extra: str) -> list[str]:
    return ["-m", "harness.cli", "mcp", url, "--backend", BACKEND, *extra]


@contextlib.asynccontextmanager
async def http_server(url: str, *extra: str) -> AsyncIterator[str]:
    """``webmcp-harness mcp URL --transport http`` on a port it picks itself (``--port 0``:
    none can take it first); yields the MCP URL it says it serves at."""
    async with BridgeProcess(url, "--backend", BACKEND, *extra) as bridge:
        yield bridge.url


@dataclass
class Answers:
    """The client's elicitation callback: answers from a queue (empty: cancel)."""

    queue: list[Literal["accept", "decline", "cancel"]] = field(default_factory=list)
    asked: list[types.ElicitRequestParams] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params)
        action: Literal["accept", "decline", "cancel"] = "cancel"
        if self.queue:
            action = self.queue.pop(0)
        return types.ElicitResult(action=action)


@dataclass
class Connection:
    """One SDK client, what it recorded, and who answers its questions."""

    client: Client
    era: str
    wire: Wire
    notifications: list[Any]
    answers: Answers | None

    async def call(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> types.CallToolResult:
        return await self.client.call_tool(name, arguments or {})

    async def home(self) -> None:
        """Back to the start page (same origin: no question asked)."""
        result = await self.call(NAVIGATE, {"url": "/"})
        assert result.is_error is False, text_of(result)


@contextlib.asynccontextmanager
async def connect(
    target: str, era: str, *, answers: Answers | None = None
) -> AsyncIterator[Connection]:
    """A client on ``target``: an MCP URL (HTTP), or a page URL to start a stdio server for."""
    wire = Wire()
    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        notifications.append(message)

    if target.endswith("/mcp"):
        inner: Any = streamable_http_client(target)
    else:
        params = StdioServerParameters(command=sys.executable, args=server_command(target))
        inner = stdio_client(params)
    client = Client(
        recording(inner, wire),
        mode=era,
        elicitation_callback=answers,
        message_handler=on_message,
    )
    async with client:
        yield Connection(client, era, wire, notifications, answers)


@pytest.fixture(scope="module")
async def http_url(sites: RunningSites) -> AsyncIterator[str]:
    """One HTTP server on the todo site for the whole module: clients come and go."""
    async with http_server(sites.url("todo")) as url:
        yield url


CLIENTS = ["stdio-legacy", "stdio-auto", "http-legacy", "http-auto"]


class Held:
    """A client held open by a task of its own.

    The SDK client's task group must be left in the task that entered it, and
    pytest's fixture set-up and tear-down run in different tasks.
    """

    def __init__(self, target: str, era: str) -> None:
        self.target, self.era = target, era
        self.opened: asyncio.Future[Connection] = asyncio.get_running_loop().create_future()
        self.done = asyncio.Event()
        self.task = asyncio.ensure_future(self._hold())

    async def _hold(self) -> None:
        async with connect(self.target, self.era, answers=Answers()) as held:
            self.opened.set_result(held)
            await self.done.wait()

    async def start(self) -> Connection:
        either: list[asyncio.Future[Any]] = [self.task, self.opened]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if self.task.done():
            self.task.result()  # raises what went wrong
        return self.opened.result()


@pytest.fixture(scope="module")
async def clients(sites: RunningSites, http_url: str) -> AsyncIterator[dict[str, Connection]]:
    """One client per transport and era (with an elicitation callback), started together."""
    held = {}
    for key in CLIENTS:
        transport, era = key.split("-")
        held[key] = Held(http_url if transport == "http" else sites.url("todo"), era)
    try:
        started = await asyncio.gather(*(h.start() for h in held.values()))
        yield dict(zip(held, started, strict=True))
    finally:
        for holder in held.values():
            holder.done.set()
        await asyncio.gather(*(h.task for h in held.values()), return_exceptions=True)


@pytest.fixture(params=CLIENTS)
def connection(request: pytest.FixtureRequest, clients: dict[str, Connection]) -> Connection:
    """The shared client of one transport and era."""
    return clients[request.param]


async def tools_change_after(connection: Connection, action: Awaitable[Any]) -> Any:
    """Run ``action``; return its result once the client has heard that the tool list changed."""
    if connection.era == "legacy":
        connection.notifications.clear()
        result = await action
        with anyio.fail_after(EVENT_TIMEOUT_S):
            while not any(
                isinstance(n, types.ToolListChangedNotification) for n in connection.notifications
            ):
                await anyio.sleep(0.05)
        return result
    async with connection.client.listen(tools_list_changed=True) as subscription:
        result = await action
        with anyio.fail_after(EVENT_TIMEOUT_S):
            async for event in subscription:
                if isinstance(event, ToolsListChanged):
                    return result
    raise AssertionError("the subscription ended without a tools change")


def names_of(listed: types.ListToolsResult) -> list[str]:
    return [tool.name for tool in listed.tools]


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


# -- the tour: list, call, navigate, list_changed -----------------------------------


async def test_a_cursor_the_bridge_never_gave_is_refused(connection: Connection) -> None:
    # MCP's pagination: an invalid cursor is error -32602, not the first page again.
    with pytest.raises(MCPError) as refused:
        await connection.client.list_tools(cursor="made-up", cache_mode="refresh")
    assert refused.value.error.code == types.INVALID_PARAMS
    assert "cursor" in refused.value.error.message


async def test_list_call_and_list_changed_after_a_navigation(
    connection: Connection, sites: RunningSites
) -> None:
    await connection.home()
    listed = await connection.client.list_tools()
    assert names_of(listed) == [
        "add_todo",
        "complete_todo",
        "delete_todo",
        "list_todos",
        NAVIGATE,
        RELOAD,
    ]
    by_name = {tool.name: tool for tool in listed.tools}
    assert by_name["list_todos"].annotations is not None
    assert by_name["list_todos"].annotations.read_only_hint is True
    assert by_name["add_todo"].meta is not None
    assert by_name["add_todo"].meta["webmcp-harness/tool"]["origin"] == sites.origin("todo")
    assert (by_name["add_todo"].description or "").startswith(
        f"[WebMCP tool from {sites.origin('todo')}"
    )

    added = await connection.call("add_todo", {"text": "buy oat milk"})
    assert added.is_error is False
    assert added.structured_content is not None
    assert added.structured_content["todo"]["text"] == "buy oat milk"

    refused = await connection.call("add_todo", {"text": ""})
    assert refused.is_error is True and "/text" in text_of(refused)

    mark = len(connection.wire.messages)
    moved = await tools_change_after(connection, connection.call(NAVIGATE, {"url": "/archive"}))
    assert moved.is_error is False
    assert moved.structured_content == {
        "url": sites.url("todo", "/archive"),
        "tools": ["list_archived"],
    }
    assert names_of(await connection.client.list_tools()) == ["list_archived", NAVIGATE, RELOAD]
    methods = connection.wire.since(mark)
    if connection.era == "legacy":
        assert "notifications/tools/list_changed" in methods
    else:
        assert "notifications/subscriptions/acknowledged" in methods

    with pytest.raises(MCPError) as gone:
        await connection.call("add_todo", {"text": "too late"})
    assert gone.value.error.code == types.INVALID_PARAMS
    assert "Unknown tool: add_todo" in gone.value.error.message

    reloaded = await connection.call(RELOAD)
    assert reloaded.is_error is False
    assert reloaded.structured_content == moved.structured_content


# -- elicitation ------------------------------------------------------------------


async def test_an_elicitation_round_trip_through_the_client(
    connection: Connection, sites: RunningSites
) -> None:
    assert connection.answers is not None
    await connection.home()
    connection.answers.queue[:] = ["decline", "accept"]
    connection.answers.asked.clear()
    mark = len(connection.wire.messages)
    keys = sites.url("keys")

    declined = await connection.call(NAVIGATE, {"url": keys})
    assert declined.is_error is True
    assert "did not allow" in text_of(declined) and "decline" in text_of(declined)
    accepted = await connection.call(NAVIGATE, {"url": keys})
    assert accepted.is_error is False
    assert accepted.structured_content is not None
    assert accepted.structured_content["url"] == keys

    assert len(connection.answers.asked) == 2
    question = connection.answers.asked[0]
    assert isinstance(question, types.ElicitRequestFormParams)
    assert sites.origin("keys") in question.message
    sent = "\n".join(connection.wire.messages[mark:])
    if connection.era == "legacy":  # a server-to-client request on the call's stream
        assert connection.wire.since(mark).count("elicitation/create") == 2
    else:  # no back channel: the call answers InputRequiredResult, the client retries
        assert sent.count('"resultType":"input_required"') == 2
        assert '"method":"elicitation/create"' in sent
    await connection.home()


@pytest.mark.parametrize("era", ERAS)
async def test_without_client_elicitation_the_local_handler_answers(
    http_url: str, sites: RunningSites, era: str
) -> None:
    async with connect(http_url, era) as connection:
        await connection.home()
        refused = await connection.call(NAVIGATE, {"url": sites.url("keys")})
        assert refused.is_error is True and "answer: cancel" in text_of(refused)
        assert "elicitation/create" not in connection.wire.text()


# -- secrets ----------------------------------------------------------------------


async def test_a_redacted_result_leaves_no_secret_in_the_messages(
    connection: Connection, sites: RunningSites
) -> None:
    try:
        import harness.stages.redaction  # noqa: F401
    except ImportError:
        pytest.skip("harness.stages.redaction (the redaction stage) is not there yet")
    from harness.sites.keys_app import CANARY

    assert connection.answers is not None
    connection.answers.queue[:] = ["accept"]
    moved = await connection.call(NAVIGATE, {"url": sites.url("keys")})
    assert moved.is_error is False, text_of(moved)
    listed = {tool.name: tool for tool in (await connection.client.list_tools()).tools}
    schema = listed["generate_api_key"].output_schema
    assert schema is not None and schema["properties"]["secret"]["type"] == "string"

    made = len([r for r in sites.requests("keys") if r.path == "/api/keys" and r.method == "POST"])
    result = await connection.call("generate_api_key", {"name": "ci"})
    assert result.is_error is False, text_of(result)
    assert result.meta is not None and result.meta["webmcp-harness/redacted"]
    after = [r for r in sites.requests("keys") if r.path == "/api/keys" and r.method == "POST"]
    assert len(after) == made + 1  # the page really made a secret
    assert CANARY not in connection.wire.text()  # every message, both ways, since the start
    assert all(not name.startswith("harness.") or name in (NAVIGATE, RELOAD) for name in listed)
    await connection.home()


# -- names ------------------------------------------------------------------------


async def test_long_page_names_are_hashed_and_callable(
    http_url: str, page_server: PageServer
) -> None:
    async with connect(http_url, "legacy", answers=Answers(queue=["accept"])) as connection:
        moved = await connection.call(NAVIGATE, {"url": page_server.url("mcp_names.html")})
        assert moved.is_error is False, text_of(moved)
        names = names_of(await connection.client.list_tools())
        hashed = [n for n in names if n not in (NAVIGATE, RELOAD)]
        assert len(hashed) == 1 and "--" in hashed[0] and len(hashed[0]) <= 64
        assert hashed[0].startswith("a_tool_with_a_name_")
        result = await connection.call(hashed[0], {})
        assert result.is_error is False and "long name called" in text_of(result)
        await connection.home()


def test_http_listens_on_loopback_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    code = cli_main(["mcp", "http://127.0.0.1:9/", "--transport", "http", "--host", "0.0.0.0"])
    assert code == 2
    assert "loopback only" in capsys.readouterr().err
