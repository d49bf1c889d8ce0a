"""One MCP client's page: the session it drives, and who hears that its tools changed.

Every client of the bridge that has a session drives a :class:`~harness.session.Session`
of its own — its own browser context and page (cookies, storage, navigation), catalog,
trust state, audit, vault and navigation consent — as Playwright MCP's isolated mode gives
each client a context of its own. A :class:`ClientPage` holds it for as long as the client's
session lasts: the session's elicitation handler forwards questions to the calling client
(:mod:`harness.mcp.elicitation`), its console goes to that client's calls
(:mod:`harness.mcp.console`), and its catalog's changes reach that client only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.connection import Connection
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged

from harness.browser.backends.polyfill import ChannelBackend
from harness.elicitation.base import ElicitationHandler, RecordingHandler
from harness.mcp.console import ConsoleForwarder
from harness.mcp.elicitation import asking_clients
from harness.session import Session

log = logging.getLogger("harness.mcp.clients")

LIST_CHANGED = "notifications/tools/list_changed"

# A burst of changes (a page registering its tools one by one, a reload) is told as the
# first change at once, then one message once the page was quiet this long — or once
# LIST_CHANGED_MAX_DELAY_S passed, for a page that never stops.
LIST_CHANGED_QUIET_S = 0.1
LIST_CHANGED_MAX_DELAY_S = 1.0


class ClientPage:
    """The page one client drives (or, for the bridge's own page, the clients it serves).

    ``opening`` gives the session once its page is open and its catalog settled; requests
    wait for it (:meth:`ready`). Tool-list changes go to :attr:`connections` (handshake-era
    clients: ``notifications/tools/list_changed``) and to ``bus`` (the
    ``subscriptions/listen`` streams of 2026-07-28 clients): the first change at once,
    the rest of a burst as one message once it is over (:meth:`_burst_over`); a change a
    call made is told at once, before the navigation its result asked for (seed 002 §6.1).
    ``owned``: :meth:`close` closes the session (a client's own page); otherwise it only
    lets go of it (the bridge's page, which its caller opened).
    """

    def __init__(
        self,
        opening: Awaitable[Session],
        *,
        owned: bool,
        console: ConsoleForwarder | None = None,
        bus: InMemorySubscriptionBus | None = None,
    ) -> None:
        self.owned = owned
        self.console = console
        self.bus = bus
        # Handshake-era connections that hear of its changes. Weak: a connection the client
        # closed (or the SDK reaped, idle) is released, not kept alive here.
        self.connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self.session: Session | None = None
        self._opening = asyncio.ensure_future(opening)
        self._opening.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._changed = asyncio.Event()
        self._changes = 0  # how many the catalog published (a burst is over when it stays)
        self._urgent = asyncio.Event()  # a call's change: no waiting for the burst's end
        self._undo: list[Callable[[], None]] = []
        # Done once the session's handlers are in place (or its page failed to open).
        self._wired: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._serve())

    async def ready(self) -> Session:
        """The session, once its page is open and its catalog settled (raises what
        opening it raised)."""
        await asyncio.shield(self._opening)
        await asyncio.shield(self._wired)
        assert self.session is not None
        return self.session

    async def _serve(self) -> None:
        """Take the session once it is open, then tell the clients of its changes."""
        try:
            session = await asyncio.shield(self._opening)
        except Exception:  # the page did not open: requests say why (ready)
            self._wired.set_result(None)
            return
        self._wire(session)
        self._wired.set_result(None)
        self._changed.clear()  # the catalog as it settled is the first one clients list
        while True:
            await self._changed.wait()
            while self._changed.is_set():
                self._changed.clear()
                self._urgent.clear()
                await self._announce()
                await self._burst_over()

    async def _announce(self) -> None:
        if self.bus is not None:
            await self.bus.publish(ToolsListChanged())
        for connection in list(self.connections):
            # Best effort: a connection whose stream broke drops the notification.
            await connection.notify(LIST_CHANGED, None)

    async def _burst_over(self) -> None:
        """Wait until no change came for :data:`LIST_CHANGED_QUIET_S`, at most
        :data:`LIST_CHANGED_MAX_DELAY_S`, or a call's change came (told at once)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LIST_CHANGED_MAX_DELAY_S
        seen = self._changes
        while (left := deadline - loop.time()) > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._urgent.wait(), min(LIST_CHANGED_QUIET_S, left))
                return
            if self._changes == seen:
                return
            seen = self._changes

    def _note_change(self, session: Session) -> None:
        self._changes += 1
        self._changed.set()
        if session.following_a_call:
            self._urgent.set()

    def _wire(self, session: Session) -> None:
        """Questions go to the calling client (the configured handler answers the others),
        the console to its calls, the catalog's changes to its connections."""
        self.session = session
        previous = session.elicitation
        # The session records every answer itself: wrap what it wraps, not its record keeper.
        local: ElicitationHandler = (
            previous.inner if isinstance(previous, RecordingHandler) else previous
        )
        session.elicitation = asking_clients(local)  # within local's time limit too

        def restore() -> None:
            session.elicitation = local

        self._undo.append(restore)
        self._undo.append(session.on_tools_changed(lambda _change: self._note_change(session)))
        if self.console is not None and isinstance(session.backend, ChannelBackend):
            channel = session.backend.channel
            self._undo.append(self.console.watch(session.page, channel, session.scrubber))

    async def close(self) -> None:
        """Stop telling its clients; close the session if it is the client's own."""
        for task in (self._task, self._opening):
            task.cancel()
        for task in (self._task, self._opening):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
        # A page that opened just now is closed too, though _serve had no turn to take it.
        opened = self._opening
        session = self.session
        if session is None and opened.done() and not opened.cancelled() and not opened.exception():
            session = opened.result()
        if self.owned and session is not None:
            await session.close()


async def once_open(session: Session, opening: Awaitable[Any] | None) -> Session:
    """``session``, once ``opening`` (its page being opened, if it still is) is done; the
    opening belongs to its caller, and goes on if this is cancelled."""
    if opening is not None:
        await asyncio.shield(opening)
    return session
