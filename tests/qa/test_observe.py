"""What a call did to the page is read where the page cannot hide it, within a time limit
(issue 24, point 6): the fuzzer (and the audit's ``--fuzz``) reads storage and form
controls in an isolated world. The page (``tests/pages/x_observe_hostile.html``) patches
``Storage`` and ``querySelectorAll``, then blocks its main thread; both backends."""

from __future__ import annotations

import asyncio

import pytest

from harness import Session
from harness.qa.observe import page_state

PAGE = "x_observe_hostile.html"

pytestmark = pytest.mark.timeout(120)


async def test_the_page_state_is_read_as_it_is_not_as_the_page_patched_itself(
    page_session: Session,
) -> None:
    state = await asyncio.wait_for(page_state(page_session), 30)
    [frame] = state.frames.values()
    assert frame.local == {"cart": "3 apples"}
    assert frame.controls == (("qty", "3"),)


async def test_a_page_that_never_yields_leaves_the_read_in_time(page_session: Session) -> None:
    await page_session.page.evaluate("wedge()")
    state = await asyncio.wait_for(page_state(page_session, timeout=1.0), 30)
    assert state.frames == {}  # the frame that cannot answer is left out, in time
