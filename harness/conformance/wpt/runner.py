"""Run a web-platform-tests checkout's ``webmcp/`` tests in Chromium, in one of three
configurations — what the WebMCP polyfills' CI does with ``./wpt run --inject-script``, as one
command:

- ``native``: Chromium's own WebMCP (launched with the flags that turn it on) and nothing
  put into the pages — the column to compare with wpt.fyi's Chromium;
- ``native+layer``: the same Chromium with the harness's layer on top (what
  ``--backend native`` runs everywhere else in the harness: the legacy aliases, ``DataError``
  input validation, …; :data:`CONFIGURATIONS` lists it);
- ``polyfill``: Chromium without native WebMCP, with the harness's polyfill.

The user brings the checkout; the project ships none of its files. It is served as wptserve
would (:mod:`~harness.conformance.wpt.server`) with the runner's own
``testharnessreport.js``, which hands every subtest result over *as it finishes* (a console
message, the one channel that adds nothing to the page). So results survive what ends a test
early: a page that hangs is stopped after its timeout (its finished subtests keep their
results, the test is ``TIMEOUT``); a renderer that crashes makes the test ``CRASH``, with the
same guarantee. Each test gets a fresh browser context. Tests the runner cannot run
(:mod:`~harness.conformance.wpt.manifest`) are reported ``SKIP`` with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from harness.browser.wellformed import loads
from harness.conformance.results import Report, Subtest, TestResult, keyed, run_info
from harness.conformance.wpt.manifest import WptTest, discover
from harness.conformance.wpt.server import REPORT_PREFIX, WptServer
from harness.errors import ConfigError
from harness.harness import Harness
from harness.models import BackendName

SUBTEST_STATUS = {0: "PASS", 1: "FAIL", 2: "TIMEOUT", 3: "NOTRUN", 4: "PRECONDITION_FAILED"}
HARNESS_STATUS = {0: "OK", 1: "ERROR", 2: "TIMEOUT", 3: "PRECONDITION_FAILED"}

ConfigurationName = Literal["native", "native+layer", "polyfill"]

# What the harness's injected script puts into every page, per mode (injected_js/).
_COMMON = (
    "the legacy surfaces (legacy.js): navigator.modelContext (the same object as "
    "document.modelContext), ModelContext.prototype.unregisterTool/provideContext/"
    "clearContext, window.createAutomationDelegate(), window.mcp",
    "DataError validation (schema.js): executeTool() rejects input that breaks a script "
    "tool's inputSchema before the tool runs",
    "the seed dialect's reader (declarative_seed.js): tool-name elements, read for the harness",
    "the harness's private channel (channel.js): a binding with a secret name, hidden from "
    "the page",
)


@dataclass(frozen=True)
class Configuration:
    """How Chromium runs the tests: launched as ``backend``, with the harness's injected
    script in every page or not (``harness``); ``injected`` says what that script adds."""

    name: ConfigurationName
    backend: BackendName
    harness: bool
    injected: tuple[str, ...]


CONFIGURATIONS: dict[str, Configuration] = {
    "native": Configuration("native", "native", harness=False, injected=()),
    "native+layer": Configuration(
        "native+layer",
        "native",
        harness=True,
        injected=(
            "native_layer.js over Chromium's own document.modelContext: wrappers of "
            "registerTool, executeTool and the Document.prototype.modelContext getter, and a "
            "side registry of the fields Chromium drops (title, outputSchema, annotations)",
            *_COMMON,
            "declarative helpers for Chromium's <form toolname> tools (declarative.js): "
            "SubmitEvent and HTMLFormElement.prototype.submit wrappers",
        ),
    ),
    "polyfill": Configuration(
        "polyfill",
        "polyfill",
        harness=True,
        injected=(
            "the polyfill of document.modelContext (model_context.js, events.js): "
            "registerTool, getTools, executeTool, the toolchange/toolactivated/toolcancel "
            "events, ModelContext, ToolActivatedEvent and ToolCancelEvent",
            "the polyfill of <form toolname> tools (declarative.js), with SubmitEvent and "
            "HTMLFormElement.prototype.submit wrappers",
            *_COMMON,
        ),
    ),
}


@dataclass
class _Collected:
    """What a test's page reported: every subtest result in the order they finished (two
    subtests may share a name — each is kept, as wptrunner keeps them), and its verdict."""

    results: list[Subtest] = field(default_factory=list)
    complete: asyncio.Event = field(default_factory=asyncio.Event)
    status: str | None = None
    message: str | None = None
    crashed: asyncio.Event = field(default_factory=asyncio.Event)

    def heard(self, text: str) -> None:
        """A console message of the page: the report script's, or anything else (ignored)."""
        if text.startswith(REPORT_PREFIX):
            self.take(text[len(REPORT_PREFIX) :])

    def take(self, raw: str) -> None:
        """One message of the report script; its strings made well-formed as they arrive (a
        JavaScript string may hold a lone surrogate, which no UTF-8 report can hold)."""
        try:
            message = loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if message.get("kind") == "result":
            self._subtest(message)
        elif message.get("kind") == "complete":
            # The verdict lists every subtest: add those no result message brought (the
            # n-th of a name matches the n-th heard, so a repeated name is no "seen").
            heard = Counter(subtest.name for subtest in self.results)
            listed: Counter[str] = Counter()
            for test in message.get("tests") or []:
                if not isinstance(test, dict):
                    continue
                name = str(test.get("name"))
                listed[name] += 1
                if listed[name] > heard[name]:
                    self._subtest(test)
            code = message.get("status")
            self.status = HARNESS_STATUS.get(code if isinstance(code, int) else -1, "ERROR")
            text = message.get("message")
            self.message = None if text is None else str(text)
            self.complete.set()

    def _subtest(self, data: dict[str, Any]) -> None:
        name = str(data.get("name"))
        code = data.get("status")
        status = SUBTEST_STATUS.get(code if isinstance(code, int) else -1, "FAIL")
        message = data.get("message")
        self.results.append(
            Subtest.model_validate(
                {
                    "name": name,
                    "status": status,
                    "message": None if message is None else str(message),
                }
            )
        )

    def subtests(self) -> list[Subtest]:
        """The subtests as the reports name them: a name the page gave more than one result
        numbered from its second on (``name [2]``), so that no reader that keys results by
        name — wpt.fyi keeps only the first of a name — can let one hide another."""
        return [
            subtest if key == subtest.name else subtest.model_copy(update={"name": key})
            for key, subtest in keyed(self.results)
        ]

    def repeated(self) -> str | None:
        """What the test's message says of subtest names the page gave more than one
        result (a mistake of the test, which the run should not hide)."""
        counts = Counter(subtest.name for subtest in self.results)
        names = [f"{name!r} ({count} results)" for name, count in counts.items() if count > 1]
        if not names:
            return None
        return f"subtest names used more than once, numbered from the second: {', '.join(names)}"


