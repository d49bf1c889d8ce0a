"""What a call did to the page is read where the page cannot hide it, within a time limit
(issue 24, point 6): the fuzzer (and the audit's ``--fuzz``) reads storage and form
controls in an isolated world. The page (``tests/pages/x_observe_hostile.html``) patches
``Storage`` and ``querySelectorAll``, then blocks its main thread; both backends. And what
the page changes by itself is told from what a call changed (states the tests write)."""

from __future__ import annotations

import asyncio

import pytest

from harness import Session
from harness.qa.observe import FrameState, OwnChanges, PageState, page_state

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


def state(url: str = "http://a.test/", document: str = "1", **local: str) -> PageState:
    """A page of one frame whose localStorage holds ``local``."""
    frame = FrameState(local=local, session={}, controls=(), text="", document=document)
    return PageState(url=url, frames={url: frame}, cookies=())


def test_what_changes_with_nothing_called_is_the_page_s_own_and_left_out() -> None:
    own = OwnChanges()
    own.seen(state(beat="1"), state(beat="2"))
    assert own.described() == "localStorage['beat']"
    after = state(beat="3", sku="ABC")
    assert state(beat="2").storage_changes(after, ignoring=own.places) == [
        "localStorage['sku'] changed"
    ]


def test_a_document_loaded_between_two_reads_is_no_change_of_the_page_s_own() -> None:
    own = OwnChanges()
    own.seen(state(beat="1"), state(document="2", beat="2"))
    assert own.places == {}


def test_the_top_frame_is_compared_whatever_url_the_history_api_gave_it() -> None:
    before, after = state(beat="1"), state("http://a.test/?q=x", beat="2")
    assert before.storage_changes(after) == ["localStorage['beat'] changed"]
