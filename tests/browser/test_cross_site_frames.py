"""A cross-site frame (another site than the top page's: Chromium gives it a renderer
process of its own, an out-of-process iframe) offers the tools it exposes to the top
origin, when the `tools` policy lets it register them — on both backends, as Chromium
offers them to the top document itself (`getTools({fromOrigins})`). Found from outside:
the native backend followed only the page's own CDP target, so such a frame's tools never
appeared; the existing delegation tests use same-site origins (127.0.0.1 on another port),
whose frames share the top's process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from harness import Harness, Session
from harness.errors import UnknownTool
from tests.conftest import serve_pages

TOP = """<!doctype html><meta charset="utf-8"><title>top</title><body>
<script>
  document.modelContext.registerTool({name: "top_tool", description: "The site's own tool.",
    inputSchema: {type: "object", properties: {}}, execute: () => "top ran"});
</script>
<iframe allow="tools" src="__FAR__/exposed.html"></iframe>
<iframe allow="tools" src="__FAR__/unexposed.html"></iframe>
</body>"""

# A cross-site frame's page: one script tool, exposed to `__TO__` (or to no one); the page
# notes what its registerTool() said.
CHILD = """<!doctype html><meta charset="utf-8"><body>
<script>
  window.registered = "pending";
  document.modelContext.registerTool(
    {name: "__N__", description: "A tool of a cross-site frame.",
     inputSchema: {type: "object", properties: {n: {type: "number"}}},
     execute: ({n}) => "__N__ ran with " + n + " at " + location.origin},
    __OPTIONS__,
  ).then(() => { window.registered = "ok"; }, (error) => { window.registered = error.name; });
</script>"""


def child(name: str, options: str) -> str:
    return CHILD.replace("__N__", name).replace("__OPTIONS__", options)


@pytest.fixture
async def origins() -> AsyncIterator[tuple[str, str]]:
    """The top page's origin and the cross-site frames' (`localhost` at the same port)."""
    pages: dict[str, str] = {}
    async with serve_pages(pages) as top:
        far = top.replace("127.0.0.1", "localhost")
        pages.update(
            {
                "": TOP.replace("__FAR__", far),
                "exposed.html": child("far_tool", f'{{exposedTo: ["{top}"]}}'),
                "unexposed.html": child("far_hidden", "{}"),
            }
        )
        yield top, far


async def registered(session: Session, far: str) -> list[str]:
    """What each cross-site frame's registerTool() said, once both said it."""
    said: list[str] = []
    for _ in range(100):
        said = []
        for frame in session.page.frames[1:]:
            if frame.url.startswith(far):
                said.append(await frame.evaluate("window.registered"))
        if len(said) == 2 and "pending" not in said:
            break
        await asyncio.sleep(0.1)
    return said


async def test_a_cross_site_frame_offers_the_tools_it_exposes_to_the_top(
    backend_harness: Harness, origins: tuple[str, str]
) -> None:
    top, far = origins
    session = await backend_harness.open(top + "/")
    try:
        # Both frames are allowed to register (allow="tools" for their src origin).
        assert await registered(session, far) == ["ok", "ok"]
        await session.wait_for_tool("far_tool", timeout=10)
        tools = {t.name: t for t in await session.tools()}
        assert set(tools) == {"top_tool", "far_tool"}
        assert tools["far_tool"].origin == far
        # What the top document itself is offered (Chromium's getTools() on native): the
        # same tools, the unexposed one left out.
        offered = await session.page.evaluate(
            "(origins) => document.modelContext.getTools({fromOrigins: origins})"
            ".then((tools) => tools.map((t) => t.name).sort())",
            [top, far],
        )
        assert offered == sorted(tools)
        outcome = await session.call("far_tool", {"n": 3})
        assert not outcome.is_error, outcome
        assert f"far_tool ran with 3 at {far}" in str(outcome.result.content[0])
        with pytest.raises(UnknownTool):
            await session.call("far_hidden", {"n": 1})
    finally:
        await session.close()


MOVING_TOP = """<!doctype html><meta charset="utf-8"><title>top</title><body>
<iframe id="moving" allow="tools"></iframe>
</body>"""


async def offered_after(session: Session, name: str) -> set[str]:
    """The names offered once ``name`` is (or the wait ran out)."""
    names: set[str] = set()
    for _ in range(100):
        names = {t.name for t in await session.tools()}
        if name in names:
            break
        await asyncio.sleep(0.1)
    return names


async def test_a_frame_moving_between_processes_offers_the_tools_of_each_document(
    backend_harness: Harness,
) -> None:
    """The iframe's `src` set to another site moves the frame into a process of its own,
    set back it returns into the page's, and again to another process: each time the
    frame's document is the one whose tools are offered and run. (The frame starts empty:
    were its first `src` the first step's, setting it again would reload the document whose
    tool is already offered, and the call could meet that reload.)"""
    pages: dict[str, str] = {}
    async with serve_pages(pages) as top:
        far = top.replace("127.0.0.1", "localhost")
        pages.update(
            {
                "": MOVING_TOP,
                "same.html": child("near_tool", "{}"),
                "exposed.html": child("far_tool", f'{{exposedTo: ["{top}"]}}'),
            }
        )
        session = await backend_harness.open(top + "/")
        try:
            for src, name, origin in (
                ("/same.html", "near_tool", top),
                (f"{far}/exposed.html", "far_tool", far),
                ("/same.html", "near_tool", top),
                (f"{far}/exposed.html", "far_tool", far),
            ):
                await session.page.evaluate("(src) => { moving.src = src; }", src)
                assert await offered_after(session, name) == {name}, src
                outcome = await session.call(name, {"n": 1})
                assert not outcome.is_error, outcome
                assert f"{name} ran with 1 at {origin}" in str(outcome.result.content[0])
        finally:
            await session.close()