ProgressCallback = Callable[[str, str], None]
Closer = Callable[[], Awaitable[None]]


def configuration(name: str) -> Configuration:
    """The configuration called ``name``; :class:`~harness.errors.ConfigError` otherwise."""
    found = CONFIGURATIONS.get(name)
    if found is None:
        raise ConfigError(
            f"Unknown WPT configuration {name!r}; use one of {', '.join(CONFIGURATIONS)}."
        )
    return found


async def run_wpt(
    root: Path,
    configuration_name: str,
    *,
    include: list[str] | None = None,
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
    executable_path: str | None = None,
    launch_args: tuple[str, ...] = (),
) -> Report:
    """Run the checkout's ``webmcp/`` tests in one configuration (``native``,
    ``native+layer`` or ``polyfill``, see :data:`CONFIGURATIONS`); never raises for what a
    test does.

    ``timeout`` overrides every test's own (10 s, or 60 s for ``timeout=long``).
    """
    config = configuration(configuration_name)
    tests = discover(root, include)
    started = int(time.time() * 1000)
    server = await WptServer(root).start()
    try:
        async with Harness(
            backend=config.backend, executable_path=executable_path, launch_args=launch_args
        ) as harness:
            info = run_info(harness, "wpt", wpt_root=str(root)).model_copy(
                update={
                    "backend": config.name,
                    "configuration": config.name,
                    "injected": list(config.injected),
                }
            )
            results = []
            for test in tests:
                if test.skip is not None:
                    result = TestResult(test=test.test, status="SKIP", message=test.skip)
                else:
                    result = await _run_one(harness, config, server, test, timeout or test.timeout)
                results.append(result)
                if progress is not None:
                    progress(test.test, result.status)
    finally:
        await server.stop()
    return Report(
        run_info=info, time_start=started, time_end=int(time.time() * 1000), results=results
    )


async def _open(harness: Harness, config: Configuration) -> tuple[Page, Closer]:
    """A fresh context's page for one test, and what closes it: a harness session (its
    injected script in every page), or for ``native`` a bare context of the same browser."""
    if config.harness:
        session = await harness.new_session()
        return session.page, session.close
    context = await harness.browser.new_context()
    return await context.new_page(), context.close


async def _run_one(
    harness: Harness, config: Configuration, server: WptServer, test: WptTest, timeout: float
) -> TestResult:
    started = time.monotonic()
    collected = _Collected()
    page, close = await _open(harness, config)
    page.on("crash", lambda _page: collected.crashed.set())
    page.on("console", lambda message: collected.heard(message.text))
    server.unserved.clear()
    result = TestResult(test=test.test, status="OK")
    try:
        try:
            await page.goto(server.url(test.path), wait_until="commit", timeout=timeout * 1000)
        except PlaywrightError as exc:
            result.status, result.message = "ERROR", f"could not load the test: {_first(exc)}"
        else:
            result.status, result.message = await _wait(page, collected, timeout)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(close(), 10)
    notes = [collected.repeated()]
    if server.unserved:
        # Why a test failed may be what it asked for and did not get.
        notes.append(f"not served: {'; '.join(dict.fromkeys(server.unserved))}")
    for note in filter(None, notes):
        result.message = f"{result.message + ' — ' if result.message else ''}{note}"
    result.subtests = collected.subtests()
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
