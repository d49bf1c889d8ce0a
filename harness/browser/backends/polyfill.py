"""The ``polyfill`` backend: the injected JS provides WebMCP in any Chromium.

Chromium's native WebMCP stays off. Each frame's polyfill keeps its registry
private and reports it through the authenticated channel
(`injected_js/CHANNEL.md`); calls go to the frame's private entry point.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import decimal
import json
import logging
import math
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from playwright.async_api import BrowserContext, Download, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError

from harness.browser.backends.base import Backend, FormReviewDecision, FormReviewRequest, RawResult
from harness.browser.backends.snapshots import (
    ToolBuilds,
    parse_answer,
    refused_warnings,
    snapshot_texts,
)
from harness.browser.frames import FrameKeys
from harness.browser.injection import (
    ChannelKeys,
    FrameGone,
    Message,
    Mode,
    PageChannel,
    SchemaSubset,
)
from harness.catalog import Catalog, FrameInfo
from harness.elicitation.base import AutoHandler
from harness.elicitation.questions import answer_tool_question
from harness.models import CatalogWarning, FormRefusal, Tool

log = logging.getLogger("harness.browser.backends")
T = TypeVar("T")

# How long a call whose form submission replaces its page waits for the new page, to say
# where it went (and so that the request was sent before the caller moves on).
SUBMISSION_NAVIGATION_WAIT_S = 10.0
# How long a submission whose navigation loaded no document waits to hear it was a download.
DOWNLOAD_NAME_WAIT_S = 0.5

# How long a <form toolname> call whose document went away waits for the page's report that
# its submission went ahead (sent before the document could go, but on another channel
# than the call's answer, so it may be read second).
SUBMISSION_REPORT_WAIT_S = 5.0

# Ended calls whose state waits for their result's delivery (a caller that gave up never
# takes it): beyond this many, the oldest are forgotten (their frames are simply re-read).
MAX_CALL_STATES = 1024

# How long a read of a frame's registry (a listing, its state) waits for the frame's answer:
# a page whose script never yields (a busy loop) never answers, and the catalog then keeps
# what it last read, with a warning that says so.
READ_WAIT_S = 10.0

# How long the settle loop waits for a frame's answer to "are you quiet?": a frame that
# cannot answer that soon is busy, so not quiet (the loop asks again until its cap).
QUIET_ANSWER_S = 2.0

# Playwright's words for "the document (or the page) went away under us".
_GONE = (
    "Execution context was destroyed",
    "Target closed",
    "Target page, context or browser has been closed",
    "Frame was detached",
    "navigat",
)


BUSY_PART = "unanswered"
"""The catalog part of a frame that holds only the warning that it did not answer a read."""


def _busy_warning(info: FrameInfo) -> CatalogWarning:
    return CatalogWarning(
        code="frame-busy",
        message=(
            f"The frame {info.key!r} ({info.url}) did not answer the harness within "
            f"{READ_WAIT_S:g} s: its script is busy (a loop that never yields). Its tools are "
            "listed as last read; a call of one ends at its timeout. Reload the page once "
            "its script is fixed."
        ),
    )


def is_gone(error: BaseException) -> bool:
    """Whether a Playwright error means the frame's document is gone."""
    text = str(error)
    return any(marker in text for marker in _GONE)


@dataclass
class StateVersions:
    """The versions of a frame's document the catalog holds (CHANNEL.md "State versions"):
    of its registry (``tools`` messages, listings) and of its seed-dialect declarations."""

    tools: Any = None
    seed: Any = None

    def holds(self, state: Message) -> bool:
        """Whether the catalog holds the document as ``state`` (an ``invoke`` answer's)
        describes it: both versions known and equal, and no DOM change left to report."""
        return (
            isinstance(self.tools, str)
            and state.get("version") == self.tools
            and state.get("seedVersion") == self.seed
            and state.get("pending") is False
        )


