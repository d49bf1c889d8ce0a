"""The pytest plugin: test a site's WebMCP tools from pytest, beside pytest-playwright.

Registered on install (entry point ``pytest11``, name ``webmcp``); a test suite
needs no ``conftest.py`` line to use it.

Fixtures:

- ``webmcp`` — a sync harness session (:class:`~harness.testing.page.PageSession`) on
  pytest-playwright's ``page``: the test drives the page with Playwright and calls
  its tools with ``webmcp.call(…)``. It attaches before the test runs, so navigate
  after requesting it (``page.goto(…)`` or ``webmcp.open(…)``).
- ``webmcp_harness`` — the harness as the options configure it (session-scoped):
  ``webmcp_harness.attach(other_page)`` gives a session on another page.
- ``webmcp_async`` — for pytest-asyncio tests: an async :class:`~harness.session.Session`
  on a page of its own Chromium (Playwright's sync and async APIs cannot share one).

pytest-playwright launches Chromium through ``browser_type_launch_args``, which this
plugin extends: this machine's Chromium (:func:`harness.chromium.find_chromium`,
unless ``--browser-channel`` names one), quiet flags, and the backend's flags.
``playwright install`` is never needed.

- ``webmcp_sites`` — the bundled demo sites (``webmcp_sites.todo``, ``.keys``, ``.mail``,
  ``.shop``, ``.url(site, path)``), served once per run and reset before each test.

Options (group ``webmcp``), the CLI's with a ``webmcp-`` prefix: ``--webmcp-backend
polyfill|native``, ``--webmcp-elicit accept|decline|cancel|terminal|browser|FILE``
(default ``cancel``), ``--webmcp-elicit-timeout S``, ``--webmcp-policy
default|strict|none|FILE``, ``--webmcp-settle MS``, ``--webmcp-trace
on|off|retain-on-failure`` (default ``retain-on-failure``).
``@pytest.mark.webmcp(backend=…, policy=…, elicit=…, elicit_timeout=…, settle=…)``
overrides them for one test (or a module, or a class); a test whose backend is not the
run's gets a browser launched for that backend.

Artifacts: the harness trace (``trace.jsonl``: the agent view of every tool list and
result, see :mod:`harness.trace`) goes to ``test-results/<test id>/``, beside
Playwright's own ``trace.zip``, video and screenshots (``--output``, ``--tracing``,
``--video``, ``--screenshot``); its ``run-finished`` event lists those files. A failing
test's report also lists its calls.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import types
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, get_args

import pytest
from playwright.async_api import Browser as AsyncBrowser
from playwright.async_api import BrowserContext as AsyncBrowserContext
from playwright.async_api import Frame as AsyncFrame
from playwright.async_api import Page as AsyncPageType
from playwright.async_api import Playwright as AsyncPlaywright
from playwright.async_api import async_playwright
from playwright.sync_api import Page as SyncPage

from harness import session as _session
from harness.agent_view import agent_tool
from harness.browser.chromium import ENV_VAR, QUIET_FLAGS, chromium_args, find_chromium
from harness.catalog import Settle
from harness.elicitation.answers import load_answers
from harness.elicitation.base import ElicitationHandler, close_handler, unanswered
from harness.elicitation.choice import ELICIT_CHOICES, handler_from_option
from harness.elicitation.wording import plain
from harness.errors import BrowserNotFound, ConfigError, HarnessError, SessionClosed, UnknownTool
from harness.harness import BACKENDS, Harness
from harness.models import BackendName, CallAction, CallOutcome, ToolChange
from harness.stages.framing import unframed
from harness.stages.policy import Policy, PolicyOption, policy_from_argument, policy_option
from harness.testing.page import PageSession, attach, to_async
from harness.testing.sites import WebMCPSites
from harness.trace.events import (
    TRACE_FILE,
    Navigated,
    RunFinished,
    StopReason,
    ToolsChanged,
    call_events,
    elicitation_event,
    policy_event,
)
from harness.trace.recorder import TraceRecorder
from harness.trace.view import result_summary

T = TypeVar("T")
TraceMode = Literal["on", "off", "retain-on-failure"]
TRACE_MODES: tuple[str, ...] = get_args(TraceMode)
MARKER_ARGS = ("backend", "policy", "elicit", "elicit_timeout", "settle")

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
_SESSIONS = pytest.StashKey[list[_session.Session]]()
_KEPT = pytest.StashKey[list[Path]]()
_PENDING = pytest.StashKey[list[Callable[[], None]]]()  # traces finished after the teardown


# -- settings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class WebMCPSettings:
    """How the harness runs for one test: the options, overridden by the marker."""

    backend: BackendName = "polyfill"
    elicit: str | ElicitationHandler = "cancel"
    """``accept``, ``decline``, ``cancel``, ``terminal``, ``browser``, an answers file, or a
    handler object (from the marker)."""
    elicit_timeout: float | None = None
    """Seconds after which an unanswered question is cancelled (None: the handler's own)."""
    policy: PolicyOption = "default"
    """``default`` (the default pack), ``none``, a policy file, a Policy, or None."""
    settle: float | None = None
    """The catalog's quiet window in milliseconds (None: the default 500; 0: no wait)."""
    trace: TraceMode = "retain-on-failure"

    @classmethod
    def from_config(cls, config: pytest.Config) -> WebMCPSettings:
        """The settings the command line asks for."""
        return cls(
            backend=config.getoption("webmcp_backend"),
            elicit=config.getoption("webmcp_elicit"),
            elicit_timeout=config.getoption("webmcp_elicit_timeout"),
            policy=config.getoption("webmcp_policy"),
            settle=config.getoption("webmcp_settle"),
            trace=config.getoption("webmcp_trace"),
        )

    def settle_options(self) -> Settle:
        """The readiness settings (:class:`~harness.catalog.Settle`) these settings name."""
        if self.settle is None:
            return Settle()
        if not isinstance(self.settle, int | float) or self.settle < 0:
            raise ConfigError(f"settle={self.settle!r}: give 0 or a number of milliseconds.")
        return Settle.quiet_ms(self.settle)

    def check(self) -> None:
        """Raise :class:`ConfigError` for settings that cannot be used."""
        self.settle_options()
        if self.elicit_timeout is not None and not self.elicit_timeout > 0:
            raise ConfigError(
                f"elicit timeout {self.elicit_timeout!r}: give a positive number of seconds."
            )

    def load_policy(self) -> Policy | None:
        """The policy these settings name (a file is read now)."""
        if isinstance(self.policy, str):
            return policy_from_argument(self.policy)
        return policy_option(self.policy)

    def for_node(self, node: pytest.Item | pytest.Function) -> WebMCPSettings:
        """These settings with the closest ``@pytest.mark.webmcp`` applied."""
        return replace(self, **marker_overrides(node))


def marker_overrides(node: Any) -> dict[str, Any]:
    """The keyword arguments of the closest ``webmcp`` marker, checked."""
    marker = node.get_closest_marker("webmcp")
    if marker is None:
        return {}
    if marker.args:
        raise ConfigError(
            "@pytest.mark.webmcp takes keyword arguments only: "
            + ", ".join(a + "=" for a in MARKER_ARGS)
            + "."
        )
    unknown = sorted(set(marker.kwargs) - set(MARKER_ARGS))
    if unknown:
        raise ConfigError(
            f"@pytest.mark.webmcp: unknown argument(s) {', '.join(unknown)}; "
            f"use {', '.join(a + '=' for a in MARKER_ARGS)}."
        )
    backend = marker.kwargs.get("backend")
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(f"@pytest.mark.webmcp: backend={backend!r}; use 'polyfill' or 'native'.")
    return {key: value for key, value in marker.kwargs.items() if key != "backend" or value}


def check_elicit(text: str) -> None:
    """``--webmcp-elicit``: a choice, or an answers file that loads."""
    if text in ELICIT_CHOICES:
        return
    if not Path(text).is_file():
        raise ConfigError(
            f"--webmcp-elicit {text!r}: not one of {', '.join(ELICIT_CHOICES)}, and no "
            "answers file by that name."
        )
    load_answers(text)


# -- the harness the fixtures use -------------------------------------------------------------


class WebMCPHarness:
    """The harness as configured for this run: attach it to pytest-playwright pages.

    >>> session = webmcp_harness.attach(context.new_page())
    """

    def __init__(self, settings: WebMCPSettings) -> None:
        self.settings = settings
        self.harness = Harness(
            backend=settings.backend,
            policy=settings.load_policy(),
            settle=settings.settle_options(),
        )
        """The async core's :class:`~harness.harness.Harness` (backend, policy, channel keys)."""

    @property
    def backend(self) -> BackendName:
        """``polyfill`` or ``native``."""
        return self.harness.backend

    def configured(self, settings: WebMCPSettings) -> WebMCPHarness:
        """This harness, or a new one when ``settings`` change its backend or policy."""

        def key(s: WebMCPSettings) -> tuple[Any, ...]:
            return (s.backend, s.policy, s.settle)

        return self if key(settings) == key(self.settings) else WebMCPHarness(settings)

    def attach(
        self, page: SyncPage, *, elicit: str | ElicitationHandler | None = None
    ) -> PageSession:
        """A sync session on ``page`` (before it loads the site); close it when done.

        One session per browser context. ``elicit``: who answers the user's questions in
        this session (default: the settings'); a handler made from a choice or a file is
        closed with the session. Closing the session leaves the page open.
        """
        choice = self.settings.elicit if elicit is None else elicit
        handler = elicitation_handler(choice, page, timeout=self.settings.elicit_timeout)
        return attach(
            self.harness, page, elicitation=handler, close_elicitation=isinstance(choice, str)
        )


def elicitation_handler(
    choice: str | ElicitationHandler, page: SyncPage, *, timeout: float | None = None
) -> ElicitationHandler:
    """The handler ``choice`` names (questions cancelled after ``timeout`` seconds);
    ``browser`` opens its tabs in ``page``'s browser."""
    if not isinstance(choice, str):
        if not isinstance(choice, ElicitationHandler):
            raise ConfigError(
                f"elicit={choice!r} is neither a choice ({', '.join(ELICIT_CHOICES)}), an "
                "answers file, nor an elicitation handler (an object with `async elicit()`)."
            )
        return choice

    def browser() -> Any:
        owner = page.context.browser
        return to_async(owner if owner is not None else page.context)

    return handler_from_option(choice, browser=browser, timeout=timeout)


# -- the trace of one test's session -------------------------------------------------------


class SessionTrace:
    """Records one session as trace events, from the agent view only, as they happen.

    Events: ``navigation`` (the top-level page moved), ``tools-changed``,
    ``validation-error``, ``policy-decision``, ``elicitation``, ``redaction`` and
    ``tool-result``; ``step`` is the number of the call an event belongs to.
    """

    def __init__(self, session: _session.Session, run_dir: Path | None) -> None:
        self.recorder = TraceRecorder(run_dir, withheld=session.scrubber)
        self._session = session
        self._audit_seen = 0
        self._elicitations_seen = 0
        self._unsubscribe = [
            session.on_tools_changed(self._changed),
            session.on_call(self._called),
        ]
        session.page.on("framenavigated", self._navigated)

    def _changed(self, change: ToolChange) -> None:
        catalog = self._session.catalog
        shown = [catalog.get(n) for n in [*change.added, *change.changed]]
        framing = self._session.untrusted_framing
        self.recorder.record(
            ToolsChanged(
                step=len(self._session.history) or None,
                added=list(change.added),
                removed=list(change.removed),
                changed=list(change.changed),
                tools=[agent_tool(t, framing=framing).as_json() for t in shown if t is not None],
                names=catalog.names(),
            )
        )

    def _navigated(self, frame: AsyncFrame) -> None:
        if frame.parent_frame is None:
            step = len(self._session.history) or None
            self.recorder.record(
                Navigated(
                    step=step, requested=frame.url, url=frame.url, final_url=frame.url, ok=True
                )
            )

    def _called(self, arguments: dict[str, Any], outcome: CallOutcome) -> None:
        step = len(self._session.history)
        audit = self._session.audit.records
        for decision in audit[self._audit_seen :]:
            decided = policy_event(decision, step)
            if decided is not None:
                self.recorder.record(decided)
        self._audit_seen = len(audit)
        for question in self._session.elicitations[self._elicitations_seen :]:
            asked = elicitation_event(question, step)
            if asked is not None:
                self.recorder.record(asked)
        self._elicitations_seen = len(self._session.elicitations)
        # The test plays the agent: its call is the action, with the arguments it sent.
        for event in call_events(step, CallAction(tool=outcome.tool, arguments=arguments), outcome):
            self.recorder.record(event)

    def finish(
        self,
        nodeid: str,
        failed: bool,
        *,
        error: BaseException | None = None,
        artifacts: list[str] | None = None,
    ) -> None:
        """Record how the test ended: ``run-finished`` with its stop reason (``finished``;
        ``unknown-tool``, ``session-closed``, ``harness-error`` for the harness error the
        test raised; ``expect-failed`` for a failed expectation; ``test-failed`` otherwise),
        and the artifacts written beside the trace."""
        self.recorder.record(
            RunFinished(
                stop_reason=stop_reason(failed, error),
                detail=f"{nodeid} {'failed' if failed else 'passed'}"
                + (f": {type(error).__name__}: {error}" if failed and error is not None else ""),
                steps=len(self._session.history),
                duration_ms=round(self.recorder.elapsed_ms(), 1),
                artifacts=artifacts or [],
            )
        )

    def close(self) -> None:
        """Stop recording and close ``trace.jsonl``."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._session.page.remove_listener("framenavigated", self._navigated)
        self.recorder.close()


def _start_trace(
    session: _session.Session, mode: TraceMode, factory: pytest.TempPathFactory
) -> tuple[SessionTrace, Path | None]:
    # Written to a scratch folder, and moved beside Playwright's artifacts only when it is
    # kept, so passing tests leave no empty folders behind.
    scratch = factory.mktemp("webmcp-trace") if mode != "off" else None
    return SessionTrace(session, scratch), scratch


def stop_reason(failed: bool, error: BaseException | None) -> StopReason:
    """A test's stop reason, from whether it failed and what it raised."""
    if not failed:
        return "finished"
    if isinstance(error, UnknownTool):
        return "unknown-tool"
    if isinstance(error, SessionClosed):
        return "session-closed"
    if isinstance(error, HarnessError):
        return "harness-error"
    if isinstance(error, AssertionError) or error is None:
        return "expect-failed"
    return "test-failed"


def artifacts_beside(output: Path) -> list[str]:
    """The files in a test's artifact folder (Playwright's trace, screenshots, video), by
    path relative to it, the harness trace left out."""
    if not output.is_dir():
        return []
    return sorted(
        p.relative_to(output).as_posix()
        for p in output.rglob("*")
        if p.is_file() and p.name != TRACE_FILE
    )


def _finish_later(
    item: pytest.Item, trace: SessionTrace, scratch: Path | None, mode: TraceMode, output: Path
) -> None:
    """Finish the trace once the test's teardown is over: by then pytest-playwright (or
    :class:`OwnedPage`) has written its artifacts, which ``run-finished`` lists."""
    item.stash.setdefault(_PENDING, []).append(
        lambda: _finish_trace(item, trace, scratch, mode, output)
    )


def _finish_trace(
    item: pytest.Item, trace: SessionTrace, scratch: Path | None, mode: TraceMode, output: Path
) -> None:
    failed = _failed(item)
    error = _raised(item)
    trace.finish(item.nodeid, failed, error=error, artifacts=artifacts_beside(output))
    trace.close()
    if scratch is None:
        return
    try:
        if mode == "on" or (mode == "retain-on-failure" and failed):
            output.mkdir(parents=True, exist_ok=True)
            shutil.move(scratch / TRACE_FILE, output / TRACE_FILE)
            item.stash.setdefault(_KEPT, []).append(output / TRACE_FILE)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _failed(item: pytest.Item) -> bool:
    reports = item.stash.get(_REPORTS, {})
    return any(report.failed for report in reports.values())


_RAISED = pytest.StashKey[BaseException]()


def _raised(item: pytest.Item) -> BaseException | None:
    """What the test (or its set-up) raised, if it failed."""
    return item.stash.get(_RAISED, None)


def describe_session(session: _session.Session) -> str:
    """A failed test's calls, for its report: what the page offered and what came back."""
    lines = [f"backend {session.backend_name}, page {session.url}"]
    lines.append("tools: " + (", ".join(session.catalog.names()) or "none"))
    for index, outcome in enumerate(session.history, 1):
        result = outcome.agent_json()
        status = f"isError ({outcome.error_kind})" if outcome.is_error else "ok"
        arguments = json.dumps(outcome.arguments, ensure_ascii=False)
        lines.append(f"{index}. {outcome.tool} {arguments} → {status}: {result_summary(result)}")
    if not session.history:
        lines.append("no calls")
    hint = refusal_hint(session) or unanswered_hint(session)
    if hint is not None:
        lines.append(hint)
    # Page text for a person: without the agent's frames, what the session withheld still
    # withheld (a tool name, the URL), shown on the terminal, never obeyed by it.
    return plain(unframed(session.scrubber.text("\n".join(lines))))


def refusal_hint(session: _session.Session) -> str | None:
    """What to do when the policy stopped one of the test's calls: for a test of one's own
    site's tools, let the test say yes, or run without a policy."""
    stopped = [r for r in session.audit.records if r.outcome in ("not run", "withheld")]
    if not stopped:
        return None
    tools = ", ".join(sorted({r.tool for r in stopped}))
    if any(r.effect == "escalate" for r in stopped):
        return (
            f"hint: the policy asked the user to confirm {tools}, and nobody said yes (the "
            "default answer is cancel). Testing your own site's tools? Let the test say yes: "
            '@pytest.mark.webmcp(elicit="accept") (or --webmcp-elicit accept), or run '
            'without a policy: @pytest.mark.webmcp(policy="none") (or --webmcp-policy none).'
        )
    return (
        f"hint: the policy blocked {tools}. Testing your own site's tools? Run without a "
        'policy: @pytest.mark.webmcp(policy="none") (or --webmcp-policy none), or give a '
        "policy file without that rule."
    )


def unanswered_hint(session: _session.Session) -> str | None:
    """What to do when a form waited for its submit, or the page asked a question, and
    nobody answered (the default answer is cancel): let the test answer; or, when an answer
    broke the form's rules, give one within them."""
    found = unanswered(session.elicitations)
    if found is None:
        return None
    if found.broken_rules is not None:
        return (
            f"hint: {found.what}, and the answer given breaks its rules "
            f"({found.broken_rules}), so the harness cancelled it and nothing was sent. Give a "
            "value within those rules (in an answers file: the matching entry's `values`), "
            "or leave the field out to keep the value the form shows."
        )
    if found.cancelled_by is not None:
        return (
            f"hint: {found.what}, and {found.cancelled_by} answers cancel, so nothing was "
            "sent. To send it, make that entry `action: accept` (or put an entry that "
            "accepts before it)."
        )
    return (
        f"hint: {found.what}, and nobody answered (the default answer is cancel). Testing "
        'your own site? Let the test say yes: @pytest.mark.webmcp(elicit="accept") (or '
        '--webmcp-elicit accept), or answer from a file: @pytest.mark.webmcp(elicit="answers.yaml").'
    )


# -- launching Chromium ----------------------------------------------------------------


def chromium_launch_options(base: dict[str, Any], backend: BackendName) -> dict[str, Any]:
    """pytest-playwright's launch options, plus this machine's Chromium and the flags.

    The executable is left alone when ``--browser-channel`` (``channel``) or an
    ``executable_path`` was given; with no Chromium found here, Playwright's own
    lookup is left to report it.
    """
    options = dict(base)
    if "channel" not in options and "executable_path" not in options:
        try:
            options["executable_path"] = str(find_chromium())
        except BrowserNotFound:
            if os.environ.get(ENV_VAR):  # an explicit choice that does not work
                raise
    options["args"] = chromium_args(
        QUIET_FLAGS, BACKENDS[backend].launch_args(), options.get("args", ())
    )
    return options


def playwright_overrides() -> types.ModuleType:
    """The fixture this plugin layers over pytest-playwright's, as a plugin of its own.

    Registered when pytest configures, after every plugin loaded from an entry point,
    so it sits above pytest-playwright's fixture (which it extends) and below a
    ``conftest.py``'s.
    """

    @pytest.fixture(scope="session", name="browser_type_launch_args")
    def launch_args(
        browser_type_launch_args: dict[str, Any],
        browser_name: str,
        webmcp_browser_backend: BackendName,
    ) -> dict[str, Any]:
        """pytest-playwright's launch options, with Chromium found and WebMCP's flags."""
        if browser_name != "chromium":
            return browser_type_launch_args
        return chromium_launch_options(browser_type_launch_args, webmcp_browser_backend)

    plugin = types.ModuleType(f"{__name__}.playwright_overrides", playwright_overrides.__doc__)
    setattr(plugin, "browser_type_launch_args", launch_args)  # noqa: B010
    return plugin


# -- hooks -------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``webmcp`` option group."""
    group = parser.getgroup("webmcp", "WebMCP (webmcp-harness)")
    group.addoption(
        "--webmcp-backend",
        choices=list(BACKENDS),
        default="polyfill",
        help="what provides WebMCP in the page: the harness's polyfill, or Chromium's own "
        "(default: polyfill)",
    )
    group.addoption(
        "--webmcp-elicit",
        default="cancel",
        metavar="accept|decline|cancel|terminal|browser|FILE",
        help="who answers the user's questions: the same answer every time, a person at the "
        "terminal (with -s), a person in a browser tab (with --headed), or an answers file "
        "(default: cancel)",
    )
    group.addoption(
        "--webmcp-elicit-timeout",
        type=float,
        default=None,
        metavar="S",
        help="an unanswered question is cancelled after S seconds",
    )
    group.addoption(
        "--webmcp-policy",
        default="default",
        metavar="default|strict|none|FILE",
        help="the user agent's policy: the default pack, another bundled pack, none, or a "
        "policy file (default: default)",
    )
    group.addoption(
        "--webmcp-settle",
        type=float,
        default=None,
        metavar="MS",
        help="a page's catalog is ready once quiet for MS milliseconds after load "
        "(default 500; 0: no wait); listings and calls wait for it",
    )
    group.addoption(
        "--webmcp-trace",
        choices=list(TRACE_MODES),
        default="retain-on-failure",
        help="keep the harness trace (trace.jsonl) in test-results/<test id>/ "
        "(default: retain-on-failure)",
    )


ASYNCIO_LOOP_SCOPE_INI = "asyncio_default_fixture_loop_scope"


def default_asyncio_loop_scope(config: pytest.Config) -> bool:
    """Give pytest-asyncio's fixture loop scope a value when the project sets none.

    pytest-asyncio warns on every run of a project that leaves it unset; the plugin's
    ``webmcp_async`` fixture runs on a function-scoped loop, so that is the value it
    sets (a project's own setting, in its configuration or with ``-o``, always wins).
    Returns whether it set it. Uses pytest's configuration store, which has no public
    setter: on a pytest without it, nothing is set.
    """
    if not config.pluginmanager.hasplugin("asyncio"):
        return False
    try:
        from _pytest.config.findpaths import ConfigValue
    except ImportError:  # pragma: no cover - another pytest layout
        return False
    store = getattr(config, "_inicfg", None)
    if not isinstance(store, dict) or ASYNCIO_LOOP_SCOPE_INI in store:
        return False
    store[ASYNCIO_LOOP_SCOPE_INI] = ConfigValue("function", origin="file", mode="ini")
    getattr(config, "_inicache", {}).pop(ASYNCIO_LOOP_SCOPE_INI, None)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and the fixture overrides; check the options (first, so that
    pytest-asyncio sees the loop scope :func:`default_asyncio_loop_scope` gives it)."""
    default_asyncio_loop_scope(config)
    config.addinivalue_line(
        "markers",
        "webmcp(backend=None, policy=None, elicit=None, elicit_timeout=None, settle=None): run "
        "this test's webmcp session with other settings than the command line's",
    )
    config.pluginmanager.register(playwright_overrides(), "webmcp-playwright-overrides")
    try:
        check_elicit(config.getoption("webmcp_elicit"))
        settings = WebMCPSettings.from_config(config)
        settings.check()
        settings.load_policy()
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from exc


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test whose marker names another backend gets a browser launched for it."""
    if "webmcp" not in metafunc.fixturenames:
        return
    try:
        backend = marker_overrides(metafunc.definition).get("backend")
    except ConfigError:
        return  # the webmcp fixture reports it
    if backend and backend != metafunc.config.getoption("webmcp_backend"):
        metafunc.parametrize(
            "webmcp_browser_backend", [backend], indirect=True, ids=[backend], scope="session"
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests that use ``webmcp_async`` first.

    Once Playwright's sync API has run (pytest-playwright's ``page``, ``webmcp``), its
    loop counts as running in the test thread, so pytest-asyncio cannot run a test there.
    """
    uses = ["webmcp_async" in getattr(item, "fixturenames", ()) for item in items]
    if any(uses):
        items[:] = [i for i, u in zip(items, uses, strict=True) if u] + [
            i for i, u in zip(items, uses, strict=True) if not u
        ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report; list the calls of a failing test; name the kept traces."""
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    if report.failed and call.excinfo is not None and _RAISED not in item.stash:
        item.stash[_RAISED] = call.excinfo.value
    if report.when == "teardown":
        for finish in item.stash.get(_PENDING, []):
            finish()
        item.stash[_PENDING] = []
    sessions = item.stash.get(_SESSIONS, [])
    if report.failed and report.when == "call":
        for session in sessions:
            report.sections.append(("webmcp session", describe_session(session)))
    if report.when == "teardown":
        for path in item.stash.get(_KEPT, []):
            report.user_properties.append(("webmcp_trace", _for_report(item.config, path)))
    return report


def _for_report(config: pytest.Config, path: Path) -> str:
    try:
        return str(path.relative_to(config.invocation_params.dir))
    except ValueError:
        return str(path)


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def webmcp_browser_backend(request: pytest.FixtureRequest) -> BackendName:
    """The backend whose flags pytest-playwright's browser is launched with."""
    param = getattr(request, "param", None)
    return cast(BackendName, param or request.config.getoption("webmcp_backend"))


@pytest.fixture(scope="session")
def webmcp_harness(pytestconfig: pytest.Config) -> WebMCPHarness:
    """The harness as the command line configures it (backend, policy, elicitation)."""
    return WebMCPHarness(WebMCPSettings.from_config(pytestconfig))


def _or_fail(make: Callable[[], T]) -> T:
    """``make()``, or the test fails with the :class:`ConfigError`'s message alone."""
    try:
        return make()
    except ConfigError as exc:
        problem = str(exc)
    pytest.fail(problem, pytrace=False)


def _settings(request: pytest.FixtureRequest) -> WebMCPSettings:
    def checked() -> WebMCPSettings:
        settings = WebMCPSettings.from_config(request.config).for_node(request.node)
        settings.check()
        return settings

    return _or_fail(checked)


@pytest.fixture
def webmcp(
    request: pytest.FixtureRequest,
    page: SyncPage,
    browser_name: str,
    webmcp_harness: WebMCPHarness,
    webmcp_browser_backend: BackendName,
    output_path: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[PageSession]:
    """A sync harness session on pytest-playwright's ``page``, attached before the test."""
    if browser_name != "chromium":
        pytest.skip(f"WebMCP runs in Chromium; this test runs in {browser_name}")
    settings = _settings(request)
    if settings.backend != webmcp_browser_backend:
        pytest.fail(
            f"This test's webmcp backend is {settings.backend!r}, but the browser was launched "
            f"for {webmcp_browser_backend!r} (is browser_type_launch_args parametrized too?).",
            pytrace=False,
        )
    if page.url != "about:blank":
        request.node.warn(
            pytest.PytestWarning(
                f"webmcp attached to a page already at {page.url}; the harness follows it "
                "from the next navigation. Request `webmcp` before fixtures that navigate."
            )
        )
    session = _or_fail(
        lambda: webmcp_harness.configured(settings).attach(page, elicit=settings.elicit)
    )
    trace, scratch = _start_trace(session.inner, settings.trace, tmp_path_factory)
    session.trace = trace.recorder
    request.node.stash.setdefault(_SESSIONS, []).append(session.inner)
    try:
        yield session
    finally:
        try:
            session.close()
        finally:
            _finish_later(request.node, trace, scratch, settings.trace, Path(output_path))


@pytest.fixture(scope="session")
def webmcp_sites_server() -> Iterator[WebMCPSites]:
    """The bundled demo sites, served once for the run (``webmcp_sites`` resets them)."""
    sites = WebMCPSites()
    yield sites
    sites.stop()


@pytest.fixture
def webmcp_sites(webmcp_sites_server: WebMCPSites) -> WebMCPSites:
    """The bundled demo sites with their starting data: ``webmcp_sites.todo`` (likewise
    ``keys``, ``mail``, ``shop``), ``webmcp_sites.url(site, path)``; see
    :class:`~harness.testing.sites.WebMCPSites`."""
    webmcp_sites_server.reset()
    return webmcp_sites_server


class OwnedPage:
    """A Chromium, a context and a page of Playwright's async API, for one test.

    Launched the way pytest-playwright launches its browser (``--headed``,
    ``--browser-channel``, ``--slowmo``, ``--device``, ``--base-url``), with this
    machine's Chromium and the backend's flags; ``--tracing``, ``--video`` and
    ``--screenshot`` are kept in ``output`` under pytest-playwright's file names.
    Set :attr:`failed` before leaving the ``async with``.
    """

    def __init__(
        self,
        config: pytest.Config,
        backend: BackendName,
        output: Path,
        scratch: Path,
        base_url: str | None,
    ) -> None:
        self._config = config
        self._backend = backend
        self._output = output
        self._scratch = scratch
        self._base_url = base_url
        self.failed = False
        self._playwright: AsyncPlaywright | None = None
        self.browser: AsyncBrowser
        self.context: AsyncBrowserContext
        self.page: AsyncPageType

    def _keep(self, option: str, on_failure: str) -> bool:
        value = self._config.getoption(option)
        return bool(value == "on" or (value == on_failure and self.failed))

    async def __aenter__(self) -> OwnedPage:
        config = self._config
        launch: dict[str, Any] = {"headless": not config.getoption("--headed")}
        if config.getoption("--browser-channel"):
            launch["channel"] = config.getoption("--browser-channel")
        if config.getoption("--slowmo"):
            launch["slow_mo"] = config.getoption("--slowmo")
        self._playwright = await async_playwright().start()
        self.browser = await self._playwright.chromium.launch(
            **chromium_launch_options(launch, self._backend)
        )
        context_args: dict[str, Any] = {}
        device = config.getoption("--device")
        if device:
            context_args.update(self._playwright.devices[device])
        if self._base_url:
            context_args["base_url"] = self._base_url
        if config.getoption("--video") != "off":
            context_args["record_video_dir"] = self._scratch
        self.context = await self.browser.new_context(**context_args)
        if config.getoption("--tracing") != "off":
            await self.context.tracing.start(screenshots=True, snapshots=True, sources=True)
        self.page = await self.context.new_page()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._playwright is not None
        try:
            await self._save_artifacts()
        finally:
            await self.browser.close()
            await self._playwright.stop()

    async def _save_artifacts(self) -> None:
        if self._keep("--screenshot", "only-on-failure") and not self.page.is_closed():
            name = f"test-{'failed' if self.failed else 'finished'}-1.png"
            await self.page.screenshot(path=self._output / name, timeout=5000)
        if self._config.getoption("--tracing") != "off":
            keep = self._keep("--tracing", "retain-on-failure")
            await self.context.tracing.stop(path=self._output / "trace.zip" if keep else None)
        video = self.page.video
        await self.context.close()
        if video is not None:
            if self._keep("--video", "retain-on-failure"):
                await video.save_as(self._output / "video.webm")
            await video.delete()


if importlib.util.find_spec("pytest_asyncio") is not None:
    import pytest_asyncio

    @pytest_asyncio.fixture(name="webmcp_async")
    async def _webmcp_async(
        request: pytest.FixtureRequest,
        output_path: str,
        tmp_path_factory: pytest.TempPathFactory,
        base_url: str | None,
    ) -> AsyncIterator[_session.Session]:
        """An async harness session on a page of its own Chromium (for pytest-asyncio tests).

        See :class:`OwnedPage` for how the browser is launched and what it keeps. Tests
        that use it run before the others (see :func:`pytest_collection_modifyitems`).
        """
        settings = _settings(request)
        harness = _or_fail(
            lambda: Harness(
                backend=settings.backend,
                policy=settings.load_policy(),
                settle=settings.settle_options(),
            )
        )
        output = Path(output_path)
        scratch = tmp_path_factory.mktemp("webmcp-playwright")
        owned = OwnedPage(request.config, settings.backend, output, scratch, base_url)
        async with owned:
            handler = (
                handler_from_option(
                    settings.elicit, browser=owned.browser, timeout=settings.elicit_timeout
                )
                if isinstance(settings.elicit, str)
                else settings.elicit
            )
            session = await harness.attach(owned.context, owned.page)
            session.elicitation = handler
            trace, trace_scratch = _start_trace(session, settings.trace, tmp_path_factory)
            request.node.stash.setdefault(_SESSIONS, []).append(session)
            try:
                yield session
            finally:
                owned.failed = _failed(request.node)
                try:
                    await session.close()
                    if isinstance(settings.elicit, str):  # made here, so closed here
                        await close_handler(handler)
                finally:
                    _finish_later(request.node, trace, trace_scratch, settings.trace, output)
        shutil.rmtree(scratch, ignore_errors=True)

else:

    @pytest.fixture(name="webmcp_async")
    def _webmcp_async_unavailable() -> None:
        """Needs pytest-asyncio."""
        pytest.fail("webmcp_async needs pytest-asyncio: pip install pytest-asyncio", pytrace=False)
