"""The :class:`Harness`: owns Playwright and the browser, and makes sessions."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import get_args

from playwright.async_api import Browser, BrowserContext, Page, Playwright
from playwright.async_api import Error as PlaywrightError

from harness.browser.backends.base import Backend
from harness.browser.backends.native import NativeBackend
from harness.browser.backends.polyfill import PolyfillBackend
from harness.browser.chromium import QUIET_FLAGS, chromium_args
from harness.browser.injection import ChannelKeys, SchemaSubset
from harness.browser.launch import BrowserPool, Launched, discard, launch
from harness.catalog import Settle
from harness.declarative.review import FORM_REVIEW_MODES, FormReviewMode
from harness.elicitation.base import ElicitationHandler, close_handler
from harness.errors import ConfigError
from harness.models import BackendName
from harness.session import BROWSER_GONE, Session
from harness.stages.normalization import DEFAULT_MAX_RESULT_BYTES
from harness.stages.policy import DEFAULT_POLICY, Policy, PolicyOption, policy_option

DEFAULT_CALL_TIMEOUT_S = 30.0
CLOSE_STEP_TIMEOUT_S = 10.0
"""How long :meth:`Harness.close` waits for the browser to close, then for Playwright's
driver to stop. Either has been seen not to return after a page went away mid-call; a
step that runs over is left behind, with a warning, so that closing never hangs."""

log = logging.getLogger(__name__)

BACKENDS: dict[str, type[Backend]] = {"polyfill": PolyfillBackend, "native": NativeBackend}


class Harness:
    """A browser with WebMCP, playing the user agent for every session it opens.

    >>> async with Harness(backend="polyfill") as harness:
    ...     session = await harness.open("http://127.0.0.1:8101/")
    ...     outcome = await session.call("add_todo", {"text": "buy milk"})
    """

    def __init__(
        self,
        *,
        backend: BackendName = "polyfill",
        headless: bool = True,
        executable_path: str | Path | None = None,
        launch_args: Sequence[str] = (),
        call_timeout: float = DEFAULT_CALL_TIMEOUT_S,
        elicitation: ElicitationHandler | None = None,
        policy: PolicyOption = DEFAULT_POLICY,
        untrusted_framing: bool = True,
        form_review: FormReviewMode = "ask",
        schema_subset: SchemaSubset = "accept",
        settle: Settle | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        browsers: BrowserPool | None = None,
    ) -> None:
        """``policy``: the default pack unless given a :class:`~harness.stages.policy.Policy`, a
        policy file (loaded now: a bad file fails before anything runs) or None (no policy).
        ``untrusted_framing``: mark page-provided text as untrusted data in the agent view.
        ``form_review``: what becomes of a filled ``<form toolname>`` without
        ``toolautosubmit`` — ``"submit"``, ``"cancel"``, or ``"ask"`` the elicitation
        handler (whose default answer cancels); see :mod:`harness.declarative.review`.
        ``schema_subset``: what the page's ``registerTool()`` does with an ``inputSchema``
        outside WebMCP's subset (``$ref``, ``format``, …): ``"accept"`` it, as Chromium does,
        or ``"refuse"`` it with a TypeError, as the spec's tentative tests ask.
        ``settle``: when a page's catalog counts as ready (default: quiet for 500 ms, at
        most 5 s; see :class:`~harness.catalog.Settle`); sessions wait for it after each load.
        ``max_result_bytes``: the biggest tool result passed on (default 10 MB); a bigger
        one is refused, in the page, with an ``isError`` result naming its size.
        ``browsers``: take the browser from this :class:`~harness.browser.launch.BrowserPool`
        (shared with other harnesses; closing the harness leaves it running) rather than
        launch one of its own.
        """
        if schema_subset not in get_args(SchemaSubset):
            raise ConfigError(f"schema_subset must be 'accept' or 'refuse', not {schema_subset!r}")
        if form_review not in FORM_REVIEW_MODES:
            raise ConfigError(
                f"form_review must be one of {', '.join(FORM_REVIEW_MODES)}, not {form_review!r}"
            )
        if backend not in get_args(BackendName):
            raise ConfigError(f"Unknown backend {backend!r}; use 'polyfill' or 'native'.")
        if call_timeout <= 0:
            raise ConfigError(f"call_timeout must be positive, not {call_timeout}")
        if isinstance(max_result_bytes, bool) or not isinstance(max_result_bytes, int):
            raise ConfigError(f"max_result_bytes must be an integer, not {max_result_bytes!r}")
        if max_result_bytes <= 0:
            raise ConfigError(f"max_result_bytes must be positive, not {max_result_bytes}")
        self.max_result_bytes = max_result_bytes
        self.backend: BackendName = backend
        self.headless = headless
        self.executable_path = executable_path
        self.extra_args = list(launch_args)
        self.call_timeout = call_timeout
        self.elicitation = elicitation
        self.policy: Policy | None = policy_option(policy)
        self.untrusted_framing = untrusted_framing
        self.form_review: FormReviewMode = form_review
        self.schema_subset: SchemaSubset = schema_subset
        self.settle = settle or Settle()
        self.keys = ChannelKeys()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._launching: asyncio.Future[Launched] | None = None  # adopt_launch()
        self.browsers = browsers
        self._borrowed = False  # the running browser is the pool's: it outlives the harness
        # The sessions it made that are open (closed ones are dropped as the next one opens:
        # a harness that runs for hours holds no closed session, nor its catalog and history).
        self.sessions: list[Session] = []
        self._unclaimed: set[asyncio.Future[None]] = set()  # contexts closing (_close_unclaimed)

    @property
    def browser(self) -> Browser:
        """The running browser (after :meth:`start`)."""
        if self._browser is None:
            raise ConfigError("The harness is not started; use `async with Harness()`.")
        return self._browser

    async def start(self) -> Harness:
        """Launch the browser (idempotent; launches a new one when the last went away)."""
        if self._browser is not None and self._browser.is_connected():
            return self
        if self._browser is not None:  # killed or crashed: its sessions already know
            await self._drop_browser()
        launched = await self._adopted()
        self._borrowed = launched is None and self.browsers is not None
        if launched is None and self.browsers is not None:
            launched = await self.browsers.borrow(
                self.executable_path, headless=self.headless, args=self.launch_args()
            )
        elif launched is None:
            launched = await launch(
                self.executable_path, headless=self.headless, args=self.launch_args()
            )
        self._playwright, self._browser = launched.playwright, launched.browser
        self._browser.on("disconnected", self._on_disconnected)
        return self

    def adopt_launch(self, launching: asyncio.Future[Launched]) -> None:
        """Take the browser from a launch already under way (:func:`harness.browser.launch.
        launch`; the CLI starts one before it imports the harness) at :meth:`start`. One
        launched otherwise than this harness would launch (other flags, headed, another
        executable) is closed, and the browser is launched anew."""
        self._launching = launching

    async def _adopted(self) -> Launched | None:
        """The adopted launch's browser, if it is the one :meth:`start` would launch."""
        launching, self._launching = self._launching, None
        if launching is None:
            return None
        launched = await launching
        wanted = Path(self.executable_path) if self.executable_path else launched.executable_path
        if (launched.args, launched.headless, launched.executable_path) == (
            self.launch_args(),
            self.headless,
            wanted,
        ):
            return launched
        await launched.close()
        return None

    def _on_disconnected(self, browser: Browser) -> None:
        """The browser process went away: every session's running calls end, clearly."""
        for session in self.sessions:
            if session.context.browser is browser:
                session.broke(BROWSER_GONE)

    async def _drop_browser(self) -> None:
        """Forget a browser that went away, and its sessions (they cannot be used)."""
        gone = self._browser
        self.sessions = [s for s in self.sessions if s.context.browser is not gone]
        if self._let_go_of_borrowed():
            return  # the pool launches it anew
        self._browser = None
        await self._stop_playwright()

    def _let_go_of_borrowed(self) -> bool:
        """Forget the pool's browser (it stays the pool's, running); False if it is not one."""
        if not self._borrowed or self._browser is None:
            return False
        self._browser.remove_listener("disconnected", self._on_disconnected)
        self._browser = self._playwright = None
        self._borrowed = False
        return True

    async def new_session(self) -> Session:
        """A fresh browser context and page, with the backend attached, on about:blank."""
        await self.start()
        # Playwright makes the context even when its caller is cancelled while it waits (an
        # MCP client that leaves as its page opens): made in a task of its own, a context
        # nobody took is closed once it exists.
        making = asyncio.ensure_future(self._new_page())
        try:
            context, page = await asyncio.shield(making)
        except asyncio.CancelledError:
            making.add_done_callback(self._close_unclaimed)
            raise
        session = self._session(context, page, owns_context=True)
        try:
            await session._attach()
        except BaseException:
            await context.close()
            raise
        self.sessions = [s for s in self.sessions if not s.closed]
        self.sessions.append(session)
        return session

    async def _new_page(self) -> tuple[BrowserContext, Page]:
        """A new browser context and its page (the context closed if the page fails)."""
        context = await self.browser.new_context()
        try:
            return context, await context.new_page()
        except BaseException:
            await context.close()
            raise

    def _close_unclaimed(self, making: asyncio.Future[tuple[BrowserContext, Page]]) -> None:
        """Close the context of a :meth:`new_session` cancelled while it was being made."""
        if making.cancelled() or making.exception() is not None:
            return
        context, _page = making.result()
        closing = asyncio.ensure_future(_within("closing an unclaimed context", context.close()))
        self._unclaimed.add(closing)
        closing.add_done_callback(self._unclaimed.discard)

    async def attach(self, context: BrowserContext, page: Page) -> Session:
        """A session on a page made elsewhere (e.g. pytest-playwright's ``page``).

        Attach before the page loads the site: the backend's script runs from the
        next navigation on. The harness launches nothing for it, so the browser must
        already have the backend's flags (:meth:`launch_args`). The caller closes the
        session (:meth:`close` leaves it alone); closing it leaves the page and the
        context open, to their owner. Navigation is the owner's too: such a session does
        not check the page's commits against the origins the user allowed, as a session of
        :meth:`open` does (the owner's own ``page.goto`` cannot be told from the page's).
        """
        session = self._session(context, page, owns_context=False)
        await session._attach()
        return session

    def launch_args(self) -> list[str]:
        """The Chromium flags this harness launches with: quiet, the backend's and the
        extra ones, their features merged with Playwright's (:func:`chromium_args`)."""
        return chromium_args(QUIET_FLAGS, BACKENDS[self.backend].launch_args(), self.extra_args)

    def _session(self, context: BrowserContext, page: Page, *, owns_context: bool) -> Session:
        return Session(
            self,
            context,
            page,
            BACKENDS[self.backend](self.keys, schema_subset=self.schema_subset),
            call_timeout=self.call_timeout,
            elicitation=self.elicitation,
            owns_context=owns_context,
            policy=self.policy,
            untrusted_framing=self.untrusted_framing,
            form_review=self.form_review,
            settle=self.settle,
            max_result_bytes=self.max_result_bytes,
            watch_navigation=owns_context,
        )

    async def open(self, url: str, *, settle: bool | Settle = True) -> Session:
        """A new session on ``url``, once its catalog settled (``settle``: see
        :meth:`Session.open`)."""
        session = await self.new_session()
        try:
            await session.open(url, settle=settle)
        except BaseException:
            await session.close()
            raise
        return session

    async def close(self) -> None:
        """Close every session, the browser and Playwright."""
        if self._launching is not None:  # adopted, never started
            launching, self._launching = self._launching, None
            await discard(launching)
        for session in self.sessions:
            await session.close()
        self.sessions.clear()
        if self._unclaimed:  # a pooled browser stays: nothing of ours may stay in it
            await asyncio.gather(*self._unclaimed, return_exceptions=True)
        await close_handler(self.elicitation)  # e.g. the browser handler's server and tab context
        if self._let_go_of_borrowed():
            return
        browser, self._browser = self._browser, None
        if browser is not None:
            await _within("closing the browser", browser.close())
        await self._stop_playwright()

    async def _stop_playwright(self) -> None:
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            await _within("stopping Playwright's driver", playwright.stop())

    async def __aenter__(self) -> Harness:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _within(step: str, closing: Awaitable[None]) -> None:
    """Wait for one step of closing down, at most :data:`CLOSE_STEP_TIMEOUT_S`."""
    try:
        await asyncio.wait_for(closing, CLOSE_STEP_TIMEOUT_S)
    except PlaywrightError:
        pass  # already gone (the browser was killed, or its driver went with it)
    except TimeoutError:
        log.warning("%s took over %g s; left behind", step, CLOSE_STEP_TIMEOUT_S)
    except Exception as exc:  # the steps after it must still run
        log.warning("%s failed: %s", step, exc)
