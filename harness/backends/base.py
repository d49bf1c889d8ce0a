"""The interface every backend implements; the rest of the harness sees only this.

A backend finds the tools in a page and runs them. It reports each frame's
registry to a :class:`~harness.catalog.Catalog` as it changes, and turns one
call into a :class:`RawResult`. Everything else (validation, policies,
normalization, redaction) happens in the pipeline, the same for every backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from playwright.async_api import BrowserContext, Page
from pydantic import BaseModel

from harness.catalog import Catalog
from harness.elicitation import ElicitationHandler
from harness.form_review import FormReviewer
from harness.injection import ChannelKeys
from harness.models import BackendName, Tool


class RawResult(BaseModel):
    """What came back from the page, before normalization.

    ``ok``: ``json_text`` is the string ``executeTool`` resolves to (None when the
    tool returned nothing). ``error``: ``execute`` threw. ``cancelled``: the call's
    signal was aborted. ``navigation``: the document went away mid-call.
    """

    status: Literal["ok", "error", "cancelled", "navigation"]
    json_text: str | None = None
    error_name: str | None = None
    error_message: str | None = None


class Backend(ABC):
    """How tools are found and run in one page."""

    name: BackendName

    def __init__(self, keys: ChannelKeys) -> None:
        """``keys``: the Harness's channel keys (shared by its sessions)."""
        self.keys = keys
        # Decides about filled <form toolname> waiting for the user (the session sets it;
        # None: such forms are never submitted by the harness).
        self.form_reviewer: FormReviewer | None = None
        # Who answers the questions a tool asks from inside execute (the session sets it to
        # return its elicitation handler; None: every question is answered ``cancel``).
        self.question_handler: Callable[[], ElicitationHandler] | None = None

    @staticmethod
    @abstractmethod
    def launch_args() -> list[str]:
        """Extra Chromium flags this backend needs."""

    @abstractmethod
    async def attach(self, context: BrowserContext, page: Page, catalog: Catalog) -> None:
        """Start following the page's tools into ``catalog`` (before the first navigation)."""

    @abstractmethod
    async def refresh(self) -> None:
        """Re-read every frame's registry now (after this, the catalog is current)."""

    @abstractmethod
    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        """Run the tool with already-validated arguments."""

    @abstractmethod
    async def cancel(self, call_id: str, reason: str) -> None:
        """Abort a running call's signal (the page sees ``toolcancel``)."""

    async def detach(self) -> None:  # noqa: B027 - optional hook
        """Stop following the page; default: nothing to release."""

    def after_delivery(self, call_id: str) -> Coroutine[Any, Any, None] | None:
        """What follows a call's delivered result (seed 002 §6.1: catalog recompute, then
        navigation), for the session to run; default: nothing."""
        return None