class ChannelBackend(Backend):
    """What both backends share: the injected JS, its channel, and frame keys."""

    mode: Mode

    def __init__(self, keys: ChannelKeys, *, schema_subset: SchemaSubset = "accept") -> None:
        super().__init__(keys, schema_subset=schema_subset)
        self.channel = PageChannel(keys, self.mode, schema_subset)
        # Each frame's document's origin as the document said it (its hello), not its URL's.
        self.frames = FrameKeys(self.channel.document_origin)
        # The Tool models built from each frame's snapshots, reused while a tool is unchanged.
        self.builds = ToolBuilds()
        self._page: Page | None = None
        self._catalog: Catalog | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._questions: dict[str, set[asyncio.Task[Any]]] = {}  # call id → questions asked
        # call id → the context the call runs in: its questions are asked from there, so
        # the caller's ways of answering (an MCP client's channel) reach them.
        self._call_contexts: dict[str, contextvars.Context] = {}
        self._navigations: dict[Frame, int] = {}  # documents each frame had (framenavigated)
        # Navigations of each frame that ended without a document (a 204, a download, a
        # mailto:): how many, and how the last one ended (see _submission_result).
        self._no_document: dict[Frame, tuple[int, NoDocument]] = {}
        self._downloads: dict[str, str] = {}  # URL → the file name a download suggested
        # Who waits for one of the three to change (see _until_news): woken at each change.
        self._news_waiters: list[asyncio.Future[None]] = []
        # State versions (CHANNEL.md): what the catalog holds of each frame's document, and
        # what each ended call's answer said of its document.
        self._versions: dict[Frame, StateVersions] = {}
        self._reads: dict[Frame, asyncio.Lock] = {}  # one read of a frame's registry at a time
        # frame → how many reads of it started, and the last one that is in the catalog
        self._relists_started: dict[Frame, int] = {}
        self._relists_done: dict[Frame, int] = {}
        self._call_states: dict[str, tuple[Frame, Message | None]] = {}

    async def note_unanswered(self, frame: Frame) -> None:
        """The frame did not answer a read in time: its tools stay as last read, and the
        catalog says so (a warning naming the frame) until it answers again."""
        if frame.is_detached():
            return
        log.warning(
            "the frame at %.200r did not answer the harness within %s s (its script is busy)",
            frame.url,
            READ_WAIT_S,
        )
        info = await self.frames.info(frame)
        self.catalog.replace_frame(info, [], [_busy_warning(info)], part=BUSY_PART)

    async def note_answered(self, frame: Frame) -> None:
        """The frame answered a read: a warning that it did not is taken back."""
        key = self.frames.key(frame)
        if self.catalog.has_part(key, BUSY_PART):
            self.catalog.replace_frame(await self.frames.info(frame), [], [], part=BUSY_PART)

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
        # (Not "response": Playwright sends an event for every response to a listener.)
        page.on("requestfailed", self._on_request_failed)
        page.on("download", self._on_download)

    def mark(self, frame: Frame) -> FrameMark:
        """Where ``frame`` stands before a call: what :meth:`_submission_result` compares."""
        return FrameMark(self._navigations.get(frame, 0), self._no_document.get(frame, (0,))[0])

    async def _on_request_failed(self, request: Request) -> None:
        # A navigation that loads no document (a 204, a download, an external protocol)
        # ends as a failed request (net::ERR_ABORTED), with no framenavigated.
        if not request.is_navigation_request():
            return
        frame = request.frame
        status = None
        with contextlib.suppress(PlaywrightError):  # (a 204 has its response; mailto: none)
            response = await request.response()
            status = response.status if response is not None else None
        ended = NoDocument(url=request.url, status=status, failure=request.failure or "")
        self._no_document[frame] = (self._no_document.get(frame, (0,))[0] + 1, ended)
        self._tell_news()

    def _on_download(self, download: Download) -> None:
        if len(self._downloads) >= 64:
            self._downloads.pop(next(iter(self._downloads)))
        self._downloads[download.url] = download.suggested_filename
        self._tell_news()

    async def _on_navigated(self, frame: Frame) -> None:
        self._navigations[frame] = self._navigations.get(frame, 0) + 1
        self._tell_news()
        self.catalog.readiness.touch()
        # A new document (or a same-document navigation): re-read the frame's
        # registry, so the catalog changes once, by the real difference.
        await self._relist(frame)

    async def _submission_result(
        self, frame: Frame | None, details: dict[str, Any], before: FrameMark
    ) -> RawResult:
        """Where a ``<form toolname>`` submission went: for one that replaces the form's own
        page, once that page navigated — or once its navigation ended without a document (a
        204, a download, a ``mailto:``), which Chromium answers at once too (``before``:
        where the frame stood before the call). A ``javascript:`` action loads nothing.
        """
        same_frame = details.get("target") in ("", "_self", None)
        action = str(details.get("action") or "")
        if frame is None or not same_frame or details.get("method") == "dialog":
            return submitted_result(details)
        if action.lower().startswith("javascript:"):
            return submitted_result(details, stayed=NoDocument(url=action))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SUBMISSION_NAVIGATION_WAIT_S
        while loop.time() < deadline:
            if self._navigations.get(frame, 0) > before.navigations:
                return submitted_result(details, None if frame.is_detached() else frame.url)
            count, ended = self._no_document.get(frame, (0, None))
            if count > before.no_document and ended is not None:
                # A download says so just after its request ends: a moment to hear it.
                waited = loop.time() + DOWNLOAD_NAME_WAIT_S
                while ended.url not in self._downloads and loop.time() < waited:
                    await self._until_news(waited)
                ended = ended._replace(download=self._downloads.get(ended.url))
                return submitted_result(details, stayed=ended)
            await self._until_news(deadline)
        return submitted_result(details)

    async def _until_news(self, deadline: float) -> None:
        """Until a frame navigates, a navigation ends without a document or a download
        begins — or until ``deadline`` (the loop's time)."""
        waiter = asyncio.get_running_loop().create_future()
        self._news_waiters.append(waiter)
        try:
            async with asyncio.timeout_at(deadline):
                await waiter
        except TimeoutError:
            pass
        finally:
            with contextlib.suppress(ValueError):
                self._news_waiters.remove(waiter)

    def _tell_news(self) -> None:
        waiters, self._news_waiters = self._news_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _on_close(self, _page: Page) -> None:
        self.catalog.clear()

    def _on_detached(self, frame: Frame) -> None:
        self._versions.pop(frame, None)
        self._no_document.pop(frame, None)
        self._reads.pop(frame, None)
        self._relists_started.pop(frame, None)
        self._relists_done.pop(frame, None)
        key = self.frames.forget(frame)
        if key is not None:
            self.seed.forget(key)
            self.builds.forget(key)
            self.catalog.drop_frame(key)

    async def _on_message(self, frame: Frame, message: Message) -> None:
        if message.get("type") in ("tools", "declarations"):
            # The page's registry or its declarations changed: the catalog is not quiet yet.
            self.catalog.readiness.touch()
        if message.get("type") == "tools":
            await self._apply(
                frame, message.get("tools"), message.get("refused"), message.get("version")
            )
        elif message.get("type") == "review":
            self._spawn(self._review(frame, message))
        elif message.get("type") == "elicit":
            self._spawn(self._question(frame, message))
        elif message.get("type") == "declarations":
            await self._apply_declarations(
                frame, message.get("declarations"), message.get("version")
            )
        elif message.get("type") == "submitted":
            self._submission_reported(message)

    def _submission_reported(self, message: Message) -> None:
        """A ``<form toolname>`` submission went ahead (the page says so before it may go)."""

    async def _apply(
        self, frame: Frame, snapshots: Any, refused: Any = None, version: Any = None
    ) -> None:
        if frame.is_detached():
            return
        info = await self.frames.info(frame)
        top = await self.frames.origin(frame.page.main_frame)
        tools, warnings = self.builds.build(info, top, snapshot_texts(snapshots))
        self.catalog.replace_frame(info, tools, [*warnings, *refused_warnings(refused, info)])
        self._versions.setdefault(frame, StateVersions()).tools = version

    # -- state versions: re-read a frame after a call only when its document changed -------
    def _call_ended(self, frame: Frame, call_id: str, answer: Any) -> None:
        """Keep what the call's answer says of its document's state (CHANNEL.md); an
        answer without one (a call made through CDP) leaves the frame to ask."""
        state = answer.get("state") if isinstance(answer, dict) else None
        self._call_states[call_id] = (frame, state if isinstance(state, dict) else None)
        if len(self._call_states) > MAX_CALL_STATES:  # calls whose delivery never came
            del self._call_states[next(iter(self._call_states))]

    async def idle_within(self, window: float) -> bool:
        # Every frame's JS answers `quiet` (CHANNEL.md): none of the page's timers due
        # within the window, no fetch or body read awaited, nothing waiting to be scanned. A frame whose document never
        # said hello cannot tell (an about:blank one has nothing to say).
        command = {"op": "quiet", "within": max(0, round(window * 1000))}
        for frame in list(self.page.frames):
            if frame.is_detached():
                continue
            if not self.channel.speaks(frame):
                if frame.url in ("", "about:blank"):
                    continue
                return False
            try:
                answer = await self.channel.command(frame, command, timeout=QUIET_ANSWER_S)
            except TimeoutError:
                return False  # its script is busy: not quiet (the settle cap still ends it)
            if not isinstance(answer, dict) or answer.get("timers") != 0:
                return False
            if answer.get("reads") != 0:
                return False
            if answer.get("pending") is not False:
                return False
        return True

    def holds_after(self, call_id: str) -> bool:
        ended = self._call_states.get(call_id)
        if ended is None or ended[1] is None or ended[0].is_detached():
            return False
        versions = self._versions.get(ended[0])
        if versions is None or not versions.holds(ended[1]):
            return False
        del self._call_states[call_id]
        return True

    async def refresh_after(self, call_id: str) -> None:
        ended = self._call_states.pop(call_id, None)
        if ended is not None and await self._holds(*ended):
            return  # the catalog already holds the document as the call left it
        await self.refresh()

    async def refresh_for(self, tool: Tool) -> None:
        frame = self._frame_for(tool)
        if frame is not None and await self._holds(frame, None):
            return
        await self.refresh()

    async def _holds(self, frame: Frame, state: Message | None) -> bool:
        """Whether the catalog holds ``frame``'s document as it is (``state``: as a call's
        answer described it; None: ask the document, one small round trip)."""
        versions = self._versions.get(frame)
        if versions is None or frame.is_detached():
            return False
        if state is None:
            try:
                state = await self.channel.command(frame, {"op": "state"}, timeout=READ_WAIT_S)
            except (PlaywrightError, FrameGone, TimeoutError):
                return False
        return isinstance(state, dict) and versions.holds(state)

    # -- a filled <form toolname> waits for the user (harness/declarative/review.py) ----------
    async def _review(self, frame: Frame, message: Message) -> None:
        name = message.get("name")
        call_id = await self._reviewed_call(frame, message)
        tool = self.catalog.get(name) if isinstance(name, str) else None
        if call_id is None or tool is None:
            return  # the page's own executeTool(), not a call of the harness's
        values = message.get("values")
        request = FormReviewRequest(
            tool=tool, values=values if isinstance(values, dict) else {}, page_url=frame.url
        )
        if self.form_reviewer is None:
            decision = FormReviewDecision(submit=False, reason="the form was not submitted")
        else:  # asked as the call's own question: the MCP client that called answers it
            decision = await self._as_the_call(call_id, self.form_reviewer.review(request))
        if decision.submit:
            command = {
                "op": "review",
                "name": name,
                "callId": message.get("callId"),
                "values": decision.values,
            }
            try:
                answer = await self.channel.command(frame, command)
            except (PlaywrightError, FrameGone):
                return  # the page went away: the call ends as interrupted
            if isinstance(answer, dict) and answer.get("submitted") is True:
                return  # the submission's outcome is the call's result
            error = answer.get("error") if isinstance(answer, dict) else None
            reason = f"the reviewed form could not be submitted: {error or 'no answer'}"
            decision = FormReviewDecision(submit=False, reason=reason)
        await self.cancel(call_id, decision.reason)

    async def _reviewed_call(self, frame: Frame, message: Message) -> str | None:
        """The harness's call the review belongs to: one that runs in ``frame``, for the
        tool the message names (a message from any other frame settles nothing)."""
        return None

    async def _as_the_call(self, call_id: str, asking: Coroutine[Any, Any, T]) -> T:
        """Run ``asking`` (a question to the user) in the context the call ``call_id`` runs
        in — so the MCP client whose call it is gets the question — and drop it with the
        call (:meth:`_end_questions`). Without a running call, in this task's context."""
        context = self._call_contexts.get(call_id)
        if context is None:
            return await asking
        task = asyncio.get_running_loop().create_task(asking, context=context)
        self._questions.setdefault(call_id, set()).add(task)
        try:
            return await task
        finally:
            self._questions.get(call_id, set()).discard(task)

    # -- a tool asks the user from inside execute (harness/elicitation/questions.py) ----
    async def _question(self, frame: Frame, message: Message) -> None:
        """Ask the session's handler, and answer the page with ``elicit-answer``."""
        call = await self._questioning_call(frame, message)
        asked = self.question_handler
        handler = asked() if asked is not None else AutoHandler("cancel")
        answering = answer_tool_question(
            message,
            handler=handler,
            origin=await self.frames.origin(frame),
            tool=call[1] if call is not None else None,
        )
        # Dropped with its call: the page's signal rejects the question.
        reply = await (answering if call is None else self._as_the_call(call[0], answering))
        with contextlib.suppress(PlaywrightError, FrameGone):  # the document went away
            await self.channel.command(frame, reply)

    async def _questioning_call(self, frame: Frame, message: Message) -> tuple[str, str] | None:
        """The harness's running call (call id, tool name) that asks; None: not one of ours."""
        return None

    def _begin_call(self, call_id: str) -> None:
        """A call starts: remember the context it runs in, for its questions."""
        self._call_contexts[call_id] = contextvars.copy_context()

    def _end_questions(self, call_id: str) -> None:
        """The call ended: stop asking its open questions."""
        self._call_contexts.pop(call_id, None)
        for task in self._questions.pop(call_id, set()):
            task.cancel()

    async def _apply_declarations(
        self, frame: Frame, declarations: Any, version: Any = None
    ) -> None:
        if frame.is_detached() or declarations is None:
            return
        info = await self.frames.info(frame)
        self.seed.report(info, declarations, await self.frames.origin(frame.page.main_frame))
        self._versions.setdefault(frame, StateVersions()).seed = version

    def after_delivery(self, call_id: str) -> Coroutine[Any, Any, None] | None:
        return self.seed.after_delivery(call_id)

    async def refresh(self) -> None:
        for frame in list(self.page.frames):
            await self._relist(frame)

    async def navigate_frame(self, frame_key: str, url: str) -> None:
        frame = self.frames.frame(frame_key)
        if frame is None:
            raise FrameGone(f"frame {frame_key} is gone")
        await frame.goto(url)
        await self.refresh()

    async def interrupt(self) -> None:
        await self.channel.terminate()

    def _list_command(self, frame: Frame, **fields: Any) -> Message:
        """A ``list`` command; with the versions the catalog holds of the frame's document,
        which the page answers ``unchanged`` when they are still its own."""
        command: Message = {"op": "list", **fields}
        versions = self._versions.get(frame)
        if versions is not None and isinstance(versions.tools, str):
            command["known"] = {"version": versions.tools, "seedVersion": versions.seed}
        return command

    async def _relist(self, frame: Frame) -> None:
        # A frame's reads go one at a time: the next is sent once the last is in the catalog,
        # with the versions it holds, and is most often answered `unchanged` (a navigation's
        # own read and the listing right after it would each bring every tool otherwise).
        # Those asked for while one is under way share the next one to start: a page that
        # navigates within its document 200 times a second (history.pushState) asks for a
        # read each time, and they must not queue up without end.
        wanted = self._relists_started.get(frame, 0) + 1
        async with self._reads.setdefault(frame, asyncio.Lock()):
            if self._relists_done.get(frame, 0) >= wanted:
                return
            started = self._relists_started[frame] = self._relists_started.get(frame, 0) + 1
            await self._relist_now(frame)
            self._relists_done[frame] = started

    async def _relist_now(self, frame: Frame) -> None:
        command = self._list_command(frame)
        try:
            listing = parse_answer(await self.channel.command(frame, command, timeout=READ_WAIT_S))
        except (PlaywrightError, FrameGone):
            return  # the frame is going away (or has no WebMCP); its removal event follows
        except TimeoutError:
            await self.note_unanswered(frame)
            return
        await self.note_answered(frame)
        if isinstance(listing, dict) and listing.get("unchanged") is True:
            return  # the catalog holds the document as it is
        if isinstance(listing, dict):
            await self._apply(
                frame, listing.get("tools"), listing.get("refused"), listing.get("version")
            )
            await self._apply_declarations(
                frame, listing.get("declarations"), listing.get("seedVersion")
            )

    def _frame_for(self, tool: Tool) -> Frame | None:
        return self.frames.frame(tool.frame)


