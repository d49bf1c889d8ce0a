"""A :class:`Session`: one page, its tools, and calls through the pipeline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from harness.backends.base import Backend
from harness.catalog import Catalog
from harness.elicitation import AutoHandler, ElicitationHandler
from harness.errors import ConfigError, PageUnreachable, SessionClosed
from harness.models import CallOutcome, CatalogWarning, Tool, ToolChange
from harness.pipeline import CallRequest, Pipeline

if TYPE_CHECKING:
    from harness.harness import Harness


class Session:
    """One page driven by the harness: open it, list its tools, call them.

    Create sessions with :meth:`Harness.new_session` or :meth:`Harness.open`.
    Every call goes through the full pipeline; :attr:`history` keeps every
    outcome (agent views only) for reports and leak checks.
    """

    def __init__(
        self,
        harness: Harness,
        context: BrowserContext,
        page: Page,
        backend: Backend,
        *,
        call_timeout: float,
        elicitation: ElicitationHandler | None = None,
    ) -> None:
        self.harness = harness
        self.context = context
        self.page = page
        self.backend = backend
        self.catalog = Catalog()
        self.pipeline = Pipeline(self.catalog, backend)
        self.call_timeout = call_timeout
        # Who answers the user's questions; nobody configured means "cancel" (the safe side).
        self.elicitation: ElicitationHandler = elicitation or AutoHandler("cancel")
        self.history: list[CallOutcome] = []
        self._closed = False

    @property
    def backend_name(self) -> str:
        """``polyfill`` or ``native``."""
        return self.backend.name

    @property
    def url(self) -> str:
        """The top-level document's URL."""
        return self.page.url

    @property
    def warnings(self) -> list[CatalogWarning]:
        """Catalog warnings: refused duplicates, malformed tools."""
        return list(self.catalog.warnings)

    async def _attach(self) -> None:
        await self.backend.attach(self.context, self.page, self.catalog)

    async def open(self, url: str, *, wait_until: str = "load") -> None:
        """Navigate the page to ``url`` and read its tools."""
        self._check_open()
        try:
            response = await self.page.goto(url, wait_until=wait_until)  # type: ignore[arg-type]
        except PlaywrightError as exc:
            raise PageUnreachable(f"Could not open {url}: {_first_line(exc)}") from exc
        if response is not None and response.status >= 400:
            raise PageUnreachable(f"Could not open {url}: HTTP {response.status}")
        await self.backend.refresh()

    async def navigate(self, url: str) -> None:
        """Alias of :meth:`open`, for agents and scripts that move within a site."""
        await self.open(url)

    async def tools(self) -> list[Tool]:
        """The tools the page offers now (re-read from every frame first)."""
        self._check_open()
        await self.backend.refresh()
        return self.catalog.tools()

    async def tool(self, name: str) -> Tool:
        """One tool by name, or :class:`~harness.errors.UnknownTool`."""
        await self.tools()
        return self.pipeline.lookup(name)

    async def call(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallOutcome:
        """Call a tool through the pipeline; tool failures come back as ``isError``.

        Raises :class:`~harness.errors.UnknownTool` when no tool has that name.
        """
        self._check_open()
        if timeout is not None and timeout <= 0:
            raise ConfigError(f"timeout must be positive, not {timeout}")
        tool = self.catalog.get(name)
        if tool is None:
            await self.backend.refresh()
        request = CallRequest(
            tool=self.pipeline.lookup(name),
            arguments={} if arguments is None else arguments,
            timeout=self.call_timeout if timeout is None else timeout,
        )
        outcome = await self.pipeline.call(request)
        self.history.append(outcome)
        return outcome

    def on_tools_changed(self, listener: Callable[[ToolChange], None]) -> Callable[[], None]:
        """Call ``listener(change)`` whenever the catalog changes; returns unsubscribe."""
        return self.catalog.subscribe(listener)

    async def wait_for_tool(self, name: str, *, timeout: float = 5.0) -> Tool:
        """Wait until a tool with that name is offered (e.g. registered late)."""
        arrived = asyncio.Event()
        unsubscribe = self.catalog.subscribe(
            lambda change: arrived.set() if name in change.added else None
        )
        try:
            await self.backend.refresh()
            if self.catalog.get(name) is None:
                await asyncio.wait_for(arrived.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            unsubscribe()
        return self.pipeline.lookup(name)

    async def close(self) -> None:
        """Close the page and its browser context; the session cannot be used after."""
        if self._closed:
            return
        self._closed = True
        await self.backend.detach()
        with contextlib.suppress(PlaywrightError):  # the browser is already gone
            await self.context.close()

    def _check_open(self) -> None:
        if self._closed:
            raise SessionClosed("This session is closed; open a new one with Harness.open().")

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        if "net::" in line:
            return line.strip()
    return text.splitlines()[0] if text else type(exc).__name__
