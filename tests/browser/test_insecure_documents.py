"""A document that is not a secure context (a ``data:`` frame of an ordinary page; an
``http://`` page on a host that is not loopback) has no WebMCP, in Chromium and under the
harness alike, and the harness's script must not be seen there at all. (Found from
outside: the injected script threw an uncaught TypeError in every such document —
``crypto.randomUUID()`` is [SecureContext]-only — so a QA suite asserting "no page errors"
failed on a page that made none, and the rest of the script never ran.)"""

from __future__ import annotations

import asyncio
from typing import Any

from harness import Harness
from tests.conftest import serve_pages

TOP = """<!doctype html><meta charset="utf-8"><title>shop</title><body><h1>shop</h1>
<iframe src="data:text/html,<p>an ad in a data: frame</p>"></iframe></body>"""


async def test_an_insecure_frame_gets_no_error_from_the_harness(backend_harness: Harness) -> None:
    async with serve_pages({"": TOP}) as origin:
        session = await backend_harness.open("about:blank")
        errors: list[str] = []
        session.page.on("pageerror", lambda error: errors.append(str(error)))
        try:
            await session.page.goto(origin + "/")
            frame = session.page.frames[1]
            seen: dict[str, Any] = {}
            for _ in range(50):
                seen = await frame.evaluate(
                    """() => ({secure: isSecureContext, webmcp: typeof document.modelContext,
                              agentInvoked: 'agentInvoked' in SubmitEvent.prototype})"""
                )
                if seen["agentInvoked"]:
                    break
                await asyncio.sleep(0.05)
            await session.page.wait_for_timeout(300)
            assert errors == []
            # As in Chromium: no WebMCP in an insecure document, but SubmitEvent keeps its
            # member (the script ran to its end there).
            assert seen == {"secure": False, "webmcp": "undefined", "agentInvoked": True}
        finally:
            await session.close()
