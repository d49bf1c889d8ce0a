"""The injected JS and the private channel it talks to Python through.

`injected_js/CHANNEL.md` is the contract. This module assembles the init script
(plain files concatenated inside one strict-mode IIFE, no build step), installs it
with the binding on a browser context, authenticates what the page sends, and
sends commands to a frame's private entry point.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import BrowserContext, CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from harness.browser import cdp
from harness.browser.wellformed import loads, well_formed

Mode = Literal["polyfill", "native"]

# Order matters: later files use what earlier ones define. The realm's files run once per
# realm, before any page script; the document's files run once per document of that realm
# (realm.js: a reused window gets a new document without a new realm); realm.js starts it.
REALM_FILES: tuple[str, ...] = ("primordials.js", "readiness.js")
DOCUMENT_FILES: tuple[str, ...] = (
    "document.js",
    "events.js",
    "schema.js",
    "model_context.js",
    "declarative.js",
    "legacy.js",
    "native_layer.js",
    "user_input.js",  # questions from inside execute; its functions run once channel.js started
    "channel.js",
    "declarative_seed.js",  # after channel.js: it reports through sendToHarness
)
START_FILES: tuple[str, ...] = ("realm.js",)
FILES: tuple[str, ...] = (*REALM_FILES, *DOCUMENT_FILES, *START_FILES)


def _js_dir() -> Path:
    """`injected_js/`, shipped inside the package as `harness.injected_js`."""
    return Path(str(resources.files("harness.injected_js")))


def read_js(files: tuple[str, ...] = FILES) -> str:
    """The concatenated source of the injected files (without the IIFE wrapper)."""
    base = _js_dir()
    parts = []
    for name in files:
        path = base / name
        if path.is_file():
            parts.append(f"// ---- {name} ----\n{path.read_text(encoding='utf-8')}")
    return "\n".join(parts)


@dataclass(frozen=True)
class ChannelKeys:
    """The per-Harness random names and secret that make the channel private."""

    secret: str = field(default_factory=lambda: secrets.token_hex(16))
    binding: str = field(default_factory=lambda: "__wmh_b_" + secrets.token_hex(6))
    entry: str = field(default_factory=lambda: "__wmh_e_" + secrets.token_hex(6))


SchemaSubset = Literal["accept", "refuse"]
"""What ``registerTool()`` does with a schema outside WebMCP's subset (``schema.js``)."""


def build_init_script(
    keys: ChannelKeys,
    mode: Mode,
    schema_subset: SchemaSubset = "accept",
    *,
    report_events: bool = False,
) -> str:
    """The whole init script for one Harness and backend mode (``report_events``: send
    an ``event`` message for every ``toolactivated``/``toolcancel``; see CHANNEL.md)."""
    config = json.dumps(
        {
            "secret": keys.secret,
            "binding": keys.binding,
            "entry": keys.entry,
            "mode": mode,
            "schemaSubset": schema_subset,
            "events": report_events,
        }
    )
    return (
        f'(() => {{\n"use strict";\nconst HARNESS = Object.freeze({config});\n'
        f"{read_js(REALM_FILES)}\n"
        f"function startDocument() {{\n{read_js(DOCUMENT_FILES)}\nreturn thisDocument;\n}}\n"
        f"{read_js(START_FILES)}\n}})();\n"
    )


Message = dict[str, Any]
MessageHandler = Callable[[Frame, Message], Awaitable[None] | None]


class FrameGone(Exception):
    """The frame's document is gone (navigated, detached, closed) or has no injected JS."""


# Runs in the frame's main world through CDP: V8 itself converts the arguments and the
# result (returnByValue), so no page-patchable built-in ever touches the secret. `window`
# is [LegacyUnforgeable] and the entry is a non-writable, non-configurable own property.
# The command goes as JSON text, which the entry parses with the JSON.parse it captured:
# a CDP object value loses a key named "__proto__" (it becomes the object's prototype),
# JSON.parse keeps it an own property, as Chromium's executeTool() hands it to a tool.
_CALL_ENTRY = "function (e, s, c) { return window[e](s, c); }"


