"""A page's console as the browser has it: each message with the origin of what logged it.

Playwright's ``console`` event says which page a message came from, not which frame: a
cross-origin frame's words (an ad's) would read as the site's. So the messages of a page's
documents are heard from Chromium itself — ``Runtime.consoleAPICalled`` on every CDP target
of the page, the page's own and each out-of-process frame's, through the sessions the page
channel follows (:meth:`~harness.browser.injection.PageChannel.follow`; every child frame is
attached as it commits) — each labelled with the origin of the execution context that
logged it, as Chromium knows it; an opaque origin (a sandboxed frame's, a ``data:`` frame's)
is ``null``. A dedicated worker's messages come from Playwright's event, which names the
worker, labelled with the worker's origin (:func:`~harness.urls.worker_origin`).
The text is written as Playwright writes it (:func:`text_of`; a BigInt as JavaScript does).

A target attached late reports the messages Chromium kept from before: a message's
``timestamp`` says when it was logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession, Frame, Page
from playwright.async_api import ConsoleMessage as PlaywrightMessage
from playwright.async_api import Error as PlaywrightError

from harness.browser import cdp
from harness.browser.injection import FrameGone, PageChannel
from harness.urls import origin_of, worker_origin


@dataclass(frozen=True)
class ConsoleMessage:
    """One console message: its type (``log``, ``warning``, …, as the console API names
    it), its text, the origin of the document or worker that logged it (``null``: opaque,
    or none the browser named), and when it was logged (milliseconds since the epoch, as
    Chromium stamped it)."""

    type: str
    text: str
    origin: str
    timestamp: float


ConsoleListener = Callable[[ConsoleMessage], None]


class PageConsole:
    """Hears ``page``'s console — its documents' through ``channel``, its workers' through
    Playwright — and gives ``listener`` each message, from :meth:`start` until :meth:`stop`."""

    def __init__(self, page: Page, channel: PageChannel, listener: ConsoleListener) -> None:
        self.page = page
        self.channel = channel
        self.listener = listener
        self._heard: list[tuple[CDPSession, str, Callable[[Any], Any]]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unfollow: Callable[[], None] | None = None

    def start(self) -> None:
        """Hear every target of the page (those attached later too) and its workers."""
        self._unfollow = self.channel.follow(self._hear)
        self.page.on("console", self._on_worker_message)
        self.page.on("framenavigated", self._on_navigated)
        self._attach_frames()

    def stop(self) -> None:
        """Hear nothing more."""
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        self.page.remove_listener("console", self._on_worker_message)
        self.page.remove_listener("framenavigated", self._on_navigated)
        for session, event, handler in self._heard:
            cdp.off(session, event, handler)
        self._heard.clear()
        for task in self._tasks:
            task.cancel()

    def _hear(self, session: CDPSession) -> None:
        handlers: dict[str, Callable[[Any], Any]] = {
            "Runtime.consoleAPICalled": functools.partial(self._on_called, session),
            # A frame's target closes when it leaves its process, maybe for another one.
            "close": lambda _closed: self._attach_frames(),
        }
        for event, handler in handlers.items():
            cdp.on(session, event, handler)
            self._heard.append((session, event, handler))

    def _on_called(self, session: CDPSession, params: dict[str, Any]) -> None:
        said = self.channel.context_origin(session, params.get("executionContextId", 0))
        message = ConsoleMessage(
            type=str(params.get("type", "log")),
            text=text_of(params.get("args") or []),
            origin=origin_of(said) if said else "null",
            timestamp=float(params.get("timestamp") or 0),
        )
        self.listener(message)

    def _on_worker_message(self, message: PlaywrightMessage) -> None:
        worker = message.worker
        if worker is None:  # a document's: heard from Chromium, with its own origin
            return
        self.listener(
            ConsoleMessage(
                type=str(message.type),
                text=str(message.text),
                origin=worker_origin(worker.url),
                timestamp=float(message.timestamp),
            )
        )

    def _on_navigated(self, frame: Frame) -> None:
        if frame.parent_frame is not None:
            self._spawn(self._attach(frame))

    def _attach_frames(self) -> None:
        for frame in self.page.frames:
            self._on_navigated(frame)

    async def _attach(self, frame: Frame) -> None:
        """Follow the frame's target if it runs out of process (a frame of the page's
        process is heard on the page's)."""
        with contextlib.suppress(PlaywrightError, FrameGone):
            await self.channel.oopif_session(frame)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


# -- the text, as Playwright writes it --------------------------------------------------------


def text_of(args: list[dict[str, Any]]) -> str:
    """A console message's text from its arguments (CDP ``RemoteObject`` s), as Playwright's
    ``ConsoleMessage.text`` writes it: each argument's preview, joined by spaces."""
    return " ".join(_preview(arg) for arg in args)


def _preview(arg: dict[str, Any]) -> str:
    """Playwright's preview of a ``JSHandle`` (its ``renderPreview``)."""
    if arg.get("subtype") == "node":
        return "JSHandle@node"
    if "objectId" not in arg:  # a primitive: JavaScript's String(value)
        unserializable = arg.get("unserializableValue")
        if isinstance(unserializable, str):
            return _unserializable(unserializable)
        if arg.get("type") == "undefined":
            return "undefined"
        return _js_string(arg.get("value"))
    preview = arg.get("preview")
    description = arg.get("description")
    shown: str | None = description if isinstance(description, str) else None
    if isinstance(preview, dict):
        entries = [p for p in preview.get("properties") or [] if isinstance(p, dict)]
        if description == "Object":
            shown = "{" + ", ".join(f"{p.get('name')}: {p.get('value', '')}" for p in entries) + "}"
        elif arg.get("subtype") == "array":
            shown = _sparse_array(entries)
    return shown or f"JSHandle@{arg.get('subtype') or arg.get('type')}"


def _sparse_array(entries: list[dict[str, Any]]) -> str:
    """An array's preview: its items in order, a run of holes as ``empty x N``."""
    items = sorted(
        (int(p["name"]), str(p.get("value", "")))
        for p in entries
        if isinstance(p.get("name"), str) and p["name"].isdigit()
    )
    tokens: list[str] = []
    last = -1
    for index, value in items:
        holes = index - last - 1
        if holes == 1:
            tokens.append("empty")
        elif holes > 1:
            tokens.append(f"empty x {holes}")
        tokens.append(value)
        last = index
    return "[" + ", ".join(tokens) + "]"


def _unserializable(value: str) -> str:
    """String() of what JSON cannot hold: ``-0`` is ``0``, a BigInt its digits (where
    Playwright's own text says ``undefined``)."""
    if value == "-0":
        return "0"
    return value.removesuffix("n") if value[:-1].lstrip("-").isdigit() else value


def _js_string(value: Any) -> str:
    """JavaScript's String() of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value).replace("e-0", "e-").replace("e+0", "e+")
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
