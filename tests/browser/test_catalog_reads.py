"""Re-reading a page's catalog costs little when little changed, on both backends.

A frame reports its whole registry at every change, and every listing reads it whole
again; the harness keeps the Tool it built from a snapshot for as long as the snapshot comes
back unchanged, and a catalog told the very same tools again does not merge them again.
These tests count (Tool models built, channel commands sent), never time.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Frame

from harness import BrowserPool, Harness
from harness.browser.backends.polyfill import ChannelBackend
from harness.session import Session
from tests.conftest import PageServer

BACKENDS = ["polyfill", "native"]
NAMES = ["alpha", "beta", "find", "gamma"]


@pytest.fixture(scope="module", params=BACKENDS)
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture
async def session(harness: Harness, page_server: PageServer) -> AsyncIterator[Session]:
    s = await harness.open(page_server.url("dc_catalog.html"))
    try:
        yield s
    finally:
        await s.close()


def backend_of(session: Session) -> ChannelBackend:
    assert isinstance(session.backend, ChannelBackend)
    return session.backend


async def test_an_unchanged_catalog_is_read_without_building_a_tool(session: Session) -> None:
    assert [t.name for t in await session.tools()] == NAMES
    backend = backend_of(session)
    built = backend.builds.built
    before = {t.name: t for t in session.catalog.tools()}
    for _ in range(3):
        assert [t.name for t in await session.tools()] == NAMES
    assert backend.builds.built == built
    # The very same Tool objects are offered, not equal copies.
    assert all(t is before[t.name] for t in session.catalog.tools())


async def test_a_new_tool_is_the_only_one_built(session: Session) -> None:
    await session.tools()
    backend = backend_of(session)
    before = {t.name: t for t in session.catalog.tools()}
    built = backend.builds.built
    await session.page.evaluate("window.addLate()")
    late = await session.wait_for_tool("late")
    await session.tools()
    assert late.description == "Registered later"
    assert [t.name for t in session.catalog.tools()] == sorted([*NAMES, "late"])
    assert backend.builds.built > built
    # Every other tool is the very Tool built before, not rebuilt.
    assert all(t is before[t.name] for t in session.catalog.tools() if t.name != "late")


async def test_a_changed_form_is_built_again_and_nothing_else(session: Session) -> None:
    await session.tools()
    before = {t.name: t for t in session.catalog.tools()}
    await session.page.evaluate("window.renameForm()")
    for _ in range(100):
        if (await session.tool("find")).description == "Finds other things":
            break
        await session.page.wait_for_timeout(50)
    assert (await session.tool("find")).description == "Finds other things"
    assert all(t is before[t.name] for t in session.catalog.tools() if t.name != "find")


async def test_a_form_s_new_title_is_read_at_the_next_listing(session: Session) -> None:
    """The form's title is the layer's (CDP has none): what the layer keeps of the forms is
    read again once the DOM changed, and only then."""
    assert (await session.tool("find")).title is None
    await session.page.evaluate("window.retitleForm()")
    assert (await session.tool("find")).title == "Finder"


async def test_a_listing_is_one_command_per_frame(session: Session) -> None:
    """The native backend reads Chromium's registry in the same command as the layer's
    records (not a second round trip); the polyfill reads its registry once."""
    backend = backend_of(session)
    sent: list[dict[str, Any]] = []
    command = backend.channel.command

    async def counting(frame: Frame, message: dict[str, Any], **options: Any) -> Any:
        sent.append(message)
        return await command(frame, message, **options)

    backend.channel.command = counting  # type: ignore[method-assign]
    try:
        await session.tools()
    finally:
        backend.channel.command = command  # type: ignore[method-assign]
    frames = len(session.page.frames)
    assert [m["op"] for m in sent] == ["list"] * frames
    if session.backend_name == "native":
        assert all(m.get("registry") is True for m in sent)


async def test_a_listing_of_an_unchanged_document_is_answered_unchanged(session: Session) -> None:
    """CHANNEL.md "State versions": a listing names the versions the catalog holds, and a
    document still at those versions sends nothing back; a change gets a full answer."""
    backend = backend_of(session)
    await session.tools()
    await session.tools()  # the catalog now holds the document as read directly
    answers: list[Any] = []
    command = backend.channel.command

    async def recording(frame: Frame, message: dict[str, Any], **options: Any) -> Any:
        answer = await command(frame, message, **options)
        if message["op"] == "list":
            answers.append((message.get("known"), answer))
        return answer

    backend.channel.command = recording  # type: ignore[method-assign]
    try:
        assert [t.name for t in await session.tools()] == NAMES
        assert answers and all(known is not None for known, _ in answers)
        assert all(answer == '{"unchanged":true}' for _, answer in answers)
        held = {known["version"] for known, _ in answers}
        answers.clear()
        await session.page.evaluate(
            """() => document.modelContext.registerTool(
                {name: 'delta', description: 'd', execute: () => 'ok'})"""
        )
        assert [t.name for t in await session.tools()] == sorted([*NAMES, "delta"])
        # Unchanged only against the new version (learned from the page's own report, or
        # from a full answer): never against the one before the registration.
        for known, answer in answers:
            assert answer != '{"unchanged":true}' or known["version"] not in held
    finally:
        backend.channel.command = command  # type: ignore[method-assign]


async def test_a_page_loaded_again_builds_nothing_again(session: Session) -> None:
    """Each document numbers its script tools' registrations afresh; the rest of each
    snapshot is the same when the same page loads again, so no tool is built again, and
    every tool carries its new document's number: a call runs (a stale number would be
    refused as a tool registered again)."""
    backend = backend_of(session)
    first = {t.name: t.registration for t in await session.tools()}
    built = backend.builds.built
    await session.open(session.url)
    again = {t.name: t.registration for t in await session.tools()}
    assert backend.builds.built == built
    assert again.keys() == first.keys()
    for name in ("alpha", "beta", "gamma"):
        assert isinstance(again[name], int) and again[name] != first[name]
    assert again["find"] is None  # a form has no registration number
    outcome = await session.call("alpha", {"x": "hi"})
    assert not outcome.result.is_error, outcome.result
    assert "alpha" in outcome.result.content[0].text  # framed as the page's data


async def test_the_reads_asked_for_while_one_is_under_way_share_the_next(
    session: Session,
) -> None:
    """A navigation's own read, Playwright's, the layer report's and the listing's are
    asked for while one is under way (a frame's reads go one at a time): they share the
    next read, not one each (on the polyfill, a page that navigates within its document
    without pause asks for one each time: they queued up without end)."""
    backend = backend_of(session)
    assert [t.name for t in await session.tools()] == NAMES
    native = session.backend_name == "native"
    if native:
        cdp_id = backend._cdp_id(session.page.main_frame)  # type: ignore[attr-defined]
        assert cdp_id is not None

    async def read() -> None:
        if native:
            await backend._publish(cdp_id, direct=True)  # type: ignore[attr-defined]
        else:
            await backend._relist(session.page.main_frame)  # type: ignore[attr-defined]

    sent: list[dict[str, Any]] = []
    command = backend.channel.command

    async def counting(frame: Frame, message: dict[str, Any], **options: Any) -> Any:
        if frame is session.page.main_frame and message.get("op") == "list":
            sent.append(message)
        return await command(frame, message, **options)

    backend.channel.command = counting  # type: ignore[method-assign]
    try:
        await asyncio.gather(*(read() for _ in range(5)))
    finally:
        backend.channel.command = command  # type: ignore[method-assign]
    # The first read at once; the four asked for while it ran share one after it.
    assert len(sent) == 2, sent
    assert all((m.get("registry") is True) == native for m in sent)
    assert [t.name for t in await session.tools()] == NAMES


async def test_a_listing_does_not_carry_again_the_tools_the_harness_holds(
    session: Session,
) -> None:
    """CHANNEL.md `list`'s `knownTools`: a listing that names the version of the tools the
    harness holds (the page's last report) gets `tools: null` back, and the harness uses the
    snapshots it holds; any other version gets the texts (a navigation's read follows the
    report of the whole registry: it need not carry it again)."""
    if session.backend_name != "native":
        pytest.skip("the polyfill builds from the page's report itself, without a listing")
    backend = backend_of(session)
    frame = session.page.main_frame
    assert [t.name for t in await session.tools()] == NAMES
    state = await backend.channel.command(frame, {"op": "state"})
    known = {"op": "list", "registry": True, "knownTools": state["version"]}
    answer = json.loads(await backend.channel.command(frame, known))
    assert answer["tools"] is None and answer["version"] == state["version"]
    assert sorted(entry["name"] for entry in answer["registry"]) == NAMES
    other = {"op": "list", "knownTools": state["version"] + "0"}
    texts = json.loads(await backend.channel.command(frame, other))["tools"]
    assert sorted(json.loads(text)["name"] for text in texts) == NAMES

    # The harness's side: a read that names the version it holds fills the texts in.
    cdp_id = backend._cdp_id(frame)  # type: ignore[attr-defined]
    assert cdp_id is not None
    backend._versions.pop(frame, None)  # else the read is answered `unchanged`
    held = backend._reports[cdp_id]  # type: ignore[attr-defined]
    assert held["version"] == state["version"]
    sent: list[Any] = []
    command = backend.channel.command

    async def recording(frame: Frame, message: dict[str, Any], **options: Any) -> Any:
        answer = await command(frame, message, **options)
        sent.append((message, answer))
        return answer

    backend.channel.command = recording  # type: ignore[method-assign]
    try:
        listing, _ = await backend._read(frame, cdp_id, direct=True)  # type: ignore[attr-defined]
    finally:
        backend.channel.command = command  # type: ignore[method-assign]
    [(message, raw)] = sent
    assert message["knownTools"] == state["version"]
    assert json.loads(raw)["tools"] is None
    assert listing["tools"] == held["tools"]
    assert [t.name for t in await session.tools()] == NAMES
