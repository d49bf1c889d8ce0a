"""A :class:`Session`: one page, its tools, and calls through the pipeline."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Callable
from typing import Any

from mcp.types import CallToolResult
from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from harness.agent_view import AgentTool, agent_tools
from harness.browser.backends.base import Backend
from harness.browser.backends.polyfill import ChannelBackend
from harness.catalog import Catalog
from harness.declarative.invocation import SeedTools, install_seed_stage, seed_tools_of
from harness.declarative.review import FormReviewer, FormReviewMode
from harness.elicitation.base import (
    AutoHandler,
    ElicitationHandler,
    ElicitationRecord,
    RecordingHandler,
)
from harness.errors import ConfigError, PageUnreachable, SessionClosed
from harness.models import CallOutcome, CallRequest, CatalogWarning, Tool, ToolChange
from harness.pipeline import Pipeline
from harness.stages.framing import PAGE_RESULT_KINDS, frame_result
from harness.stages.navigation import ui_redirect_target
from harness.stages.patterns import pattern_warnings
from harness.stages.policy import DEFAULT_POLICY, AuditTrail, Policy, install_stages
from harness.stages.redaction import Redactor, sensitivity_warnings
from harness.stages.redemption import RevealAttempt, reveal, reveal_all
from harness.stages.trust import TrustState, annotation_warnings, page_resolver
from harness.stages.vault import Revealed, Vault

log = logging.getLogger("harness.session")

CallListener = Callable[[dict[str, Any], CallOutcome], None]
"""``listener(arguments, outcome)``: see :meth:`Session.on_call`."""


class Session:
    """One page driven by the harness: open it, list its tools, call them.

    Create sessions with :meth:`Harness.new_session` or :meth:`Harness.open`.
    Every call goes through the full pipeline; :attr:`history` keeps every
    outcome (agent views only) for reports and leak checks.
    """

    def __init__(
        self,
        harness: object,
        context: BrowserContext,
        page: Page,
        backend: Backend,
        *,
        call_timeout: float,
        elicitation: ElicitationHandler | None = None,
        owns_context: bool = True,
        policy: Policy | None = DEFAULT_POLICY,
        untrusted_framing: bool = True,
        form_review: FormReviewMode = "ask",
    ) -> None:
        # The Harness that made it (kept for its owner; the session never calls back into it).
        self.harness = harness
        self.context = context
        # False for a page made elsewhere (Harness.attach): closing leaves it open.
        self.owns_context = owns_context
        self.page = page
        self.backend = backend
        self.catalog = Catalog()
        self.pipeline = Pipeline(self.catalog, backend)
        self.call_timeout = call_timeout
        # Every elicitation, answered by whoever is configured (nobody means "cancel",
        # the safe side), is recorded here, without password or x-sensitive values.
        self.elicitations: list[ElicitationRecord] = []
        self.elicitation = elicitation or AutoHandler("cancel")
        self.history: list[CallOutcome] = []
        # A filled <form toolname> without toolautosubmit waits for the user: submit,
        # cancel, or ask `elicitation` (harness/declarative/review.py). `form_review.mode` may change.
        self.form_review = FormReviewer(form_review, lambda: self.elicitation)
        backend.form_reviewer = self.form_review
        # Questions a tool asks from inside execute (harness/elicitation/questions.py).
        backend.question_handler = lambda: self.elicitation
        self._call_listeners: list[CallListener] = []
        self._closed = False
        # Seed 002 §6.1: what follows a delivered result (catalog recompute, navigation).
        self._after_delivery: asyncio.Task[None] | None = None
        # Trust (harness/stages/trust.py) and policy (harness/stages/policy.py): the SEP's annotations
        # accumulate in `trust` for the whole session; every decision lands in `audit`.
        # `policy` (None: no policy) may be replaced between calls.
        self.policy = policy
        self.untrusted_framing = untrusted_framing
        self.trust = TrustState()
        self.audit = AuditTrail()
        install_stages(
            self.pipeline,
            self.trust,
            self.audit,
            policy=lambda: self.policy,
            handler=lambda: self.elicitation,
            page_url=lambda: self.page.url,
            resolve=page_resolver(backend),
        )
        # Seed 002's tool-name tools: run by the harness (fetch-first), lent to the backend;
        # date/time bounds and files checked, tool-elicit asked, before they run.
        if isinstance(backend, ChannelBackend):  # both bundled backends: the page channel
            backend.seed = SeedTools(backend)
        install_seed_stage(
            self.pipeline, lambda: seed_tools_of(self.backend), lambda: self.elicitation
        )
        # Redaction (harness/stages/redaction.py) is the last stage both ways: it notes that the
        # tool runs, and what it returns is the agent view. What it withholds, and each
        # call's user view, stay in `vault` (memory only) until the session closes.
        self.vault = Vault()
        self.redaction = Redactor(self.vault)
        self.pipeline.before.append(self.redaction.before_execute)
        self.pipeline.after.append(self.redaction)

    @property
    def elicitation(self) -> ElicitationHandler:
        """Who answers the user's questions; every answer lands in :attr:`elicitations`."""
        return self._elicitation

    @elicitation.setter
    def elicitation(self, handler: ElicitationHandler) -> None:
        if not (isinstance(handler, RecordingHandler) and handler.records is self.elicitations):
            handler = RecordingHandler(handler, self.elicitations)
        self._elicitation: ElicitationHandler = handler

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
        """Catalog warnings: refused duplicates, malformed tools, invalid trust annotations,
        sensitivity declarations that disagree, patterns that are not ECMAScript regexes."""
        tools = self.catalog.tools()
        return [
            *self.catalog.warnings,
            *annotation_warnings(tools),
            *sensitivity_warnings(tools),
            *pattern_warnings(tools),
        ]

    async def _attach(self) -> None:
        await self.backend.attach(self.context, self.page, self.catalog)

    async def open(self, url: str, *, wait_until: str = "load") -> None:
        """Navigate the page to ``url`` and read its tools."""
        self._check_open()
        await self.settled()
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

    async def reload(self) -> None:
        """Reload the page and read its tools again."""
        self._check_open()
        try:
            response = await self.page.reload()
        except PlaywrightError as exc:
            raise PageUnreachable(f"Could not reload {self.url}: {_first_line(exc)}") from exc
        if response is not None and response.status >= 400:
            raise PageUnreachable(f"Could not reload {self.url}: HTTP {response.status}")
        await self.backend.refresh()

    async def tools(self) -> list[Tool]:
        """The tools the page offers now (re-read from every frame first)."""
        self._check_open()
        await self.settled()
        await self.backend.refresh()
        return self.catalog.tools()

    async def agent_tools(self) -> list[AgentTool]:
        """The agent view of the tools; descriptions framed as untrusted per ``untrusted_framing``."""
        return agent_tools(await self.tools(), framing=self.untrusted_framing)

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
        await self.settled()
        tool = self.catalog.get(name)
        if tool is None:
            await self.backend.refresh()
        request = CallRequest(
            tool=self.pipeline.lookup(name),
            arguments={} if arguments is None else arguments,
            timeout=self.call_timeout if timeout is None else timeout,
        )
        # What the caller sent, before any stage (a user's answer) could complete it.
        sent = copy.deepcopy(request.arguments) if self._call_listeners else {}
        # Seed 002 §6.1, for every tool: the catalog stays as it is (the running tool
        # included) until the result is delivered.
        release = self.catalog.hold()
        try:
            outcome = await self.pipeline.call(request)
        except BaseException:
            release()
            raise
        if self.untrusted_framing and outcome.error_kind in PAGE_RESULT_KINDS:
            # After every stage (redaction included): page text is data, not instructions.
            outcome.result = frame_result(outcome.result, request.tool.origin)
        self.history.append(outcome)
        for listener in list(self._call_listeners):
            listener(sent, outcome)
        # Seed 002 §6.1: the result is delivered first (returned now); the catalog
        # recompute, its change event and any navigation the call asked for follow.
        self._after_delivery = asyncio.ensure_future(
            self._after_result(outcome, request.tool, release)
        )
        return outcome

    async def _after_result(
        self, outcome: CallOutcome, tool: Tool, release: Callable[[], ToolChange]
    ) -> None:
        """What follows a delivered result: (3) the catalog recomputed, its change announced
        once; (4) the navigation the result asked for (a seed-dialect answer's, or a script
        tool's ``_meta.uiRedirect`` within its origin)."""
        try:
            await self.backend.refresh()
        except Exception as exc:  # the page went away: nothing to recompute
            log.debug("recomputing the catalog after %s: %s", tool.name, exc)
        finally:
            release()
        seed = self.backend.after_delivery(outcome.call_id)
        if seed is not None:
            await seed
            return
        result = self.user_view(outcome) or outcome.result
        target = ui_redirect_target(result.meta, tool.frame_url, tool.origin)
        if outcome.is_error or target is None:
            return
        try:
            await self.backend.navigate_frame(tool.frame, target)
        except Exception as exc:  # the result is delivered; nothing may fail the caller now
            log.warning("uiRedirect of %s to %s failed: %s", tool.name, target, exc)

    async def settled(self) -> None:
        """Wait for what followed the last call's result (seed 002 §6.1: the catalog
        recomputed, then the navigation its answer asked for). Calls, :meth:`tools` and
        :meth:`open` wait for it themselves."""
        task = self._after_delivery
        if task is not None and not task.done():
            await asyncio.shield(task)

    async def reveal(self, handle: str) -> Revealed:
        """For the user, never for an agent: the value behind a handle in a redacted result.

        A withheld field, result or user-only content block comes from the vault. A
        ``secret_reference`` is redeemed from its site with this session's cookies (seed
        000 §4a), once per call: a one-time reference answers 410 the second time.
        Raises a :class:`~harness.errors.RevealError` that says what went wrong.
        """
        self._check_open()
        return await reveal(self.vault, handle, self.context.request)

    async def reveal_all(self, outcome: CallOutcome) -> list[RevealAttempt]:
        """For the user: :meth:`reveal` every item the outcome's agent view lists as withheld.

        A failure is kept in its :class:`~harness.stages.redemption.RevealAttempt`, not raised.
        """
        self._check_open()
        return await reveal_all(self.vault, outcome.result, self.context.request)

    def user_view(self, outcome: CallOutcome) -> CallToolResult | None:
        """For the user, never for an agent: the call's result before redaction.

        None for a call stopped before its tool ran, or once the session is closed.
        """
        return self.vault.user_view(outcome.call_id)

    def on_call(self, listener: CallListener) -> Callable[[], None]:
        """Call ``listener(arguments, outcome)`` after every call, once it is in :attr:`history`.

        ``arguments`` are the ones the caller sent (a copy). Returns a function that
        unsubscribes. Front ends use it to trace calls as they happen.
        """
        self._call_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._call_listeners:
                self._call_listeners.remove(listener)

        return unsubscribe

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
        """Close the page and its browser context; the session cannot be used after.

        A session made by :meth:`Harness.attach` leaves the page and context open.
        """
        if self._closed:
            return
        self._closed = True
        self.vault.clear()
        if self._after_delivery is not None and not self._after_delivery.done():
            self._after_delivery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._after_delivery
        await self.backend.detach()
        if not self.owns_context:
            return
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
