"""How a user-agent test is written and run: files of subtests on fixture pages.

A :class:`TestFile` is one fixture page at a web-platform-tests-like path
(``/seeds/sensitive/sensitive-hint.html``); its subtests are async functions that get a
:class:`TestContext` — the harness session on that page — and check what the user agent
did, from the page's side (``await t.js(...)``) or the agent's (``await t.call(...)``)::

    FILE = TestFile("/seeds/sensitive/sensitive-hint.html", "sensitive_hint.html", "sensitiveHint")

    @FILE.subtest("the raw value never reaches the agent", cite("000-hint-raw"))
    async def _(t: TestContext) -> None:
        outcome = await t.call("recovery_codes")
        not_in(t.secret("codes"), t.agent_text(outcome), "the agent view")

Subtests of a file share its page, in order, as in WPT, unless the file or the subtest asks
for a ``fresh`` page. A failed check is ``FAIL`` with its message, a subtest past its time
``TIMEOUT``; a page that cannot be opened makes the test ``ERROR`` and its subtests
``NOTRUN``; a renderer crash makes it ``CRASH``. Messages never carry a fixture secret:
:func:`harness.conformance.reports.scrub` masks them, and the checks here never print a
value they were told is secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from playwright.async_api import Error as PlaywrightError

from harness.conformance.results import Subtest as SubtestResult
from harness.conformance.results import TestResult
from harness.conformance.ua.requirements import REQUIREMENTS
from harness.elicitation.base import ElicitationHandler
from harness.errors import HarnessError
from harness.harness import Harness
from harness.models import CallAction, CallOutcome, dump_result
from harness.session import Session
from harness.stages.policy import DEFAULT_POLICY, Policy
from harness.trace.events import (
    TRACE_FILE,
    RunFinished,
    RunStarted,
    TraceEvent,
    call_events,
)
from harness.trace.recorder import TraceRecorder

SUBTEST_TIMEOUT_S = 20.0
OPEN_TIMEOUT_S = 30.0
READY_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Cite:
    """A sentence of a spec that a subtest checks: where it is and a short quote."""

    source: str
    """``WebMCP spec §…``, ``seed 000 §1``, ``seed 002 §6.1``, …"""
    quote: str
    requirement: str | None = None
    """The id of the seed requirement (:data:`~harness.conformance.ua.requirements.REQUIREMENTS`)."""

    def text(self) -> str:
        """``seed 000 §1: "…"`` for reports."""
        return f'{self.source}: "{self.quote}"'


def cite(requirement: str) -> Cite:
    """The citation of one of the seeds' MUST sentences, by its id."""
    found = REQUIREMENTS[requirement]
    return Cite(found.source, found.quote, requirement)


def spec(section: str, quote: str) -> Cite:
    """A citation of the current WebMCP specification (or Chromium's behaviour it describes)."""
    return Cite(f"WebMCP spec {section}", quote)


def seed(source: str, quote: str) -> Cite:
    """A citation of a seed sentence that is not one of its MUSTs (``seed 002 §3``)."""
    return Cite(f"seed {source}", quote)


@dataclass(frozen=True)
class SessionSetup:
    """How the harness is configured for one test file's sessions."""

    policy: Policy | None = DEFAULT_POLICY
    elicitation: Callable[[], ElicitationHandler] | None = None
    form_review: str = "ask"
    untrusted_framing: bool = True
    call_timeout: float = 10.0


SubtestBody = Callable[["TestContext"], Awaitable[None]]


@dataclass(frozen=True)
class Subtest:
    """One subtest: a name (unique in its file), what it checks, and its body."""

    name: str
    body: SubtestBody
    cites: tuple[Cite, ...]
    fresh: bool
    timeout: float


@dataclass
class TestFile:
    """One fixture page and its subtests, at a WPT-like path."""

    __test__ = False  # not a pytest test class, whatever its name says

    path: str
    page: str
    """The fixture page's file name in ``ua/pages/`` (served at ``path``)."""
    title: str
    setup: SessionSetup = field(default_factory=SessionSetup)
    fresh: bool = False
    """Open the page afresh (a new session) for every subtest."""
    ready: str | None = "document.body?.dataset.ready === 'true'"
    """A JS condition the page meets once its tools are registered (None: the load event)."""
    subtests: list[Subtest] = field(default_factory=list)

    def subtest(
        self, name: str, *cites: Cite, fresh: bool | None = None, timeout: float = SUBTEST_TIMEOUT_S
    ) -> Callable[[SubtestBody], SubtestBody]:
        """Decorator: add the function as a subtest citing ``cites`` (at least one)."""
        if not cites:
            raise ValueError(f"{self.path}: subtest {name!r} cites nothing")
        if any(s.name == name for s in self.subtests):
            raise ValueError(f"{self.path}: two subtests are named {name!r}")

        def add(body: SubtestBody) -> SubtestBody:
            self.subtests.append(
                Subtest(name, body, cites, self.fresh if fresh is None else fresh, timeout)
            )
            return body

        return add


