"""The MCP bridge under load and bad requests: ``webmcp-harness mcp URL --transport http``
run as a separate process (a front end is driven from outside, never imported), with 8
concurrent MCP clients, and raw HTTP requests that are not valid MCP."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from typing import Any

import aiohttp
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from harness.selftest.inputs import InputResult
from harness.selftest.load import LoadResult, echoed

START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BridgeProcess:
    """``webmcp-harness mcp PAGE --transport http`` on a free loopback port."""

    def __init__(self, page_url: str) -> None:
        """Not running until entered."""
        self.page_url = page_url
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._process: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> BridgeProcess:
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "harness.cli",
            "mcp",
            self.page_url,
            "--transport",
            "http",
            "--port",
            str(self.port),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ},
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return self
            except OSError:
                await asyncio.sleep(0.2)
        raise TimeoutError(f"the MCP bridge did not listen within {START_TIMEOUT_S:g} s")

    async def __aexit__(self, *exc: object) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            try:
                await asyncio.wait_for(self._process.wait(), 20)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()


async def bridge_load(bridge: BridgeProcess, *, clients: int, calls: int) -> LoadResult:
    """``clients`` concurrent MCP clients, ``calls`` calls of ``echo`` each."""
    seen: dict[int, int] = {}
    errors: dict[str, int] = {}
    crossed = 0
    started = time.perf_counter()

    async def client(index: int) -> None:
        nonlocal crossed
        async with Client(streamable_http_client(bridge.url), mode="legacy") as mcp:
            for k in range(calls):
                number = index * calls + k
                result = await mcp.call_tool("echo", {"n": number})
                if result.is_error:
                    errors["isError"] = errors.get("isError", 0) + 1
                    continue
                answer = echoed(result.content)
                if answer is None:
                    continue
                if answer.get("n") != number:
                    crossed += 1
                    continue
                seen[number] = seen.get(number, 0) + 1

    await asyncio.gather(*(client(index) for index in range(clients)))
    total = clients * calls
    return LoadResult(
        pages=1,
        calls=total,
        answered=sum(seen.values()),
        errors=errors,
        lost=total - len(seen) - crossed - sum(errors.values()),
        duplicated=sum(count - 1 for count in seen.values()),
        crossed=crossed,
        seconds=round(time.perf_counter() - started, 1),
    )


def _requests() -> list[tuple[str, Any]]:
    """(case, body): bodies that are not a valid MCP request (a str is sent as is)."""
    init: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    }
    cases: list[tuple[str, Any]] = [
        ("empty-body", ""),
        ("not-json", "{nope"),
        ("json-scalar", "42"),
        ("json-null", "null"),
        ("json-string", '"hello"'),
        ("empty-array", "[]"),
        ("no-jsonrpc", {"id": 1, "method": "initialize"}),
        ("wrong-jsonrpc", {**init, "jsonrpc": "1.0"}),
        ("no-method", {"jsonrpc": "2.0", "id": 1}),
        ("method-number", {"jsonrpc": "2.0", "id": 1, "method": 5}),
        ("unknown-method", {"jsonrpc": "2.0", "id": 1, "method": "tools/explode"}),
        ("id-object", {**init, "id": {"a": 1}}),
        ("params-list", {**init, "params": [1, 2]}),
        ("params-string", {**init, "params": "x"}),
        (
            "tools-call-before-initialize",
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
        ),
        (
            "deep-params",
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
            + "[" * 100_000
            + "]" * 100_000
            + "}",
        ),
        (
            "huge-string",
            {
                **init,
                "params": {
                    **init["params"],
                    "clientInfo": {"name": "x" * 5_000_000, "version": "1"},
                },
            },
        ),
        ("lone-surrogate", '{"jsonrpc":"2.0","id":1,"method":"initialize\\ud800"}'),
        ("binary", "\x00\x01\x02\xff"),
    ]
    return cases


async def malformed_requests(bridge: BridgeProcess) -> list[InputResult]:
    """Each bad request must get a 4xx or a JSON-RPC error, never a 5xx; the bridge must
    still serve a real client afterwards."""
    results: list[InputResult] = []
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with aiohttp.ClientSession() as http:
        for case, body in _requests():
            data = body if isinstance(body, str) else json.dumps(body)
            started = time.perf_counter()
            try:
                async with http.post(
                    bridge.url,
                    data=data.encode("utf-8", "surrogatepass"),
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=60),
                ) as response:
                    text = await response.text(errors="replace")
                    clear = (
                        response.status < 500
                        and "Traceback" not in text
                        and (
                            response.status >= 400
                            or '"error"' in text
                            or case.startswith("deep")
                            or case.startswith("huge")
                        )
                    )
                    answer = f"HTTP {response.status}"
            except (aiohttp.ClientError, TimeoutError) as exc:
                clear, answer = False, f"{type(exc).__name__}"
            results.append(
                InputResult(
                    family="mcp-request",
                    case=case,
                    clear=clear,
                    answer=answer,
                    seconds=round(time.perf_counter() - started, 4),
                )
            )
    async with Client(streamable_http_client(bridge.url), mode="legacy") as mcp:
        still = await mcp.call_tool("echo", {"n": 1})
    if still.is_error:
        results.append(
            InputResult(
                family="mcp-request",
                case="after",
                clear=False,
                answer="the bridge stopped serving",
                seconds=0,
            )
        )
    return results
