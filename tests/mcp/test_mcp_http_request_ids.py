"""Over HTTP too, a request whose id MCP does not take (null, 1.5, true, a list) is answered
HTTP 400 with JSON-RPC -32600 (id null), as over stdio (``test_mcp_stdio_malformed.py``).

The bug: the SDK's streamable HTTP transport read such a request as a notification — 202
Accepted, no body — and handed it to the server as one, so the client's request was never
answered (the README says a malformed request is answered with a JSON-RPC error on both
transports).
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from harness.mcp.request_ids import RequestIds
from tests.conftest import PageServer
from tests.mcp.test_mcp_server import http_server
from tests.mcp.test_mcp_session_release import HEADERS, INITIALIZE

pytestmark = pytest.mark.timeout(120)

BAD_IDS: list[Any] = [None, 1.5, True, [14], {"n": 1}]


def answer_of(text: str) -> dict[str, Any]:
    """The JSON-RPC message of a response body, plain JSON or one SSE event."""
    if text.lstrip().startswith("{"):
        return dict(json.loads(text))
    data = [line[len("data:") :] for line in text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1]))


async def test_a_request_whose_id_mcp_does_not_take_is_answered_over_http(
    page_server: PageServer,
) -> None:
    async with (
        http_server(page_server.url("cli_contract.html"), "--settle", "100") as url,
        aiohttp.ClientSession(headers=HEADERS) as http,
    ):
        async with http.post(url, json=INITIALIZE) as response:
            assert response.status == 200, await response.text()
            session = {"mcp-session-id": response.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with http.post(url, json=initialized, headers=session) as response:
            assert response.status == 202  # a notification: accepted, as before
        for bad in BAD_IDS:
            request = {"jsonrpc": "2.0", "id": bad, "method": "tools/list"}
            async with http.post(url, json=request, headers=session) as response:
                assert response.status == 400, (bad, response.status)
                assert await response.json() == {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32600,
                        "message": 'Invalid Request: "id" must be a string or an integer.',
                    },
                }
        # The session goes on: a good request after them is answered.
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        async with http.post(url, json=listing, headers=session) as response:
            assert response.status == 200
            answer = answer_of(await response.text())
        assert answer["id"] == 7 and "echo" in json.dumps(answer["result"]["tools"])


async def test_the_body_reaches_the_app_whole_however_it_was_sent() -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(await receive())
        seen.append(await receive())

    chunks = [b'{"jsonrpc":"2.0",', b'"id":3,"method":', b'"ping"}']
    given = [
        *({"type": "http.request", "body": c, "more_body": i < 2} for i, c in enumerate(chunks)),
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict[str, Any]:
        return given.pop(0)

    async def send(message: dict[str, Any]) -> None:
        raise AssertionError(f"nothing is answered by the check: {message}")

    await RequestIds(app)({"type": "http", "method": "POST"}, receive, send)
    assert seen == [
        {"type": "http.request", "body": b"".join(chunks), "more_body": False},
        {"type": "http.disconnect"},
    ]
