"""The page's console during a call, as MCP log notifications (opt-in: ``--forward-console``).

While a client's ``tools/call`` of a page tool runs, every console message of that client's
page logged during the call becomes a ``notifications/message`` on that call's stream: the
console type maps to a log level (``debug`` → debug, ``log``/``info`` → info, ``warning`` →
warning, ``error``/``assert`` → error), the logger is ``page``, and the data is the text
framed as untrusted page text with the origin of what logged it — the document's, a
cross-origin frame's own, as the browser knows it (:mod:`harness.browser.console`) — with
every text the session withheld from its agents replaced by its handle. It is off by
default: a page may print anything to its console, secrets the harness was never told
about included.

Who gets what follows MCP: on handshake-era connections, ``logging/setLevel`` sets the
least level sent (``info`` until a client sets one); on 2026-07-28 requests, the bridge sends
only what the request's ``_meta`` log level asks for (nothing without it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, get_args

import mcp.types as types
from mcp.server.connection import Connection, allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from harness.browser.console import ConsoleMessage, PageConsole
from harness.browser.injection import PageChannel
from harness.stages.framing import frame_untrusted
from harness.stages.scrubbing import Scrubber

LEVELS: tuple[types.LoggingLevel, ...] = get_args(types.LoggingLevel)
DEFAULT_LEVEL: types.LoggingLevel = "info"
CONSOLE_LEVELS: dict[str, types.LoggingLevel] = {
    "debug": "debug",
    "log": "info",
    "info": "info",
    "warning": "warning",
    "error": "error",
    "assert": "error",
}


class ConsoleForwarder:
    """Sends each page's console messages to the clients whose calls run on that page."""

    def __init__(self) -> None:
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count()
        self._levels: weakref.WeakKeyDictionary[Connection, types.LoggingLevel] = (
            weakref.WeakKeyDictionary()
        )
        self._tasks: set[asyncio.Task[None]] = set()

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """``logging/setLevel``: the least level this connection gets."""
        connection = getattr(ctx.session, "_connection", None)
        if isinstance(connection, Connection):
            self._levels[connection] = params.level
        return types.EmptyResult()

    @contextlib.contextmanager
    def during(self, ctx: ServerRequestContext[Any, Any], page: object) -> Iterator[None]:
        """Forward ``page``'s console to this request's client while the block runs."""
        key = next(self._ids)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        # 2026-07-28: the request's _meta log level decides (none: nothing is sent).
        meta = (ctx.params or {}).get("_meta") if modern else None
        allowed = allowed_log_levels(ctx.protocol_version, meta) if modern else None
        self._calls[key] = _Call(ctx.session, ctx.request_id, allowed, page, time.time() * 1000)
        try:
            yield
        finally:
            self._calls.pop(key, None)

    def watch(
        self, page: Any, channel: PageChannel, withheld: Scrubber | None = None
    ) -> Callable[[], None]:
        """Send ``page``'s console (heard through its ``channel``) to every call that runs on
        that page, each message framed with its own origin, what its session withheld
        (``withheld``) replaced. Returns how to stop."""
        console = PageConsole(page, channel, lambda message: self._forward(page, message, withheld))
        console.start()
        return console.stop

    def _forward(self, page: Any, message: ConsoleMessage, withheld: Scrubber | None) -> None:
        level = CONSOLE_LEVELS.get(message.type, DEFAULT_LEVEL)
        text = message.text
        if withheld is not None:
            text = withheld.text(text)
        data = frame_untrusted(text, message.origin)
        for call in list(self._calls.values()):
            # (A frame followed late reports what it logged before: not this call's.)
            if call.page is not page or message.timestamp < call.since:
                continue
            if not self._wanted(call, level):
                continue
            task = asyncio.ensure_future(self._send(call, level, data))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _wanted(self, call: _Call, level: types.LoggingLevel) -> bool:
        if call.allowed is not None:
            return level in call.allowed
        connection = getattr(call.session, "_connection", None)
        least = self._levels.get(connection, DEFAULT_LEVEL) if connection else DEFAULT_LEVEL
        return LEVELS.index(level) >= LEVELS.index(least)

    async def _send(self, call: _Call, level: types.LoggingLevel, data: str) -> None:
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, data=data, logger="page")
        )
        with contextlib.suppress(Exception):  # a client that went away misses its log
            # On the call's own stream (the only one 2026-07-28 allows for log messages).
            await call.session.send_notification(notification, related_request_id=call.request_id)


@dataclass(frozen=True)
class _Call:
    """A running call that gets the console: its session, request, (2026-07-28) the levels
    its request asked for, the page it runs on, and when it started (milliseconds since the
    epoch: what was logged before is not its)."""

    session: ServerSession
    request_id: types.RequestId | None
    allowed: frozenset[types.LoggingLevel] | None
    page: object  # whose console it gets
    since: float
