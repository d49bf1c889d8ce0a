"""The native backend follows Chromium's registry without an event per registration.

While a top-level document loads, the ``WebMCP`` domain is off: a page that registers 60
tools as it loads costs one ``toolsAdded`` event (the whole registry, when the domain is
turned on again), not 60, each crossing Playwright's driver. Off, the domain still brings
the answer of a form's call (CDP's ``toolResponded``, its only answer). These tests count
events and check answers, never time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from harness import Harness
from harness.browser.backends.native import NativeBackend
from tests.conftest import PageServer

pytestmark = pytest.mark.native

TOOLS = [f"t{i:02d}" for i in range(60)]


@pytest.fixture(scope="module")
async def harness() -> AsyncIterator[Harness]:
    async with Harness(backend="native", call_timeout=10) as h:
        yield h


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of tools in each ``toolsAdded`` event of the sessions opened after."""
    seen: list[int] = []
    original: Callable[[NativeBackend, dict[str, Any]], None] = NativeBackend._on_tools_added

    def counting(self: NativeBackend, params: dict[str, Any]) -> None:
        seen.append(len(params.get("tools") or []))
        original(self, params)

    monkeypatch.setattr(NativeBackend, "_on_tools_added", counting)
    return seen


async def test_tools_registered_while_the_page_loads_come_in_one_event(
    harness: Harness, page_server: PageServer, events: list[int]
) -> None:
    session = await harness.open(page_server.url("ne_many.html"))
    try:
        assert sorted(t.name for t in await session.tools()) == ["slow_form", *TOOLS]
        assert len(events) == 1 and events[0] == len(TOOLS) + 1, events
        outcome = await session.call("t42")
        assert outcome.result.structured_content == {"i": 42}
    finally:
        await session.close()


async def test_a_form_answers_while_the_page_starts_a_navigation_that_never_commits(
    harness: Harness, page_server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The top-level frame starts loading (a 204 in 1.5 s) while the form's call runs: the
    # domain goes off, and the form's answer (300 ms in) comes all the same.
    seen: list[str] = []
    switch, respond = NativeBackend._events, NativeBackend._on_responded

    async def switching(self: NativeBackend, *, on: bool) -> None:
        seen.append("on" if on else "off")
        await switch(self, on=on)

    def responding(self: NativeBackend, params: dict[str, Any]) -> None:
        seen.append("answer")
        respond(self, params)

    monkeypatch.setattr(NativeBackend, "_events", switching)
    monkeypatch.setattr(NativeBackend, "_on_responded", responding)
    session = await harness.open(page_server.url("ne_many.html"))
    try:
        seen.clear()
        outcome = await session.call("slow_form", {"q": "x"}, timeout=8)
        assert not outcome.result.is_error, outcome.result
        assert outcome.result.structured_content == {"answered": True}
        assert seen[: seen.index("answer") + 1] == ["off", "answer"], seen
    finally:
        await session.close()
