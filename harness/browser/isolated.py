"""Reading a page the harness does not trust: in a world the page cannot patch, within a
time limit.

A page's own script can replace anything reachable from its JavaScript world —
``Document.prototype.querySelectorAll``, ``JSON``, ``Promise``, ``RegExp`` — so a read run
there can be lied to, or never return. Every front end that reads a page it does not trust
(the site audit, an experiment's success checks) reads it here instead:

- functions run in an **isolated world** of each frame (CDP ``Page.createIsolatedWorld``,
  the mechanism extensions' content scripts use): the same DOM, storage and cookies, its
  own pristine globals and prototypes, invisible to the page. Frames of other sites run in
  processes of their own (out-of-process iframes); each gets its own CDP session.
- every read has a time limit (:data:`READ_TIMEOUT_S`): a page whose main thread is stuck
  makes the read fail with :class:`PageReadTimeout`, not hang its reader.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from harness.errors import HarnessError

READ_TIMEOUT_S = 5.0
WORLD_NAME = "webmcp-harness-audit"


class PageReadTimeout(HarnessError):
    """A read of the page did not finish within its time limit (the page's main thread is
    busy, or never yields)."""


@dataclass(frozen=True)
class FrameWorld:
    """An isolated world of one frame: where a reader's functions run."""

    session: CDPSession
    context_id: int
    frame_id: str
    url: str
    top: bool


def _frames(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node["frame"]
    for child in node.get("childFrames") or []:
        yield from _frames(child)


async def within_limit(awaitable: Any, timeout: float, what: str) -> Any:
    """``awaitable``'s value, or :class:`PageReadTimeout` (naming ``what``) past ``timeout`` s."""
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError as exc:
        raise PageReadTimeout(f"{what}: no answer within {timeout:g} s") from exc


class IsolatedWorlds:
    """Isolated worlds in every frame of a page (``async with``: detached after)."""

    def __init__(self, page: Page, timeout: float = READ_TIMEOUT_S) -> None:
        self.page = page
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
        page = self.page
        context = page.context
        sessions = [await context.new_cdp_session(page)]
        for frame in page.frames[1:]:
            with contextlib.suppress(PlaywrightError):  # not out of process: in the page's
                sessions.append(await context.new_cdp_session(frame))
        self._cdp += sessions
        found: dict[str, FrameWorld] = {}
        for cdp in sessions:
            try:
                tree = await within_limit(cdp.send("Page.getFrameTree"), self.timeout, "frame tree")
            except (PlaywrightError, PageReadTimeout):
                continue
            for node in _frames(tree["frameTree"]):
                if node["id"] in found:
                    continue
                try:
                    found[node["id"]] = await self._world(cdp, node, top=cdp is sessions[0])
                except (PlaywrightError, PageReadTimeout):
                    continue  # a frame of another process: its own session covers it
        return list(found.values())

    async def top(self) -> FrameWorld:
        """The main frame's isolated world; PageReadTimeout past the time limit,
        PlaywrightError when the page cannot give one (closed, crashed)."""
        cdp = await self.page.context.new_cdp_session(self.page)
        self._cdp.append(cdp)
        tree = await within_limit(cdp.send("Page.getFrameTree"), self.timeout, "frame tree")
        return await self._world(cdp, tree["frameTree"]["frame"], top=True)

    async def _world(self, cdp: CDPSession, node: dict[str, Any], *, top: bool) -> FrameWorld:
        world = await within_limit(
            cdp.send("Page.createIsolatedWorld", {"frameId": node["id"], "worldName": WORLD_NAME}),
            self.timeout,
            "isolated world",
        )
        return FrameWorld(
            session=cdp,
            context_id=world["executionContextId"],
            frame_id=node["id"],
            url=str(node.get("url", "")) + str(node.get("urlFragment", "")),
            top=top and node.get("parentId") is None,
        )

    async def evaluate(self, world: FrameWorld, function: str, *args: Any) -> Any:
        """``function(...args)`` in ``world``, its result by value; raises
        :class:`PageReadTimeout` past the time limit, PlaywrightError when the frame went."""
        reply = await within_limit(
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
            raise PlaywrightError(f"the read failed: {text}")
        return (reply.get("result") or {}).get("value")
