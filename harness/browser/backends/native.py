"""The ``native`` backend: Chromium's own WebMCP, driven through CDP.

The registry is Chromium's: tools arrive with CDP ``WebMCP.toolsAdded`` /
``toolsRemoved`` and run with ``WebMCP.invokeTool``, answered by
``WebMCP.toolResponded``. The injected JS runs in ``native`` mode: it does not
replace ``document.modelContext`` but layers on it what Chromium lacks (the
legacy surfaces, and a side registry of the fields Chromium drops, such as
``outputSchema`` and annotations beyond the spec's), which is merged in here.

A cross-site frame runs in a renderer of its own (an out-of-process iframe) and has a
CDP target of its own: Chromium reports its registry, runs its tools and tells of its
navigations only there. The backend follows each such frame through the session the page
channel attached to it (``PageChannel.oopif_session``), as it follows the page's own.

Two native quirks handled here: Chromium sends no ``toolsRemoved`` when a frame
navigates to a new document, and it answers a call interrupted by navigation
with ``Completed`` and an empty array; ``Page.frameNavigated`` (which arrives
first) settles both.

While a top-level document loads, the ``WebMCP`` domain is off: Chromium sends one
``toolsAdded`` event per registration while it is on (600 for a page of 600 tools, each
crossing Playwright's driver), and one event with the whole registry when it is turned on,
which it is once the document stopped loading (see :meth:`NativeBackend._on_started_loading`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
from collections.abc import Collection
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from harness.browser.backends.base import RawResult
from harness.browser.backends.polyfill import (
    READ_WAIT_S,
    SUBMISSION_REPORT_WAIT_S,
    ChannelBackend,
    FrameMark,
    StateVersions,
    executed_text,
    form_input,
    is_gone,
    raw_from_answer,
)
from harness.browser.backends.snapshots import (
    Entry,
    Unreadable,
    parse_answer,
    read_snapshot,
    refused_warnings,
    split_registration,
)
from harness.browser.cdp import on as cdp_on
from harness.browser.cdp import send as cdp_send
from harness.browser.chromium import NATIVE_WEBMCP_FLAGS
from harness.browser.frames import origin_of
from harness.browser.injection import ChannelKeys, FrameGone, Message, Mode, SchemaSubset
from harness.browser.wellformed import well_formed
from harness.catalog import Catalog, FrameInfo
from harness.errors import DOCTOR_HINT, NativeWebMCPUnavailable
from harness.models import CatalogWarning, FormRefusal, Tool

log = logging.getLogger("harness.browser.native")

# CDP names annotations without the spec's "Hint" suffix.
_CDP_ANNOTATIONS = {
    "readOnly": "readOnlyHint",
    "untrustedContent": "untrustedContentHint",
    "consequential": "consequentialHint",
    "debugging": "debugging",
    "autosubmit": "autosubmit",
}


# A tool read from getTools() rather than CDP carries its source under this key.
_SOURCE_KEY = "webmcp-harness/source"
# Every record of a tool (from CDP or getTools()) gets a number of its own under this key:
# with the layer's snapshot text, it says the tool is unchanged (harness.browser.backends.
# snapshots.ToolBuilds reuses the Tool built from it).
_REVISION_KEY = "webmcp-harness/revision"
# …and what it says of the tool (_meaning), to compare the next record of it with.
_MEANING_KEY = "webmcp-harness/meaning"

LayerRecord = tuple[str, dict[str, Any] | Unreadable, int | None]
"""The layer's snapshot of a tool: its text less its registration number, the snapshot
parsed (or :class:`Unreadable`, nested too deeply), and that number."""

# What the native layer throws instead of running a tool registered again since the
# harness checked the call (injected_js/native_layer.js); a page that throws it itself
# only gets its own call refused.
CHANGED_ERROR = "WebMCPHarnessToolChanged"

# Logged (a warning) when Chromium leaves a frame's WebMCP request unanswered: under load,
# now and then, a frame's requests never settle and its registrations never reach the
# browser (Chromium 156, seen without the harness). Tests tell this fault by it.
UNANSWERED_LOG = "Chromium's WebMCP did not answer %s in the frame at %.200r (a Chromium fault)"

# CDP's toolsAdded/toolsRemoved of one frame are published at most this often.
PUBLISH_INTERVAL_S = 0.1

# Chromium registers a `<form toolname>` a little after the layer saw it declared (and
# takes one back a little after): a frame whose registry and layer disagree is read again,
# for at most this long after they first did, each time after as long as that has been
# (between the bounds).
REREAD_FOR_S = 2.0
REREAD_AFTER_S = (0.05, 0.5)

# The longest the WebMCP domain stays off while a top-level document loads (one whose
# loading never stops still has its registry followed after this).
EVENTS_OFF_MAX_S = 3.0


class NativeBackend(ChannelBackend):
    """Chromium's native WebMCP registry, plus the harness's layer on top."""

    name = "native"
    mode: Mode = "native"

    def __init__(self, keys: ChannelKeys, *, schema_subset: SchemaSubset = "accept") -> None:
        super().__init__(keys, schema_subset=schema_subset)
        self._cdp: CDPSession | None = None
        self._native: dict[str, dict[str, dict[str, Any]]] = {}  # cdp frame id → name → tool
        self._cdp_frames: dict[str, dict[str, Any]] = {}  # cdp frame id → {parentId, url, name}
        # Out-of-process frames (cross-site): cdp frame id → the session of the target that
        # holds the frame, when not the page's own; the Playwright frame of each such
        # target's root; the sessions followed; and attachments under way (readiness).
        self._targets: dict[str, CDPSession] = {}
        self._oopif_roots: dict[str, Frame] = {}
        self._followed: set[CDPSession] = set()
        self._attaching = 0
        self._pending: dict[str, asyncio.Future[RawResult]] = {}  # invocation id → answer
        self._early: dict[str, dict[str, Any]] = {}  # toolResponded that beat invokeTool's reply
        self._invocation_frame: dict[str, str] = {}  # invocation id → cdp frame id
        self._running: dict[str, str] = {}  # harness call id → invocation id
        # <form toolname> calls: which tool each call runs (the page names forms by tool),
        # when it started, and why the harness cancelled an invocation.
        self._call_tools: dict[str, tuple[Tool, float]] = {}  # call id → (tool, start)
        self._call_frames: dict[str, tuple[Frame, FrameMark]] = {}  # call id → (frame, mark)
        self._submitting: set[str] = set()  # invocations whose form submission went ahead
        self._cancel_reasons: dict[str, str] = {}  # invocation id → the harness's reason
        self._declarative: set[str] = set()  # invocations of <form toolname> tools
        self._published: dict[str, float] = {}  # cdp frame id → when its tools were published
        self._revisions = itertools.count(1)
        # cdp frame id → the layer's snapshot texts last seen, parsed (read once each), and
        # its last report (`tools` message or `list` answer)
        self._layer: dict[str, dict[str, dict[str, Any]]] = {}
        self._reports: dict[str, dict[str, Any]] = {}
        self._layer_news: dict[str, Message] = {}  # the layer's last `tools` message, unread
        # cdp frame id → its last document's CDP records and parsed layer texts (for reuse)
        self._retired: dict[str, tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]] = {}
        self._publish_due: set[str] = set()  # frames with a publication scheduled
        self._publishing = 0  # scheduled publications under way
        # CDP's news: cdp frame id → tool name → when a toolsAdded/toolsRemoved last named
        # it (a count of the events heard): a read of Chromium's registry during which a
        # tool's news came may be older than that news (see _read).
        self._news: dict[str, dict[str, int]] = {}
        self._heard = 0
        self._direct_reads: dict[str, asyncio.Lock] = {}  # cdp frame id → one read at a time
        # cdp frame id → how many direct reads started, and the last that is in the catalog
        self._reads_started: dict[str, int] = {}
        self._reads_done: dict[str, int] = {}
        # cdp frame ids whose document's last read of Chromium's registry was not answered
        self._unanswered: set[str] = set()
        # cdp frame id → when its registry and the layer's records began to disagree
        # (:meth:`_agreed`)
        self._rereads: dict[str, float] = {}
        # The WebMCP domain is off while a top-level document loads (_on_started_loading),
        # at most until this timer turns it on again.
        self._events_on = False
        # Whether CDP's news of the registry is flowing: the domain on, and the whole
        # registry it sends when turned on already heard (readiness: idle_within).
        self._news_flowing = False
        self._events_timer: asyncio.TimerHandle | None = None
        self._loads = 0  # top-level documents that began loading (the domain went off)

    @staticmethod
    def launch_args() -> list[str]:
        return list(NATIVE_WEBMCP_FLAGS)

    async def attach(self, context: BrowserContext, page: Page, catalog: Catalog) -> None:
        await super().attach(context, page, catalog)
        cdp = await context.new_cdp_session(page)
        self._cdp = cdp
        cdp_on(cdp, "WebMCP.toolsAdded", self._on_tools_added)
        cdp_on(cdp, "WebMCP.toolsRemoved", self._on_tools_removed)
        cdp_on(cdp, "WebMCP.toolResponded", self._on_responded)
        cdp_on(cdp, "Page.frameNavigated", functools.partial(self._on_cdp_navigated, cdp))
        cdp_on(cdp, "Page.frameDetached", functools.partial(self._on_cdp_detached, cdp))
        cdp_on(cdp, "Page.frameStartedLoading", self._on_started_loading)
        cdp_on(cdp, "Page.frameStoppedLoading", self._on_stopped_loading)
        page.on("close", lambda _page: self._fail_all())
        try:
            await cdp_send(cdp, "WebMCP.enable")
        except PlaywrightError as exc:
            raise NativeWebMCPUnavailable(
                "This Chromium has no native WebMCP (CDP domain `WebMCP` is missing). "
                "Use --backend polyfill, or a Chromium ≥ 146 with "
                f"--enable-experimental-web-platform-features. {DOCTOR_HINT}"
            ) from exc
        self._events_on = self._news_flowing = True
        await cdp_send(cdp, "Page.enable")
        self._read_tree((await cdp_send(cdp, "Page.getFrameTree"))["frameTree"], None)

    # -- frames ------------------------------------------------------------
    def _read_tree(
        self, node: dict[str, Any], parent: str | None, session: CDPSession | None = None
    ) -> None:
        frame = node["frame"]
        self._cdp_frames[frame["id"]] = {
            "parentId": parent,
            "url": frame.get("url", ""),
            "name": frame.get("name", ""),
        }
        self._held_by(frame["id"], session)
        for child in node.get("childFrames", []):
            self._read_tree(child, frame["id"], session)

    def _held_by(self, cdp_id: str, session: CDPSession | None) -> None:
        """Note which target holds a frame now (None or the page's session: the page's)."""
        if session is None or session is self._cdp:
            self._targets.pop(cdp_id, None)
        else:
            self._targets[cdp_id] = session

    def _session_for(self, cdp_id: str) -> CDPSession | None:
        """The CDP session of the target that holds the frame: Chromium runs its tools and
        reports on them there only (the page's for a frame of the page's process)."""
        return self._targets.get(cdp_id, self._cdp)

    async def _follow_oopif(self, frame: Frame) -> str | None:
        """Follow Chromium's WebMCP in ``frame``'s own target if it runs out of process
        (through the session the page channel attached to it): its frame tree, its
        navigations, and its registry, which turning the domain on there sends whole. The
        frame's CDP id, once it is known; None for a frame of the page's process."""
        if frame.parent_frame is None or frame.is_detached():
            return None
        self._attaching += 1  # readiness: its registry is on its way
        try:
            try:
                session = await self.channel.oopif_session(frame)
            except (PlaywrightError, FrameGone):
                return None
            if session is None or session in self._followed:
                return self._cdp_id(frame)
            self._followed.add(session)
            cdp_on(session, "close", lambda _closed: self._on_target_closed(session))
            cdp_on(session, "WebMCP.toolsAdded", self._on_tools_added)
            cdp_on(session, "WebMCP.toolsRemoved", self._on_tools_removed)
            cdp_on(session, "WebMCP.toolResponded", self._on_responded)
            cdp_on(
                session, "Page.frameNavigated", functools.partial(self._on_cdp_navigated, session)
            )
            cdp_on(session, "Page.frameDetached", functools.partial(self._on_cdp_detached, session))
            try:
                await cdp_send(session, "Page.enable")
                tree = (await cdp_send(session, "Page.getFrameTree"))["frameTree"]
                root: str = tree["frame"]["id"]
                self._oopif_roots[root] = frame
                self._read_tree(tree, tree["frame"].get("parentId"), session)
                # The whole registry of the target's frames comes before the answer.
                await cdp_send(session, "WebMCP.enable")
            except PlaywrightError:
                return None  # its target went away meanwhile
            return root
        finally:
            self._attaching -= 1

    def _on_target_closed(self, session: CDPSession) -> None:
        """An out-of-process frame's target is gone (the frame was removed, or moved to
        another process): the documents it held are gone with it. A frame that lives on
        is reported again by the target that holds it now."""
        self._followed.discard(session)
        for cdp_id in [i for i, held in self._targets.items() if held is session]:
            self._forget_layer(cdp_id, detached=True)
            self._fail_frame(cdp_id)
            self._drop_record(cdp_id)

    def _playwright_frame(self, cdp_id: str) -> Frame | None:
        """The Playwright frame for a CDP frame id: an out-of-process frame's own, else by
        position in the frame tree."""
        root = self._oopif_roots.get(cdp_id)
        if root is not None:
            return None if root.is_detached() else root
        record = self._cdp_frames.get(cdp_id)
        if record is None:
            return None
        parent_id = record["parentId"]
        if parent_id is None:
            return self.page.main_frame
        parent = self._playwright_frame(parent_id)
        if parent is None:
            return None
        siblings = [i for i, r in self._cdp_frames.items() if r["parentId"] == parent_id]
        candidates = [f for f in parent.child_frames if not f.is_detached()]
        # Siblings alike in URL and name (two about:blank iframes, two ads from one URL) are
        # told apart by their order, which CDP and Playwright both keep as they attached:
        # the first alike was taken for each, and its tools were listed as the other's.
        alike = [i for i in siblings if self._cdp_frames[i]["url"] == record["url"]]
        alike = [i for i in alike if self._cdp_frames[i]["name"] == record["name"]]
        matches = [f for f in candidates if (f.url, f.name) == (record["url"], record["name"])]
        if len(matches) == len(alike):
            return matches[alike.index(cdp_id)]
        if len(matches) == 1:
            return matches[0]
        index = siblings.index(cdp_id)
        return candidates[index] if index < len(candidates) else None

    def _cdp_id(self, frame: Frame) -> str | None:
        if frame is self.page.main_frame:  # most calls: no walk of the frame tree
            for cdp_id, record in self._cdp_frames.items():
                if record["parentId"] is None:
                    return cdp_id
        for cdp_id in self._cdp_frames:
            if self._playwright_frame(cdp_id) is frame:
                return cdp_id
        return None

    def _on_cdp_navigated(self, session: CDPSession, params: dict[str, Any]) -> None:
        frame = params["frame"]
        cdp_id = frame["id"]
        self._cdp_frames[cdp_id] = {
            "parentId": frame.get("parentId"),
            "url": frame.get("url", ""),
            "name": frame.get("name", ""),
        }
        # The target that reports a frame's new document holds it now (a frame that moved
        # back into its parent's process is reported by the page's session again).
        self._held_by(cdp_id, session)
        if session is self._cdp:
            self._oopif_roots.pop(cdp_id, None)
        # A new document: its predecessor's tools and calls are gone, and so are the frames
        # it contained (Chromium sends no frameDetached for them; left here, their ids
        # would shadow the new document's frames of the same name).
        self._forget_layer(cdp_id)
        self._fail_frame(cdp_id)
        self._forget_descendants(cdp_id)
        # The new document's tools, read directly: the catalog changes once, by the real
        # difference. (Playwright's framenavigated reads the frame too; direct reads go one
        # at a time, so whichever comes second is most often answered `unchanged`.)
        self._spawn(self._publish(cdp_id, direct=True))

    def _forget_descendants(self, cdp_id: str) -> None:
        for child in [i for i, r in self._cdp_frames.items() if r["parentId"] == cdp_id]:
            self._forget_descendants(child)
            self._forget_layer(child, detached=True)
            self._fail_frame(child)
            self._drop_record(child)

    def _drop_record(self, cdp_id: str) -> None:
        self._cdp_frames.pop(cdp_id, None)
        self._targets.pop(cdp_id, None)
        self._oopif_roots.pop(cdp_id, None)

    def _forget_layer(self, cdp_id: str, *, detached: bool = False) -> None:
        """A frame's document is gone: so are its tools, in Chromium and in the layer. Its
        records are kept aside until the next document's come (the same page loaded again
        has the same tools: their records keep their revisions, their texts their parsed
        snapshots, and nothing is built again); a detached frame's are not."""
        native, layer = self._native.pop(cdp_id, {}), self._layer.pop(cdp_id, {})
        if detached:
            self._retired.pop(cdp_id, None)
            self._direct_reads.pop(cdp_id, None)
            self._reads_started.pop(cdp_id, None)
            self._reads_done.pop(cdp_id, None)
        elif native or layer:
            self._retired[cdp_id] = (native, layer)
        self._reports.pop(cdp_id, None)
        self._layer_news.pop(cdp_id, None)
        self._news.pop(cdp_id, None)
        self._unanswered.discard(cdp_id)
        self._rereads.pop(cdp_id, None)

    def _on_cdp_detached(self, session: CDPSession, params: dict[str, Any]) -> None:
        cdp_id = params["frameId"]
        if params.get("reason") == "swap" and self._session_for(cdp_id) is not session:
            # The frame moved to another process, whose target already reported it: it
            # lives on there (its old document's end was told by the new one's arrival).
            return
        self._forget_descendants(cdp_id)  # those of another process say nothing here
        self._forget_layer(cdp_id, detached=True)
        self._fail_frame(cdp_id)
        self._drop_record(cdp_id)

    # -- the WebMCP domain is off while a top-level document loads ---------------------
    def _is_top(self, cdp_id: str) -> bool:
        record = self._cdp_frames.get(cdp_id)
        return record is not None and record["parentId"] is None

    def _on_started_loading(self, params: dict[str, Any]) -> None:
        """A top-level document starts loading: the domain goes off until it stopped
        loading (or :data:`EVENTS_OFF_MAX_S` passed). Its registrations are not followed
        one event each meanwhile; its first listing reads Chromium's registry itself, and
        turning the domain on again brings the whole registry in one event."""
        if self._is_top(params.get("frameId", "")):
            self._spawn(self._events_off_while_loading())

    async def before_navigation(self) -> None:
        # Off before the harness navigates: the event that says a page started loading may
        # reach Python after its first scripts ran.
        await self._events_off_while_loading()

    async def _events_off_while_loading(self) -> None:
        self._loads += 1
        self._stop_events_timer()
        loop = asyncio.get_running_loop()
        self._events_timer = loop.call_later(EVENTS_OFF_MAX_S, self._events_back_on)
        await self._events(on=False)

    def _on_stopped_loading(self, params: dict[str, Any]) -> None:
        cdp_id = params.get("frameId", "")
        if self._is_top(cdp_id):
            self._spawn(self._events_on_after_reads(cdp_id))

    async def _events_on_after_reads(self, cdp_id: str) -> None:
        """The domain back on once the document's direct reads in flight are in the catalog
        (the navigation's own, sent as it began): the whole registry it then sends matches
        what they read and changes nothing (sent while they are answered, it would overtake
        them, and the catalog would be read once more). :data:`EVENTS_OFF_MAX_S` bounds it."""
        load = self._loads
        reads = self._direct_reads.get(cdp_id)
        if reads is not None:
            async with reads:
                pass
        if load == self._loads:  # else another document began loading meanwhile: its turn
            self._events_back_on()

    def _events_back_on(self) -> None:
        self._spawn(self._events(on=True))

    def _stop_events_timer(self) -> None:
        if self._events_timer is not None:
            self._events_timer.cancel()
            self._events_timer = None

    async def _events(self, *, on: bool) -> None:
        """Turn the WebMCP domain on or off (nothing when it already is). Off, Chromium
        still answers the calls it runs (``toolResponded``): only registry news stops."""
        if on:
            self._stop_events_timer()
        if self._cdp is None or self._events_on == on:
            return
        self._events_on = on
        self._news_flowing = False
        with contextlib.suppress(PlaywrightError):  # the page is closing
            await cdp_send(self._cdp, "WebMCP.enable" if on else "WebMCP.disable")
        # Chromium sends the whole registry before it answers `enable`.
        self._news_flowing = on and self._events_on

    async def idle_within(self, window: float) -> bool:
        """Not while CDP's news of the registry is held back (the domain off while a
        document loads, or on but its whole registry not yet heard), nor while a frame's
        publication is due: what Chromium registered meanwhile (a form whose ``toolname``
        a script set) reaches the catalog only by them, nor while one is under way.
        Nor while an out-of-process frame's target is being followed (its registry comes
        when that is done). Otherwise, as the polyfill's."""
        if not self._news_flowing or self._publish_due or self._publishing or self._attaching:
            return False
        return await super().idle_within(window)

    # -- the registry ------------------------------------------------------
    def _on_tools_added(self, params: dict[str, Any]) -> None:
        self.catalog.readiness.touch()
        params = well_formed(params)  # page text: names, descriptions, schemas
        touched = set()
        for tool in params.get("tools", []):
            if self._remember(tool["frameId"], tool):
                touched.add(tool["frameId"])
            self._hear(tool["frameId"], tool["name"])
        # A frame whose every tool CDP named is in the catalog as it says (the whole
        # registry comes again each time the domain is turned on) has nothing to publish.
        for cdp_id in touched:
            self._schedule_publish(cdp_id)

    def _remember(self, cdp_id: str, record: dict[str, Any]) -> bool:
        """Keep a tool record of Chromium's registry (a new record: a new revision, unless
        it says what the one it replaces said: the whole registry comes again each time the
        domain is turned on, and an unchanged tool is not built again); whether the frame's
        catalog lacks it as it is (a new tool, a changed one, or one taken back from the
        previous document's)."""
        known = self._native.setdefault(cdp_id, {})
        current = known.get(record["name"])
        previous = current or self._retired.get(cdp_id, ({}, {}))[0].get(record["name"])
        meaning = record[_MEANING_KEY] = _meaning(record)  # kept: read again when replaced
        if previous is not None and previous.get(_MEANING_KEY) == meaning:
            record[_REVISION_KEY] = previous[_REVISION_KEY]
        else:
            record[_REVISION_KEY] = next(self._revisions)
        known[record["name"]] = record
        return current is None or current[_REVISION_KEY] != record[_REVISION_KEY]

    def _on_tools_removed(self, params: dict[str, Any]) -> None:
        self.catalog.readiness.touch()
        touched = set()
        for tool in params.get("tools", []):
            self._native.get(tool["frameId"], {}).pop(tool["name"], None)
            self._hear(tool["frameId"], tool["name"])
            touched.add(tool["frameId"])
        for cdp_id in touched:
            self._schedule_publish(cdp_id)

    def _hear(self, cdp_id: str, name: str) -> None:
        self._heard += 1
        self._news.setdefault(cdp_id, {})[name] = self._heard

    def _schedule_publish(self, cdp_id: str, *, after: float = 0.0) -> None:
        """Publish a frame's registry (``after`` seconds from now at the earliest), at most
        once per PUBLISH_INTERVAL_S: Chromium adds and removes a flapping form's tool at
        every flap, and the catalog (and the agent's `tools/list_changed`) must not follow
        each one, as with the polyfill."""
        frame = self._playwright_frame(cdp_id)
        if frame is not None:
            self._versions.pop(frame, None)  # CDP's news is not in the catalog yet
        if cdp_id in self._publish_due:
            return
        loop = asyncio.get_running_loop()
        due = max(
            loop.time() + after,
            self._published.get(cdp_id, -PUBLISH_INTERVAL_S) + PUBLISH_INTERVAL_S,
        )
        self._publish_due.add(cdp_id)

        async def publish() -> None:
            await asyncio.sleep(due - loop.time())
            self._publish_due.discard(cdp_id)
            self._published[cdp_id] = loop.time()
            # While the domain is off (a top-level document loading), CDP's view cannot
            # follow the layer's news: only a direct read completes it. It waits for the
            # read in flight (the navigation's own) and is most often answered `unchanged`,
            # where a layer listing would bring every record again.
            # So does a frame whose registry and layer disagreed (see _agreed).
            layer = self._layer_news.pop(cdp_id, None)
            direct = not self._events_on or cdp_id in self._rereads
            self._publishing += 1
            try:
                await self._publish(cdp_id, direct=direct, layer=layer)
            finally:
                self._publishing -= 1

        self._spawn(publish())

    async def _on_message(self, frame: Frame, message: Message) -> None:
        if message.get("type") == "tools":
            self.catalog.readiness.touch()
            # The layer's side registry changed: re-merge (Chromium stays the authority),
            # with the layer's records as its last message gives them (no need to ask
            # again), at most once per PUBLISH_INTERVAL_S like CDP's news: a page that
            # registers tools one task at a time sends a message for each.
            cdp_id = self._cdp_id(frame)
            if cdp_id is not None:
                self._layer_news[cdp_id] = message
                self._schedule_publish(cdp_id)
            elif frame.parent_frame is not None:
                # A frame CDP has not told of on the page's target: a cross-site one, in a
                # process of its own. Its target is followed; its registry read then.
                self._attaching += 1  # now: readiness must not pass before the task runs
                self._spawn(self._follow_and_publish(frame))
        elif message.get("type") == "submitted":
            call_id = self._mark_submitting(frame, message.get("name"))
            self._spawn(self._on_submitted(frame, message, call_id))
        else:
            await super()._on_message(frame, message)

    # -- <form toolname>: CDP says nothing when a submission goes ahead -------------
    def _owns(self, call_id: str, frame: Frame, tool_name: Any, *, form: bool) -> bool:
        """Whether a page message about ``tool_name`` from ``frame`` may concern the call:
        it runs in that very frame, for a tool of that name (a ``<form toolname>`` when
        ``form``). Calls go through CDP, so the page cannot name them; a message from
        another frame (an embedding page, a third-party iframe) never settles a call."""
        tool, _ = self._call_tools.get(call_id, (None, 0.0))
        running_in = self._call_frames.get(call_id, (None, 0))[0]
        return (
            tool is not None
            and running_in is frame
            and tool.name == tool_name
            and (not form or tool.source == "declarative")
        )

    async def _call_running(
        self, frame: Frame, tool_name: Any, since: float, *, form: bool = True
    ) -> str | None:
        """The harness's call of that tool in that frame, started before `since` (waiting
        briefly for invokeTool's reply, which may come after what the page reports)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 1.0
        while True:
            for call_id, (_, started) in list(self._call_tools.items()):
                if (
                    started <= since
                    and call_id in self._running
                    and self._owns(call_id, frame, tool_name, form=form)
                ):
                    return call_id
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.02)

    def _mark_submitting(self, frame: Frame, tool_name: Any) -> str | None:
        """At once, before CDP's answer to the navigation can land: the running call of that
        form in that frame ends with its submission, not with what Chromium says once the
        page navigated."""
        for call_id in list(self._call_tools):
            invocation = self._running.get(call_id)
            if invocation is not None and self._owns(call_id, frame, tool_name, form=True):
                self._submitting.add(invocation)
                return call_id
        return None

    async def _on_submitted(self, frame: Frame, message: Message, call_id: str | None) -> None:
        # Chromium resolves such a call to null and sends no toolResponded (or, when the
        # page itself navigates, "Completed" with [] after the navigation).
        details = message.get("submitted")
        if call_id is None:
            now = asyncio.get_running_loop().time()
            call_id = await self._call_running(frame, message.get("name"), now)
        if call_id is None or not isinstance(details, dict):
            return
        invocation = self._running.get(call_id, "")
        future = self._pending.get(invocation)
        if future is None or future.done():
            return
        # Its frame's navigation is the outcome, not an interruption (see _fail_frame).
        self._submitting.add(invocation)
        running_in, before = self._call_frames.get(call_id, (None, FrameMark(0, 0)))
        raw = await self._submission_result(running_in, details, before)
        if not future.done():
            future.set_result(raw)

    async def _reviewed_call(self, frame: Frame, message: Message) -> str | None:
        now = asyncio.get_running_loop().time()
        return await self._call_running(frame, message.get("name"), now)

    async def _questioning_call(self, frame: Frame, message: Message) -> tuple[str, str] | None:
        # Calls go through CDP, so the page cannot name them: the harness's running call of
        # the tool the page names, in the frame that asks (its name is the harness's record).
        now = asyncio.get_running_loop().time()
        call_id = await self._call_running(frame, message.get("name"), now, form=False)
        if call_id is None:
            return None
        return call_id, self._call_tools[call_id][0].name

    async def _publish(
        self, cdp_id: str, *, direct: bool = False, layer: Message | None = None
    ) -> None:
        """Publish a frame's tools: Chromium's registry as CDP reported it, merged with the
        layer's records (``layer``: as its ``tools`` message gave them; else read with
        ``list``); ``direct``: read Chromium's registry itself too (a listing).

        A frame's direct reads go one at a time: the next is sent once the last is in the
        catalog, with the versions it holds, and is most often answered ``unchanged`` (a
        navigation's own read and the listing right after it would each bring the whole
        registry otherwise); those asked for while one is under way share the next."""
        if not direct:
            await self._publish_now(cdp_id, direct=False, layer=layer)
            return
        # The first read to start from now on does for this one (the navigation's own,
        # Playwright's, a layer report's and a listing's often come together).
        wanted = self._reads_started.get(cdp_id, 0) + 1
        async with self._direct_reads.setdefault(cdp_id, asyncio.Lock()):
            if self._reads_done.get(cdp_id, 0) >= wanted:
                return
            started = self._reads_started[cdp_id] = self._reads_started.get(cdp_id, 0) + 1
            await self._publish_now(cdp_id, direct=True, layer=layer)
            self._reads_done[cdp_id] = started

    async def _publish_now(self, cdp_id: str, *, direct: bool, layer: Message | None) -> None:
        frame = self._playwright_frame(cdp_id)
        if frame is None or frame.is_detached():
            return
        extras: dict[str, LayerRecord] = {}
        declarations: Any = None
        versions: StateVersions | None = None
        overtaken: set[str] = set()  # tools CDP's news named while the registry was read
        try:
            listing: Any = None
            if layer is not None:
                self._layer_records(cdp_id, layer)
            if not direct and self._in_step(cdp_id, layer is not None):
                # The layer reports every change of its records itself (`tools` messages),
                # and its last report explains what changed: no need to ask it again.
                listing = self._reports.get(cdp_id)
            if listing is None:
                try:
                    listing, overtaken = await self._read(frame, cdp_id, direct=direct)
                except TimeoutError:  # its script is busy: the catalog stays as last read
                    await self.note_unanswered(frame)
                    return
                await self.note_answered(frame)
                if isinstance(listing, dict) and listing.get("unchanged") is True:
                    return
                if isinstance(listing, dict):
                    declarations = listing.get("declarations")
                    versions = StateVersions(listing.get("version"), listing.get("seedVersion"))
            extras = self._layer_records(cdp_id, listing)
            registry = listing.get("registry") if isinstance(listing, dict) else None
            if direct and isinstance(registry, list):
                self._unanswered.discard(cdp_id)
                listed = self._reconcile(cdp_id, registry, extras, overtaken=overtaken)
                if not self._agreed(cdp_id, listed, extras):
                    versions = None  # no later read may be answered `unchanged` for now
            elif direct and registry == "timeout":
                if cdp_id not in self._unanswered:
                    log.warning(UNANSWERED_LOG, "getTools()", frame.url)
                self._unanswered.add(cdp_id)
                # Chromium's getTools() did not settle in time (a frame's WebMCP requests
                # can go unanswered): the layer saw each registration it records, and
                # CDP's later events still come; nothing is removed on its word alone.
                # (A getTools() that failed — a document.domain document's SecurityError
                # — leaves CDP's view alone: Chromium has no tools there.)
                self._reconcile(
                    cdp_id,
                    [extra[1] for extra in extras.values()],
                    extras,
                    complete=False,
                    overtaken=overtaken,
                )
        except (PlaywrightError, FrameGone):
            listing = None  # no layer in this document (yet): Chromium's fields alone
        refused = listing.get("refused") if isinstance(listing, dict) else None
        # Each tool under (its record's revision, the layer's text less its registration
        # number): an unchanged tool is not merged, parsed or built again.
        entries: list[Entry] = [
            (
                (name, native.get(_REVISION_KEY), extra[0] if extra else None),
                functools.partial(_merge, native, extra[1] if extra else None),
                extra[2] if extra else None,
            )
            for name, native in self._native.get(cdp_id, {}).items()
            for extra in [extras.get(name)]
        ]
        info = await self.frames.info(frame)
        top = origin_of(self.page.main_frame.url)
        tools, warnings = self.builds.build(info, top, entries)
        if cdp_id in self._unanswered:
            warnings = [*warnings, _unanswered_warning(info)]
        self.catalog.replace_frame(info, tools, [*warnings, *refused_warnings(refused, info)])
        if declarations is not None:
            self.seed.report(info, declarations, top)
        if direct and versions is not None:
            # Chromium's registry read and reconciled with the layer's listing: the catalog
            # holds this document as of that listing (CDP's events alone may lag behind).
            self._versions[frame] = versions
        else:
            self._versions.pop(frame, None)

    def _agreed(self, cdp_id: str, listed: set[str], extras: dict[str, LayerRecord]) -> bool:
        """Whether a read of a frame found the same tools in Chromium's registry (``listed``)
        as in the layer's records; if not, the frame is read again a little later (see
        :data:`REREAD_FOR_S`), and the catalog is not ready meanwhile (``_publish_due``).

        They disagree while Chromium has not yet registered a `<form toolname>` the layer
        saw declared (or taken back one the layer saw go). The layer's records of such a
        document do not change when Chromium catches up, so the versions of a read that
        disagreed are not kept: a later read would be answered `unchanged`, and CDP's events
        do not always tell of it (none come while a page loads, and turning the domain on
        again brought only the main frame's tools on the pages measured)."""
        if listed == set(extras):
            self._rereads.pop(cdp_id, None)
            return True
        now = asyncio.get_running_loop().time()
        since = self._rereads.setdefault(cdp_id, now)
        if now - since < REREAD_FOR_S:
            low, high = REREAD_AFTER_S
            self._schedule_publish(cdp_id, after=min(max(now - since, low), high))
        return False

    async def _read(self, frame: Frame, cdp_id: str, *, direct: bool) -> tuple[Any, set[str]]:
        """The layer's listing of a frame, with Chromium's registry when ``direct`` (then
        answered ``unchanged`` when the catalog holds the document as of a direct read and
        no CDP event came since: see :meth:`_schedule_publish`); and the tools CDP's news
        named while it was read. That news is in the catalog already, and may be newer
        than the read (Chromium's ``getTools()`` answers by one way, CDP's events come by
        another): for those tools, the read's word does not count.

        The layer's texts come only when they changed since its last report the harness
        holds (a navigation's read follows the report of the whole registry at once)."""
        command = self._list_command(frame, registry=True) if direct else {"op": "list"}
        held = self._layer_news.get(cdp_id) or self._reports.get(cdp_id) or {}
        if isinstance(held.get("version"), str) and isinstance(held.get("tools"), list):
            command["knownTools"] = held["version"]
        since = self._heard
        listing = parse_answer(await self.channel.command(frame, command, timeout=READ_WAIT_S))
        if isinstance(listing, dict) and listing.get("tools") is None and "knownTools" in command:
            listing["tools"] = held["tools"]
        news = self._news.get(cdp_id, {})
        return listing, {name for name, heard in news.items() if heard > since}

    def _layer_records(self, cdp_id: str, listing: Any) -> dict[str, LayerRecord]:
        """The layer's snapshots of a frame's tools, by name (each text parsed once; a
        text that differs from one seen only by its registration number is not parsed
        again: :func:`split_registration`)."""
        texts = listing.get("tools") if isinstance(listing, dict) else None
        known = self._layer.get(cdp_id, {})
        retired = self._retired.get(cdp_id, ({}, {}))[1]
        current: dict[str, dict[str, Any]] = {}
        extras: dict[str, LayerRecord] = {}
        for text in texts if isinstance(texts, list) else []:
            if not isinstance(text, str):
                continue
            key, registration = split_registration(text)
            snap = known.get(key) or retired.get(key) or read_snapshot(text)
            if isinstance(snap, Unreadable) and snap.name is not None:
                extras[snap.name] = (key, snap, registration)
            elif isinstance(snap, dict) and isinstance(snap.get("name"), str):
                current[key] = snap
                extras[snap["name"]] = (key, snap, registration)
        self._layer[cdp_id] = current
        if isinstance(listing, dict):
            self._reports[cdp_id] = {
                "tools": texts,
                "refused": listing.get("refused"),
                "version": listing.get("version"),
            }
        return extras

    def _in_step(self, cdp_id: str, from_layer: bool) -> bool:
        """Whether CDP's view of a frame and the layer's last report agree on what changed:
        after a layer's report (``from_layer``), CDP knows every tool it lists; after CDP's
        events, the report has a record of every tool CDP names. Otherwise the layer is
        asked again (the other side's news is on its way; the round trip gives it time)."""
        if cdp_id not in self._reports:
            return False
        layer = {snap["name"] for snap in self._layer.get(cdp_id, {}).values()}
        native = set(self._native.get(cdp_id, {}))
        return bool(native) and (layer <= native if from_layer else native <= layer)

    def _reconcile(
        self,
        cdp_id: str,
        registry: list[Any],
        extras: dict[str, LayerRecord],
        *,
        complete: bool = True,
        overtaken: Collection[str] = (),
    ) -> set[str]:
        """Make the CDP-fed copy of a frame's registry what Chromium's ``getTools()`` said
        (``complete``: the whole registry, so what it lacks is gone; else only added to),
        but for the tools CDP's news named since (``overtaken``): their news stands. Gives
        the names the registry listed.

        CDP's ``toolsAdded``/``toolsRemoved`` arrive batched and late: a listing asked for
        right after a registration could miss the tool (or keep a removed one).
        """
        known = self._native.setdefault(cdp_id, {})
        listed: set[str] = set()
        for entry in registry:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            name = entry["name"]
            listed.add(name)
            if name in known or name in overtaken:
                continue
            said_by_layer = extras.get(name, ("", {}, None))[1]
            extra = said_by_layer if isinstance(said_by_layer, dict) else {}
            source = extra.get("source") or ("script" if "annotations" in entry else "declarative")
            annotations = entry.get("annotations")
            if not isinstance(annotations, dict):
                annotations = {}
                # Nor whether a form submits itself: the layer read it from the same
                # attribute. CDP's record says it too, and a record that differs from this
                # one is taken (and published) when it comes.
                said = extra.get("annotations")
                if source == "declarative" and isinstance(said, dict) and said.get("autosubmit"):
                    annotations = {"autosubmit": True}
            record = {
                "name": name,
                "description": entry.get("description") or "",
                "inputSchema": _schema_of(entry),
                "annotations": annotations,
                "frameId": cdp_id,
                # getTools() does not say which tools are forms; the layer's record does.
                _SOURCE_KEY: source,
            }
            self._remember(cdp_id, record)
        for name in [n for n in known if complete and n not in listed and n not in overtaken]:
            known.pop(name, None)
        return listed

    async def refresh(self) -> None:
        # Out-of-process frames not followed yet first (their targets are their own).
        known = {self._playwright_frame(cdp_id) for cdp_id in list(self._cdp_frames)}
        for frame in [f for f in self.page.frames if f not in known and f.parent_frame]:
            await self._follow_oopif(frame)
        for cdp_id in list(self._cdp_frames):
            await self._publish(cdp_id, direct=True)

    async def _relist(self, frame: Frame) -> None:
        # A frame navigated: its tools are Chromium's registry, merged (not the layer's
        # records alone, which a publication would replace at once).
        cdp_id = self._cdp_id(frame)
        if cdp_id is None:
            cdp_id = await self._follow_oopif(frame)
        if cdp_id is not None:
            await self._publish(cdp_id, direct=True)

    async def _follow_and_publish(self, frame: Frame) -> None:
        """Follow an out-of-process frame's target, then publish the frames it holds (the
        caller counted it in ``_attaching``, which this takes back when done)."""
        try:
            root = await self._follow_oopif(frame)
            if root is None:
                return
            held = [i for i, s in self._targets.items() if s is self._targets.get(root)]
            for cdp_id in held:
                await self._publish(cdp_id, direct=True)
        finally:
            self._attaching -= 1

    # -- calls -------------------------------------------------------------
    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        if self.seed.owns(tool):
            return await self.seed.execute(tool, arguments, call_id, meta)
        frame = self._frame_for(tool)
        cdp_id = self._cdp_id(frame) if frame is not None else None
        session = self._session_for(cdp_id) if cdp_id is not None else None
        if frame is None or cdp_id is None or session is None:
            return RawResult(status="navigation")
        if tool.source == "declarative":
            changed = _may_change(arguments)
            arguments = form_input(arguments)
            if changed:
                refused = await self._exact_fill_problem(frame, tool, arguments)
                if refused is not None:
                    return refused
        started = asyncio.get_running_loop().time()
        self._call_frames[call_id] = (frame, self.mark(frame))
        # A script tool runs through Chromium's own executeTool() in the page (the layer's
        # `invoke`): one round trip, the registration check and the call's options included.
        # CDP's invokeTool (which needs the layer's `prepare` first) runs the forms, whose
        # submissions must be agent-invoked; it also refuses input with a non-ASCII key
        # ("Invalid parameters"), which executeTool() takes.
        in_page = tool.source == "script" or _has_non_ascii_key(arguments)
        try:
            if in_page:
                invocation = f"page:{call_id}"
            else:
                if meta or tool.registration is not None:
                    # The call's options, and the registration it was checked against: the
                    # layer's wrapper runs no other definition of the tool.
                    await self.channel.command(
                        frame,
                        {
                            "op": "prepare",
                            "name": tool.name,
                            "meta": meta or None,
                            "registration": tool.registration,
                        },
                    )
                reply = await cdp_send(
                    session,  # the target that holds the frame (an OOPIF's own)
                    "WebMCP.invokeTool",
                    {"frameId": cdp_id, "toolName": tool.name, "input": arguments},
                )
                invocation = reply["invocationId"]
        except (FrameGone, PlaywrightError) as exc:
            return _not_run(exc)
        future: asyncio.Future[RawResult] = asyncio.get_running_loop().create_future()
        self._pending[invocation] = future
        if tool.source == "declarative":
            self._declarative.add(invocation)
        self._invocation_frame[invocation] = cdp_id
        self._running[call_id] = invocation
        self._call_tools[call_id] = (tool, started)
        self._begin_call(call_id)
        early = self._early.pop(invocation, None)
        if early is not None:
            self._on_responded(early)
        try:
            if in_page:
                command = {
                    "op": "invoke",
                    "callId": call_id,
                    "name": tool.name,
                    "input": arguments,
                    "meta": meta or None,
                    # The registration the call was checked against: the layer runs no other.
                    "registration": tool.registration,
                }
                # In this task (no task of its own): what ends the call otherwise (a
                # navigation, a cancel, a submission) settles `future` meanwhile.
                await self._invoke_in_page(frame, command, invocation, future)
            raw = await future
            if tool.source == "declarative" and _chromiums_form_error(raw):
                raw = await self._with_refusal(frame, tool, arguments, raw)
            return raw
        finally:
            if not in_page:  # no answer of its own: the frame is asked after delivery
                self._call_ended(frame, call_id, None)
            self._pending.pop(invocation, None)
            self._invocation_frame.pop(invocation, None)
            self._running.pop(call_id, None)
            self._call_tools.pop(call_id, None)
            self._call_frames.pop(call_id, None)
            self._end_questions(call_id)
            self._submitting.discard(invocation)
            self._declarative.discard(invocation)
            self._cancel_reasons.pop(invocation, None)

    async def _exact_fill_problem(
        self, frame: Frame, tool: Tool, arguments: dict[str, Any]
    ) -> RawResult | None:
        """The harness fills a form exactly (the polyfill's ``invoke`` refuses a value the
        form would change as it is set); here Chromium's own fill runs the call, and nothing
        hooks it, so the layer is asked first (``check``). None: fill it."""
        try:
            answer = await self.channel.command(
                frame, {"op": "check", "name": tool.name, "input": arguments}
            )
        except (FrameGone, PlaywrightError) as exc:
            return _not_run(exc)
        problem = answer.get("problem") if isinstance(answer, dict) else None
        if not isinstance(problem, str):
            return None
        parameter = answer.get("parameter")
        refusal = FormRefusal(
            kind="changed", parameter=parameter if isinstance(parameter, str) else None
        )
        return RawResult(
            status="error", error_name="UnknownError", error_message=problem, refusal=refusal
        )

    async def _with_refusal(
        self, frame: Frame, tool: Tool, arguments: dict[str, Any], raw: RawResult
    ) -> RawResult:
        """Chromium's own error for a form's call, with how the form refused the input, if it
        did. Chromium says it only in words, which differ between its versions; so the layer
        is asked (``check``) whether Chromium's fill refuses a value of ``arguments`` — a
        refused fill changes nothing, so the form is as it was — and a validation failure is
        known by Chromium's own prefix, which only Chromium's errors carry here (a page's
        error reaches CDP as an exception, and the layer's ``invoke`` as its own name)."""
        if (raw.error_message or "").startswith(VALIDATION_FAILED):
            return raw.model_copy(update={"refusal": FormRefusal(kind="validation")})
        try:
            answer = await self.channel.command(
                frame, {"op": "check", "name": tool.name, "input": arguments}
            )
        except (FrameGone, PlaywrightError):
            return raw  # the document went away since: nothing to ask
        refused = answer.get("refused") if isinstance(answer, dict) else None
        if not isinstance(refused, str):
            return raw
        return raw.model_copy(update={"refusal": FormRefusal(kind="fill", parameter=refused)})

    def _on_responded(self, params: dict[str, Any]) -> None:
        invocation = params.get("invocationId", "")
        future = self._pending.get(invocation)
        if future is None:
            if len(self._early) < 64:  # calls made by others (the page itself) are not ours
                self._early[invocation] = params
            return
        if invocation in self._submitting:
            return  # a form submission that went ahead: _on_submitted answers
        if not future.done():
            raw = _raw_from_response(well_formed(params))
            reason = self._cancel_reasons.get(invocation)
            if raw.status == "cancelled" and reason is not None:
                raw = RawResult(status="cancelled", error_message=reason)
            future.set_result(raw)

    async def _invoke_in_page(
        self,
        frame: Frame,
        command: dict[str, Any],
        invocation: str,
        future: asyncio.Future[RawResult],
    ) -> None:
        """Run a call through the layer's ``invoke`` (Chromium's executeTool in the page)."""
        try:
            answer = await self.channel.command(frame, command)
        except (FrameGone, PlaywrightError) as exc:
            if isinstance(exc, PlaywrightError) and not is_gone(exc):
                raise
            answer = None
        if future.done() or invocation in self._submitting:
            return  # cancelled, or a submission that went ahead: _on_submitted answers
        self._call_ended(frame, str(command["callId"]), answer)
        if isinstance(answer, dict) and answer.get("status") == "unanswered":
            log.warning(UNANSWERED_LOG, "a call's getTools()", frame.url)
        submission = isinstance(answer, dict) and answer.get("status") == "ok"
        if answer is None or (submission and answer.get("json") is None):
            # The document went away, or a form's submission went ahead (executeTool gives
            # null): the page's `submitted` report decides, as for CDP's calls.
            if invocation in self._declarative:
                await self._fail_unless_submitted(invocation, future)
                if not future.done() and answer is not None:
                    future.set_result(raw_from_answer(answer))
                return
            if answer is None:
                future.set_result(RawResult(status="navigation"))
                return
        future.set_result(raw_from_answer(answer))

    def _fail_frame(self, cdp_id: str) -> None:
        for invocation, frame_id in list(self._invocation_frame.items()):
            future = self._pending.get(invocation)
            if invocation in self._submitting:
                continue
            if frame_id == cdp_id and future is not None and not future.done():
                if invocation in self._declarative:
                    # The page reported (or is reporting) whether the form's submission went
                    # ahead; its message may be read after this navigation.
                    self._spawn(self._fail_unless_submitted(invocation, future))
                else:
                    future.set_result(RawResult(status="navigation"))

    async def _fail_unless_submitted(
        self, invocation: str, future: asyncio.Future[RawResult]
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SUBMISSION_REPORT_WAIT_S
        while invocation not in self._submitting and loop.time() < deadline:
            if future.done():
                return
            await asyncio.sleep(0.02)
        if invocation not in self._submitting and not future.done():
            future.set_result(RawResult(status="navigation"))

    def _fail_all(self) -> None:
        self._stop_events_timer()  # the page closed
        for future in self._pending.values():
            if not future.done():
                future.set_result(RawResult(status="navigation"))

    async def cancel(self, call_id: str, reason: str) -> None:
        if self.seed.cancel(call_id, reason):
            return
        invocation = self._running.get(call_id)
        session = self._session_for(self._invocation_frame.get(invocation or "", ""))
        if invocation is None or session is None:
            return
        if invocation.startswith("page:"):
            frame = self._call_frames.get(call_id, (None, 0))[0]
            future = self._pending.get(invocation)
            if future is not None and not future.done():
                future.set_result(RawResult(status="cancelled", error_message=reason))
            if frame is not None:
                with contextlib.suppress(PlaywrightError, FrameGone):
                    await self.channel.command(
                        frame, {"op": "cancel", "callId": call_id, "reason": reason}
                    )
            return
        self._cancel_reasons[invocation] = reason
        with contextlib.suppress(PlaywrightError):  # already finished, or the page is gone
            await cdp_send(session, "WebMCP.cancelInvocation", {"invocationId": invocation})


def _unanswered_warning(info: FrameInfo) -> CatalogWarning:
    return CatalogWarning(
        code="chromium-unanswered",
        message=(
            f"Chromium's WebMCP did not answer getTools() in the frame {info.key!r}: its "
            "tools are listed as the page registered them, but Chromium may not have them, "
            "and calls to them may end unanswered. This is a Chromium fault seen under "
            "load; loading the page again gives the frame a new document."
        ),
    )


def _not_run(exc: FrameGone | PlaywrightError) -> RawResult:
    """How a call ends whose command to the page failed before the tool ran: the document
    went away (a navigation), or the browser refused the command."""
    if isinstance(exc, FrameGone) or is_gone(exc):
        return RawResult(status="navigation")
    return RawResult(status="error", error_name="NotFoundError", error_message=str(exc))


VALIDATION_FAILED = "Form validation failed: "
"""How Chromium begins its error for a form its constraint validation refused."""


def _chromiums_form_error(raw: RawResult) -> bool:
    """Whether ``raw`` is Chromium's own error for a ``<form toolname>``'s call (a form
    throws nothing of the page's: Chromium rejects with an ``UnknownError``), not yet known
    as a refusal."""
    return raw.status == "error" and raw.error_name == "UnknownError" and raw.refusal is None


def _may_change(arguments: dict[str, Any]) -> bool:
    """Whether a form could change one of ``arguments`` as it is set: only a number (a range
    rounds it to its step) or text with a line break (a one-line field drops it) can be;
    a call with neither needs no ``check``."""
    return any(
        (isinstance(value, int | float) and not isinstance(value, bool))
        or (isinstance(value, str) and ("\n" in value or "\r" in value))
        for value in arguments.values()
    )


def _has_non_ascii_key(value: Any) -> bool:
    """Whether any object key in ``value`` (at any depth) has a non-ASCII character."""
    if isinstance(value, dict):
        return any(not k.isascii() or _has_non_ascii_key(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_non_ascii_key(v) for v in value)
    return False


def _meaning(record: dict[str, Any]) -> tuple[Any, ...]:
    """What a tool record (CDP's, or one read from ``getTools()``) says of the tool."""
    return (
        record.get("description"),
        record.get("inputSchema"),
        _annotations(record),
        record.get(_SOURCE_KEY) or ("declarative" if "backendNodeId" in record else "script"),
    )


def _annotations(record: dict[str, Any]) -> dict[str, Any]:
    """A record's annotations by the spec's names (CDP drops the "Hint"), unset ones left out."""
    return {
        _CDP_ANNOTATIONS.get(k, k): v
        for k, v in (record.get("annotations") or {}).items()
        if v is not False
    }


def _schema_of(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A ``getTools()`` entry's inputSchema (sent as its own JSON text; None: none given,
    or one the harness cannot read — the layer's record of the tool says which); an entry
    that is the layer's own snapshot holds it parsed."""
    text = entry.get("inputSchema")
    if isinstance(text, dict):
        return text
    schema = read_snapshot(text) if isinstance(text, str) else None
    return schema if isinstance(schema, dict) else None  # Unreadable (too deep) included


def _merge(native: dict[str, Any], extra: dict[str, Any] | Unreadable | None) -> Any:
    """Chromium's view of a tool, completed by the layer's record of what the page gave
    (one the harness cannot read leaves the tool out, with a warning, as the polyfill does)."""
    if isinstance(extra, Unreadable):
        return extra
    annotations = _annotations(native)
    snap: dict[str, Any] = {
        "name": native["name"],
        "description": native.get("description", ""),
        # CDP leaves out some schemas (a non-ASCII parameter name): the layer has a copy.
        "inputSchema": native.get("inputSchema")
        or (extra or {}).get("inputSchema")
        or {"type": "object"},
        "annotations": annotations,
        "source": native.get(_SOURCE_KEY)
        or ("declarative" if "backendNodeId" in native else "script"),
    }
    if extra is not None and extra.get("source", snap["source"]) == snap["source"]:
        for key in (
            "title",
            "outputSchema",
            "annotations",
            "surface",
            "hasResolve",
            "exposedTo",
            "registration",
        ):
            if key in extra:
                snap[key] = extra[key]
    return snap


def _raw_from_response(params: dict[str, Any]) -> RawResult:
    status = params.get("status")
    if status == "Completed":
        output = params.get("output")
        text = output if isinstance(output, str) else json.dumps(output, separators=(",", ":"))
        return RawResult(status="ok", json_text=executed_text(text))
    if status == "Canceled":
        return RawResult(status="cancelled", error_message=params.get("errorText") or "cancelled")
    exception = params.get("exception")
    if exception is None:
        # No exception (a <form toolname>'s own errors): the page's executeTool() rejects
        # with an UnknownError carrying this text, as the polyfill reports it too.
        text = str(params.get("errorText") or "")
        return RawResult(status="error", error_name="UnknownError", error_message=text)
    if exception.get("type") != "object":  # the page threw a non-Error value
        value = exception.get("value", exception.get("description", ""))
        return RawResult(status="error", error_name="Error", error_message=str(value))
    name = str(exception.get("className") or "Error")
    description = str(exception.get("description") or params.get("errorText") or "")
    if CHANGED_ERROR in description.split("\n", 1)[0]:  # the layer refused a new registration
        return RawResult(status="changed")
    first_line = description.split("\n", 1)[0]
    message = first_line[len(name) + 2 :] if first_line.startswith(name + ": ") else first_line
    return RawResult(status="error", error_name=name, error_message=message)
