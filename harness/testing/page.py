"""A harness session on a page of Playwright's *sync* API, such as pytest-playwright's ``page``.

The harness core is async; pytest-playwright hands tests sync Playwright objects.
Both of Playwright's APIs are thin faces over the same implementation objects
(``page._impl_obj``), which live on one event loop. Under the sync API a
greenlet (Playwright's "dispatcher fiber") runs that loop whenever the sync side
waits for a call. So the core can run on the very page a test drives:

1. Wrap the page's and its context's implementation objects in Playwright's own
   *async* API classes (:func:`to_async`).
2. Run the core's coroutines on Playwright's loop, exactly as a sync call does:
   the sync object's ``_sync(coroutine)`` schedules it there and switches to the
   dispatcher until it is done (:class:`PlaywrightLoop`). While it waits, the
   loop also delivers the page's events, so the harness follows the page's
   tools during the test's own Playwright calls too.

One detail needs care. Playwright keeps the API object of each implementation
object *on* the implementation object, under one attribute for both APIs. If the
harness wrapped a frame first, the test would later get an async ``Frame`` from
``page.main_frame``; if the test did first, the harness would get a sync one.
:func:`to_async` therefore installs (once) a cache of its own for async wrappers of
objects that belong to a sync connection; objects of async connections, and
everything the sync API returns, are untouched.

These are Playwright internals (``_impl_obj``, ``_sync``, the mapping of
``playwright._impl._async_base``); :func:`check_playwright` says clearly when a
Playwright version no longer has them.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from playwright._impl import _async_base
from playwright.async_api import BrowserContext as AsyncBrowserContext
from playwright.async_api import Page as AsyncPage
from playwright.sync_api import Page as SyncPage

from harness import session as _session
from harness import sync_api
from harness.elicitation.base import ElicitationHandler, ElicitationRecord, close_handler
from harness.elicitation.wording import plain
from harness.errors import ConfigError
from harness.harness import Harness
from harness.qa import DEFAULT_DATABASE, DEFAULT_EXAMPLES, FuzzUnchecked
from harness.trace.recorder import TraceRecorder

if TYPE_CHECKING:
    from harness.qa.fuzz import FuzzReport

T = TypeVar("T")

# The (implementation objects of) contexts a session was attached to.
_CONTEXTS_WITH_A_SESSION: weakref.WeakSet[Any] = weakref.WeakSet()

# Where async wrappers of a sync connection's objects are kept (Playwright's own attribute
# holds their sync wrappers).
_ASYNC_VIEW_ATTR = "_webmcp_harness_async_api_"


def check_playwright(page: SyncPage) -> None:
    """Raise :class:`ConfigError` unless ``page`` is a sync page this bridge can share."""
    impl = getattr(page, "_impl_obj", None)
    if impl is None or not callable(getattr(page, "_sync", None)):
        raise ConfigError(
            "This Playwright version has no `_impl_obj` / `_sync` on its sync objects, which "
            "the harness needs to share a sync page; use playwright>=1.64,<2."
        )
    if not getattr(impl, "_dispatcher_fiber", None):
        raise ConfigError(
            f"{type(page).__name__} is not a page of Playwright's sync API; with the async "
            "API, use Harness.attach(context, page)."
        )


def _install_async_view_cache() -> None:
    mapping = _async_base.mapping
    if getattr(mapping, "_webmcp_harness_patched", False):
        return
    original = mapping.from_maybe_impl

    def from_maybe_impl(obj: Any, visited: Any = None) -> Any:
        # Only objects of a sync connection (they have a dispatcher fiber) use this cache.
        if getattr(obj, "_dispatcher_fiber", None) and not isinstance(obj, dict | list):
            api_class = mapping._mapping.get(getattr(obj, "_api_impl_class", type(obj)))
            if api_class is not None:
                view = getattr(obj, _ASYNC_VIEW_ATTR, None)
                if view is None:
                    view = api_class(obj)
                    setattr(obj, _ASYNC_VIEW_ATTR, view)
                return view
        return original(obj, visited)

    # An attribute of this one instance, the async API's mapping; the class is shared.
    setattr(mapping, "from_maybe_impl", from_maybe_impl)  # noqa: B010
    setattr(mapping, "_webmcp_harness_patched", True)  # noqa: B010


def to_async(obj: Any) -> Any:
    """The async-API object for a sync-API object (the same page, context, browser or frame)."""
    _install_async_view_cache()
    return _async_base.mapping.from_impl(obj._impl_obj)


class PlaywrightLoop:
    """Runs coroutines of the async core on the loop of Playwright's sync API.

    A :class:`harness.sync_api.Runner`: ``run`` blocks like any sync Playwright call.
    """

    def __init__(self, page: SyncPage) -> None:
        check_playwright(page)
        self._page = page

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on Playwright's loop and wait for it."""
        result: T = self._page._sync(coro)
        return result


