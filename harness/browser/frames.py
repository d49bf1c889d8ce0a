"""Frames: session-local keys for a page's frames, their documents' origins, and whose tools
the agent may be offered.

Whether a frame's document may have tools at all is the ``tools`` permissions policy, decided
once per document where its tools register, and inherited through its ancestors: by the
injected polyfill (``injected_js/model_context.js``: its parent answers from its own answer
and the ``<iframe>``'s ``allow`` and ``sandbox``), or by Chromium with its own WebMCP. A
document the policy refuses registers no script tool and no ``<form toolname>``, and reports
no seed-dialect element; Python keeps no copy of that decision. Of the tools a frame did
register, the agent is offered: the top-level frame's, a same-origin child frame's, a
cross-origin child frame's registered with ``exposedTo`` naming the top-level origin
(``backends/snapshots.py``), and nothing of a document with an opaque origin (a sandboxed
frame's): no origin names it, so no page's ``getTools()`` ever includes its tools.

Origins are the documents' own, as each said in its hello (``injected_js/CHANNEL.md``), not
read from URLs: a sandboxed frame at the top page's URL has an opaque origin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from harness.catalog import FrameInfo
from harness.urls import origin_of

__all__ = ["OPAQUE", "FrameKeys", "exposed_to", "origin_of"]

OPAQUE = "null"
"""How an opaque origin serializes: a sandboxed document's, an ``about:blank`` of no one's."""


def exposed_to(snapshot: dict[str, Any], top_origin: str) -> bool:
    """Whether a cross-origin frame's tool names the top-level origin in ``exposedTo``."""
    targets = snapshot.get("exposedTo")
    if not isinstance(targets, list):
        return False
    return any(t == "*" or t == top_origin for t in targets if isinstance(t, str))


class FrameKeys:
    """Assigns stable session-local keys ('main', 'frame-1', …) to Playwright frames, and
    tells where each frame's document is (:meth:`info`).

    ``said_origin`` gives the origin a frame's current document said it has (None while no
    document of the frame said one): the page channel's record of the documents' hellos.
    """

    def __init__(self, said_origin: Callable[[Frame], str | None] | None = None) -> None:
        self._keys: dict[Frame, str] = {}
        self._frames: dict[str, Frame] = {}
        self._next = 1
        self._said_origin = said_origin

    def key(self, frame: Frame) -> str:
        """The frame's key, allocating one on first sight."""
        known = self._keys.get(frame)
        if known is not None:
            return known
        key = "main" if frame.parent_frame is None else f"frame-{self._next}"
        if frame.parent_frame is not None:
            self._next += 1
        self._keys[frame] = key
        self._frames[key] = frame
        return key

    def frame(self, key: str) -> Frame | None:
        """The live frame for a key, or None once it has gone."""
        frame = self._frames.get(key)
        if frame is None or frame.is_detached():
            return None
        return frame

    def forget(self, frame: Frame) -> str | None:
        """Drop a detached frame; returns its key if it had one."""
        key = self._keys.pop(frame, None)
        if key is not None:
            self._frames.pop(key, None)
        return key

    async def info(self, frame: Frame) -> FrameInfo:
        """Where the frame is, and whether any of its tools may be offered (see the module)."""
        key = self.key(frame)
        origin = await self.origin(frame)
        if frame.parent_frame is None:
            return FrameInfo(key=key, url=frame.url, origin=origin, is_main=True)
        # The permissions policy was applied where the tools registered (one decision, the
        # document's); an opaque origin is no one's to be offered.
        exposed = origin != OPAQUE
        return FrameInfo(key=key, url=frame.url, origin=origin, is_main=False, exposed=exposed)

    async def origin(self, frame: Frame) -> str:
        """The origin of the frame's document: as the document said it; before it did, as
        the URL and the ``<iframe>`` elements around it tell (opaque when sandboxed)."""
        said = self._said_origin(frame) if self._said_origin is not None else None
        if said is not None:
            return said
        parent = frame.parent_frame
        if parent is None:
            return origin_of(frame.url)
        try:
            element = await frame.frame_element()
            sandbox = await element.get_attribute("sandbox")
        except PlaywrightError:
            return OPAQUE  # the frame went away
        if sandbox is not None and "allow-same-origin" not in sandbox.lower().split():
            return OPAQUE
        inherited = await self.origin(parent)
        if inherited == OPAQUE:
            return OPAQUE  # sandboxing is inherited by the frames inside (read as such)
        origin = origin_of(frame.url)
        # A srcdoc document has its parent's origin (HTML's "iframe srcdoc document"), an
        # about:blank one its creator's, which for a frame is its parent.
        if origin == OPAQUE and frame.url in INHERITING_URLS:
            return inherited
        return origin


INHERITING_URLS = ("about:srcdoc", "about:blank")
"""URLs whose document takes its origin from elsewhere (see :meth:`FrameKeys.origin`)."""
