"""Launching Chromium: Playwright's driver (a Node process), then the browser.

A module of its own, cheap to import (Playwright and :mod:`harness.browser.chromium`
only), so that a front end can start the browser before it loads the rest of the harness:
the CLI launches Chromium first and imports the core while it starts
(:meth:`harness.harness.Harness.adopt_launch` takes the browser over).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from harness.browser.chromium import NATIVE_WEBMCP_FLAGS, QUIET_FLAGS, find_chromium
from harness.browser.marks import mark
from harness.errors import DOCTOR_HINT, BrowserNotFound


def launch_flags(backend: str) -> list[str]:
    """The flags a harness of ``backend`` launches Chromium with (``Harness.launch_args``
    without extra arguments): quiet, and Chromium's own WebMCP for ``native``."""
    return [*QUIET_FLAGS, *(NATIVE_WEBMCP_FLAGS if backend == "native" else ())]


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
            raise BrowserNotFound(f"Chromium at {path} did not start: {exc} {DOCTOR_HINT}") from exc
        raise
    mark("chromium")
    return Launched(playwright, browser, headless, list(args), path)


async def discard(launching: asyncio.Future[Launched]) -> None:
    """A launch under way that will not be used: stop it, or close what it launched."""
    if not launching.done():
        launching.cancel()
    with contextlib.suppress(BaseException):
        launched = await launching
        await launched.close()
