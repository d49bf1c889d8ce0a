"""``harness.browser.injection``: the private channel's commands, when the page dies."""

from __future__ import annotations

import asyncio
import gc
import json
from types import SimpleNamespace
from typing import Any

import pytest

from harness.browser.injection import ChannelKeys, FrameGone, PageChannel


async def test_a_command_abandoned_mid_flight_leaves_no_unretrieved_error() -> None:
    # A call whose page broke is abandoned (its task cancelled) while its CDP command is in
    # flight; the dead page fails that command later. Its error must be retrieved, not
    # printed as "Task exception was never retrieved" with a traceback (the selftest's
    # stderr had one after its browser_killed scenario).
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    channel = PageChannel(ChannelKeys(), "polyfill")
    channel._broken = loop.create_future()
    gate: asyncio.Future[None] = loop.create_future()

    async def send() -> dict[str, Any]:  # stands for CDPSession.send to a page that dies
        await gate
        raise RuntimeError("Target page, context or browser has been closed")

    waiting = asyncio.ensure_future(channel._unless_broken(send()))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    # The dead page's answer comes later, as Playwright delivers it: to a command still
    # waited for (a cancelled one's is dropped).
    if not gate.done():
        gate.set_result(None)
    await asyncio.sleep(0.01)
    gc.collect()
    await asyncio.sleep(0.01)
    loop.set_exception_handler(None)
    assert not reported, reported


async def test_a_command_in_flight_when_the_page_breaks_fails_at_once() -> None:
    # The command is awaited in the caller's own task (no task per command): fail() ends
    # it where it waits, with FrameGone naming why, and later commands fail before sending.
    loop = asyncio.get_running_loop()
    channel = PageChannel(ChannelKeys(), "polyfill")
    channel._broken = loop.create_future()
    never: asyncio.Future[dict[str, Any]] = loop.create_future()
    waiting = asyncio.ensure_future(channel._unless_broken(never))
    await asyncio.sleep(0.01)
    channel.fail("the page crashed")
    with pytest.raises(FrameGone, match="the page crashed"):
        await waiting
    assert waiting.cancelling() == 0  # the cancellation that ended it was taken back

    async def send() -> dict[str, Any]:
        raise AssertionError("a command to a broken page is not sent")

    with pytest.raises(FrameGone, match="the page crashed"):
        await channel._unless_broken(send())


async def test_an_authenticated_message_from_another_page_is_dropped() -> None:
    # The binding is the session's page's own; should a message of another page of the
    # context (a popup) reach it anyway, it writes nothing: the frame's page decides.
    keys = ChannelKeys()
    channel = PageChannel(keys, "polyfill")
    heard: list[tuple[object, dict[str, Any]]] = []
    own, other = object(), object()
    channel._handler = lambda frame, message: heard.append((frame, message))
    channel._page = own  # type: ignore[assignment]
    message = json.dumps({"secret": keys.secret, "type": "tools", "tools": []})
    popup_frame, own_frame = SimpleNamespace(page=other), SimpleNamespace(page=own)
    await channel._on_binding({"frame": popup_frame}, message)
    assert heard == [] and channel.other_pages == 1 and channel.rejected == 0
    await channel._on_binding({"frame": own_frame}, message)
    assert heard == [(own_frame, {"type": "tools", "tools": []})]


async def test_a_command_waiting_for_a_hello_wakes_when_it_comes() -> None:
    """A command to a document that has not said hello yet waits for its hello (or its
    context): woken by it, not by the next tick of a poll. The waiter here would sleep
    ten seconds otherwise."""
    channel = PageChannel(ChannelKeys(), "polyfill")
    loop = asyncio.get_running_loop()
    started = loop.time()
    waiting = asyncio.ensure_future(channel._next_arrival(10.0))
    await asyncio.sleep(0)  # the waiter is registered
    channel._arrived()
    await asyncio.wait_for(waiting, 5.0)
    assert loop.time() - started < 5.0
    assert not channel._arrival_waiters  # nothing left behind
    # With nothing arriving, it gives up after its timeout.
    await asyncio.wait_for(channel._next_arrival(0.01), 5.0)
    assert not channel._arrival_waiters
