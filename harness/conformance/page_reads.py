"""Reading a page the audit does not trust: in a world the page cannot patch, within a time
limit.

A page's own script can replace anything reachable from its JavaScript world —
``Document.prototype.querySelectorAll``, ``RegExp``, ``Array.prototype.map`` — so a read run
there can be lied to (forms hidden from the lints) or never return (``conformance site`` hung
for ever on such a page). So the audit never evaluates in the page's world:

- DOM reads run in an **isolated world** of each frame (:mod:`harness.browser.isolated`:
  the same DOM, its own pristine globals and prototypes, invisible to the page).
- What a frame *registered* is asked of the harness's private channel (the injected script's
  entry point, which holds the page API as it was before any page script ran), never of the
  page's ``document.modelContext``.
- Every read has a time limit (:data:`READ_TIMEOUT_S`): a page whose main thread is stuck
  makes the read fail with :class:`PageReadTimeout`, not hang the audit.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from harness.browser.backends.polyfill import ChannelBackend
from harness.browser.backends.snapshots import read_listing
from harness.browser.injection import FrameGone
from harness.browser.isolated import (
    READ_TIMEOUT_S,
    FrameWorld,
    IsolatedWorlds,
    PageReadTimeout,
    within_limit,
)
from harness.session import Session

__all__ = ["READ_TIMEOUT_S", "FrameWorld", "IsolatedWorlds", "PageReadTimeout", "registrations"]


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
        answer = await within_limit(
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
