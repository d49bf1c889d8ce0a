"""Shared fixtures: Chromium, loopback servers for test pages, browsers per backend; and
the per-test deadline that keeps a test from hanging the suite.

No test can hang the suite: pytest-timeout (``timeout`` in pyproject, or a test's
``@pytest.mark.timeout``) arms one SIGALRM per test, which interrupts a test blocked in
Python or in an idle event loop — but only once: a test cut off mid-``await`` leaves its
task pending on the session's loop, and the fixture teardown that follows (closing the
browser that test was using) then ran with no timer at all, and could wait forever (an
18-minute hang after the timer had fired). So every step pytest-asyncio runs on the loop
(an async fixture's setup or teardown, an async test) is also bounded here, in asyncio,
before the signal: setup and call until :data:`CALL_SHARE` of the test's limit — the
test's task is cancelled where it waits, so its own ``finally`` blocks run, and it fails
naming its limit — and teardown until :data:`TEARDOWN_SHARE` of it. pytest-timeout stays
the backstop for a test blocked outside the loop; when a step ends at its deadline, its
signal is taken back while pytest reports the failure (a signal inside pytest's reporting
ends the xdist worker, and the run) and armed again for the teardown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest
import pytest_timeout
from aiohttp import web
from playwright.async_api import BrowserContext, Frame, Page
from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from harness import BrowserPool, Harness, Session

PAGES = Path(__file__).parent / "pages"

CALL_SHARE = 0.8
"""Setup and call: what they await is cancelled at this share of the test's limit."""
TEARDOWN_SHARE = 0.95
"""Teardown: at this share of the limit, before pytest-timeout's signal at the whole of it
(or, once the signal has fired, this share minus :data:`CALL_SHARE` after it began)."""


class _Deadline:
    """The running test, its limit, the phase pytest is in, and its deadline
    (``time.monotonic()``; None: no limit)."""

    item: pytest.Item | None = None
    limit = 0.0
    started = 0.0
    phase = "setup"
    at: float | None = None
    cut = False  # a step ended at its deadline: pytest-timeout's signal was taken back


class _ChromiumFaults(logging.Handler):
    """The harness's warnings, in the running test, that Chromium left a frame's WebMCP
    requests unanswered (``harness.browser.native``'s ``UNANSWERED_LOG``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        from harness.browser.backends.native import UNANSWERED_LOG

        if record.msg is UNANSWERED_LOG:
            self.seen.append(record.getMessage())


_chromium_faults = _ChromiumFaults()
logging.getLogger("harness.browser.native").addHandler(_chromium_faults)

CHROMIUM_FAULT = (
    "Chromium left a frame's WebMCP unanswered: its getTools() never settles and its "
    "registrations never reach the browser (a Chromium 156 fault under load, about one child "
    "frame in 150, measured without the harness: README, The test suite). Nothing of the "
    "harness's to test in this run"
)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A native test that failed after the harness heard Chromium's fault (above) is
    reported skipped, with the fault and the failure it caused, unless the test makes the
    fault itself (``chromium_fault_simulated``): it asserts what the harness does then."""
    report = yield
    if (
        report.failed
        and _chromium_faults.seen
        and item.get_closest_marker("chromium_fault_simulated") is None
    ):
        crash = getattr(report.longrepr, "reprcrash", None)
        failure = crash.message if crash is not None else str(report.longrepr)
        first = (failure.splitlines() or [""])[0][:300]
        report.outcome = "skipped"
        report.longrepr = (
            str(item.path),
            item.location[1] or 0,
            f"Skipped: {CHROMIUM_FAULT} (heard: {_chromium_faults.seen[0]}; the failure it "
            f"caused: {first})",
        )
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _chromium_faults.seen.clear()
    limit = float(pytest_timeout._get_item_settings(item).timeout or 0)
    _Deadline.item, _Deadline.limit, _Deadline.phase = item, limit, "setup"
    _Deadline.cut = False
    _Deadline.started = time.monotonic()
    _Deadline.at = _Deadline.started + CALL_SHARE * limit if limit > 0 else None
    try:
        return (yield)
    finally:
        _Deadline.item, _Deadline.at = None, None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _Deadline.phase = "call"
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _Deadline.phase = "teardown"
    if _Deadline.at is not None:
        now, limit = time.monotonic(), _Deadline.limit
        if _Deadline.cut:
            # The signal comes back for the teardown (a teardown blocked outside the loop),
            # after the deadline that bounds what it awaits.
            _Deadline.cut = False
            settings = pytest_timeout._get_item_settings(item)
            settings = settings._replace(timeout=(1 - CALL_SHARE) * limit)
            item.config.hook.pytest_timeout_set_timer(item=item, settings=settings)
            _Deadline.at = now + (TEARDOWN_SHARE - CALL_SHARE) * limit
        elif now < _Deadline.started + limit:  # the signal is still to come
            _Deadline.at = _Deadline.started + TEARDOWN_SHARE * limit
        else:
            _Deadline.at = now + (TEARDOWN_SHARE - CALL_SHARE) * limit
    return (yield)