def command_text(command: Message) -> str:
    """``command`` as the JSON text the entry point reads: every key kept, ``"__proto__"``
    too (ASCII only, so lone surrogates cross as escapes; a number JSON cannot write, NaN
    or an infinity, becomes ``null``, as ``JSON.stringify`` writes it)."""
    try:
        return json.dumps(command, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(command), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


# How long `command` waits for a new document's hello before giving up on the frame.
HELLO_WAIT_S = 2.0
# A command waiting for a hello is woken by each hello and each new context; it also looks
# again this often, for what says nothing on arrival (a frame detached, an OOPIF attached).
ARRIVAL_POLL_S = 0.05


class PageChannel:
    """Installs the injected JS on a context and carries authenticated messages.

    Messages that do not carry the secret are dropped and counted in
    :attr:`rejected`, so tests (and curious users) can see forgery attempts.
    Commands go to a frame's entry point through CDP ``Runtime.callFunctionOn`` in
    that frame's main-world execution context, never through Playwright's
    ``evaluate`` (whose argument handling runs on the page's own built-ins).
    Frames and contexts are paired by the per-document token each frame's JS sends
    in its ``hello`` message and answers to ``whoami``.
    """

    def __init__(
        self,
        keys: ChannelKeys,
        mode: Mode,
        schema_subset: SchemaSubset = "accept",
        *,
        report_events: bool = False,
    ) -> None:
        self.keys = keys
        self.mode: Mode = mode
        self.schema_subset: SchemaSubset = schema_subset
        # The page's tool events as `event` messages: off for the harness, which has no
        # use for them (each is a binding round trip per call); tests of the JS turn them on.
        self.report_events = report_events
        self.rejected = 0
        # Authenticated messages from a frame of another page than the session's (dropped).
        self.other_pages = 0
        self._handler: MessageHandler | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._sessions: list[CDPSession] = []
        self._oopif: dict[Frame, CDPSession] = {}
        self._oopif_attaching: dict[Frame, asyncio.Future[CDPSession | None]] = {}
        self._token_of_frame: dict[Frame, str] = {}  # the latest document's token
        self._origin_of_frame: dict[Frame, str] = {}  # …and its origin, as it said itself
        self._silent: dict[Frame, str] = {}  # frames (at a URL) that never said hello
        # main-world execution contexts: (session, context id) → token (None until asked)
        self._contexts: dict[tuple[CDPSession, int], str | None] = {}
        # every execution context (any world): (session, context id) → its origin, as
        # Chromium serializes it (context_origin)
        self._context_origins: dict[tuple[CDPSession, int], str] = {}
        # who hears of every session followed (follow), before its Runtime domain is on
        self._followers: list[Callable[[CDPSession], None]] = []
        # Why the page can answer no more (it crashed; its browser went away), or None.
        self.broken: str | None = None
        self._broken: asyncio.Future[str] | None = None  # made by install(), on its loop
        self._waiting: set[asyncio.Task[Any]] = set()  # tasks awaiting a command's reply
        self._cut_off: set[asyncio.Task[Any]] = set()  # …of which fail() cancelled these
        # Commands waiting for a document's hello or its execution context (_context_for),
        # woken by either; and how many of those have come (so none is missed meanwhile).
        self._arrivals = 0
        self._arrival_waiters: set[asyncio.Future[None]] = set()

    async def install(self, context: BrowserContext, page: Page, handler: MessageHandler) -> None:
        """Expose the binding to ``page``, add the init script (which hides it) to every page
        of ``context``, and follow contexts.

        Every page of the context runs the script (a popup has WebMCP, as in Chromium), but
        only ``page`` — the session's — has the binding: another page of the context (a
        popup a frame opened) has no way to the harness, and writes no session's catalog.
        """
        self._handler = handler
        self._context = context
        self._page = page
        self._broken = asyncio.get_running_loop().create_future()
        script = build_init_script(
            self.keys, self.mode, self.schema_subset, report_events=self.report_events
        )

        async def expose() -> None:
            # The binding first, then the script that hides it (the order it always had).
            await page.expose_binding(self.keys.binding, self._on_binding)
            await context.add_init_script(script)

        async def follow_page() -> None:
            await self._follow(await context.new_cdp_session(page))

        # Both done before the page's first navigation, independent of each other: sent at
        # once (a session opens a round trip to Playwright's driver sooner).
        await asyncio.gather(expose(), follow_page())

    async def _follow(self, session: CDPSession) -> None:
        def created(params: dict[str, Any]) -> None:
            ctx = params["context"]
            self._context_origins[(session, ctx["id"])] = str(ctx.get("origin", ""))
            if (ctx.get("auxData") or {}).get("isDefault"):
                self._contexts[(session, ctx["id"])] = None
                self._arrived()

        def destroyed(params: dict[str, Any]) -> None:
            self._contexts.pop((session, params["executionContextId"]), None)
            self._context_origins.pop((session, params["executionContextId"]), None)

        def cleared(_: dict[str, Any]) -> None:
            self._forget_contexts(session)

        cdp.on(session, "Runtime.executionContextCreated", created)
        cdp.on(session, "Runtime.executionContextDestroyed", destroyed)
        cdp.on(session, "Runtime.executionContextsCleared", cleared)
        self._sessions.append(session)
        for follower in list(self._followers):
            follower(session)
        await cdp.send(session, "Runtime.enable")

    def _forget_contexts(self, session: CDPSession) -> None:
        for key in [k for k in self._contexts if k[0] is session]:
            del self._contexts[key]
        for key in [k for k in self._context_origins if k[0] is session]:
            del self._context_origins[key]

    def follow(self, follower: Callable[[CDPSession], None]) -> Callable[[], None]:
        """Call ``follower`` with every CDP session the channel follows: the page's, and each
        out-of-process frame's once it is attached (:meth:`oopif_session`) — before the
        channel turns its Runtime domain on, so that ``follower`` hears all the session
        reports (Chromium sends the console messages it kept then, too); with the sessions
        followed already, at once. Returns how to stop."""
        self._followers.append(follower)
        for session in list(self._sessions):
            follower(session)

        def stop() -> None:
            if follower in self._followers:
                self._followers.remove(follower)

        return stop

    def context_origin(self, session: CDPSession, context_id: int) -> str | None:
        """The origin of an execution context of ``session``'s target as Chromium gave it
        (``Runtime.ExecutionContextDescription.origin``: ``://`` for an opaque one); None
        for a context the channel does not know."""
        return self._context_origins.get((session, context_id))

    async def _on_binding(self, source: dict[str, Any], payload: Any = None, *_: Any) -> None:
        message = self._authenticate(payload)
        frame = source.get("frame")
        if message is None or frame is None or self._handler is None:
            return
        if frame.page is not self._page:
            # Not a frame of the session's page (the binding is the page's own; this is the
            # second lock): the frame rules (harness/browser/frames.py) apply to its frames only.
            self.other_pages += 1
            return
        if message.get("type") == "hello":
            token = message.get("token")
            if isinstance(token, str):
                previous = self._token_of_frame.get(frame)
                self._token_of_frame[frame] = token
                origin = message.get("origin")
                if isinstance(origin, str):
                    self._origin_of_frame[frame] = origin
                else:
                    self._origin_of_frame.pop(frame, None)
                self._silent.pop(frame, None)
                if previous is not None and previous != token:
                    # A new document in the same realm (a reused window): its context answers
                    # `whoami` with the new token now.
                    for key, known in self._contexts.items():
                        if known == previous:
                            self._contexts[key] = None
                self._arrived()
            return
        outcome = self._handler(frame, message)
        if outcome is not None:
            await outcome

    def _authenticate(self, payload: Any) -> Message | None:
        if not isinstance(payload, str):
            self.rejected += 1
            return None
        try:
            message = loads(payload)
        except ValueError:
            self.rejected += 1
            return None
        if not isinstance(message, dict) or message.pop("secret", None) != self.keys.secret:
            self.rejected += 1
            return None
        return message

    def document_origin(self, frame: Frame) -> str | None:
        """The origin of the frame's latest document that said hello, as that document read
        it before any page script ran (``"null"``: opaque, e.g. sandboxed); None before any did.
        """
        return self._origin_of_frame.get(frame)

    def speaks(self, frame: Frame) -> bool:
        """Whether a document of the frame said hello: its JS runs and answers commands."""
        return frame in self._token_of_frame

    async def command(self, frame: Frame, command: Message, *, timeout: float | None = None) -> Any:
        """Run one command on the frame's private entry point and return its answer.

        Raises :class:`FrameGone` when the frame has no live document with the JS, and
        ``TimeoutError`` when ``timeout`` (seconds) passes first: a page whose script never
        yields (a busy loop) never answers, and a read must not wait for it for ever.
        """
        target = await self._context_for(frame)
        if target is None:
            raise FrameGone(f"frame {frame.url or '(detached)'} has no harness channel")
        if timeout is None:
            return await self._call(target, command)
        return await asyncio.wait_for(self._call(target, command), timeout)

    async def _call(self, target: tuple[CDPSession, int], command: Message) -> Any:
        session, context_id = target
        if self.broken is not None:
            raise FrameGone(self.broken)
        try:
            reply = await self._unless_broken(
                cdp.send(
                    session,
                    "Runtime.callFunctionOn",
                    {
                        "functionDeclaration": _CALL_ENTRY,
                        "executionContextId": context_id,
                        "arguments": [
                            {"value": self.keys.entry},
                            {"value": self.keys.secret},
                            {"value": command_text(command)},
                        ],
                        "returnByValue": True,
                        "awaitPromise": True,
                    },
                )
            )
        except PlaywrightError as exc:
            # "Cannot find context with specified id", "Execution context was destroyed", …
            # (a script stopped by terminate() leaves its context in place).
            if "context" in str(exc).lower():
                self._contexts.pop(target, None)
            raise FrameGone(str(exc)) from exc
        details = reply.get("exceptionDetails")
        if details is not None:
            text = (details.get("exception") or {}).get("description") or details.get("text")
            raise FrameGone(f"the frame's entry point failed: {well_formed(text)}")
        # Page text (an error's message, a result) arrives well-formed (harness.browser.wellformed).
        return well_formed((reply.get("result") or {}).get("value"))

    async def terminate(self) -> None:
        """Stop whatever script runs now in the page's frames (``Runtime.terminateExecution``):
        a tool that never yields cannot hear its signal, and would wedge the page."""
        for session in list(self._sessions):
            try:
                await asyncio.wait_for(session.send("Runtime.terminateExecution"), HELLO_WAIT_S)
            except (PlaywrightError, TimeoutError):
                continue  # that target is gone, or does not answer either

    def fail(self, reason: str) -> None:
        """The page crashed (or its browser went away): commands fail at once from now on."""
        self.broken = reason
        if self._broken is not None and not self._broken.done():
            self._broken.set_result(reason)
        for task in self._waiting:  # each is suspended in _unless_broken, awaiting its reply
            self._cut_off.add(task)
            task.cancel()

    async def _unless_broken(self, sending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """``sending``'s reply, or :class:`FrameGone` as soon as the page breaks (a crashed
        renderer never answers): :meth:`fail` cancels the tasks waiting here (awaited in
        the caller's own task: no task, no wait on two futures, per command)."""
        task = asyncio.current_task()
        if task is None or self._broken is None:
            return await sending
        if self.broken is not None:
            if isinstance(sending, Coroutine):
                sending.close()
            raise FrameGone(self.broken)
        self._waiting.add(task)
        try:
            return await sending
        except asyncio.CancelledError:
            if task not in self._cut_off:
                raise
            self._cut_off.discard(task)
            if task.uncancel() > 0:  # cancelled for another reason too
                raise
            raise FrameGone(self.broken or "the page is gone") from None
        finally:
            self._waiting.discard(task)
            self._cut_off.discard(task)

    async def _context_for(self, frame: Frame) -> tuple[CDPSession, int] | None:
        """The CDP context of the frame's current document, waiting briefly for its hello."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (0 if self._silent.get(frame) == frame.url else HELLO_WAIT_S)
        tried_oopif = False
        while not frame.is_detached() and self.broken is None:
            arrivals = self._arrivals
            token = self._token_of_frame.get(frame)
            if token is not None:
                for key, known in list(self._contexts.items()):
                    if known is None:
                        known = await self._whoami(key)
                    if known == token:
                        return key
                if not tried_oopif:
                    tried_oopif = True
                    if await self._attach_oopif(frame):
                        continue
            if loop.time() >= deadline:
                # No JS in this document (or not yet); do not wait for it again.
                self._silent[frame] = frame.url
                return None
            if arrivals == self._arrivals:  # nothing came while this looked
                await self._next_arrival(min(ARRIVAL_POLL_S, deadline - loop.time()))
        return None

    def _arrived(self) -> None:
        """A document said hello, or a main-world context was created: the commands waiting
        for one look again at once."""
        self._arrivals += 1
        for waiter in self._arrival_waiters:
            _wake(waiter)

    async def _next_arrival(self, timeout: float) -> None:
        """Until the next hello or context, or ``timeout`` (a frame that navigated or
        detached meanwhile says nothing here: the caller looks again)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        timer = loop.call_later(max(timeout, 0.0), _wake, waiter)
        self._arrival_waiters.add(waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._arrival_waiters.discard(waiter)

    async def _whoami(self, key: tuple[CDPSession, int]) -> str | None:
        try:
            answer = await self._call(key, {"op": "whoami"})
        except FrameGone:
            return None  # no injected JS there (not a secure context) or already gone
        token = answer.get("token") if isinstance(answer, dict) else None
        if isinstance(token, str) and key in self._contexts:
            self._contexts[key] = token
        return token if isinstance(token, str) else None

    async def _attach_oopif(self, frame: Frame) -> bool:
        """Follow a cross-site frame that runs in its own process (its own CDP target);
        whether a session of its own was attached now."""
        if frame in self._oopif:
            return False
        return await self.oopif_session(frame) is not None

    async def oopif_session(self, frame: Frame) -> CDPSession | None:
        """The CDP session of ``frame``'s own target when it runs out of process (a
        cross-site frame: Chromium gives it a renderer of its own), attached and followed
        on first use and shared with whoever asks (the native backend follows Chromium's
        WebMCP there); None for a frame of its parent's process."""
        if frame.parent_frame is None or self._context is None or frame.is_detached():
            return None
        known = self._oopif.get(frame)
        if known is not None:
            return known
        attaching = self._oopif_attaching.get(frame)
        if attaching is None:  # one attachment per frame, however many ask at once
            attaching = asyncio.ensure_future(self._new_oopif_session(frame))
            self._oopif_attaching[frame] = attaching
        try:
            return await asyncio.shield(attaching)
        finally:
            if attaching.done():
                self._oopif_attaching.pop(frame, None)

    async def _new_oopif_session(self, frame: Frame) -> CDPSession | None:
        assert self._context is not None
        try:
            session = await self._context.new_cdp_session(frame)
        except PlaywrightError:
            return None  # not an out-of-process frame: its contexts are already followed
        self._oopif[frame] = session
        # Its target closes when the frame leaves the process (back into its parent's, or to
        # another site's): a new one is attached when the frame is next spoken to.
        cdp.on(session, "close", lambda _closed: self._oopif_closed(frame, session))
        await self._follow(session)
        return session

    def _oopif_closed(self, frame: Frame, session: CDPSession) -> None:
        if self._oopif.get(frame) is session:
            del self._oopif[frame]
        self._forget_contexts(session)
        if session in self._sessions:
            self._sessions.remove(session)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
