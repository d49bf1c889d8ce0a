"""The :class:`Harness`: owns Playwright and the browser, and makes sessions."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from harness.backends.base import Backend
from harness.backends.native import NativeBackend
from harness.backends.polyfill import PolyfillBackend
from harness.chromium import QUIET_FLAGS, find_chromium
from harness.elicitation import ElicitationHandler
from harness.errors import BrowserNotFound, ConfigError
from harness.injection import ChannelKeys
from harness.models import BackendName
from harness.session import Session

DEFAULT_CALL_TIMEOUT_S = 30.0

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
    ) -> None:
        if backend not in get_args(BackendName):
            raise ConfigError(f"Unknown backend {backend!r}; use 'polyfill' or 'native'.")
        if call_timeout <= 0:
            raise ConfigError(f"call_timeout must be positive, not {call_timeout}")
        self.backend: BackendName = backend
        self.headless = headless
        self.executable_path = executable_path
        self.extra_args = list(launch_args)
        self.call_timeout = call_timeout
        self.elicitation = elicitation
        self.keys = ChannelKeys()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self.sessions: list[Session] = []

    @property
    def browser(self) -> Browser:
        """The running browser (after :meth:`start`)."""
        if self._browser is None:
            raise ConfigError("The harness is not started; use `async with Harness()`.")
        return self._browser

    async def start(self) -> Harness:
        """Launch the browser (idempotent)."""
        if self._browser is not None:
            return self
        path = Path(self.executable_path) if self.executable_path else find_chromium()
        if not path.is_file():
            raise BrowserNotFound(f"No Chromium at {path}.")
        args = [*QUIET_FLAGS, *BACKENDS[self.backend].launch_args(), *self.extra_args]
        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=str(path), headless=self.headless, args=args
            )
        except PlaywrightError as exc:
            await self._playwright.stop()
            self._playwright = None
            raise BrowserNotFound(f"Chromium at {path} did not start: {exc}") from exc
        return self

    async def new_session(self) -> Session:
        """A fresh browser context and page, with the backend attached, on about:blank."""
        await self.start()
        context = await self.browser.new_context()
        page = await context.new_page()
        backend = BACKENDS[self.backend](self.keys)
        session = Session(
            self,
            context,
            page,
            backend,
            call_timeout=self.call_timeout,
            elicitation=self.elicitation,
        )
        try:
            await session._attach()
        except BaseException:
            await context.close()
            raise
        self.sessions.append(session)
        return session

    async def open(self, url: str) -> Session:
        """A new session on ``url``."""
        session = await self.new_session()
        try:
            await session.open(url)
        except BaseException:
            await session.close()
            raise
        return session

    async def close(self) -> None:
        """Close every session, the browser and Playwright."""
        for session in self.sessions:
            await session.close()
        self.sessions.clear()
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError):  # already gone
                await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    async def __aenter__(self) -> Harness:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