async def _bounded(step: Coroutine[Any, Any, Any]) -> Any:
    """Run ``step`` (a fixture's setup or teardown, or the test) until the deadline."""
    deadline, item = _Deadline.at, _Deadline.item
    if deadline is None or item is None:
        return await step
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(loop.time() + deadline - time.monotonic()):
            return await step
    except TimeoutError:
        # pytest reports this failure next: its report must not meet pytest-timeout's
        # signal (an exception raised inside pytest's reporting ends the worker, and the
        # whole xdist run with it). The teardown gets a signal of its own again.
        item.config.hook.pytest_timeout_cancel_timer(item=item)
        _Deadline.cut = True
        pytest.fail(
            f"{item.nodeid}: still awaiting at its deadline in {_Deadline.phase} (its limit "
            f"is {_Deadline.limit:g} s); cancelled where it waited (the traceback above)"
        )


@pytest.fixture(scope="session", autouse=True)
def _per_test_deadline(_session_scoped_runner: asyncio.Runner) -> Iterator[None]:
    """Every step pytest-asyncio runs on the session's loop is bounded by the running
    test's deadline (see the module's docstring)."""
    runner = _session_scoped_runner
    run = runner.run

    def bounded_run(step: Coroutine[Any, Any, Any], *, context: Any = None) -> Any:
        return run(_bounded(step), context=context)

    runner.run = bounded_run  # type: ignore[method-assign]
    try:
        yield
    finally:
        runner.run = run  # type: ignore[method-assign]


async def answers(page: Page) -> bool:
    """Whether ``page`` still evaluates script: False once its renderer crashed (Chromium's
    "crash" event comes after the call that met the crash), it closed, or it hangs."""
    try:
        await asyncio.wait_for(page.evaluate("0"), 5)
    except (PlaywrightError, TimeoutError):
        return False
    return True


class _SharedPage(Protocol):
    page: Page
    context: BrowserContext


P = TypeVar("P", bound=_SharedPage)


async def replace_crashed(pages: dict[Any, P], make: Callable[[Any], Awaitable[P]]) -> dict[Any, P]:
    """A module's shared pages, each that no longer answers (Chromium's renderer crashes now
    and then under load, on a navigation) closed and made again with ``make(key)``: a crash
    fails the test it happened in, not every later test of the module."""
    for key, shared in list(pages.items()):
        if not await answers(shared.page):
            await shared.context.close()
            pages[key] = await make(key)
    return pages


async def webmcp_answers(frame: Frame, wait_s: float = 3.0) -> bool:
    """Whether ``frame``'s ``document.modelContext.getTools()`` settles within ``wait_s``
    (Chromium's fault above: it never does). A frame that answers no evaluation at all is
    another fault: it fails the caller."""
    script = """(ms) => Promise.race([
      Promise.resolve(document.modelContext.getTools()).then(() => true, () => true),
      new Promise((resolve) => setTimeout(() => resolve(false), ms)),
    ])"""
    return bool(await asyncio.wait_for(frame.evaluate(script, wait_s * 1000), wait_s + 10))


