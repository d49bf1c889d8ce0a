"""Reading a page the audit does not trust: in a world the page cannot patch, within a time
limit.

A page's own script can replace anything reachable from its JavaScript world —
``Document.prototype.querySelectorAll``, ``RegExp``, ``Array.prototype.map`` — so a read run
there can be lied to (forms hidden from the lints) or never return (``conformance site`` hung
for ever on such a page). So the audit never evaluates in the page's world:

- DOM reads run in an **isolated world** of each frame (CDP ``Page.createIsolatedWorld``, the
  mechanism extensions' content scripts use): the same DOM, its own pristine globals and
  prototypes, invisible to the page. Frames of other sites run in processes of their own
  (out-of-process iframes); each gets its own CDP session.
- What a frame *registered* is asked of the harness's private channel (the injected script's
  entry point, which holds the page API as it was before any page script ran), never of the
  page's ``document.modelContext``.
- Every read has a time limit (:data:`READ_TIMEOUT_S`): a page whose main thread is stuck
  makes the read fail with :class:`PageReadTimeout`, not hang the audit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession, Frame
from playwright.async_api import Error as PlaywrightError

from harness.browser.backends.polyfill import ChannelBackend
from harness.browser.backends.snapshots import read_listing
from harness.browser.injection import FrameGone
from harness.errors import HarnessError
from harness.session import Session

READ_TIMEOUT_S = 5.0
WORLD_NAME = "webmcp-harness-audit"


class PageReadTimeout(HarnessError):
    """A read of the page did not finish within its time limit (the page's main thread is
    busy, or never yields)."""


@dataclass(frozen=True)
class FrameWorld:
    """An isolated world of one frame: where the audit's functions run."""

    session: CDPSession
    context_id: int
    frame_id: str
    url: str
    top: bool


def _frames(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node["frame"]
    for child in node.get("childFrames") or []:
        yield from _frames(child)


async def _limited(awaitable: Any, timeout: float, what: str) -> Any:
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError as exc:
        raise PageReadTimeout(f"{what}: no answer within {timeout:g} s") from exc


class IsolatedWorlds:
    """Isolated worlds in every frame of a session's page (``async with``: detached after)."""

    def __init__(self, session: Session, timeout: float = READ_TIMEOUT_S) -> None:
        self.session = session
        self.timeout = timeout
        self._cdp: list[CDPSession] = []

    async def __aenter__(self) -> IsolatedWorlds:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for cdp in self._cdp:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(cdp.detach(), self.timeout)
        self._cdp.clear()

    async def worlds(self) -> list[FrameWorld]:
        """One isolated world per frame the page has now (main frame first)."""
        context, page = self.session.context, self.session.page
        sessions = [await context.new_cdp_session(page)]
        for frame in page.frames[1:]:
            with contextlib.suppress(PlaywrightError):  # not out of process: in the page's
                sessions.append(await context.new_cdp_session(frame))
        self._cdp += sessions
        found: dict[str, FrameWorld] = {}
        for cdp in sessions:
            try:
                tree = await _limited(cdp.send("Page.getFrameTree"), self.timeout, "frame tree")
            except (PlaywrightError, PageReadTimeout):
                continue
            for node in _frames(tree["frameTree"]):
                if node["id"] in found:
                    continue
                try:
                    world = await _limited(
                        cdp.send(
                            "Page.createIsolatedWorld",
                            {"frameId": node["id"], "worldName": WORLD_NAME},
                        ),
                        self.timeout,
                        "isolated world",
                    )
                except (PlaywrightError, PageReadTimeout):
                    continue  # a frame of another process: its own session covers it
                found[node["id"]] = FrameWorld(
                    session=cdp,
                    context_id=world["executionContextId"],
                    frame_id=node["id"],
                    url=str(node.get("url", "")) + str(node.get("urlFragment", "")),
                    top=node.get("parentId") is None and cdp is sessions[0],
                )
        return list(found.values())

    async def evaluate(self, world: FrameWorld, function: str, *args: Any) -> Any:
        """``function(...args)`` in ``world``, its result by value; raises
        :class:`PageReadTimeout` past the time limit, PlaywrightError when the frame went."""
        reply = await _limited(
            world.session.send(
                "Runtime.callFunctionOn",
                {
                    "functionDeclaration": function,
                    "executionContextId": world.context_id,
                    "arguments": [{"value": arg} for arg in args],
                    "returnByValue": True,
                    "awaitPromise": True,
                },
            ),
            self.timeout,
            f"a read of {world.url or 'a frame'}",
        )
        details = reply.get("exceptionDetails")
        if details is not None:
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise PlaywrightError(f"the audit's read failed: {text}")
        return (reply.get("result") or {}).get("value")


async def registrations(
    session: Session, frame: Frame, timeout: float = READ_TIMEOUT_S
) -> list[dict[str, Any]]:
    """What ``frame``'s document registered (offered to the agent or not), read through the
    harness's private channel: Chromium's registry on the native backend, the polyfill's
    otherwise. Raises :class:`PageReadTimeout` past the time limit."""
    backend = session.backend
    if not isinstance(backend, ChannelBackend):
        return []
    try:
        answer = await _limited(
            backend.channel.command(frame, {"op": "list", "registry": True}),
            timeout,
            f"the registrations of {frame.url or 'a frame'}",
        )
    except (FrameGone, PlaywrightError):
        return []  # detached, or a document without the harness's script
    listing = read_listing(answer) or {}
    registry = listing.get("registry")
    tools = registry if isinstance(registry, list) else listing.get("tools") or []
    return [tool for tool in tools if isinstance(tool, dict)]