class Fixtures(Protocol):
    """What the fixture server offers the subtests (:class:`~harness.conformance.ua.server.FixtureServer`)."""

    def url(self, path: str, origin: int = 0) -> str:
        """The URL of ``path`` on origin ``origin`` (0: the main one, 1 and 2: others)."""
        ...

    def origin(self, index: int = 0) -> str:
        """``http://127.0.0.1:PORT`` of origin ``index``."""
        ...

    def requests(self, path_prefix: str = "/") -> list[dict[str, Any]]:
        """The requests the fixture endpoints received under ``path_prefix``."""
        ...

    def secret(self, name: str) -> str:
        """A fixture secret's value (for checking it never reaches the agent)."""
        ...

    def release(self, key: str) -> None:
        """Let the endpoint ``/api/slow/KEY`` answer."""
        ...


class TestContext:
    """What a subtest works with: the session on the fixture page, and the fixtures."""

    __test__ = False

    def __init__(self, session: Session, file: TestFile, fixtures: Fixtures) -> None:
        self.session = session
        self.file = file
        self.fixtures = fixtures

    @property
    def backend(self) -> str:
        """``polyfill`` or ``native``."""
        return self.session.backend_name

    @property
    def page(self) -> Any:
        """The Playwright page (the user's side: what the page itself sees and does)."""
        return self.session.page

    async def js(self, script: str, arg: Any = None) -> Any:
        """Evaluate ``script`` (an expression or a function) in the page; returns its value."""
        return await self.session.page.evaluate(script, arg)

    async def call(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallOutcome:
        """Call a tool as the agent does, through the whole pipeline."""
        return await self.session.call(name, arguments, timeout=timeout)

    def secret(self, name: str) -> str:
        """A fixture secret (never printed by the checks)."""
        return self.fixtures.secret(name)

    @staticmethod
    def agent_json(outcome: CallOutcome) -> dict[str, Any]:
        """The agent view of a result, as MCP JSON."""
        return dump_result(outcome.result)

    @staticmethod
    def agent_text(outcome: CallOutcome) -> str:
        """Everything the agent receives of a result, as one string (for leak checks)."""
        return json.dumps(dump_result(outcome.result), ensure_ascii=False)

    @staticmethod
    def text_blocks(outcome: CallOutcome) -> list[str]:
        """The text of the agent view's text blocks."""
        return [
            str(getattr(block, "text", ""))
            for block in outcome.result.content
            if getattr(block, "type", "") == "text"
        ]

    async def reload(self) -> None:
        """Load the fixture page again in the same session and wait until it is ready."""
        await self.session.open(self.session.url)
        await wait_ready(self.session, self.file)

    async def eventually(
        self, check: Callable[[], Awaitable[Any]], what: str, timeout: float = 5.0
    ) -> Any:
        """Poll ``check`` until it returns something truthy; fail with ``what`` otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            value = await check()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {timeout:g} s")
            await asyncio.sleep(0.05)


# -- checks -------------------------------------------------------------------------------


def check(condition: object, message: str) -> None:
    """Fail the subtest with ``message`` unless ``condition`` holds."""
    if not condition:
        raise AssertionError(message)


def equal(actual: Any, expected: Any, what: str) -> None:
    """``actual == expected``, or fail saying what was found."""
    if actual != expected:
        raise AssertionError(f"{what}: expected {_show(expected)}, got {_show(actual)}")


def is_in(needle: Any, haystack: Any, what: str) -> None:
    """``needle in haystack``."""
    if needle not in haystack:
        raise AssertionError(f"{what}: {_show(needle)} not found in {_show(haystack)}")


def not_in(secret: str, haystack: str, what: str) -> None:
    """``secret`` does not occur in ``haystack``; the message never shows the secret."""
    if secret and secret in haystack:
        raise AssertionError(f"{what} contains the secret value it must not carry")


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 300 else text[:297] + "…"


# -- running --------------------------------------------------------------------------------


async def wait_ready(session: Session, file: TestFile) -> None:
    """Wait until the page says its tools are registered, then read the catalog."""
    if file.ready is not None:
        await session.page.wait_for_function(file.ready, timeout=READY_TIMEOUT_MS)
    await session.tools()


async def open_session(harness: Harness, file: TestFile, fixtures: Fixtures) -> Session:
    """A new session configured for ``file``, on its fixture page, ready."""
    session = await harness.new_session()
    try:
        setup = file.setup
        session.policy = setup.policy
        session.untrusted_framing = setup.untrusted_framing
        session.call_timeout = setup.call_timeout
        session.form_review.mode = setup.form_review  # type: ignore[assignment]
        if setup.elicitation is not None:
            session.elicitation = setup.elicitation()
        await asyncio.wait_for(session.open(fixtures.url(file.path)), OPEN_TIMEOUT_S)
        await wait_ready(session, file)
    except BaseException:
        await session.close()
        raise
    return session


ProgressCallback = Callable[[str, str], None]
"""``progress(test, status)`` after each subtest."""

TraceMode = Literal["off", "on", "retain-on-failure"]


@dataclass
class Traces:
    """Where a run's file traces go (a report directory's ``traces/``), which it keeps, and
    the first that could not be written.

    A trace the disk cannot take (full, or made read-only meanwhile) ends the run's tracing,
    not its tests: that file's trace is removed — a half-written trace is never left to
    look whole, nor linked from a report — the subtests go on, and :attr:`problem` says
    which file and why, for the command to tell once the reports are written."""

    directory: Path
    keep: TraceMode = "retain-on-failure"
    problem: str | None = None
    """``PATH (reason)`` of the trace that could not be written; None while all were."""

    def open(self, file: TestFile, backend: str, url: str) -> FileTrace | None:
        """The trace of ``file``'s calls on ``backend``; None when traces are off, or
        since one could not be written."""
        if self.keep == "off" or self.problem is not None:
            return None
        relative = f"{self.directory.name}/{backend}{file.path.rsplit('.', 1)[0]}"
        return FileTrace(self.directory.parent, relative, file, backend, url, traces=self)


class FileTrace:
    """The harness trace of one test file's calls (``trace.jsonl``, the agent view only).

    Kept under ``traces/<backend>/<test path>/`` of the report directory; with
    ``retain-on-failure``, removed again when every subtest passed. One that cannot be
    written is removed at once, and said in ``traces`` (see :class:`Traces`).
    """

    def __init__(
        self,
        root: Path,
        relative: str,
        file: TestFile,
        backend: str,
        url: str,
        *,
        traces: Traces | None = None,
    ) -> None:
        self.relative = relative
        self.root = root
        self.directory = root / relative
        self.traces = traces
        self.failed: str | None = None
        """``PATH (reason)``: why the trace was given up; None while it is written."""
        self.step = 0
        self.started = time.monotonic()
        self.recorder: TraceRecorder | None = None
        try:
            if self.directory.exists():
                shutil.rmtree(self.directory)
            self.recorder = TraceRecorder(self.directory)
        except OSError as exc:
            self._give_up(exc)
            return
        self._record(
            RunStarted(
                task=file.title, agent="conformance ua", start_url=url, backend=backend, max_steps=0
            )
        )

    def follow(self, session: Session) -> None:
        """Record every call of ``session`` as the agent saw it, without what it withheld."""
        if self.recorder is None:
            return
        self.recorder.watch(session.scrubber)

        def on_call(arguments: dict[str, Any], outcome: CallOutcome) -> None:
            self.step += 1
            action = CallAction(tool=outcome.tool, arguments=arguments)
            for event in call_events(self.step, action, outcome):
                self._record(event)

        session.on_call(on_call)

    def finish(self, result: TestResult, keep: TraceMode) -> None:
        """Close the trace; keep it (and link it from ``result``) as ``keep`` says."""
        failed = result.status != "OK" or any(s.status != "PASS" for s in result.subtests)
        self._record(
            RunFinished(
                stop_reason="finished",
                detail=result.status,
                steps=self.step,
                duration_ms=round((time.monotonic() - self.started) * 1000, 1),
            )
        )
        if self.recorder is None:
            return  # given up: nothing is left to link
        try:
            self.recorder.close()
        except OSError as exc:
            self._give_up(exc)
            return
        if keep == "on" or failed:
            result.trace = f"{self.relative}/{TRACE_FILE}"
            return
        self._remove()

    def _record(self, event: TraceEvent) -> None:
        """Write ``event``; a write that fails gives the trace up (never the caller's call:
        the disk's fault is not the user agent's)."""
        if self.recorder is None:
            return
        try:
            self.recorder.record(event)
        except OSError as exc:
            self._give_up(exc)

    def _give_up(self, exc: OSError) -> None:
        where = exc.filename or self.directory / TRACE_FILE
        self.failed = f"{where} ({exc.strerror or exc})"
        if self.traces is not None and self.traces.problem is None:
            self.traces.problem = self.failed
        if self.recorder is not None:
            with contextlib.suppress(OSError):  # its last write failed: so may the flush
                self.recorder.close()
            self.recorder = None
        self._remove()

    def _remove(self) -> None:
        """The trace's directory, and the folders it leaves empty."""
        shutil.rmtree(self.directory, ignore_errors=True)
        for parent in self.directory.parents:
            if parent == self.root:
                break
            try:
                parent.rmdir()
            except OSError:
                break


