"""The stdio transport (``harness/mcp/stdio.py``): Ctrl-C stops ``webmcp-harness mcp URL``.

The SDK's own stdin reader blocks in a worker thread, so SIGINT waited for the client's
next line: the server kept running, its browser open. Stopped by SIGINT, the server exits
at once with the status the HTTP transport has for it (0: Ctrl-C is how a serving command
ends), its Chromium closed — idle, and with a call in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from harness.mcp.stdio import StdinLines
from tests.console_script import SCRIPT
from tests.interrupts import (
    ON_LINUX,
    SlowSite,
    assert_closed,
    browsers_below,
    restore_sigint,
    serve_slow_site,
)

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not ON_LINUX, reason="reads /proc (Linux only)"),
]

READY_TIMEOUT_S = 120.0  # a busy 2-core machine: Chromium's start and the page's settle
EXIT_TIMEOUT_S = 15.0  # the bug: still running 25 s after SIGINT, until a line arrived


@pytest.fixture
async def slow_site() -> AsyncIterator[SlowSite]:
    async with serve_slow_site() as site:
        yield site


class StdioServer:
    """``webmcp-harness mcp URL`` over stdio, spoken to in JSON-RPC lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = 0

    async def send(self, method: str, params: dict[str, Any] | None = None) -> int | None:
        """Send a request (its id returned) or, for ``notifications/…``, a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        request_id = None
        if not method.startswith("notifications/"):
            self._ids += 1
            request_id = message["id"] = self._ids
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        return request_id

    async def answer(self, request_id: int | None) -> dict[str, Any]:
        """The response to ``request_id`` (notifications on the way are skipped)."""
        assert self.process.stdout is not None
        async with asyncio.timeout(READY_TIMEOUT_S):
            while True:
                line = await self.process.stdout.readline()
                assert line, "the server closed stdout"
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == request_id:
                    return message

    async def ready(self) -> None:
        """Initialized, and the page's tools listed (the listing waits for the page)."""
        initialize = await self.send(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        assert "result" in await self.answer(initialize)
        await self.send("notifications/initialized")
        listed = await self.answer(await self.send("tools/list"))
        assert "slow" in [tool["name"] for tool in listed["result"]["tools"]], listed

    async def interrupt(self) -> tuple[int, str, dict[int, str]]:
        """Send SIGINT; the exit status, stderr and the Chromium processes it had then.
        Fails when the server is still running :data:`EXIT_TIMEOUT_S` later."""
        browsers = browsers_below(self.process.pid)
        self.process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(self.process.wait(), EXIT_TIMEOUT_S)
        except TimeoutError:
            pytest.fail(f"still running {EXIT_TIMEOUT_S:.0f} s after SIGINT")
        assert self.process.stderr is not None
        stderr = (await self.process.stderr.read()).decode()
        assert self.process.returncode is not None
        return self.process.returncode, stderr, browsers


@contextlib.asynccontextmanager
async def stdio_server(url: str) -> AsyncIterator[StdioServer]:
    process = await asyncio.create_subprocess_exec(
        SCRIPT,
        "mcp",
        url,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=restore_sigint,
    )
    try:
        yield StdioServer(process)
    finally:
        if process.returncode is None:
            browsers = browsers_below(process.pid)
            process.kill()
            await process.wait()
            for pid in browsers:  # what the kill orphaned
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


# -- the tests -----------------------------------------------------------------------------


async def interrupted(server: StdioServer) -> None:
    """SIGINT stops ``server`` at once: status 0 (as over HTTP), no traceback, its browser
    closed."""
    code, stderr, browsers = await server.interrupt()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    await assert_closed(browsers, "the server")


async def test_sigint_stops_an_idle_stdio_server(slow_site: SlowSite) -> None:
    async with stdio_server(slow_site.url) as server:
        await server.ready()
        await interrupted(server)


async def test_sigint_stops_a_stdio_server_with_a_call_in_flight(slow_site: SlowSite) -> None:
    async with stdio_server(slow_site.url) as server:
        await server.ready()
        await server.send("tools/call", {"name": "slow", "arguments": {}})
        await asyncio.wait_for(slow_site.started.wait(), READY_TIMEOUT_S)
        await interrupted(server)


async def test_stdin_lines_are_read_whole_and_a_cancel_stops_the_wait() -> None:
    reading, writing = os.pipe()
    try:
        lines = StdinLines(reading)
        os.write(writing, b'{"a": 1}\n{"b":')
        assert await asyncio.wait_for(anext(lines), 10) == '{"a": 1}\n'
        waiting = asyncio.ensure_future(anext(lines))
        await asyncio.sleep(0.1)
        assert not waiting.done()  # half a line: nothing to give yet
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 1)  # at once, though the reader still blocks
        os.write(writing, b" 2}\n\xff\nlast")
        os.close(writing)
        writing = -1
        rest = [line async for line in lines]
        assert rest == ['{"b": 2}\n', "\ufffd\n", "last"]
    finally:
        for fd in (reading, writing):
            if fd >= 0:
                os.close(fd)


async def test_a_line_longer_than_many_reads_comes_whole_with_the_lines_around_it() -> None:
    big = b'{"x": "' + b"y" * 1_000_000 + b'"}'
    data = b"\n" + big + b"\n\nshort\n" + big
    reading, writing = os.pipe()
    lines = StdinLines(reading)
    writer = threading.Thread(target=_write_all, args=(writing, data))
    writer.start()
    try:
        got = [line async for line in lines]
    finally:
        writer.join()
        os.close(reading)
    assert [len(line) for line in got] == [1, len(big) + 1, 1, 6, len(big)]
    assert got[1] == big.decode() + "\n" and got[3] == "short\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:7777]) :]
    os.close(fd)
