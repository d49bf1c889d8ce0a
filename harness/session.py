"""A :class:`Session`: one page, its tools, and calls through the pipeline."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import CallToolResult
from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from harness.agent_view import AgentTool, agent_tools
from harness.browser.backends.base import Backend
from harness.browser.backends.polyfill import ChannelBackend
from harness.browser.marks import mark
from harness.catalog import Catalog, Settle, SettleReport
from harness.declarative.invocation import SeedTools, install_seed_stage, seed_tools_of
from harness.declarative.review import FormReviewer, FormReviewMode
from harness.elicitation.base import AutoHandler, ElicitationHandler, ElicitationRecord
from harness.elicitation.withholding import WithholdingRecorder
from harness.errors import ConfigError, PageCrashed, PageUnreachable, SessionClosed
from harness.models import (
    CallOutcome,
    CallRequest,
    CatalogWarning,
    Tool,
    ToolChange,
    error_result,
    new_call_id,
)
from harness.pipeline import Pipeline
from harness.schemas.patterns import pattern_warnings
from harness.stages.framing import PAGE_RESULT_KINDS, frame_result, mirror_structured
from harness.stages.navigation import NavigationGuard, ui_redirect_target
from harness.stages.normalization import DEFAULT_MAX_RESULT_BYTES
from harness.stages.policy import (
    DEFAULT_POLICY,
    AuditTrail,
    Policy,
    PolicyOption,
    install_stages,
    policy_option,
)
from harness.stages.redaction import Redactor, sensitivity_warnings
from harness.stages.redemption import RevealAttempt, reveal, reveal_all
from harness.stages.scrubbing import Scrubber
from harness.stages.trust import TrustState, annotation_warnings, page_resolver
from harness.stages.validation import schema_warnings
from harness.stages.vault import Revealed, Vault

log = logging.getLogger("harness.session")

# What a session says once its page can answer no more (the call's result, then every use).
PAGE_CRASHED = (
    "the page crashed (its renderer process died, e.g. out of memory). This session cannot "
    "be used any more: open a new session (Harness.open(url)); the harness and its other "
    "sessions still work."
)
BROWSER_GONE = (
    "the browser process went away (killed or crashed). This session cannot be used any "
    "more: Harness.open(url) launches a new browser for a new session."
)

# How long closing a session waits for its browser context to close.
CONTEXT_CLOSE_TIMEOUT_S = 10.0

CallListener = Callable[[dict[str, Any], CallOutcome], None]
"""``listener(arguments, outcome)``: see :meth:`Session.on_call`."""


class Session:
    """One page driven by the harness: open it, list its tools, call them.

    One session is one agent session (seed 001's term) on one page in a browser context of
    its own: one trust state, audit, vault and consent record (:attr:`guard`). A front end
    that serves several agents (the MCP bridge) gives each a session of its own.

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
        policy: PolicyOption = DEFAULT_POLICY,
        untrusted_framing: bool = True,
        form_review: FormReviewMode = "ask",
        settle: Settle | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        watch_navigation: bool = True,
    ) -> None:
        """``watch_navigation``: check every main-frame commit against the origins the user
        allowed (:class:`~harness.stages.navigation.NavigationGuard`); off for a page its
        owner drives itself (:meth:`Harness.attach`), whose navigations cannot be told from
        the page's own."""
        # The Harness that made it (kept for its owner; the session never calls back into it).
        self.harness = harness
        self.context = context
        # False for a page made elsewhere (Harness.attach): closing leaves it open.
        self.owns_context = owns_context
        self.page = page
        self.backend = backend
        self.catalog = Catalog()
        self.pipeline = Pipeline(self.catalog, backend)
        self.pipeline.page_answers = self._page_answers
        # Readiness (harness/catalog.py): after each document's load, listings and calls
        # wait once for the catalog to settle. `settle` may change between calls.
        self.settle = settle or Settle()
        self._documents = 0  # top-level navigations seen (each a document to settle)
        self._settled_document = -1  # the last document whose catalog was waited for
        self.call_timeout = call_timeout
        self.max_result_bytes = max_result_bytes
        # What the session withheld from its agent, withheld on every channel (results, the
        # tool list, the harness's messages, console, traces, the user's questions):
        # harness/stages/scrubbing.py.
        self.scrubber = Scrubber()
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
        self._broken: str | None = None  # why the page answers no more (crash, browser gone)
        # Seed 002 §6.1: what follows a delivered result (catalog recompute, navigation).
        self._after_delivery: asyncio.Task[None] | None = None
        # Trust (harness/stages/trust.py) and policy (harness/stages/policy.py): the SEP's annotations
        # accumulate in `trust` for the whole session; every decision lands in `audit`.
        # `policy` (None: no policy) may be replaced between calls.
        self.policy = policy
        self.untrusted_framing = untrusted_framing
        self.trust = TrustState()
        """The SEP's annotations this session's calls accumulated."""
        self.audit = AuditTrail()
        """The policy decisions made for this session."""
        self.vault = Vault(scrubber=self.scrubber)
        """The values withheld from the agent (memory only, cleared on close)."""
        # The user's standing consent to where the page is (harness/stages/navigation.py).
        self.guard = NavigationGuard(self, watching=watch_navigation)
        install_stages(
            self.pipeline,
            lambda: self.trust,
            lambda: self.audit,
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
        self.redaction = Redactor(lambda: self.vault)
        self.pipeline.before.append(self.redaction.before_execute)
        self.pipeline.after.append(self.redaction)

    @property
    def policy(self) -> Policy | None:
        """The policy the calls run under (None: none); set a :class:`Policy`, a pack name
        (``"default"``, ``"strict"``), a policy file, or None — between calls."""
        return self._policy

    @policy.setter
    def policy(self, value: PolicyOption) -> None:
        self._policy = policy_option(value)

    # -- agent sessions ----------------------------------------------------------------
    @property
    def max_result_bytes(self) -> int:
        """The biggest tool result passed on, in bytes of UTF-8 (a bigger one is refused
        with ``isError`` naming its size; the page itself refuses to send it)."""
        return self.pipeline.max_result_bytes

    @max_result_bytes.setter
    def max_result_bytes(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"max_result_bytes must be a positive integer, not {value!r}")
        self.pipeline.max_result_bytes = value
        self.backend.max_result_bytes = value

    @property
    def elicitation(self) -> ElicitationHandler:
        """Who answers the user's questions; every answer lands in :attr:`elicitations`.
        It is asked with what the session withheld replaced by its handles, as every
        other channel is (:mod:`harness.elicitation.withholding`)."""
        return self._elicitation

    @elicitation.setter
    def elicitation(self, handler: ElicitationHandler) -> None:
        scrub = self.scrubber.scrub
        if not (
            isinstance(handler, WithholdingRecorder)
            and handler.records is self.elicitations
            and handler.scrub == scrub
        ):
            handler = WithholdingRecorder(handler, self.elicitations, scrub)
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
        """Catalog warnings: refused duplicates, malformed tools, seed 004 annotation
        spellings, invalid trust annotations, sensitivity declarations that disagree, schemas
        that refer outside themselves, patterns that are not ECMAScript regexes."""
        tools = self.catalog.tools()
        return [
            *self.catalog.warnings,
            *annotation_warnings(tools),
            *sensitivity_warnings(tools),
            *schema_warnings(tools),
            *pattern_warnings(tools),
        ]

    async def _attach(self) -> None:
        await self.backend.attach(self.context, self.page, self.catalog)
        readiness = self.catalog.readiness
        readiness.idle = self.backend.idle_within
        self.page.on("request", readiness.request_started)
        self.page.on("requestfinished", readiness.request_ended)
        self.page.on("requestfailed", readiness.request_ended)
        self.page.on("load", lambda _page: readiness.loaded())
        self.page.on("framenavigated", self._on_navigated)
        self.page.on("crash", lambda _page: self.broke(PAGE_CRASHED))

    async def _page_answers(self) -> None:
        """Return once the page's top document answers (raises while it cannot); at once
        for a closed session, whose page has nothing more to say."""
        if self._closed or self.page.is_closed():
            return
        await self.page.main_frame.evaluate("0")

    @property
    def broken(self) -> str | None:
        """Why the page can answer no more (it crashed; its browser went away), or None."""
        return self._broken

    def broke(self, reason: str) -> None:
        """The page can answer no more: running calls end now with ``reason`` (which says
        how to recover), and every later use raises :class:`~harness.errors.PageCrashed`."""
        if self._broken is not None:
            return
        self._broken = reason
        self.pipeline.break_down(reason)
        self.catalog.readiness.touch()
        if isinstance(self.backend, ChannelBackend):
            self.backend.channel.fail(reason)

    def _on_navigated(self, frame: Any) -> None:
        if frame.parent_frame is None:  # a new top-level document: its catalog settles anew
            self._documents += 1
            self.guard.committed(frame.url)

    # -- what the guard does to the page (NavigationGuard) -------------------------------
    def pause_tools(self, reason: str | None) -> None:
        """Offer and run no tool, saying ``reason`` to calls (None: offer them again)."""
        self.catalog.pause(reason)

    async def return_to(self, url: str) -> None:
        """Load ``url`` (the guard sends the page back); a failure is logged, not raised."""
        if self._closed or self.page.is_closed():
            return
        try:
            await self.page.goto(url)
        except PlaywrightError as exc:
            log.warning("sending the page back to %s failed: %s", url, _first_line(exc))

    async def ready(self, settle: Settle | None = None) -> SettleReport:
        """Wait until the current document's catalog is settled (see :class:`Settle`).

        Settled: the document has loaded, and for ``settle.quiet`` seconds (default: the
        session's :attr:`settle`) no tool was registered, unregistered or changed and the
        page's network was idle — or ``settle.timeout`` passed. Each document is waited
        for once; :meth:`open`, :meth:`tools` and :meth:`call` call this themselves.
        """
        self._check_open()
        settle = settle or self.settle
        if self._settled_document == self._documents or not settle.enabled:
            return SettleReport(settled=True, waited=0.0)
        document = self._documents
        loop = asyncio.get_running_loop()
        started = loop.time()
        with contextlib.suppress(PlaywrightError):  # no load within the cap: settle anyway
            await self.page.wait_for_load_state("load", timeout=settle.timeout * 1000)
        report = await self.catalog.readiness.wait(settle)
        if self._documents == document:
            self._settled_document = document
        return report.model_copy(update={"waited": loop.time() - started})

    async def open(
        self, url: str, *, wait_until: str = "load", settle: bool | Settle = True
    ) -> None:
        """The user opens ``url``: navigate the page there and read its tools once its
        catalog settled. Its origin, and the origin its redirects land on, are allowed from
        now on (:attr:`guard`).

        ``settle``: False to return right after ``load`` (later listings still wait), or
        a :class:`Settle` for this call.
        """
        await self._go(url, by_user=True, wait_until=wait_until, settle=settle)

    async def navigate(self, url: str) -> None:
        """Like :meth:`open`, for a navigation the user did not make (an agent's): it allows
        nothing, and where it lands on an origin the user has not allowed is asked about
        before this returns (without a yes the page goes back; :attr:`guard` keeps the
        refusal)."""
        await self._go(url, by_user=False)

    async def _go(
        self, url: str, *, by_user: bool, wait_until: str = "load", settle: bool | Settle = True
    ) -> None:
        self._check_open()
        await self.settled()
        await self.backend.before_navigation()
        with self.guard.navigation(allow=url if by_user else None, intent=None if by_user else url):
            try:
                response = await self.page.goto(url, wait_until=wait_until)  # type: ignore[arg-type]
            except PlaywrightError as exc:
                raise PageUnreachable(f"Could not open {url}: {_first_line(exc)}") from exc
            if by_user and response is not None:
                self.guard.allow(response.url)  # where the user's navigation's redirects led
            await self.guard.judge()
        if response is not None and response.status >= 400:
            raise PageUnreachable(f"Could not open {url}: HTTP {response.status}")
        mark("loaded")
        if settle is not False:
            await self.ready(settle if isinstance(settle, Settle) else None)
            mark("settled")
        await self.backend.refresh()

    async def reload(self) -> None:
        """Reload the page and read its tools again (where a reload lands is judged like
        any navigation the user did not make)."""
        self._check_open()
        url = self.url
        with self.guard.navigation(intent=url):
            try:
                response = await self.page.reload()
            except PlaywrightError as exc:
                raise PageUnreachable(f"Could not reload {url}: {_first_line(exc)}") from exc
            await self.guard.judge()
        if response is not None and response.status >= 400:
            raise PageUnreachable(f"Could not reload {self.url}: HTTP {response.status}")
        await self.backend.refresh()

    async def tools(self, *, settle: bool = True) -> list[Tool]:
        """The tools the page offers now (re-read from every frame first), once the
        document's catalog settled (:meth:`ready`; ``settle=False``: at once)."""
        self._check_open()
        await self.settled()
        if settle:
            await self.ready()
        await self.backend.refresh()
        return self.catalog.tools()

    async def agent_tools(self) -> list[AgentTool]:
        """The agent view of the tools; descriptions framed as untrusted per
        ``untrusted_framing``; texts withheld in this session scrubbed (a tool whose name
        holds one is not offered)."""
        return agent_tools(
            await self.tools(), framing=self.untrusted_framing, withheld=self.scrubber
        )

    async def tool(self, name: str) -> Tool:
        """One tool by name, or :class:`~harness.errors.UnknownTool`."""
        await self.tools()
        return self.pipeline.lookup(name)

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        deliver: Callable[[CallOutcome], Awaitable[None]] | None = None,
    ) -> CallOutcome:
        """Call a tool through the pipeline; tool failures come back as ``isError``.

        Raises :class:`~harness.errors.UnknownTool` when no tool has that name once the
        document's catalog has settled (:meth:`ready`).

        ``deliver`` is the caller's own last step with a result the tool gave (the MCP
        bridge's check against the outputSchema): awaited before anything that follows the
        result (seed 002 §6.1: the catalog's change, the navigation) may start. A call
        refused before any tool was looked up (the catalog paused) returns without it.
        """
        self._check_open()
        if timeout is not None and timeout <= 0:
            raise ConfigError(f"timeout must be positive, not {timeout}")
        await self.settled()
        if self.catalog.paused is not None:
            return self._refused(name, arguments, self.catalog.paused)
        tool = self.catalog.get(name)
        if tool is None:  # not (yet) there: fail only once the catalog has settled
            await self.ready()
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
        if outcome.error_kind in PAGE_RESULT_KINDS:
            # After every stage (redaction included): structuredContent's data is in a text
            # block too (what a model reads), and page text is data, not instructions.
            outcome.result = mirror_structured(outcome.result)
            if self.untrusted_framing:
                outcome.result = frame_result(outcome.result, request.tool.origin)
        self.history.append(outcome)
        for listener in list(self._call_listeners):
            listener(sent, outcome)
        if deliver is not None:
            # The caller's last work on the result (the MCP bridge checks it against its
            # outputSchema, off the event loop): done while the catalog is held, so nothing
            # that follows the result starts before it is delivered.
            try:
                await deliver(outcome)
            except BaseException:
                release()
                raise
        if self._nothing_follows(outcome, request.tool):
            release()  # publishes nothing: no change was held, none is to come
            return outcome
        # Seed 002 §6.1: the result is delivered first (returned now); the catalog
        # recompute, its change event and any navigation the call asked for follow.
        task = asyncio.ensure_future(self._after_result(outcome, request.tool, release))
        task.add_done_callback(self._forget_after_delivery)
        self._after_delivery = task
        return outcome

    def _nothing_follows(self, outcome: CallOutcome, tool: Tool) -> bool:
        """Whether nothing would follow the result (:meth:`_after_result`): a script tool
        (the seed dialect's follow-ups are for its own tools), no redirect asked for, no
        catalog change held, and the page as the catalog holds it (the backend says so
        from the call's own answer) — the common case, which then needs no task."""
        if tool.source != "script" or self.catalog.changes_held:
            return False
        result = self.user_view(outcome) or outcome.result
        if (result.meta or {}).get("uiRedirect") is not None:
            return False
        return self.backend.holds_after(outcome.call_id)

    def _refused(self, name: str, arguments: dict[str, Any] | None, why: str) -> CallOutcome:
        """A call refused before any tool was looked up (the catalog is paused)."""
        outcome = CallOutcome(
            call_id=new_call_id(),
            tool=name,
            arguments={} if arguments is None else dict(arguments),
            result=error_result(f"Tool {name!r} was not run. {why}"),
            duration_ms=0.0,
            error_kind="refused",
            backend=self.backend.name,
        )
        self.history.append(outcome)
        for listener in list(self._call_listeners):
            listener(copy.deepcopy(outcome.arguments), outcome)
        return outcome

    def _forget_after_delivery(self, task: asyncio.Task[None]) -> None:
        # A finished task keeps the context it was created in (an MCP request's, with its
        # client session): holding on to it would keep a closed client's session alive.
        if self._after_delivery is task:
            self._after_delivery = None

    async def _after_result(
        self, outcome: CallOutcome, tool: Tool, release: Callable[[], ToolChange]
    ) -> None:
        """What follows a delivered result: (3) the catalog recomputed, its change announced
        once; (4) the navigation the result asked for (a seed-dialect answer's, or a script
        tool's ``_meta.uiRedirect`` within its origin)."""
        try:
            await self.backend.refresh_after(outcome.call_id)
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

    @property
    def following_a_call(self) -> bool:
        """Whether a call's result was delivered and what follows it (seed 002 §6.1: the
        catalog recomputed and its change announced, then the navigation it asked for) is
        under way: a change the catalog publishes now is that call's, to be told at once."""
        return self._after_delivery is not None and not self._after_delivery.done()

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

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    async def close(self) -> None:
        """Close the page and its browser context; the session cannot be used after.

        A session made by :meth:`Harness.attach` leaves the page and context open.
        """
        if self._closed:
            return
        self._closed = True
        # Closing takes the page's tools with it: no listener hears that as a change.
        self.catalog.unsubscribe_all()
        self.vault.clear()
        self.scrubber.clear()
        await self.guard.close()
        if self._after_delivery is not None and not self._after_delivery.done():
            self._after_delivery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._after_delivery
        await self.backend.detach()
        if not self.owns_context:
            return
        try:
            await asyncio.wait_for(self.context.close(), CONTEXT_CLOSE_TIMEOUT_S)
        except PlaywrightError:
            pass  # the browser is already gone
        except TimeoutError:
            # Seen after a page navigated away in the middle of a call: Playwright's close
            # of the context never returned. The session is closed all the same; the
            # context goes with its browser (Harness.close()).
            log.warning(
                "closing the browser context took over %g s; left to the browser",
                CONTEXT_CLOSE_TIMEOUT_S,
            )

    def _check_open(self) -> None:
        if self._closed:
            raise SessionClosed("This session is closed; open a new one with Harness.open().")
        if self._broken is not None:
            raise PageCrashed(self._broken[0].upper() + self._broken[1:])

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
