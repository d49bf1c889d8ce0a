"""The interface every backend implements; the rest of the harness sees only this.

A backend finds the tools in a page and runs them. It reports each frame's
registry to a :class:`~harness.catalog.Catalog` as it changes, and turns one
call into a :class:`RawResult`. Everything else (validation, policies,
normalization, redaction) happens in the pipeline, the same for every backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from typing import Any, Literal, Protocol

from playwright.async_api import BrowserContext, Page
from pydantic import BaseModel, ConfigDict, Field

from harness.browser.injection import ChannelKeys, SchemaSubset
from harness.catalog import Catalog, FrameInfo
from harness.elicitation.base import ElicitationHandler
from harness.errors import HarnessError
from harness.models import BackendName, FormRefusal, Tool


class RawResult(BaseModel):
    """What came back from the page, before normalization.

    ``ok``: ``json_text`` is the string ``executeTool`` resolves to (None when the
    tool returned nothing). ``error``: ``execute`` threw. ``cancelled``: the call's
    signal was aborted. ``navigation``: the document went away mid-call. ``changed``:
    the page registered the tool again since the harness checked the call, and the new
    definition was not run. ``too_large``: the page refused to send a result of ``size``
    bytes, over the cap it was given. ``unanswered``: native Chromium never answered the
    lookup of the tool in its frame (in ``waited_ms``), and the tool was not run.
    ``refusal`` (with ``error``): a ``<form toolname>`` refused the input, and how.
    """

    status: Literal["ok", "error", "cancelled", "navigation", "changed", "too_large", "unanswered"]
    json_text: str | None = None
    error_name: str | None = None
    error_message: str | None = None
    size: int | None = None
    waited_ms: int | None = None
    refusal: FormRefusal | None = None


class FormReviewRequest(BaseModel):
    """A filled form waiting for its submission: the tool, and what the form shows now."""

    model_config = ConfigDict(frozen=True)

    tool: Tool
    values: dict[str, Any] = Field(default_factory=dict)
    page_url: str = ""


class FormReviewDecision(BaseModel):
    """Submit (with ``values`` changed by the user, if any) or cancel, and why."""

    model_config = ConfigDict(frozen=True)

    submit: bool
    values: dict[str, Any] | None = None
    reason: str


class FormReviewer(Protocol):
    """Who decides about a filled ``<form toolname>`` that waits for its submit
    (:class:`harness.declarative.review.FormReviewer`; the session lends it)."""

    async def review(self, request: FormReviewRequest) -> FormReviewDecision:
        """Submit (with the user's values) or cancel, and why."""
        ...


class SeedDialect(Protocol):
    """Seed 002's ``tool-name`` tools of a page, run by the harness rather than the page
    (:class:`harness.declarative.invocation.SeedTools`; the session lends it)."""

    def owns(self, tool: Tool) -> bool:
        """Whether ``tool`` is one of them."""
        ...

    def report(self, info: FrameInfo, raw: Any, top_origin: str) -> None:
        """A frame's declarations as the injected script reported them."""
        ...

    def forget(self, key: str) -> None:
        """A frame's document went away."""
        ...

    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        """Run one of them (fetch-first)."""
        ...

    def cancel(self, call_id: str, reason: str) -> bool:
        """Abort a running call; False when the call is not one of these."""
        ...

    def after_delivery(self, call_id: str) -> Coroutine[Any, Any, None] | None:
        """What follows a delivered result (seed 002 §6.1)."""
        ...


class NoSeedDialect:
    """A backend's seed dialect until the session lends one: owns no tool."""

    def owns(self, tool: Tool) -> bool:
        """Never: without the dialect, no tool-name tool is listed."""
        return False

    def report(self, info: FrameInfo, raw: Any, top_origin: str) -> None:
        """Declarations are ignored."""

    def forget(self, key: str) -> None:
        """Nothing to forget."""

    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        """Never called (owns nothing)."""
        return RawResult(status="error", error_name="UnknownError", error_message=tool.name)

    def cancel(self, call_id: str, reason: str) -> bool:
        """No call is one of these."""
        return False

    def after_delivery(self, call_id: str) -> Coroutine[Any, Any, None] | None:
        """Nothing follows."""
        return None


class Backend(ABC):
    """How tools are found and run in one page."""

    name: BackendName

    def __init__(self, keys: ChannelKeys, *, schema_subset: SchemaSubset = "accept") -> None:
        """``keys``: the Harness's channel keys (shared by its sessions). ``schema_subset``:
        whether the page's ``registerTool()`` refuses schemas outside WebMCP's subset."""
        self.keys = keys
        self.schema_subset: SchemaSubset = schema_subset
        # Decides about filled <form toolname> waiting for the user (the session sets it;
        # None: such forms are never submitted by the harness).
        self.form_reviewer: FormReviewer | None = None
        # Who answers the questions a tool asks from inside execute (the session sets it to
        # return its elicitation handler; None: every question is answered ``cancel``).
        self.question_handler: Callable[[], ElicitationHandler] | None = None
        # Seed 002's tool-name elements, reported by the injected JS in both modes and run
        # by the dialect the session lends (harness.declarative.invocation.SeedTools).
        self.seed: SeedDialect = NoSeedDialect()
        # The biggest result the page may send (bytes of UTF-8; the session sets it): a
        # bigger one is refused in the page, before it crosses to Python.
        self.max_result_bytes: int | None = None

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

    async def refresh_after(self, call_id: str) -> None:
        """Make the catalog current after the call ``call_id`` ended (seed 002 §6.1's
        recompute); default: re-read everything (:meth:`refresh`)."""
        await self.refresh()

    def holds_after(self, call_id: str) -> bool:
        """Whether the catalog already holds the page as the call ``call_id`` left it, so
        that :meth:`refresh_after` would have nothing to do (True consumes what the call
        said of the page); default: not known."""
        return False

    async def idle_within(self, window: float) -> bool:
        """Whether nothing the page has scheduled can change its tools within ``window``
        seconds (readiness ends its quiet window early then); default: cannot tell."""
        return False

    async def before_navigation(self) -> None:  # noqa: B027 - optional hook
        """The harness is about to navigate the page's top-level document (an ``open``);
        default: nothing to prepare."""

    async def refresh_for(self, tool: Tool) -> None:
        """Make the catalog current where ``tool`` lives, before a call of it is run
        against its definition; default: re-read everything (:meth:`refresh`)."""
        await self.refresh()

    @abstractmethod
    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        """Run the tool with already-validated arguments."""

    @abstractmethod
    async def cancel(self, call_id: str, reason: str) -> None:
        """Abort a running call's signal (the page sees ``toolcancel``)."""

    async def interrupt(self) -> None:  # noqa: B027 - optional hook
        """Stop the script running in the page now (a tool that never yields, which
        cannot even hear its signal abort); default: nothing can be done."""

    async def detach(self) -> None:  # noqa: B027 - optional hook
        """Stop following the page; default: nothing to release."""

    def after_delivery(self, call_id: str) -> Coroutine[Any, Any, None] | None:
        """What follows a call's delivered result (seed 002 §6.1: catalog recompute, then
        navigation), for the session to run; default: nothing."""
        return None

    async def navigate_frame(self, frame_key: str, url: str) -> None:
        """Load ``url`` in the frame with that key and read its tools (a result's
        ``_meta.uiRedirect``); raises when the frame is gone or the page cannot be loaded."""
        raise HarnessError(
            f"The {self.name} backend cannot load a page into frame {frame_key}; "
            "a result's uiRedirect is not followed on it."
        )
