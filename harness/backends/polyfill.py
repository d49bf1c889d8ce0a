"""The ``polyfill`` backend: the injected JS provides WebMCP in any Chromium.

Chromium's native WebMCP stays off. Each frame's polyfill keeps its registry
private and reports it through the authenticated channel
(`injected_js/CHANNEL.md`); calls go to the frame's private entry point.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from playwright.async_api import BrowserContext, Frame, Page
from playwright.async_api import Error as PlaywrightError

from harness.backends.base import Backend, RawResult
from harness.backends.snapshots import tools_from_snapshots
from harness.catalog import Catalog
from harness.frames import FrameKeys, origin_of
from harness.injection import ChannelKeys, FrameGone, Message, Mode, PageChannel
from harness.models import Tool

log = logging.getLogger("harness.backends")

# Playwright's words for "the document (or the page) went away under us".
_GONE = (
    "Execution context was destroyed",
    "Target closed",
    "Target page, context or browser has been closed",
    "Frame was detached",
    "navigat",
)


def is_gone(error: BaseException) -> bool:
    """Whether a Playwright error means the frame's document is gone."""
    text = str(error)
    return any(marker in text for marker in _GONE)


class ChannelBackend(Backend):
    """What both backends share: the injected JS, its channel, and frame keys."""

    mode: Mode

    def __init__(self, keys: ChannelKeys) -> None:
        super().__init__(keys)
        self.channel = PageChannel(keys, self.mode)
        self.frames = FrameKeys()
        self.page_events: list[Message] = []
        self._page: Page | None = None
        self._catalog: Catalog | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run event-driven work in the background, keeping a reference and logging failures."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._reap)

    def _reap(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("catalog update failed: %s", task.exception())

    @property
    def page(self) -> Page:
        assert self._page is not None, "attach() first"
        return self._page

    @property
    def catalog(self) -> Catalog:
        assert self._catalog is not None, "attach() first"
        return self._catalog

    async def attach(self, context: BrowserContext, page: Page, catalog: Catalog) -> None:
        self._page, self._catalog = page, catalog
        await self.channel.install(context, page, self._on_message)
        page.on("framenavigated", self._on_navigated)
        page.on("framedetached", self._on_detached)
        page.on("close", self._on_close)

    async def _on_navigated(self, frame: Frame) -> None:
        # A new document (or a same-document navigation): re-read the frame's
        # registry, so the catalog changes once, by the real difference.
        await self._relist(frame)

    def _on_close(self, _page: Page) -> None:
        self.catalog.clear()

    def _on_detached(self, frame: Frame) -> None:
        key = self.frames.forget(frame)
        if key is not None:
            self.catalog.drop_frame(key)

    async def _on_message(self, frame: Frame, message: Message) -> None:
        if message.get("type") == "tools":
            await self._apply(frame, message.get("tools"))
        elif message.get("type") == "event":
            self.page_events.append({**message, "frame": self.frames.key(frame)})

    async def _apply(self, frame: Frame, snapshots: Any) -> None:
        if frame.is_detached():
            return
        info = await self.frames.info(frame)
        top = origin_of(frame.page.main_frame.url)
        tools, warnings = tools_from_snapshots(snapshots, info, top)
        self.catalog.replace_frame(info, tools, warnings)

    async def refresh(self) -> None:
        for frame in list(self.page.frames):
            await self._relist(frame)

    async def _relist(self, frame: Frame) -> None:
        try:
            listing = await self.channel.command(frame, {"op": "list"})
        except (PlaywrightError, FrameGone):
            return  # the frame is going away (or has no WebMCP); its removal event follows
        if isinstance(listing, dict):
            await self._apply(frame, listing.get("tools"))

    def _frame_for(self, tool: Tool) -> Frame | None:
        return self.frames.frame(tool.frame)


class PolyfillBackend(ChannelBackend):
    """WebMCP provided by the injected polyfill."""

    name = "polyfill"
    mode: Mode = "polyfill"

    def __init__(self, keys: ChannelKeys) -> None:
        super().__init__(keys)
        self._running: dict[str, Frame] = {}

    @staticmethod
    def launch_args() -> list[str]:
        return []

    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        frame = self._frame_for(tool)
        if frame is None:
            return RawResult(status="navigation")
        command = {
            "op": "invoke",
            "callId": call_id,
            "name": tool.name,
            "input": arguments,
            "meta": meta,
        }
        self._running[call_id] = frame
        try:
            answer = await self.channel.command(frame, command)
        except FrameGone:
            return RawResult(status="navigation")
        except PlaywrightError as exc:
            if is_gone(exc):
                return RawResult(status="navigation")
            raise
        finally:
            self._running.pop(call_id, None)
        return raw_from_answer(answer)

    async def cancel(self, call_id: str, reason: str) -> None:
        frame = self._running.get(call_id)
        if frame is None:
            return
        with contextlib.suppress(PlaywrightError, FrameGone):  # the frame is gone, and the call too
            await self.channel.command(frame, {"op": "cancel", "callId": call_id, "reason": reason})


def raw_from_answer(answer: Any) -> RawResult:
    """The entry point's answer to ``invoke`` as a :class:`RawResult`."""
    if not isinstance(answer, dict):
        return RawResult(status="error", error_name="HarnessError", error_message="no answer")
    status = answer.get("status")
    if status == "ok":
        return RawResult(status="ok", json_text=executed_text(answer.get("json")))
    if status == "cancelled":
        return RawResult(status="cancelled", error_message=str(answer.get("reason") or ""))
    error = answer.get("error")
    if not isinstance(error, dict):
        error = {}
    return RawResult(
        status="error",
        error_name=str(error.get("name") or "Error"),
        error_message=str(error.get("message") or ""),
    )


def executed_text(value: Any) -> str | None:
    """``executeTool``'s string, with "undefined" (a tool that returned nothing) as None."""
    if not isinstance(value, str) or value == "undefined":
        return None
    return value
