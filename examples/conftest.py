"""Serves the bundled demo sites for the example tests.

With webmcp-harness installed, its pytest plugin is already loaded: the tests
only ask for the `webmcp` fixture. This file starts the site under test; against
your own site, you would start it here the same way (or pass `--base-url`).

The sites are aiohttp apps, so they run on an event loop of their own in a
background thread: the test thread belongs to Playwright's sync API. Each pytest
process (each pytest-xdist worker too) serves its own copy on free ports.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from harness.sites.server import RunningSites, serve_sites


class SitesThread:
    """The bundled sites, served from a thread; `url()` and `reset()` for the tests."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.sites: RunningSites = self._run(serve_sites(["todo", "keys"]))

    def _run(self, awaitable: Any) -> Any:
        async def wrapper() -> Any:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(wrapper(), self._loop).result(timeout=30)

    def url(self, site: str, path: str = "/") -> str:
        """The URL of `path` on `site`."""
        return self.sites.url(site, path)

    def reset(self, site: str) -> None:
        """Restore the site's starting data and forget the requests it received."""
        self._run(self.sites.reset(site))
        self.sites[site].clear_log()

    def requests(self, site: str) -> list[str]:
        """`METHOD /path` of every request the site received since its reset."""
        return [f"{r.method} {r.path}" for r in self.sites.requests(site)]

    def stop(self) -> None:
        """Stop the sites and the thread."""
        self._run(self.sites.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


@pytest.fixture(scope="session")
def sites() -> Iterator[SitesThread]:
    """The bundled sites, for the whole run."""
    served = SitesThread()
    yield served
    served.stop()


@pytest.fixture
def todo_url(sites: SitesThread) -> str:
    """The todo site's list page, with the site's three starting todos."""
    sites.reset("todo")
    return sites.url("todo")


@pytest.fixture
def keys_url(sites: SitesThread) -> str:
    """The keys console (its page load logs the browser in)."""
    sites.reset("keys")
    return sites.url("keys")
