"""Run a web-platform-tests checkout's ``webmcp/`` tests in Chromium, through the polyfill
or natively — what the WebMCP polyfills' CI does with ``./wpt run --inject-script``, as one
command.

The user brings the checkout; the project ships none of its files. The checkout is served
from loopback on two ports (``.sub.`` files get ``{{host}}``, ``{{ports[http][N]}}`` and, for
another origin, ``{{domains[…]}}`` → ``localhost``); ``/resources/testharnessreport.js`` is
replaced by the runner's own, which hands every subtest result to the runner *as it
finishes* (a Playwright binding). So results survive what ends a test early: a page that
hangs is stopped after its timeout (its finished subtests keep their results, the test is
``TIMEOUT``); a renderer that crashes makes the test ``CRASH``, with the same guarantee.
Each test file gets a fresh browser context.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from playwright.async_api import Error as PlaywrightError

from harness.conformance.results import (
    Report,
    Subtest,
    TestResult,
    run_info,
)
from harness.errors import ConfigError
from harness.harness import Harness
from harness.models import BackendName

DEFAULT_TIMEOUT_S = 10.0
LONG_TIMEOUT_S = 60.0
SKIPPED_DIRS = {"resources", "support", "tools", "common"}
SUBTEST_STATUS = {0: "PASS", 1: "FAIL", 2: "TIMEOUT", 3: "NOTRUN", 4: "PRECONDITION_FAILED"}
HARNESS_STATUS = {0: "OK", 1: "ERROR", 2: "TIMEOUT", 3: "PRECONDITION_FAILED"}
BINDING = "__webmcpHarnessWptReport"

# Replaces the checkout's testharnessreport.js: every result leaves the page as it happens.
REPORT_JS = """(function () {
  const send = (message) => { try { window.BINDING(JSON.stringify(message)); } catch (e) {} };
  if (typeof setup === "function") setup({explicit_timeout: true, output: false});
  if (typeof add_result_callback === "function") {
    add_result_callback((test) => send({kind: "result", name: String(test.name),
      status: test.status, message: test.message == null ? null : String(test.message)}));
  }
  if (typeof add_completion_callback === "function") {
    add_completion_callback((tests, status) => send({kind: "complete", status: status.status,
      message: status.message == null ? null : String(status.message),
      tests: tests.map((t) => ({name: String(t.name), status: t.status,
        message: t.message == null ? null : String(t.message)}))}));
  }
})();
""".replace("BINDING", BINDING)

_WRAPPER = """<!doctype html>
<meta charset="utf-8">
<title>{title}</title>
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id="log"></div>
<script src="{script}"></script>
"""


@dataclass
class WptTest:
    """One test file: its URL path and its timeout."""

    path: str
    timeout: float


def discover(root: Path, include: list[str] | None = None) -> list[WptTest]:
    """The tests under ``root/webmcp`` (``include``: path prefixes like ``/webmcp/imperative``).

    Raises :class:`~harness.errors.ConfigError` when ``root`` has no ``webmcp/`` directory.
    """
    base = root / "webmcp"
    if not base.is_dir():
        raise ConfigError(
            f"{root} has no webmcp/ directory; pass --wpt-root the top of a web-platform-tests "
            "checkout. A cheap one (a few MB: webmcp/ and the resources it uses): git clone "
            "--depth 1 --filter=blob:none --sparse https://github.com/web-platform-tests/wpt "
            "&& git -C wpt sparse-checkout set webmcp resources common"
        )
    tests: list[WptTest] = []
    for path in sorted(base.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or SKIPPED_DIRS & set(relative.parts[:-1]):
            continue
        name = path.name
        if name.endswith((".any.js", ".window.js")):
            url = "/" + str(relative)[: -len(".js")] + ".html"
        elif name.endswith((".html", ".htm")) and not re.search(r"-(?:ref|manual|notref)\.", name):
            url = "/" + str(relative)
        else:
            continue
        if include and not any(url.startswith(prefix) for prefix in include):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if name.endswith((".html", ".htm")) and "testharness.js" not in text:
            continue  # a reftest or a support page
        long = re.search(r"""<meta\s+name=["']?timeout["']?\s+content=["']?long""", text) or (
            "META: timeout=long" in text
        )
        tests.append(WptTest(url.replace("\\", "/"), LONG_TIMEOUT_S if long else DEFAULT_TIMEOUT_S))
    return tests


class WptServer:
    """Serves a checkout on two loopback ports, with the runner's testharnessreport.js."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.ports: list[int] = []
        self._runners: list[web.AppRunner] = []

    def url(self, path: str) -> str:
        """The URL of ``path`` on the first port."""
        return f"http://127.0.0.1:{self.ports[0]}{path}"

    async def start(self) -> WptServer:
        """Listen on two free ports."""
        for _ in range(2):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            app = web.Application()
            app.router.add_get("/{path:.*}", self._serve)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            self._runners.append(runner)
            self.ports.append(port)
        return self

    async def stop(self) -> None:
        """Stop listening."""
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    def _substitute(self, text: str) -> str:
        ports = {"http": self.ports, "https": self.ports, "ws": self.ports, "wss": self.ports}

        def replace(match: re.Match[str]) -> str:
            key = match.group(1).strip()
            if key == "host":
                return "127.0.0.1"
            if key.startswith(("domains[", "hosts[")):
                return "localhost"  # another origin on the same machine
            port = re.fullmatch(r"ports\[(\w+)\]\[(\d+)\]", key)
            if port and port.group(1) in ports:
                return str(ports[port.group(1)][min(int(port.group(2)), 1)])
            return ""

        return re.sub(r"\{\{([^}]*)\}\}", replace, text)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        if path == "resources/testharnessreport.js":
            return web.Response(text=REPORT_JS, content_type="text/javascript")
        if path.endswith((".any.html", ".window.html")):
            script = Path(path).name.rsplit(".", 1)[0] + ".js"
            source = (self.root / path).with_name(script)
            if source.is_file():
                return web.Response(
                    text=_WRAPPER.format(title=script, script=script), content_type="text/html"
                )
        file = (self.root / path).resolve()
        if self.root not in file.parents or not file.is_file():
            raise web.HTTPNotFound()
        if ".sub." in file.name:
            kind = "text/html" if file.suffix in (".html", ".htm") else "text/javascript"
            return web.Response(
                text=self._substitute(file.read_text(encoding="utf-8", errors="replace")),
                content_type=kind,
            )
        return web.FileResponse(file)