class PolyfillBackend(ChannelBackend):
    """WebMCP provided by the injected polyfill."""

    name = "polyfill"
    mode: Mode = "polyfill"

    def __init__(self, keys: ChannelKeys, *, schema_subset: SchemaSubset = "accept") -> None:
        super().__init__(keys, schema_subset=schema_subset)
        self._running: dict[str, Frame] = {}
        self._running_tools: dict[str, str] = {}  # call id → tool name
        # Submissions the page reported for the harness's running calls, by call id.
        self._submissions: dict[str, asyncio.Future[dict[str, Any]]] = {}

    @staticmethod
    def launch_args() -> list[str]:
        return []

    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        if self.seed.owns(tool):
            return await self.seed.execute(tool, arguments, call_id, meta)
        frame = self._frame_for(tool)
        if frame is None:
            return RawResult(status="navigation")
        command = {
            "op": "invoke",
            "callId": call_id,
            "name": tool.name,
            "input": form_input(arguments) if tool.source == "declarative" else arguments,
            "meta": meta,
            # The registration the call was checked against: the page runs no other.
            "registration": tool.registration,
        }
        if self.max_result_bytes is not None:
            command["maxResultBytes"] = self.max_result_bytes
        self._running[call_id] = frame
        self._running_tools[call_id] = tool.name
        self._submissions[call_id] = asyncio.get_running_loop().create_future()
        self._begin_call(call_id)
        before = self.mark(frame)
        try:
            answer = await self.channel.command(frame, command)
        except FrameGone:
            return await self._gone(tool, call_id, frame, before)
        except PlaywrightError as exc:
            if is_gone(exc):
                return await self._gone(tool, call_id, frame, before)
            raise
        finally:
            self._running.pop(call_id, None)
            self._running_tools.pop(call_id, None)
            self._end_questions(call_id)
            self._submissions.pop(call_id, None)
        if isinstance(answer, dict) and isinstance(answer.get("submitted"), dict):
            return await self._submission_result(frame, answer["submitted"], before)
        self._call_ended(frame, call_id, answer)
        return raw_from_answer(answer)

    def _submission_reported(self, message: Message) -> None:
        reported = self._submissions.get(str(message.get("callId")))
        details = message.get("submitted")
        if reported is not None and not reported.done() and isinstance(details, dict):
            reported.set_result(details)

    async def _gone(self, tool: Tool, call_id: str, frame: Frame, before: FrameMark) -> RawResult:
        """The call's document went away before its answer came: a ``<form toolname>`` whose
        submission went ahead took it (its report says so), anything else was interrupted."""
        reported = self._submissions.get(call_id)
        if tool.source != "declarative" or reported is None:
            return RawResult(status="navigation")
        try:
            details = await asyncio.wait_for(asyncio.shield(reported), SUBMISSION_REPORT_WAIT_S)
        except TimeoutError:
            return RawResult(status="navigation")
        return await self._submission_result(frame, details, before)

    async def _questioning_call(self, frame: Frame, message: Message) -> tuple[str, str] | None:
        # The polyfill names the harness's call; it must run in the frame that asks.
        call_id = message.get("callId")
        if not isinstance(call_id, str) or self._running.get(call_id) != frame:
            return None
        tool = self._running_tools.get(call_id)
        return None if tool is None else (call_id, tool)

    async def _reviewed_call(self, frame: Frame, message: Message) -> str | None:
        # The polyfill names the harness's call; it must run in the frame that sent the
        # review, for the tool the review names.
        call_id = message.get("callId")
        if not isinstance(call_id, str) or self._running.get(call_id) is not frame:
            return None
        return call_id if self._running_tools.get(call_id) == message.get("name") else None

    async def cancel(self, call_id: str, reason: str) -> None:
        if self.seed.cancel(call_id, reason):
            return
        frame = self._running.get(call_id)
        if frame is None:
            return
        with contextlib.suppress(PlaywrightError, FrameGone):  # the frame is gone, and the call too
            await self.channel.command(frame, {"op": "cancel", "callId": call_id, "reason": reason})


