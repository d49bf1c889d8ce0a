"""Launching Chromium: Playwright's driver (a Node process), then the browser.

A module of its own, cheap to import (Playwright and :mod:`harness.browser.chromium`
only), so that a front end can start the browser before it loads the rest of the harness:
the CLI launches Chromium first and imports the core while it starts
(:meth:`harness.harness.Harness.adopt_launch` takes the browser over).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from harness.browser.chromium import (
    NATIVE_WEBMCP_FLAGS,
    QUIET_FLAGS,
    chromium_args,
    find_chromium,
)
from harness.browser.marks import mark
from harness.errors import DOCTOR_HINT, BrowserNotFound, ConfigError

log = logging.getLogger(__name__)


def launch_flags(backend: str) -> list[str]:
    """The flags a harness of ``backend`` launches Chromium with (``Harness.launch_args``
    without extra arguments): quiet, and Chromium's own WebMCP for ``native``."""
    return chromium_args(QUIET_FLAGS, NATIVE_WEBMCP_FLAGS if backend == "native" else ())


@dataclass
class Launched:
    """A running browser and the Playwright driver that launched it, and how."""

    playwright: Playwright
    browser: Browser
    headless: bool
    args: list[str]
    executable_path: Path

    async def close(self) -> None:
        """Close the browser and stop the driver (a launch nobody took over)."""
        with contextlib.suppress(Exception):
            await self.browser.close()
        with contextlib.suppress(Exception):
            await self.playwright.stop()


async def launch(
    executable_path: str | Path | None, *, headless: bool, args: Sequence[str]
) -> Launched:
    """Start Playwright's driver and launch Chromium (``executable_path``, or the one
    :func:`~harness.browser.chromium.find_chromium` finds) with ``args``.

    Raises :class:`~harness.errors.BrowserNotFound` when there is no such browser or it
    does not start.
    """
    path = Path(executable_path) if executable_path else find_chromium()
    if not path.is_file():
        raise BrowserNotFound(f"No Chromium at {path}. {DOCTOR_HINT}")
    playwright = await async_playwright().start()
    mark("driver")
    try:
        browser = await playwright.chromium.launch(
            executable_path=str(path), headless=headless, args=list(args)
        )
    except BaseException as exc:
        await playwright.stop()
        if isinstance(exc, PlaywrightError):
            log.debug("Chromium at %s did not start: %s", path, exc.message)
            raise BrowserNotFound(
                f"Chromium at {path} did not start{_what_it_said(exc.message)}. {DOCTOR_HINT}"
            ) from exc
        raise
    mark("chromium")
    return Launched(playwright, browser, headless, list(args), path)


def _what_it_said(message: str) -> str:
    """What a browser that did not start wrote on its error stream, as Playwright's launch
    log quotes it (``[pid=…][err] …`` lines): its first three lines, each cut at 200
    characters — not the log itself (two lines of some 2 KB of flags each)."""
    said = [
        line.split("[err]", 1)[1].strip()
        for line in message.splitlines()
        if line.startswith("[pid=") and "[err]" in line
    ]
    said = [line[:200] for line in said if line][:3]
    if said:
        return " (it said: " + " / ".join(said) + ")"
    first = message.splitlines()[0] if message else ""
    return f" ({first[:200]})" if first else ""


class BrowserPool:
    """Browsers shared by harnesses (``Harness(browsers=pool)``): one per way of launching
    (executable, headless, flags), launched when a harness first needs it and closed with
    the pool (:meth:`close`, or ``async with``).

    What harnesses share is the browser process and Playwright's driver, nothing of their
    sessions: each session still has a browser context of its own, which the harness closes
    with it. A harness on a pooled browser leaves the browser running when it closes; a
    browser that went away (killed, crashed) is launched anew at the next :meth:`borrow`.
    For a test suite or a script that makes many harnesses one after another (a launch is
    about a second of a core's time), not for harnesses a test kills the browser of while
    others use it.
    """

    def __init__(self) -> None:
        self._browsers: dict[tuple[str, bool, tuple[str, ...]], Launched] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    async def borrow(
        self, executable_path: str | Path | None, *, headless: bool, args: Sequence[str]
    ) -> Launched:
        """The pool's browser launched this way, launched now if it has none running."""
        path = Path(executable_path) if executable_path else find_chromium()
        key = (str(path), headless, tuple(args))
        async with self._lock:
            if self._closed:
                raise ConfigError(
                    "This BrowserPool is closed: its browsers are gone. Make a new pool, or "
                    "give the harness none (browsers=None) to launch its own."
                )
            launched = self._browsers.pop(key, None)
            if launched is not None and launched.browser.is_connected():
                self._browsers[key] = launched
                return launched
            if launched is not None:  # went away: its driver goes too
                await _bounded(launched.close())
            launched = await launch(path, headless=headless, args=args)
            self._browsers[key] = launched
            return launched

    async def close(self) -> None:
        """Close every browser of the pool, and their drivers."""
        async with self._lock:
            self._closed = True
            browsers, self._browsers = list(self._browsers.values()), {}
        for launched in browsers:
            await _bounded(launched.close())

    async def __aenter__(self) -> BrowserPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _bounded(closing: Awaitable[None]) -> None:
    """Closing a browser and its driver, at most 20 s (a step that hangs is left behind)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(closing, 20)


async def discard(launching: asyncio.Future[Launched]) -> None:
    """A launch under way that will not be used: stop it, or close what it launched."""
    if not launching.done():
        launching.cancel()
    with contextlib.suppress(BaseException):
        launched = await launching
        await launched.close()
