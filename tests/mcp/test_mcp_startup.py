"""``webmcp-harness mcp`` over stdio answers the handshake while the page still opens.

A client waits for the server it spawned: the ``initialize`` answer does not wait for
the browser to open the page and its catalog to settle; ``tools/list`` does. The page
here holds its catalog open with a request the test answers only after the handshake,
so the order is shown without timing anything.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from aiohttp import web
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import listen

PAGE = """<!doctype html><html><body><script>
const mc = document.modelContext || navigator.modelContext;
fetch("/gate").then(() => mc.registerTool({
  name: "late",
  description: "Registered once the gate opens.",
  inputSchema: {type: "object", properties: {}},
  execute: () => ({content: [{type: "text", text: "ok"}]}),
}));
</script></body></html>"""


async def test_the_handshake_is_answered_before_the_page_settles(tmp_path: Path) -> None:
    gate = asyncio.Event()
    asked = asyncio.Event()

    async def page(_request: web.Request) -> web.StreamResponse:
        return web.Response(text=PAGE, content_type="text/html")

    async def held(_request: web.Request) -> web.StreamResponse:
        asked.set()
        await gate.wait()
        return web.json_response({})

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/gate", held)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    port = await listen(runner)
    errors = tmp_path / "stderr.txt"
    # A long quiet window, so its cap (twice the window) cannot end the wait while the
    # test still holds the gate, however busy the machine.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness.cli", "mcp", f"http://127.0.0.1:{port}/", "--settle", "10000"],
        env=dict(os.environ),
    )
    try:
        with errors.open("w") as errlog:
            async with asyncio.timeout(180):
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                    # Initialized, and the page is not served yet: its catalog is not settled.
                    assert "serving the tools" not in errors.read_text()
                    await asyncio.wait_for(asked.wait(), 60)
                    gate.set()
                    listed = [tool.name for tool in (await client.list_tools()).tools]
                    # The first listing waited for the catalog: the late tool is in it.
                    assert "late" in listed
                    assert "serving the tools" in errors.read_text()
    finally:
        gate.set()
        await runner.cleanup()
