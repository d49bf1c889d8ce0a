"""What a ``url =`` task's site served: hashes a later rerun compares to tell the site changed.

A bundled site is part of the harness (its version is the harness's); a site given by
URL is not, and can change between two runs of the same grid. Each episode of a ``url``
task records the SHA-256 of the start document as the browser received it, and of the
tool catalog the agent first saw (names, descriptions, schemas, annotations).
``run_info.json`` lists them per task, and the report says when a task's episodes saw more
than one version.

The start document is the one the navigation to the task's URL ended on: the URL is
compared as the browser parsed it (``http://h:8000`` loads ``http://h:8000/``), and an HTTP
redirect is followed to the document it led to, whose URL is recorded beside its hash
(``document_url``). When no hash can be taken, the episode says why (``served_note``), and
the run says it once per task (:func:`served_warnings`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Request, Response

from harness.experiments.metrics import EpisodeResult
from harness.trace.events import PageOpened, TraceEvent
from harness.urls import http_url


def sha256(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def catalog_hash(tools: list[dict[str, Any]]) -> str:
    """The hash of a tool catalog as the trace records it (order and key order ignored)."""
    ordered = sorted(tools, key=lambda t: str(t.get("name")))
    return sha256(json.dumps(ordered, sort_keys=True, ensure_ascii=False).encode("utf-8"))


def _same_document_url(a: str, b: str) -> bool:
    """Whether two URLs name one document as the browser parses them (fragment aside)."""
    return (http_url(a.split("#")[0]) or a.split("#")[0]) == (
        http_url(b.split("#")[0]) or b.split("#")[0]
    )


def _first_of_chain(request: Request) -> Request:
    """The request a chain of HTTP redirects began with."""
    while request.redirected_from is not None:
        request = request.redirected_from
    return request


def _continues(request: Request, earlier: Request) -> bool:
    """Whether ``request`` is a redirect (at any remove) of ``earlier``."""
    step = request.redirected_from
    while step is not None:
        if step is earlier:
            return True
        step = step.redirected_from
    return False


async def _body(response: Response) -> bytes | str:
    """The response's body, or why it cannot be had (the error's first line)."""
    try:
        return await response.body()
    except PlaywrightError as exc:
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class ServedPages:
    """Watches an episode's page for the start document's response, then hashes it."""

    def __init__(self) -> None:
        self._watching = False
        self._url = ""
        self._response: Response | None = None
        # Read as soon as it has loaded: the agent may leave the page before the end.
        self._reading: asyncio.Future[bytes | str] | None = None
        self._document: str | None = None
        self._note = ""

    def watch(self, page: Page, url: str) -> None:
        """Keep the main-frame document response the first navigation to ``url`` ended
        on, following its HTTP redirects (call before the page opens)."""
        self._watching = True
        self._url = url

        def seen(response: Response) -> None:
            request = response.request
            if request.resource_type != "document" or request.frame != page.main_frame:
                return
            if self._response is None:
                if _same_document_url(_first_of_chain(request).url, url):
                    self._response, self._reading = response, None
            elif _continues(request, self._response.request):  # where the redirect led
                self._response, self._reading = response, None

        def finished(request: Request) -> None:
            if self._response is not None and request is self._response.request:
                self._reading = asyncio.ensure_future(_body(self._response))

        page.on("response", seen)
        page.on("requestfinished", finished)

    async def read(self) -> None:
        """Hash the document's body (before the context closes; when it cannot be read,
        :attr:`note` says why)."""
        if not self._watching or self._document is not None:
            return
        if self._response is None:
            self._note = f"the browser received no document for {self._url}"
            return
        body = await (self._reading or _body(self._response))
        if isinstance(body, bytes):
            self._document, self._note = sha256(body), ""
        else:
            self._note = f"the body of {self._response.url} could not be read ({body})"

    @property
    def note(self) -> str:
        """Why the start document has no hash ("" when it has one, or nothing was watched)."""
        return self._note if self._document is None else ""

    def hashes(self, events: list[TraceEvent]) -> dict[str, str]:
        """``document`` and ``tools`` hashes (only those that were seen), and
        ``document_url`` when the document came from another URL than the task's."""
        found: dict[str, str] = {}
        if not self._watching:
            return found
        if self._document is not None and self._response is not None:
            found["document"] = self._document
            if not _same_document_url(self._response.url, self._url):
                found["document_url"] = self._response.url
        opened = next((e for e in events if isinstance(e, PageOpened)), None)
        if opened is not None:
            found["tools"] = catalog_hash(opened.tools)
        return found


def served_warnings(results: Iterable[EpisodeResult]) -> list[str]:
    """One line per ``url`` task some of whose episodes ran to an end without a hash of
    their start document, saying why (a failed episode is reported as failed already)."""
    missing: dict[str, list[str]] = {}
    for result in results:
        if result.status == "ok" and result.served_note:
            missing.setdefault(result.task, []).append(result.served_note)
    return [
        f"task {task}: no SHA-256 of the start document in {len(notes)} episode(s): {notes[0]}."
        for task, notes in sorted(missing.items())
    ]
