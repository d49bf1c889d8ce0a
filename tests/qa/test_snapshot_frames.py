"""How a snapshot taken from a live page names its frames: a frame the page loads with a query
new on every load (``widget.html?cb=<Date.now()>``, to bust a cache) keeps its name, so an
unchanged page diffs clean and a real change of its tools gates."""

from __future__ import annotations

import json

from harness import BrowserPool, Harness
from harness.catalog import Settle
from harness.qa.drift import diff_catalogs
from harness.qa.snapshot import CatalogSnapshot, snapshot_of
from tests.qa.pages import page, serve

MAIN = """
const frame = document.createElement("iframe");
frame.src = "widget.html?cb=" + Date.now() + "#x";
document.body.append(frame);
"""


def widget(max_length: int) -> str:
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": max_length}},
        "required": ["text"],
    }
    return page(
        'document.modelContext.registerTool({name: "send_message", description: "Sends a '
        f'chat message.", inputSchema: {json.dumps(schema)}, execute: async () => ({{}})}});'
    )


async def test_a_frame_with_a_cache_busting_query_is_named_by_its_path(
    browser_pool: BrowserPool,
) -> None:
    async with (
        serve({"/": page(MAIN), "/widget.html": widget(100)}) as server,
        Harness(browsers=browser_pool, settle=Settle.quiet_ms(100)) as harness,
    ):

        async def snapshot() -> CatalogSnapshot:
            session = await harness.open(server.url("/"))
            try:
                await session.wait_for_tool("send_message")
                return snapshot_of(await session.tools(), session.url)
            finally:
                await session.close()

        first = await snapshot()
        assert [(t.origin, t.frame) for t in first.tools] == [("self", "/widget.html")]
        assert diff_catalogs(first, await snapshot()).changes == []
        server.pages["/widget.html"] = widget(100000)  # the next release widens maxLength
        [change] = diff_catalogs(first, await snapshot()).changes
        assert (change.kind, change.severity, change.tool) == (
            "input-widened",
            "fail",
            "send_message (/widget.html)",
        )
