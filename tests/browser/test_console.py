"""A page's console as the browser has it (``harness/browser/console.py``): the text of each
message as Playwright writes it, and the origin of what logged it.

(The origins of frames of every kind, through the MCP bridge: ``tests/mcp/test_mcp_console.py``.)
"""

from __future__ import annotations

import asyncio

import pytest

from harness import Harness
from harness.browser.backends.polyfill import ChannelBackend
from harness.browser.console import ConsoleMessage, PageConsole, text_of
from tests.conftest import serve_pages

pytestmark = pytest.mark.timeout(120)

PAGE = """<!doctype html><meta charset="utf-8"><title>console values</title>
<script>
window.say = () => {
  console.log("text", 1, -0, 1.5, 1e21, 1e-7, 2 ** 53 + 2, NaN, -Infinity, true, null, undefined);
  console.info({a: 1, b: "x", c: {d: 2}}, [1, , , 4], [], [, 2], new Map([[1, 2]]));
  console.warn(document.body, () => 1, Symbol("s"), new Error("boom").name, /re/g);
};
</script>"""


async def test_a_message_reads_as_playwright_writes_it(backend_harness: Harness) -> None:
    async with serve_pages({"": PAGE}) as origin:
        session = await backend_harness.open(origin + "/")
        try:
            assert isinstance(session.backend, ChannelBackend)
            heard: list[ConsoleMessage] = []
            written: list[str] = []
            session.page.on("console", lambda message: written.append(message.text))
            console = PageConsole(session.page, session.backend.channel, heard.append)
            console.start()
            try:
                await session.page.evaluate("window.say()")
                async with asyncio.timeout(10):
                    while len(heard) < 3 or len(written) < 3:
                        await asyncio.sleep(0.05)
            finally:
                console.stop()
        finally:
            await session.close()
    assert [m.text for m in heard] == written
    assert [m.type for m in heard] == ["log", "info", "warning"]
    assert {m.origin for m in heard} == {origin}


def test_a_bigint_reads_as_javascript_writes_it() -> None:
    # (Playwright's own text has "undefined" for one: its preview drops BigInts.)
    bigints = [{"type": "bigint", "unserializableValue": v} for v in ("10n", "-7n")]
    assert text_of(bigints) == "10 -7"
