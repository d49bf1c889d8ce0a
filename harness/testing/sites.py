"""The bundled demo sites for pytest: the ``webmcp_sites`` fixture's object.

The sites are aiohttp apps, so they run on an event loop of their own in a
background thread (the test thread belongs to Playwright's sync API). Each pytest
process (each pytest-xdist worker too) serves its own copy on free ports.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

START_TIMEOUT_S = 30.0


class WebMCPSites:
    """The bundled sites (todo, keys, mail, shop), served for a test run.

    ``webmcp_sites.todo`` is the todo site's start URL (likewise ``keys``, ``mail``,
    ``shop``); :meth:`url` gives any path; :meth:`reset` restores a site's first data
    (the fixture does it before each test); :meth:`requests` lists what a site received.
    """

    def __init__(self) -> None:
        from harness.sites.server import RunningSites, serve_sites

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.sites: RunningSites = self._run(_awaited(serve_sites()))

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=START_TIMEOUT_S)

    @property
    def todo(self) -> str:
        """The todo site's list page."""
        return str(self.sites.url("todo"))

    @property
    def keys(self) -> str:
        """The keys console (its page load logs the browser in)."""
        return str(self.sites.url("keys"))

    @property
    def mail(self) -> str:
        """The mail site's inbox."""
        return str(self.sites.url("mail"))

    @property
    def shop(self) -> str:
        """The shop's front page."""
        return str(self.sites.url("shop"))

    def url(self, site: str, path: str = "/") -> str:
        """The URL of ``path`` on ``site``."""
        return str(self.sites.url(site, path))

    def reset(self, site: str | None = None) -> None:
        """Restore ``site``'s starting data (every site's by default) and forget its requests."""
        self._run(self.sites.reset(site))
        for name in [site] if site is not None else list(self.sites.sites):
            self.sites[name].clear_log()

    def requests(self, site: str) -> list[str]:
        """``METHOD /path`` of every request ``site`` received since its reset."""
        return [f"{r.method} {r.path}" for r in self.sites.requests(site)]

    def stop(self) -> None:
        """Stop the sites and their thread."""
        self._run(self.sites.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