class PageSession(sync_api.Session):
    """A sync harness session on a sync Playwright page (what the ``webmcp`` fixture gives).

    Everything :class:`harness.sync_api.Session` has, plus the page itself, the
    session's elicitation record and, when one is kept, its trace.
    """

    def __init__(
        self,
        inner: _session.Session,
        loop: PlaywrightLoop,
        page: SyncPage,
        *,
        owned_handler: ElicitationHandler | None = None,
    ) -> None:
        super().__init__(inner, loop)
        self.page = page
        """The sync Playwright page the session runs on."""
        self.trace: TraceRecorder | None = None
        """The trace of this session's agent views, when one is recorded."""
        self._owned_handler = owned_handler

    @property
    def backend_name(self) -> str:
        """``polyfill`` or ``native``."""
        return self.inner.backend_name

    @property
    def elicitations(self) -> list[ElicitationRecord]:
        """Every question the user was asked, and the answer (no sensitive values)."""
        return self.inner.elicitations

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine of the async core (e.g. ``session.inner.…``) on Playwright's loop."""
        return self._loop.run(coro)

    def fuzz(
        self,
        *,
        tools: Sequence[str] = (),
        properties: Sequence[str] = (),
        examples: int = DEFAULT_EXAMPLES,
        allow_writes: bool = False,
        seed: int | None = None,
        database: str | Path | None = DEFAULT_DATABASE,
        example: dict[str, Any] | None = None,
        timeout: float = 10.0,
        check: bool = True,
    ) -> FuzzReport:
        """Property-test the page's tools with inputs from their schemas (see
        :mod:`harness.qa.fuzz`); the options are ``webmcp-harness fuzz``'s.

        With ``check`` (the default), a failed property fails the test: an
        ``AssertionError`` whose message is the report, with each failure's minimal input
        and its reproduction. When nothing failed but some properties could not be checked
        (no inputs could be made from a tool's schema, a tool went away during the run) or
        none was (no tool, none read-only without ``allow_writes``), a
        :class:`~harness.qa.FuzzUnchecked` warning says which and why. Returns the report.
        """
        from harness.qa.fuzz import Fuzzer, FuzzOptions

        options = FuzzOptions(
            tools=tools,
            properties=properties,
            examples=examples,
            allow_writes=allow_writes,
            seed=seed,
            database=None if database is None else Path(database),
            example=example,
            timeout=timeout,
        )
        report = Fuzzer(self.inner, self.run, options).fuzz()
        if check and not report.ok:
            raise AssertionError(plain(report.describe()))
        if check and (report.unchecked() or not report.checked()):
            # Nothing failed, but not everything was checked: the test says so.
            warnings.warn(FuzzUnchecked(plain(report.describe())), stacklevel=2)
        return report

    def catalog_snapshot(self) -> dict[str, Any]:
        """The page's catalog as a snapshot value (:mod:`harness.qa.snapshot`, without the
        page's URL): ``assert webmcp.catalog_snapshot() == snapshot`` with syrupy, updated
        with ``--snapshot-update``."""
        from harness.qa.snapshot import snapshot_of

        return snapshot_of(self.tools(), self.url).for_comparison()

    def close(self) -> None:
        """Stop following the page (it stays open) and close the session's own handler."""
        try:
            super().close()
        finally:
            handler, self._owned_handler = self._owned_handler, None
            if handler is not None:
                self.run(close_handler(handler))


def attach(
    harness: Harness,
    page: SyncPage,
    *,
    elicitation: ElicitationHandler | None = None,
    close_elicitation: bool = False,
) -> PageSession:
    """A sync harness session on ``page``, a page of Playwright's sync API.

    Attach before the page loads the site (the backend's script runs from the
    next navigation on); the browser must have the backend's flags
    (:meth:`Harness.launch_args`). One session per browser context.
    ``elicitation``: who answers this session's questions (default: the
    harness's); with ``close_elicitation`` the session closes it when it closes.
    Closing the session leaves the page open.
    """
    loop = PlaywrightLoop(page)
    if page.context._impl_obj in _CONTEXTS_WITH_A_SESSION:
        # The harness's script and binding belong to the whole context, and stay there.
        raise ConfigError(
            "This page's browser context already has a harness session, and a context takes "
            "one: open the other page in a context of its own (pytest-playwright's "
            "`new_context().new_page()`)."
        )
    _CONTEXTS_WITH_A_SESSION.add(page.context._impl_obj)
    context: AsyncBrowserContext = to_async(page.context)
    async_page: AsyncPage = to_async(page)
    inner = loop.run(harness.attach(context, async_page))
    if elicitation is not None:
        inner.elicitation = elicitation
    owned = elicitation if close_elicitation else None
    return PageSession(inner, loop, page, owned_handler=owned)