async def listen(runner: web.AppRunner) -> int:
    """Start serving ``runner`` on 127.0.0.1 on a port the system picks; return the port.

    Prefer it to :func:`free_port` for a server in this process: a port picked first and
    bound later can be taken in between (another worker's outgoing connection gets one).
    """
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return int(runner.addresses[-1][1])


@contextlib.asynccontextmanager
async def serve_pages(pages: Mapping[str, str]) -> AsyncIterator[str]:
    """Serve ``pages`` (path without its leading ``/`` → HTML; ``""`` is ``/``) on a
    loopback port of its own, for a test that writes its pages; yields the origin. The
    mapping is read at each request: a test may change a page between loads."""

    async def page(request: web.Request) -> web.Response:
        html = pages.get(request.match_info["name"])
        if html is None:
            raise web.HTTPNotFound()
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name:.*}", page)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    try:
        port = await listen(runner)
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def origin_serving(html: str) -> Any:
    """A module fixture serving ``html`` at ``/`` (the origin it yields), for a module that
    compares its one page with plain Chromium: ``origin = origin_serving(PAGE)``."""

    @pytest.fixture(scope="module")
    async def origin() -> AsyncIterator[str]:
        async with serve_pages({"": html}) as served:
            yield served

    return origin


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

        async def no_content(request: web.Request) -> web.StreamResponse:
            # 204 after MS milliseconds (capped at 20 s): a navigation that never commits.
            await asyncio.sleep(min(int(request.match_info["ms"]), 20_000) / 1000)
            return web.Response(status=204)

        async def download(request: web.Request) -> web.StreamResponse:
            # A file to save, not a page: a navigation here loads no document.
            name = request.match_info["name"]
            disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
            return web.Response(text="a,b\n1,2\n", content_type="text/csv", headers=disposition)

        app = web.Application(middlewares=[log])
        app.router.add_get("/__download/{name:[A-Za-z0-9_.-]+}", download)
        app.router.add_get("/__delay/{ms:[0-9]+}", delay)
        app.router.add_get("/__nocontent/{ms:[0-9]+}", no_content)
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


@pytest.fixture(scope="session")
async def browser_pool() -> AsyncIterator[BrowserPool]:
    """The worker's browsers, one per way of launching (a backend's flags), shared by the
    harnesses of its tests: each test still has browser contexts of its own, and a launch
    (about a second of a core's time) is made once per worker rather than once per module.
    Tests that kill or crash a browser, or launch one with flags of their own, make their
    own harness without it."""
    from harness import BrowserPool

    async with BrowserPool() as pool:
        yield pool


class PlainChromium:
    """Chromium with its own WebMCP (the native flag) and nothing of the harness in the page:
    the reference a test holds the harness to. Its browser is the worker's (``browser_pool``,
    borrowed at each use: one that went away is launched again); each use has a browser
    context of its own."""

    def __init__(self, pool: BrowserPool, executable_path: str) -> None:
        self.pool = pool
        self.executable_path = executable_path

    @contextlib.asynccontextmanager
    async def page(self) -> AsyncIterator[Page]:
        """A page of a fresh context, closed with its context after the block."""
        from harness.browser.launch import launch_flags

        launched = await self.pool.borrow(
            self.executable_path, headless=True, args=launch_flags("native")
        )
        context = await launched.browser.new_context()
        try:
            yield await context.new_page()
        finally:
            await context.close()

    async def evaluate(self, url: str, script: str, arg: Any = None) -> Any:
        """What ``script`` gives (with ``arg``) on ``url``, loaded in a page of its own."""
        async with self.page() as page:
            await page.goto(url)
            return await page.evaluate(script, arg)


@pytest.fixture(scope="session")
def plain_chromium(browser_pool: BrowserPool, chromium_path: str) -> PlainChromium:
    """Run a script in plain Chromium with nothing injected (see :class:`PlainChromium`)."""
    return PlainChromium(browser_pool, chromium_path)


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def backend_harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    """A :class:`~harness.Harness` per backend, shared by a module's tests (both backends)."""
    from harness import Harness

    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as harness:
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