# Set when a page's renderer crashes (Playwright's "crash" event); by the page's identity.
_CRASHES: dict[int, asyncio.Event] = {}


def _crashed(session: Session) -> bool:
    event = _CRASHES.get(id(session.page))
    return (event is not None and event.is_set()) or session.page.is_closed()


async def run_file(
    harness: Harness,
    file: TestFile,
    fixtures: Fixtures,
    progress: ProgressCallback | None = None,
    *,
    traces: Traces | None = None,
) -> TestResult:
    """Run one test file's subtests in order; never raises for what the page does, nor for
    a trace the disk cannot take.

    With ``traces`` (the report directory's ``traces/``), the file's calls are traced there.
    """
    started = time.monotonic()
    result = TestResult(test=file.path, status="OK", title=file.title)
    trace = None
    if traces is not None:
        trace = traces.open(file, harness.backend, fixtures.url(file.path))
    session: Session | None = None
    isolated = False  # the last subtest had a page of its own: the next one gets another
    try:
        for subtest in file.subtests:
            if session is not None and (subtest.fresh or isolated or _crashed(session)):
                await _close(session)
                session = None
            isolated = subtest.fresh
            if session is None:
                try:
                    session = await open_session(harness, file, fixtures)
                except (HarnessError, PlaywrightError, TimeoutError) as exc:
                    result.status, result.message = "ERROR", f"cannot open the fixture: {exc}"
                    break
                _watch_crash(session)
                if trace is not None:
                    trace.follow(session)
            began = time.monotonic()
            outcome = await _run_subtest(session, file, subtest, fixtures)
            outcome.duration = int((time.monotonic() - began) * 1000)
            if _crashed(session):
                result.status = "CRASH"
                result.message = f"the renderer crashed during {subtest.name!r}"
            result.subtests.append(outcome)
            if progress is not None:
                progress(file.path, outcome.status)
    finally:
        if session is not None:
            await _close(session)
    done = {s.name for s in result.subtests}
    for subtest in file.subtests:
        if subtest.name not in done:
            result.subtests.append(
                SubtestResult(
                    name=subtest.name, status="NOTRUN", cites=[c.text() for c in subtest.cites]
                )
            )
            if progress is not None:
                progress(file.path, "NOTRUN")
    result.duration = int((time.monotonic() - started) * 1000)
    if trace is not None and traces is not None:
        trace.finish(result, traces.keep)
    return result


