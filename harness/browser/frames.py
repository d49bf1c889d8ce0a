"""Frames: session-local keys for a page's frames and which may offer tools.

The top-level frame's tools are always offered. A same-origin child frame's
tools are offered too. A cross-origin child frame is offered only when its
``<iframe>`` has ``allow="tools"`` (the permissions policy the spec uses), and
then only the tools it registered with ``exposedTo`` naming the top-level origin.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from harness.browser.urls import origin_of
from harness.catalog import FrameInfo

__all__ = ["FrameKeys", "allows_tools", "exposed_to", "origin_of"]


def allows_tools(allow_attribute: str | None) -> bool:
    """Whether an iframe's ``allow`` attribute delegates the ``tools`` feature."""
    if not allow_attribute:
        return False
    for directive in allow_attribute.split(";"):
        words = directive.split()
        if words and words[0] == "tools" and "'none'" not in words[1:]:
            return True
    return False


def exposed_to(snapshot: dict[str, Any], top_origin: str) -> bool:
    """Whether a cross-origin frame's tool names the top-level origin in ``exposedTo``."""
    targets = snapshot.get("exposedTo")
    if not isinstance(targets, list):
        return False
    return any(t == "*" or t == top_origin for t in targets if isinstance(t, str))


class FrameKeys:
    """Assigns stable session-local keys ('main', 'frame-1', …) to Playwright frames."""

    def __init__(self) -> None:
        self._keys: dict[Frame, str] = {}
        self._frames: dict[str, Frame] = {}
        self._next = 1

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
        """Where the frame is and whether its tools may be offered at all."""
        key = self.key(frame)
        origin = await document_origin(frame)
        main = frame.parent_frame is None
        if main:
            return FrameInfo(key=key, url=frame.url, origin=origin, is_main=True)
        top = await document_origin(frame.page.main_frame)
        exposed = origin == top or await _iframe_allows_tools(frame)
        return FrameInfo(key=key, url=frame.url, origin=origin, is_main=False, exposed=exposed)


# URLs whose document takes its origin from elsewhere: a srcdoc document has its parent's
# (HTML's "iframe srcdoc document"), an about:blank one its creator's, which for a frame
# is its parent (unless a sandbox without allow-same-origin makes it opaque).
INHERITING_URLS = ("about:srcdoc", "about:blank")


async def document_origin(frame: Frame) -> str:
    """The origin of the frame's document: its URL's, or the parent's for srcdoc/about:blank."""
    origin = origin_of(frame.url)
    parent = frame.parent_frame
    if origin != "null" or parent is None or frame.url not in INHERITING_URLS:
        return origin
    try:
        element = await frame.frame_element()
        sandbox = await element.get_attribute("sandbox")
    except PlaywrightError:
        return "null"  # the frame went away
    if sandbox is not None and "allow-same-origin" not in sandbox.lower().split():
        return "null"
    return await document_origin(parent)


async def _iframe_allows_tools(frame: Frame) -> bool:
    try:
        element = await frame.frame_element()
        return allows_tools(await element.get_attribute("allow"))
    except PlaywrightError:
        return False  # the frame went away: offer nothing from it
