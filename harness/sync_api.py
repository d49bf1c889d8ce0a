"""A synchronous face over the async core, for scripts and plain tests.

The async harness runs on an event loop in a private thread; every method here
hands its coroutine to that loop and waits. Safe to use from code that has its
own (or no) event loop.

>>> from harness.sync_api import Harness
>>> with Harness() as harness:
...     session = harness.open("http://127.0.0.1:8101/")
...     print([t.name for t in session.tools()])
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from mcp_types import CallToolResult

from harness import harness as _async
from harness import session as _session
from harness.catalog import Settle, SettleReport
from harness.elicitation.base import ElicitationRecord
from harness.models import BackendName, CallOutcome, CatalogWarning, Tool, ToolChange
from harness.stages.redemption import RevealAttempt
from harness.stages.vault import Revealed

T = TypeVar("T")


class _Loop:
    """An event loop running forever in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()


class Runner(Protocol):
    """Runs a coroutine of the async core to completion and returns its result.

    :class:`_Loop` does it on a private thread; :mod:`harness.testing.page` on the
    loop of Playwright's sync API, for a session on a sync Playwright page.
    """

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` and wait for it."""
        ...


class Session:
    """Synchronous :class:`harness.session.Session`."""

    def __init__(self, inner: _session.Session, loop: Runner) -> None:
        self._inner = inner
        self._loop = loop

    @property
    def inner(self) -> _session.Session:
        """The async session underneath."""
        return self._inner

    @property
    def url(self) -> str:
        """The top-level document's URL."""
        return self._inner.url

    @property
    def history(self) -> list[CallOutcome]:
        """Every call's outcome (agent views)."""
        return self._inner.history

    @property
    def warnings(self) -> list[CatalogWarning]:
        """Catalog warnings."""
        return self._inner.warnings

    @property
    def elicitations(self) -> list[ElicitationRecord]:
        """Every question put to the user, and the answer's action."""
        return self._inner.elicitations

    def reveal(self, handle: str) -> Revealed:
        """For the user, never for an agent: the value behind a handle (see the async API)."""
        return self._loop.run(self._inner.reveal(handle))

    def reveal_all(self, outcome: CallOutcome) -> list[RevealAttempt]:
        """Reveal everything an outcome lists as withheld; failures kept per attempt."""
        return self._loop.run(self._inner.reveal_all(outcome))

    def user_view(self, outcome: CallOutcome) -> CallToolResult | None:
        """The result before redaction (held only in this session's memory)."""
        return self._inner.user_view(outcome)

    def open(self, url: str, *, settle: bool | Settle = True) -> None:
        """Navigate to ``url`` and read its tools once its catalog settled."""
        self._loop.run(self._inner.open(url, settle=settle))

    def ready(self, settle: Settle | None = None) -> SettleReport:
        """Wait until the current document's catalog settled (see :meth:`Session.ready`)."""
        return self._loop.run(self._inner.ready(settle))

    def tools(self) -> list[Tool]:
        """The tools the page offers now."""
        return self._loop.run(self._inner.tools())

    def tool(self, name: str) -> Tool:
        """One tool by name."""
        return self._loop.run(self._inner.tool(name))

    def call(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallOutcome:
        """Call a tool through the pipeline."""
        return self._loop.run(self._inner.call(name, arguments, timeout=timeout))

    def settled(self) -> None:
        """Wait for what followed the last call's result (catalog recompute, navigation)."""
        self._loop.run(self._inner.settled())

    def wait_for_tool(self, name: str, *, timeout: float = 5.0) -> Tool:
        """Wait until a tool with that name is offered."""
        return self._loop.run(self._inner.wait_for_tool(name, timeout=timeout))

    def on_tools_changed(self, listener: Callable[[ToolChange], None]) -> Callable[[], None]:
        """Subscribe to catalog changes (the listener runs on the harness thread)."""
        return self._inner.on_tools_changed(listener)

    def close(self) -> None:
        """Close the page."""
        self._loop.run(self._inner.close())

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Harness:
    """Synchronous :class:`harness.harness.Harness`; same options."""

    def __init__(self, *, backend: BackendName = "polyfill", **options: Any) -> None:
        self._async = _async.Harness(backend=backend, **options)
        self._loop = _Loop()
        self._stopped = False

    def start(self) -> Harness:
        """Launch the browser."""
        self._loop.run(self._async.start())
        return self

    def new_session(self) -> Session:
        """A fresh page."""
        return Session(self._loop.run(self._async.new_session()), self._loop)

    def open(self, url: str) -> Session:
        """A new session on ``url``."""
        return Session(self._loop.run(self._async.open(url)), self._loop)

    def close(self) -> None:
        """Close everything and stop the private loop."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self._loop.run(self._async.close())
        finally:
            self._loop.stop()

    def __enter__(self) -> Harness:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
