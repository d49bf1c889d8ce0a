"""The selftest's own hostile pages (``harness/selftest/pages/``), served on loopback.

Each page is written by the project to misbehave in known ways; a query string may
name the page (``?id=...``) so that every result says which page produced it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from aiohttp import web

PAGES = Path(str(resources.files("harness.selftest"))) / "pages"


class FaultPages:
    """An aiohttp server of the selftest pages on 127.0.0.1 (a free port)."""

    def __init__(self) -> None:
        """Not serving until :meth:`start`."""
        self._runner: web.AppRunner | None = None
        self.port = 0

    def url(self, name: str, **query: str) -> str:
        """The address of page ``name`` (``faults.html``, …) with ``query``."""
        suffix = "&".join(f"{key}={value}" for key, value in query.items())
        return f"http://127.0.0.1:{self.port}/{name}" + (f"?{suffix}" if suffix else "")

    async def start(self) -> FaultPages:
        """Serve the pages; returns self."""
        app = web.Application()
        app.router.add_get("/{name}", _page)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1])
        return self

    async def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FaultPages:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def _page(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    path = (PAGES / name).resolve()
    if path.parent != PAGES.resolve() or not path.is_file():
        raise web.HTTPNotFound()
    return web.Response(text=path.read_text(encoding="utf-8"), content_type="text/html")
