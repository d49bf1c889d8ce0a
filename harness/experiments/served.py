"""What a ``url =`` task's site served: hashes a later rerun compares to tell the site changed.

A bundled site is part of the harness (its version is the harness's); a site given by
URL is not, and can change between two runs of the same grid. Each episode of a ``url``
task records the SHA-256 of the start page's document as the browser received it, and of
the tool catalog the agent first saw (names, descriptions, schemas, annotations).
``run_info.json`` lists them per task, and the report says when a task's episodes saw more
than one version.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response

from harness.trace.events import PageOpened, TraceEvent


def sha256(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def catalog_hash(tools: list[dict[str, Any]]) -> str:
    """The hash of a tool catalog as the trace records it (order and key order ignored)."""
    ordered = sorted(tools, key=lambda t: str(t.get("name")))
    return sha256(json.dumps(ordered, sort_keys=True, ensure_ascii=False).encode("utf-8"))


class ServedPages:
    """Watches an episode's page for the start document's response, then hashes it."""

    def __init__(self) -> None:
        self._watching = False
        self._response: Response | None = None
        self._document: str | None = None

    def watch(self, page: Page, url: str) -> None:
        """Keep the first main-frame document response for ``url`` (before the page opens)."""
        self._watching = True

        def seen(response: Response) -> None:
            request = response.request
            if (
                self._response is None
                and request.resource_type == "document"
                and request.frame == page.main_frame
                and response.url.split("#")[0] == url.split("#")[0]
            ):
                self._response = response

        page.on("response", seen)

    async def read(self) -> None:
        """Hash the document's body (before the context closes; nothing if it is gone)."""
        if self._response is not None and self._document is None:
            with contextlib.suppress(PlaywrightError):
                self._document = sha256(await self._response.body())

    def hashes(self, events: list[TraceEvent]) -> dict[str, str]:
        """``document`` and ``tools`` hashes (only those that were seen)."""
        found: dict[str, str] = {}
        if not self._watching:
            return found
        if self._document is not None:
            found["document"] = self._document
        opened = next((e for e in events if isinstance(e, PageOpened)), None)
        if opened is not None:
            found["tools"] = catalog_hash(opened.tools)
        return found