@dataclass
class _Collected:
    results: dict[str, Subtest] = field(default_factory=dict)
    complete: asyncio.Event = field(default_factory=asyncio.Event)
    status: str | None = None
    message: str | None = None
    crashed: asyncio.Event = field(default_factory=asyncio.Event)

    def take(self, raw: str) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if message.get("kind") == "result":
            self._subtest(message)
        elif message.get("kind") == "complete":
            for test in message.get("tests") or []:
                if str(test.get("name")) not in self.results:
                    self._subtest(test)
            code = message.get("status")
            self.status = HARNESS_STATUS.get(code if isinstance(code, int) else -1, "ERROR")
            self.message = message.get("message")
            self.complete.set()

    def _subtest(self, data: dict[str, Any]) -> None:
        name = str(data.get("name"))
        code = data.get("status")
        status = SUBTEST_STATUS.get(code if isinstance(code, int) else -1, "FAIL")
        message = data.get("message")
        self.results[name] = Subtest.model_validate(
            {"name": name, "status": status, "message": None if message is None else str(message)}
        )


ProgressCallback = Callable[[str, str], None]


async def run_wpt(
    root: Path,
    backend: BackendName,
    *,
    include: list[str] | None = None,
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
    executable_path: str | None = None,
    launch_args: tuple[str, ...] = (),
) -> Report:
    """Run the checkout's ``webmcp/`` tests on ``backend``; never raises for what a test does.

    ``timeout`` overrides every test's own (10 s, or 60 s for ``timeout=long``).
    """
    tests = discover(root, include)
    started = int(time.time() * 1000)
    server = await WptServer(root).start()
    try:
        async with Harness(
            backend=backend, executable_path=executable_path, launch_args=launch_args
        ) as harness:
            info = run_info(harness, "wpt", wpt_root=str(root))
            results = []
            for test in tests:
                result = await _run_one(harness, server, test, timeout or test.timeout)
                results.append(result)
                if progress is not None:
                    progress(test.path, result.status)
    finally:
        await server.stop()
    return Report(
        run_info=info, time_start=started, time_end=int(time.time() * 1000), results=results
    )


async def _run_one(
    harness: Harness, server: WptServer, test: WptTest, timeout: float
) -> TestResult:
    started = time.monotonic()
    collected = _Collected()
    session = await harness.new_session()
    page = session.page
    page.on("crash", lambda _page: collected.crashed.set())
    result = TestResult(test=test.path, status="OK")
    try:
        await session.context.expose_binding(BINDING, lambda _source, raw: collected.take(str(raw)))
        try:
            await page.goto(server.url(test.path), wait_until="commit", timeout=timeout * 1000)
        except PlaywrightError as exc:
            result.status, result.message = "ERROR", f"could not load the test: {_first(exc)}"
        else:
            result.status, result.message = await _wait(page, collected, timeout)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.close(), 10)
    result.subtests = list(collected.results.values())
    result.duration = int((time.monotonic() - started) * 1000)
    return result


async def _wait(page: Any, collected: _Collected, timeout: float) -> tuple[Any, str | None]:
    complete = asyncio.ensure_future(collected.complete.wait())
    crashed = asyncio.ensure_future(collected.crashed.wait())
    try:
        done, _ = await asyncio.wait(
            {complete, crashed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if crashed in done:
            return "CRASH", "the renderer crashed; the subtests that finished before are kept"
        if complete in done:
            return collected.status or "OK", collected.message
        # Past its time: ask the page's harness to time out (a hung page cannot answer).
        with contextlib.suppress(Exception):
            await asyncio.wait_for(page.evaluate("typeof timeout === 'function' && timeout()"), 2)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(collected.complete.wait(), 2)
        if collected.crashed.is_set():
            return "CRASH", "the renderer crashed; the subtests that finished before are kept"
        return "TIMEOUT", f"no verdict within {timeout:g} s; the subtests that finished are kept"
    finally:
        complete.cancel()
        crashed.cancel()


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