def form_input(arguments: dict[str, Any]) -> dict[str, Any]:
    """A ``<form toolname>``'s arguments as the harness hands them to the form, so that each
    is filled exactly: Chromium's fill (and the polyfill's, which follows it for a page's own
    ``executeTool()``) writes a number that is not an int32 as a double with 6 significant
    digits (12345.67 → "12345.7", 3000000001 → "3e+09"), changing the agent's value unsaid;
    as the text JavaScript writes for it, it is filled as it is."""
    return {name: _exact_number(value) for name, value in arguments.items()}


def _exact_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if float(value).is_integer() and -(2**31) <= value < 2**31:
        return value  # an int32, which Chromium writes whole
    return js_number_text(float(value))


def js_number_text(number: float) -> str:
    """JavaScript's ``String(number)`` (ECMA-262 Number::toString): the shortest digits
    that read back as the number (Python's ``repr`` finds the same), laid out as JavaScript
    lays them out (plain from 1e-6 up to 1e21, exponent form beyond)."""
    if not math.isfinite(number):
        return "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    _, digit_tuple, exponent = decimal.Decimal(repr(abs(number))).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    k, n = len(digits), exponent + len(digits)  # n: where the decimal point goes
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return ("-" if number < 0 else "") + text


def raw_from_answer(answer: Any) -> RawResult:
    """The entry point's answer to ``invoke`` as a :class:`RawResult`."""
    if not isinstance(answer, dict):
        return RawResult(status="error", error_name="HarnessError", error_message="no answer")
    status = answer.get("status")
    if status == "changed":
        return RawResult(status="changed")
    if status == "too_large" and isinstance(answer.get("size"), int):
        return RawResult(status="too_large", size=answer["size"])
    if status == "unanswered" and isinstance(answer.get("waited"), int):
        return RawResult(status="unanswered", waited_ms=answer["waited"])
    if status == "ok" and isinstance(answer.get("submitted"), dict):
        return submitted_result(answer["submitted"])
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
        refusal=form_refusal(answer.get("refusal")),
    )


