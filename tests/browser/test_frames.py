"""Frames through a session, on both backends: which frames' tools the catalog offers and
how calls reach them, across navigations."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import Harness, Session
from tests.conftest import PageServer

BACKENDS = ["polyfill", "native"]


@pytest.fixture(scope="module", params=BACKENDS)
async def harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    async with Harness(backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture
async def session(harness: Harness) -> AsyncIterator[Session]:
    s = await harness.new_session()
    yield s
    await s.close()


def text(outcome: object) -> str:
    result = outcome.result  # type: ignore[attr-defined]
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def test_same_origin_and_srcdoc_frames_offer_their_tools(
    session: Session, page_server: PageServer
) -> None:
    await session.open(page_server.url("f_reused.html"))
    tool = await session.wait_for_tool("srcdoc_tool", timeout=10)
    # A srcdoc document has its parent's origin (HTML), not the opaque origin of its URL.
    assert tool.origin == page_server.origin
    await session.wait_for_tool("child_tool_reused", timeout=10)
    names = {t.name for t in await session.tools()}
    assert {"top_form", "child_form_reused", "child_tool_reused"} <= names
    assert {"srcdoc_tool", "srcdoc_form"} <= names
    assert "srcdoc tool ran" in text(await session.call("srcdoc_tool"))
    assert "child tool ran in reused with 4" in text(
        await session.call("child_tool_reused", {"n": 4})
    )


async def test_frame_tools_stay_callable_after_the_session_navigated(
    session: Session, page_server: PageServer
) -> None:
    for page, which in (("f_reused.html", "reused"), ("f_touched.html", "touched")):
        await session.open(page_server.url(page))
        await session.wait_for_tool(f"child_tool_{which}", timeout=10)
        outcome = await session.call(f"child_tool_{which}", {"n": 1})
        assert not outcome.is_error, text(outcome)
        assert f"child tool ran in {which} with 1" in text(outcome)
