"""The MCP bridge under load and bad requests: ``webmcp-harness mcp URL --transport http``
run as a separate process (a front end is driven from outside, never imported), with 8
concurrent MCP clients, and raw HTTP requests that are not valid MCP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

import aiohttp
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from harness.selftest.inputs import InputResult
from harness.selftest.load import LoadResult, echoed

START_TIMEOUT_S = 60.0


READY = "streamable HTTP at "


class BridgeProcess:
    """``webmcp-harness mcp PAGE --transport http --port 0``: the bridge binds a free
    loopback port itself (a port picked here could be taken before it bound it) and says
    which on stderr."""

    def __init__(self, page_url: str, *options: str) -> None:
        """Not running until entered; :attr:`url` is known once it is. ``options`` go on
        the command line (``--backend native``, …)."""
        self.page_url = page_url
        self.options = options
        self.url = ""
        self._process: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[bytes] | None = None

    async def __aenter__(self) -> BridgeProcess:
        self._process = process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "harness.cli",
            "mcp",
            self.page_url,
            "--transport",
            "http",
            "--port",
            "0",
            *self.options,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ},
        )
        assert process.stderr is not None
        said: list[str] = []
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                while READY not in (said[-1] if said else ""):
                    line = (await process.stderr.readline()).decode(errors="replace")
                    if not line:
                        raise RuntimeError("the MCP bridge exited:\n" + "".join(said[-20:]))
                    said.append(line)
        except BaseException as exc:
            await self.__aexit__()
            if isinstance(exc, TimeoutError):
                raise TimeoutError(
                    f"the MCP bridge did not say it listens within {START_TIMEOUT_S:g} s"
                ) from None
            raise
        self.url = said[-1].rsplit(READY, 1)[1].strip()
        self._drain = asyncio.ensure_future(process.stderr.read())  # keep the pipe from filling
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            try:
                await asyncio.wait_for(self._process.wait(), 20)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()
        if self._drain is not None:
            self._drain.cancel()


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