async def _close(session: Session) -> None:
    _CRASHES.pop(id(session.page), None)
    with contextlib.suppress(HarnessError, PlaywrightError):
        await session.close()


def _watch_crash(session: Session) -> None:
    event = _CRASHES[id(session.page)] = asyncio.Event()
    session.page.on("crash", lambda _page: event.set())


async def _run_subtest(
    session: Session, file: TestFile, subtest: Subtest, fixtures: Fixtures
) -> SubtestResult:
    context = TestContext(session, file, fixtures)
    cites = [c.text() for c in subtest.cites]
    body = asyncio.ensure_future(asyncio.wait_for(subtest.body(context), subtest.timeout))
    crash = _CRASHES.get(id(session.page)) or asyncio.Event()
    crashed = asyncio.ensure_future(crash.wait())
    try:
        await asyncio.wait({body, crashed}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        crashed.cancel()
    if crash.is_set():
        body.cancel()
        with contextlib.suppress(BaseException):
            await body
        message = "the renderer crashed during this subtest"
        return SubtestResult(name=subtest.name, status="FAIL", message=message, cites=cites)
    try:
        body.result()
    except AssertionError as exc:
        return SubtestResult(name=subtest.name, status="FAIL", message=str(exc), cites=cites)
    except TimeoutError:
        return SubtestResult(
            name=subtest.name,
            status="TIMEOUT",
            message=f"no verdict within {subtest.timeout:g} s",
            cites=cites,
        )
    except Exception as exc:  # the user agent threw where it should have answered
        message = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
        return SubtestResult(name=subtest.name, status="FAIL", message=message, cites=cites)
    return SubtestResult(name=subtest.name, status="PASS", cites=cites)