def form_refusal(value: Any) -> FormRefusal | None:
    """A form's refusal as the polyfill reports it (``refusal: {kind, parameter}`` beside an
    error: injected_js/declarative.js, ``formRefusal``); None when there is none."""
    if not isinstance(value, dict):
        return None
    kind, parameter = value.get("kind"), value.get("parameter")
    if kind not in ("fill", "changed", "validation"):
        return None
    return FormRefusal(kind=kind, parameter=parameter if isinstance(parameter, str) else None)


def executed_text(value: Any) -> str | None:
    """``executeTool``'s string, with "undefined" (a tool that returned nothing) as None."""
    if not isinstance(value, str) or value == "undefined":
        return None
    return value


class FrameMark(NamedTuple):
    """Where a frame stood before a call: its documents, and its navigations that loaded
    none (what a form's submission changes)."""

    navigations: int
    no_document: int


class NoDocument(NamedTuple):
    """A navigation that ended without a document: its URL, the status its response had
    (a 204), why it ended (``net::ERR_ABORTED``), the file it was (a download)."""

    url: str
    status: int | None = None
    failure: str = ""
    download: str | None = None

    def said(self) -> str:
        """How it ended, for the agent (the page stays as it was)."""
        if self.download is not None:
            return f"the response was a download ({self.download!r})"
        if self.status is not None:
            return f"the server answered {self.status} with no page"
        scheme = self.url.partition(":")[0].lower()
        if scheme not in ("http", "https"):
            return f"its action is a {scheme}: URL, which loads no page"
        return f"no page came ({self.failure or 'the navigation ended'})"


def submitted_result(
    details: dict[str, Any], url: str | None = None, *, stayed: NoDocument | None = None
) -> RawResult:
    """A ``<form toolname>`` submission that went ahead (the page's executeTool() gets null).

    The agent is told where the form went (``url``: where its page navigated): the page is
    replaced by the response (or a dialog closed, or another frame loads it), so its tools
    are those of what comes next; or (``stayed``) that the page stays as it was.
    """
    method = str(details.get("method") or "get").upper()
    action = str(details.get("action") or "")
    target = details.get("target")
    if stayed is not None:
        text = f"The form was submitted ({method} {action}); {stayed.said()}, so the page stays as it was."
    elif method == "DIALOG":
        text = "The form was submitted (method dialog): its dialog closed."
    elif isinstance(target, str) and target not in ("", "_self"):
        text = f"The form was submitted ({method} {action}); the response loads in {target!r}."
    elif url is not None:
        text = f"The form was submitted ({method} {action}); the page navigated to {url}."
    else:
        text = f"The form was submitted ({method} {action}); the page navigates to the response."
    return RawResult(status="ok", json_text=json.dumps(text))
