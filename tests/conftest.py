"""Shared fixtures: Chromium, loopback servers for test pages, browsers per backend."""

from __future__ import annotations

import asyncio
import socket
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

if TYPE_CHECKING:
    from harness import Harness, Session

PAGES = Path(__file__).parent / "pages"


async def listen(runner: web.AppRunner) -> int:
    """Start serving ``runner`` on 127.0.0.1 on a port the system picks; return the port.

    Prefer it to :func:`free_port` for a server in this process: a port picked first and
    bound later can be taken in between (another worker's outgoing connection gets one).
    """
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return int(runner.addresses[-1][1])


def free_port() -> int:
    """A free TCP port on 127.0.0.1, for a server in another process that needs one given
    (it can be taken before that server binds it: see :func:`listen`)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PageServer:
    """Serves ``tests/pages`` on two loopback ports (two origins) and logs requests."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.ports: list[int] = []
        self._runners: list[web.AppRunner] = []

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.ports[0]}"

    @property
    def other_origin(self) -> str:
        return f"http://127.0.0.1:{self.ports[1]}"

    def url(self, path: str, *, other: bool = False) -> str:
        return (self.other_origin if other else self.origin) + "/" + path.lstrip("/")

    def _app(self) -> web.Application:
        @web.middleware
        async def log(request: web.Request, handler):  # type: ignore[no-untyped-def]
            self.requests.append(f"{request.method} {request.host} {request.path_qs}")
            return await handler(request)

        async def page(request: web.Request) -> web.StreamResponse:
            name = request.match_info["name"] or "index.html"
            path = (PAGES / name).resolve()
            if PAGES.resolve() not in path.parents or not path.is_file():
                raise web.HTTPNotFound()
            html = path.read_text(encoding="utf-8")
            # Pages refer to the other origin as {{OTHER}} and to their own as {{SELF}}.
            html = html.replace("{{OTHER}}", self.other_origin).replace("{{SELF}}", self.origin)
            return web.Response(text=html, content_type="text/html")

        async def delay(request: web.Request) -> web.StreamResponse:
            # An answer after MS milliseconds (capped at 20 s): a page's slow fetch.
            ms = min(int(request.match_info["ms"]), 20_000)
            await asyncio.sleep(ms / 1000)
            return web.json_response({"delayed": ms})

        app = web.Application(middlewares=[log])
        app.router.add_get("/__delay/{ms:[0-9]+}", delay)
        app.router.add_get("/{name:.*}", page)
        return app

    async def start(self) -> None:
        for _ in range(2):
            # A short shutdown grace: a page's pending slow fetch must not hold up stop().
            runner = web.AppRunner(self._app(), shutdown_timeout=1.0)
            await runner.setup()
            self.ports.append(await listen(runner))
            self._runners.append(runner)

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()


@pytest.fixture(scope="session")
async def page_server() -> AsyncIterator[PageServer]:
    server = PageServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="session")
def chromium_path() -> Iterator[str]:
    from harness.browser.chromium import find_chromium

    yield str(find_chromium())


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary folder with a short path: Chromium puts a socket in TMPDIR, and
    pytest's ``tmp_path`` is too long a path for one."""
    with tempfile.TemporaryDirectory(prefix="wmh-") as folder:
        yield Path(folder)


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def backend_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    """A :class:`~harness.Harness` per backend, shared by a module's tests (both backends)."""
    from harness import Harness

    async with Harness(backend=request.param, call_timeout=10) as harness:
        yield harness


@pytest.fixture
async def page_session(
    backend_harness: Harness, page_server: PageServer, request: pytest.FixtureRequest
) -> AsyncIterator[Session]:
    """A session on the page the test module names in ``PAGE`` (``tests/pages``), on each
    backend; closed after the test."""
    session = await backend_harness.open(page_server.url(request.module.PAGE))
    yield session
    await session.close()
